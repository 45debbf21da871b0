"""scikit-learn estimators of contextual trees (thesis chapter 5): :class:`ContextualTreeClassifier` (CCT) and
:class:`ContextualTreeRegressor` (CRT).

``fit`` splits off a validation part (or takes ``eval_set``), validates CART's depth on it, grows a random
forest of ``n_trees`` trees of that depth on the training part, computes every tree's answer on every training
and validation sample once, and trains the policy network that picks one tree per sample (REINFORCE on the
rewards (5.4) / (5.5), or the supervised baseline). ``predict`` asks the policy for the tree of each row and
returns that tree's answer; ``explain`` shows the tree and the row's path through it.

Example::

    >>> import numpy as np
    >>> from treeopt_dsl.contextual import ContextualTreeClassifier
    >>> rng = np.random.default_rng(0); X = rng.random((300, 3))
    >>> y = np.where(X[:, 0] < 0.5, X[:, 1] > 0.5, X[:, 2] > 0.5).astype(int)
    >>> clf = ContextualTreeClassifier(n_trees=10, epochs=30, random_state=0).fit(X, y)  # doctest: +SKIP
    >>> clf.predict(X[:2]).shape, int(clf.selection_histogram().sum())                # doctest: +SKIP
    ((2,), 240)
    >>> e = clf.explain(X[:1])[0]; e.tree in range(10)                                    # doctest: +SKIP
    True
    >>> clf.tree(e.tree).predict(X[:1]).tolist() == clf.predict(X[:1]).tolist()          # doctest: +SKIP
    True
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from treeopt_dsl.contextual.forest import (
    fit_forest,
    path_texts,
    to_decision_tree,
    tree_predictions,
    tree_probabilities,
    validate_depth,
)
from treeopt_dsl.contextual.plots import plot_training
from treeopt_dsl.contextual.policy import ENTROPIES, METHODS, PolicyConfig, PolicyFit, policy_logits, train_policy
from treeopt_dsl.contextual.rewards import (
    classification_rewards,
    regression_rewards,
    supervised_labels_classification,
    supervised_labels_regression,
)
from treeopt_dsl.models.decision_tree import DecisionTree

__all__ = ["ContextualTreeClassifier", "ContextualTreeRegressor", "Explanation"]

#: fewer samples than this: no validation split (the training part doubles as validation)
MIN_SPLIT = 10


@dataclass(frozen=True)
class Explanation:
    """Why one row got its prediction: the index of the chosen tree, the row's path through it in the
    library's tree text (the lines of :meth:`DecisionTree.text` it passes), and the prediction."""

    tree: int
    path: str
    prediction: Any

    def __str__(self) -> str:
        return f"tree {self.tree}\n{self.path}"


class _ContextualTree(BaseEstimator):
    """Shared fit / predict / explain of the classifier and the regressor (see their docstrings)."""

    _regression = False

    def __init__(self, n_trees: int = 50, max_depth: int | None = None, depths: tuple[int, ...] = (2, 3, 4),
                 method: str = "reinforce", hidden: int = 128, dropout: float = 0.2, learning_rate: float = 1e-3,
                 entropy_weight: float = 1e-4, entropy: str = "sampled", epochs: int = 1000, batch_size: int = 256,
                 patience: int = 100, validation_fraction: float = 0.2, time_limit: float | None = None,
                 n_threads: int = 1, random_state: int | None = 0, verbose: bool = False) -> None:
        self.n_trees = n_trees
        self.max_depth = max_depth
        self.depths = depths
        self.method = method
        self.hidden = hidden
        self.dropout = dropout
        self.learning_rate = learning_rate
        self.entropy_weight = entropy_weight
        self.entropy = entropy
        self.epochs = epochs
        self.batch_size = batch_size
        self.patience = patience
        self.validation_fraction = validation_fraction
        self.time_limit = time_limit
        self.n_threads = n_threads
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.entropy not in ENTROPIES:
            raise ValueError(f"entropy must be one of {', '.join(ENTROPIES)}, got {self.entropy!r}")
        for name in ("n_trees", "hidden", "epochs", "batch_size", "n_threads"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not isinstance(self.patience, (int, np.integer)) or self.patience < 0:
            raise ValueError(f"patience must be an integer >= 0, got {self.patience!r}")
        if self.max_depth is not None and (not isinstance(self.max_depth, (int, np.integer)) or self.max_depth < 1):
            raise ValueError(f"max_depth must be a positive integer or None (validated over depths), "
                             f"got {self.max_depth!r}")
        if self.max_depth is None and (len(tuple(self.depths)) == 0 or any(int(d) < 1 for d in self.depths)):
            raise ValueError(f"depths must hold positive integers, got {self.depths!r}")
        if not 0.0 <= float(self.validation_fraction) < 1.0:
            raise ValueError(f"validation_fraction must be in [0, 1), got {self.validation_fraction!r}")
        if not 0.0 <= float(self.dropout) < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")
        if float(self.learning_rate) <= 0 or float(self.entropy_weight) < 0:
            raise ValueError("learning_rate must be > 0 and entropy_weight >= 0")
        if self.time_limit is not None and float(self.time_limit) < 0:
            raise ValueError(f"time_limit must be >= 0 or None, got {self.time_limit!r}")

    def _encode(self, y: np.ndarray) -> np.ndarray:
        """Targets as the forest sees them: class codes (classifier) or floats (regressor)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ fit
    def _split(self, X: np.ndarray, y: np.ndarray, seed: int) -> tuple[np.ndarray, ...]:
        n = X.shape[0]
        if self.validation_fraction == 0 or n < MIN_SPLIT:
            return X, y, X, y
        from sklearn.model_selection import train_test_split

        stratify = None
        if not self._regression:
            _, counts = np.unique(y, return_counts=True)
            n_val = int(np.ceil(self.validation_fraction * n))
            if counts.min() >= 2 and counts.size <= min(n_val, n - n_val):
                stratify = y
        X_tr, X_val, y_tr, y_val = train_test_split(X, y, test_size=self.validation_fraction, random_state=seed,
                                                    stratify=stratify)
        return X_tr, y_tr, X_val, y_val

    def fit(self, X: Any, y: Any, eval_set: tuple[Any, Any] | None = None) -> _ContextualTree:
        """Fit the forest and the policy.

        ``eval_set=(X_val, y_val)``: the validation part (CART's depth, early stopping); without it,
        ``validation_fraction`` of ``X`` is split off (stratified for classification) -- with the thesis'
        64/16/20 split, pass the 80 % that is not the test part and keep ``validation_fraction=0.2``.
        """
        self._check_params()
        t_start = time.perf_counter()
        if self._regression:
            X, y = validate_data(self, X, y, y_numeric=True)
            y = y.astype(np.float64)
        else:
            X, y = validate_data(self, X, y)
            check_classification_targets(y)
        rs = check_random_state(self.random_state)
        split_seed, cart_seed, forest_seed, policy_seed, label_seed = (int(s) for s in rs.randint(0, 2**31 - 1, 5))
        if eval_set is not None:
            X_tr, y_tr = X, y
            X_val = validate_data(self, eval_set[0], reset=False)
            y_val = np.asarray(eval_set[1])
            if self._regression:
                y_val = y_val.astype(np.float64)
        else:
            X_tr, y_tr, X_val, y_val = self._split(X, y, split_seed)
        self.n_train_, self.n_val_ = int(X_tr.shape[0]), int(X_val.shape[0])
        # the forest (line 1651)
        if self.max_depth is None:
            self.depth_, self.cart_, self.depth_scores_ = validate_depth(
                X_tr, y_tr, X_val, y_val, tuple(self.depths), self._regression, cart_seed)
        else:
            self.depth_ = int(self.max_depth)
            self.depth_scores_ = {}
            self.cart_ = validate_depth(X_tr, y_tr, X_val, y_val, (self.depth_,), self._regression, cart_seed)[1]
        self.forest_ = fit_forest(X_tr, y_tr, self.n_trees, self.depth_, self._regression, forest_seed)
        if not self._regression:
            self.classes_ = np.asarray(self.forest_.classes_)
        # every tree's answer on every training / validation sample, once (not per epoch)
        t0 = time.perf_counter()
        P_tr, P_val = tree_predictions(self.forest_, X_tr), tree_predictions(self.forest_, X_val)
        t_tr, t_val = self._encode(y_tr), self._encode(y_val)
        if self._regression:
            R = regression_rewards(P_tr, t_tr)
            E_val = (P_val - t_val[:, None]) ** 2
            rows = np.arange(P_val.shape[0])

            def val_score(sel: np.ndarray) -> float:  # RMSE of the chosen trees
                return float(np.sqrt(E_val[rows, sel].mean()))

            labels = (supervised_labels_regression(P_tr, t_tr, np.random.default_rng(label_seed))
                      if self.method == "supervised" else None)
        else:
            R = classification_rewards(P_tr, t_tr)
            right_val = P_val == t_val[:, None]
            rows = np.arange(P_val.shape[0])

            def val_score(sel: np.ndarray) -> float:  # accuracy of the chosen trees
                return float(right_val[rows, sel].mean())

            labels = None
            if self.method == "supervised":
                Q = tree_probabilities(self.forest_, X_tr, t_tr)
                labels = supervised_labels_classification(P_tr, Q, t_tr, np.random.default_rng(label_seed))
        self.precompute_time_ = time.perf_counter() - t0
        config = PolicyConfig(hidden=int(self.hidden), dropout=float(self.dropout),
                              learning_rate=float(self.learning_rate), entropy_weight=float(self.entropy_weight),
                              entropy=self.entropy, epochs=int(self.epochs), batch_size=int(self.batch_size),
                              patience=int(self.patience),
                              time_limit=None if self.time_limit is None else float(self.time_limit),
                              n_threads=int(self.n_threads), seed=policy_seed, verbose=bool(self.verbose))
        fit = train_policy(X_tr, R, X_val, val_score, config, method=self.method, labels=labels,
                           higher_is_better=not self._regression)
        self.policy_: PolicyFit = fit
        self.history_ = dict(fit.history)
        self.n_epochs_, self.best_epoch_, self.stopped_ = fit.n_epochs, fit.best_epoch, fit.stopped
        self.train_time_ = fit.train_time
        self.time_per_epoch_ = fit.train_time / max(1, fit.n_epochs)
        self.best_val_score_ = float(fit.history["val_score"][fit.best_epoch])
        self.train_selection_ = np.bincount(policy_logits(fit, X_tr).argmax(axis=1), minlength=self.n_trees_)
        self.fit_time_ = time.perf_counter() - t_start
        return self

    # ------------------------------------------------------------------ use
    @property
    def n_trees_(self) -> int:
        """Number of trees of the fitted forest (``B``)."""
        return len(self.forest_.estimators_)

    def select(self, X: Any) -> np.ndarray:
        """The tree the policy chooses for each row: ``argmax_k pi(k | x)`` (line 1635)."""
        check_is_fitted(self, "policy_")
        X = validate_data(self, X, reset=False)
        return policy_logits(self.policy_, X).argmax(axis=1)

    def _by_tree(self, X: np.ndarray, sel: np.ndarray, method: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(rows, answers)`` of each chosen tree on its rows: one call per tree, none per sample."""
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        out = []
        for k in np.unique(sel):
            rows = np.flatnonzero(sel == k)
            out.append((rows, getattr(self.forest_.estimators_[int(k)], method)(X32[rows], check_input=False)))
        return out

    def predict(self, X: Any) -> np.ndarray:
        """The answer of the tree the policy chooses for each row."""
        check_is_fitted(self, "policy_")
        X = validate_data(self, X, reset=False)
        return self._predict_checked(X, policy_logits(self.policy_, X).argmax(axis=1))

    def _predict_checked(self, X: np.ndarray, sel: np.ndarray) -> np.ndarray:
        if self._regression:
            out = np.empty(X.shape[0], dtype=np.float64)
            for rows, ans in self._by_tree(X, sel, "predict"):
                out[rows] = ans
            return out
        codes = np.empty(X.shape[0], dtype=np.int64)
        for rows, ans in self._by_tree(X, sel, "predict"):
            codes[rows] = ans.astype(np.int64)  # the forest's trees are fitted on class codes
        return self.classes_[codes]

    def tree(self, k: int) -> DecisionTree:
        """Tree ``k`` of the forest as the library's :class:`~treeopt_dsl.models.decision_tree.DecisionTree`
        (classes in the user's labels; for a regressor the leaf values are its ``classes``): an ordinary fitted
        tree, e.g. a start for the exact tree formulations."""
        check_is_fitted(self, "forest_")
        if not 0 <= int(k) < self.n_trees_:
            raise IndexError(f"tree index {k} out of range 0..{self.n_trees_ - 1}")
        names = getattr(self, "feature_names_in_", None)
        names = [str(s) for s in names] if names is not None else None
        return to_decision_tree(self.forest_.estimators_[int(k)], None if self._regression else self.classes_, names)

    def explain(self, X: Any, decimals: int = 2) -> list[Explanation]:
        """Per row: the chosen tree's index, the row's path through that tree (library tree text), and the
        prediction (the leaf's class or value)."""
        check_is_fitted(self, "policy_")
        X = validate_data(self, X, reset=False)
        sel = policy_logits(self.policy_, X).argmax(axis=1)
        pred = self._predict_checked(X, sel)
        texts: list[str] = [""] * X.shape[0]
        for k in np.unique(sel):
            rows = np.flatnonzero(sel == k)
            for r, t in zip(rows, path_texts(self.tree(int(k)), X[rows], self._regression, decimals), strict=True):
                texts[r] = t
        return [Explanation(int(sel[i]), texts[i], pred[i]) for i in range(X.shape[0])]

    def selection_histogram(self, X: Any = None) -> np.ndarray:
        """How often each tree is chosen (length ``B``): on ``X``, or on the training part when ``X`` is None."""
        check_is_fitted(self, "policy_")
        if X is None:
            return self.train_selection_.copy()
        return np.bincount(self.select(X), minlength=self.n_trees_)

    def plot_training(self, title: str | None = None, **kw: Any) -> Any:
        """Reward and tree-selection histograms per epoch (the thesis' Figure 5.2); returns the Figure."""
        check_is_fitted(self, "history_")

        return plot_training(self.history_, title=title, best_epoch=self.best_epoch_, **kw)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class ContextualTreeClassifier(ClassifierMixin, _ContextualTree):
    """Contextual classification tree (CCT, thesis chapter 5): a random forest of ``n_trees`` shallow trees and a
    policy network that picks, for each input, the one tree that predicts it.

    Parameters (thesis values where it gives them, [aldinucci-thesis-2024] lines 1649-1655):
        n_trees: ``B``, trees of the forest (50).
        max_depth: depth of the forest's trees; ``None`` validates CART's depth over ``depths`` on the
            validation part, as the thesis does with {2, 3, 4}.
        depths: candidate depths of that grid search.
        method: ``"reinforce"`` (CCT: REINFORCE on the rewards (5.4), Algorithm 4) or ``"supervised"`` (the
            baseline of §5.3: cross-entropy on the best tree of each sample).
        hidden: width of the two hidden layers of the 3-layer ReLU network (not in the thesis).
        dropout: the dropout layer's rate (0.2).
        learning_rate: Adam's initial learning rate (1e-3; no weight decay; cosine schedule over ``epochs``).
        entropy_weight: ``lambda`` of the entropy regularization of Algorithm 4 (1e-4).
        entropy: ``"sampled"`` (Algorithm 4's ``-pi(a|x) log pi(a|x)`` of the sampled action) or ``"full"``.
        epochs: most epochs (also the cosine schedule's period); batch_size: mini-batch (not in the thesis).
        patience: epochs without a better validation accuracy before early stopping.
        validation_fraction: the part of ``X`` held out for validation when ``fit`` gets no ``eval_set``
            (0.2 of the 80 % training data = the thesis' 16 %).
        time_limit: seconds of policy training (``None``: no limit). n_threads: PyTorch threads during fit.
        random_state: seed of the split, CART, the forest and the policy. verbose: one line per epoch on stderr.

    Fitted attributes: ``forest_``, ``cart_`` (the depth-validated CART tree, the thesis' baseline),
    ``depth_``, ``depth_scores_``, ``classes_``, ``policy_``, ``history_`` (``reward``, ``loss``, ``val_score``,
    ``lr``, ``selection``, ``time`` per epoch), ``n_epochs_``, ``best_epoch_``, ``stopped_``,
    ``best_val_score_``, ``precompute_time_`` (the forest's predictions on the training and validation parts),
    ``train_time_``, ``time_per_epoch_``, ``fit_time_``, ``n_train_``, ``n_val_``.
    """

    def _encode(self, y: np.ndarray) -> np.ndarray:
        codes = np.searchsorted(self.classes_, y)
        codes = np.clip(codes, 0, self.classes_.size - 1)
        return np.where(self.classes_[codes] == y, codes, -1)  # a class the forest never saw is always wrong

    def predict_proba(self, X: Any) -> np.ndarray:
        """The chosen tree's class probabilities (its leaf's class frequencies) for each row."""
        check_is_fitted(self, "policy_")
        X = validate_data(self, X, reset=False)
        sel = policy_logits(self.policy_, X).argmax(axis=1)
        out = np.zeros((X.shape[0], self.classes_.size))
        for rows, ans in self._by_tree(X, sel, "predict_proba"):
            out[rows] = ans
        return out


class ContextualTreeRegressor(RegressorMixin, _ContextualTree):
    """Contextual regression tree (CRT, thesis chapter 5): as :class:`ContextualTreeClassifier`, with a random
    forest regressor, the reward (5.5) (``1 - 2d``, ``d`` the squared error normalized per sample between the
    forest's best and worst tree; ``d = 0`` for every tree when they tie), the supervised baseline's label the
    tree of smallest squared error, CART's depth validated by mean squared error and early stopping on the
    validation RMSE of the chosen trees. Same parameters and fitted attributes (no ``classes_``).
    """

    _regression = True

    def _encode(self, y: np.ndarray) -> np.ndarray:
        return np.asarray(y, dtype=np.float64)
