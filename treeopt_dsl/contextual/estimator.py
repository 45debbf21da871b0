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
import warnings
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
from treeopt_dsl.defaults import check_number, check_time_limit
from treeopt_dsl.errors import FallbackWarning, OptionError
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
                 fallback: bool = True, fallback_z: float = 2.0, n_threads: int = 1, random_state: int | None = 0,
                 verbose: bool = False) -> None:
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
        self.fallback = fallback
        self.fallback_z = fallback_z
        self.n_threads = n_threads
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        """Refuse a bad hyperparameter before any work, with :class:`OptionError` naming it and what is allowed."""
        if self.method not in METHODS:
            raise OptionError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.entropy not in ENTROPIES:
            raise OptionError(f"entropy must be one of {', '.join(ENTROPIES)}, got {self.entropy!r}")
        for name in ("n_trees", "hidden", "epochs", "batch_size", "n_threads"):
            check_number(name, getattr(self, name), "a positive integer", minimum=1, integer=True)
        check_number("patience", self.patience, "an integer >= 0", integer=True)
        if self.max_depth is not None:
            check_number("max_depth", self.max_depth, "a positive integer or None (validated over depths)",
                         minimum=1, integer=True)
        else:
            depths = self.depths if isinstance(self.depths, (list, tuple, range, np.ndarray)) else ()
            if len(depths) == 0:
                raise OptionError(f"depths must be a non-empty sequence of positive integers, got {self.depths!r}")
            for d in depths:
                check_number("depths", d, "a non-empty sequence of positive integers", minimum=1, integer=True)
        for name in ("validation_fraction", "dropout"):
            if check_number(name, getattr(self, name), "a number in [0, 1)") >= 1:
                raise OptionError(f"{name} must be a number in [0, 1), got {getattr(self, name)!r}")
        if check_number("learning_rate", self.learning_rate, "a finite number > 0") == 0:
            raise OptionError(f"learning_rate must be a finite number > 0, got {self.learning_rate!r}")
        check_number("entropy_weight", self.entropy_weight, "a finite number >= 0")
        check_number("fallback_z", self.fallback_z, "a finite number >= 0")
        if not isinstance(self.fallback, (bool, np.bool_)):
            raise OptionError(f"fallback must be True or False, got {self.fallback!r}")
        check_time_limit(self.time_limit)

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
                              # the whole fit's budget: training gets what the forest and the precompute left
                              time_limit=None if self.time_limit is None else
                              max(0.0, float(self.time_limit) - (time.perf_counter() - t_start)),
                              n_threads=int(self.n_threads), seed=policy_seed, verbose=bool(self.verbose))
        fit = train_policy(X_tr, R, X_val, val_score, config, method=self.method, labels=labels,
                           higher_is_better=not self._regression)
        self.policy_: PolicyFit = fit
        self.history_ = dict(fit.history)
        self.n_epochs_, self.best_epoch_, self.stopped_ = fit.n_epochs, fit.best_epoch, fit.stopped
        self.train_time_ = fit.train_time
        self.time_per_epoch_ = fit.train_time / max(1, fit.n_epochs)
        self.best_val_score_ = float(fit.history["val_score"][fit.best_epoch])
        self._decide_fallback(X_tr, y_tr, X_val, y_val, P_val, t_val, policy_logits(fit, X_val).argmax(axis=1))
        self.train_selection_ = np.bincount(self._select_checked(X_tr), minlength=self.n_trees_)
        self.fit_time_ = time.perf_counter() - t_start
        return self

    def _decide_fallback(self, X_tr: np.ndarray, y_tr: np.ndarray, X_val: np.ndarray, y_val: np.ndarray,
                         P_val: np.ndarray, t_val: np.ndarray, sel_val: np.ndarray) -> None:
        """The supervised fallback: keep the policy only if it beats its best single tree on the validation part.

        Per validation row, losses ``l`` (0/1 error, or squared error for a regressor); model A *beats* model B
        when the paired gain ``d = l_B - l_A`` has ``mean(d) > fallback_z * std(d) / sqrt(n_val)`` (a paired test:
        on a small validation part the winner of many tries -- the best of the epochs, the best of the trees --
        must win by more than the noise). The *single tree* is the depth-validated CART tree (the thesis'
        baseline), or the forest's best tree on validation if that beats CART. The policy is kept if it beats the
        single tree; otherwise the single tree predicts every row (``selected_``) and a :class:`FallbackWarning`
        says so.
        """
        rows = np.arange(P_val.shape[0])
        if self._regression:
            L_val = (P_val - t_val[:, None]) ** 2
            cart_loss = (self.cart_.predict(X_val) - t_val) ** 2
        else:
            L_val = (P_val != t_val[:, None]).astype(np.float64)
            cart_loss = (self.cart_.predict(X_val) != y_val).astype(np.float64)
        z = float(self.fallback_z)

        def gain(worse: np.ndarray, better: np.ndarray) -> tuple[float, float]:
            # mean paired gain of `better` over `worse` and the margin it must exceed (z standard errors)
            d = worse - better
            return float(d.mean()), z * (float(d.std(ddof=1)) if d.size > 1 else 0.0) / np.sqrt(max(d.size, 1))

        k = int(L_val.mean(axis=0).argmin())
        g, m = gain(cart_loss, L_val[:, k])
        if g > m:  # the forest's best tree beats CART by more than the noise (it is the best of many: a margin)
            single, single_loss, single_name = k, L_val[:, k], "tree"
        else:
            single, single_loss, single_name = self.n_trees_, cart_loss, "cart"
        mean_gain, margin = gain(single_loss, L_val[rows, sel_val])
        n = int(sel_val.size)
        beats = bool(n > 0 and mean_gain > margin)
        self.fallback_stats_ = {"policy_val": float(1.0 - L_val[rows, sel_val].mean()) if not self._regression
                                else float(L_val[rows, sel_val].mean()),
                                "single_val": float(1.0 - single_loss.mean()) if not self._regression
                                else float(single_loss.mean()),
                                "single": single_name, "single_tree": int(single), "mean_gain": mean_gain,
                                "margin": margin, "n_val": int(n), "policy_beats_single": beats}
        if beats or not self.fallback:
            self.selected_, self.fallback_tree_ = "policy", None
            return
        self.selected_, self.fallback_tree_ = single_name, int(single)
        if single_name == "cart":  # CART as the forest's trees see the targets (class codes): same splits
            from sklearn.base import clone

            self.cart_codes_ = clone(self.cart_).fit(X_tr, self._encode(y_tr))
        what = "its CART tree" if single_name == "cart" else f"tree {single} of the forest"
        metric = "MSE" if self._regression else "accuracy"
        warnings.warn(f"the contextual tree's policy does not beat its best single tree on the validation part "
                      f"({metric} {self.fallback_stats_['policy_val']:.4f} vs {self.fallback_stats_['single_val']:.4f},"
                      f" {n} rows, fallback_z={float(self.fallback_z):g}): {what} predicts every row "
                      f"(selected_ = {single_name!r}; fallback=False keeps the policy)", FallbackWarning, stacklevel=3)

    # ------------------------------------------------------------------ use
    @property
    def n_trees_(self) -> int:
        """Number of trees of the fitted forest (``B``)."""
        return len(self.forest_.estimators_)

    def select(self, X: Any) -> np.ndarray:
        """The tree that predicts each row: the policy's choice ``argmax_k pi(k | x)`` (line 1635), or, after a
        fallback (``selected_ != "policy"``), the single tree for every row (index ``n_trees_`` = CART)."""
        check_is_fitted(self, "policy_")
        X = validate_data(self, X, reset=False)
        return self._select_checked(X)

    def _select_checked(self, X: np.ndarray) -> np.ndarray:
        if self.selected_ == "policy":
            return policy_logits(self.policy_, X).argmax(axis=1)
        return np.full(X.shape[0], self.fallback_tree_, dtype=np.int64)

    def _estimator(self, k: int) -> Any:
        """Tree ``k`` of the forest, or the CART fallback for ``k == n_trees_``."""
        return self.forest_.estimators_[k] if k < self.n_trees_ else self.cart_codes_

    def _by_tree(self, X: np.ndarray, sel: np.ndarray, method: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(rows, answers)`` of each chosen tree on its rows: one call per tree, none per sample."""
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        out = []
        for k in np.unique(sel):
            rows = np.flatnonzero(sel == k)
            out.append((rows, getattr(self._estimator(int(k)), method)(X32[rows], check_input=False)))
        return out

    def predict(self, X: Any) -> np.ndarray:
        """The answer of the tree the policy chooses for each row."""
        check_is_fitted(self, "policy_")
        X = validate_data(self, X, reset=False)
        return self._predict_checked(X, self._select_checked(X))

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
        tree, e.g. a start for the exact tree formulations. After a fallback to CART (``selected_ == "cart"``),
        ``k = n_trees_`` is the CART tree."""
        check_is_fitted(self, "forest_")
        top = self.n_trees_ if getattr(self, "selected_", "policy") == "cart" else self.n_trees_ - 1
        if not 0 <= int(k) <= top:
            raise IndexError(f"tree index k must be in 0..{top}, got {k}")
        names = getattr(self, "feature_names_in_", None)
        names = [str(s) for s in names] if names is not None else None
        return to_decision_tree(self._estimator(int(k)), None if self._regression else self.classes_, names)

    def explain(self, X: Any, decimals: int = 2) -> list[Explanation]:
        """Per row: the chosen tree's index, the row's path through that tree (library tree text), and the
        prediction (the leaf's class or value)."""
        check_is_fitted(self, "policy_")
        X = validate_data(self, X, reset=False)
        sel = self._select_checked(X)
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

    Parameters
    ----------
    n_trees : int, default=50
        ``B``, trees of the forest (the thesis' values where it gives them, [aldinucci-thesis-2024] lines
        1649-1655).
    max_depth : int or None, default=None
        Depth of the forest's trees; ``None`` validates CART's depth over ``depths`` on the validation part, as the
        thesis does with {2, 3, 4}.
    depths : tuple of int, default=(2, 3, 4)
        Candidate depths of that grid search.
    method : {"reinforce", "supervised"}, default="reinforce"
        ``"reinforce"``: CCT, REINFORCE on the rewards (5.4), Algorithm 4; ``"supervised"``: the baseline of §5.3,
        cross-entropy on the best tree of each sample.
    hidden : int, default=128
        Width of the two hidden layers of the 3-layer ReLU network (not in the thesis).
    dropout : float, default=0.2
        The dropout layer's rate.
    learning_rate : float, default=1e-3
        Adam's initial learning rate (no weight decay; cosine schedule over ``epochs``).
    entropy_weight : float, default=1e-4
        ``lambda`` of the entropy regularization of Algorithm 4.
    entropy : {"sampled", "full"}, default="sampled"
        ``"sampled"``: Algorithm 4's ``-pi(a|x) log pi(a|x)`` of the sampled action; ``"full"``: the whole entropy.
    epochs : int, default=1000
        Most epochs (also the cosine schedule's period).
    batch_size : int, default=256
        Mini-batch size (not in the thesis).
    patience : int, default=100
        Epochs without a better validation accuracy before early stopping.
    validation_fraction : float, default=0.2
        The part of ``X`` held out for validation when ``fit`` gets no ``eval_set`` (0.2 of the 80 % training
        data = the thesis' 16 %).
    time_limit : float or None, default=None
        Seconds of the whole fit (``None``: no limit): the depth validation, the forest and the precompute take
        their part; the policy's training gets the rest and stops after the epoch that passes it.
    fallback : bool, default=True
        Keep the policy only if it beats its best single tree on the validation part (a paired test at
        ``fallback_z`` standard errors, see ``_decide_fallback``); otherwise that tree (CART, or the forest's best
        tree if it beats CART) predicts every row and a ``FallbackWarning`` says so. ``False``: always the policy
        (the thesis' CCT).
    fallback_z : float, default=2.0
        The test's margin in standard errors (the policy's validation score is the best of its epochs, so it must
        win by more than the noise).
    n_threads : int, default=1
        PyTorch threads during fit (the model does not depend on it).
    random_state : int or None, default=0
        Seed of the split, CART, the forest and the policy.
    verbose : bool, default=False
        One line per epoch on stderr.

    Attributes
    ----------
    forest_, cart_ : estimators
        The forest and the depth-validated CART tree (the thesis' baseline); ``depth_``, ``depth_scores_`` its depth
        and the validation scores by depth.
    policy_ : torch.nn.Module
        The policy network.
    history_ : dict
        ``reward``, ``loss``, ``val_score``, ``lr``, ``selection``, ``time`` per epoch; ``n_epochs_``,
        ``best_epoch_``, ``stopped_``, ``best_val_score_``.
    selected_ : str
        What predicts: ``"policy"``, ``"cart"`` or ``"tree"``; ``fallback_tree_`` (``None``, the forest's tree, or
        ``n_trees_`` for CART) and ``fallback_stats_`` (validation scores of the policy and the single tree, the
        mean paired gain, the margin, ``policy_beats_single``) say why.

    Timings: ``precompute_time_`` (the forest's predictions on the training and validation parts),
    ``train_time_``, ``time_per_epoch_``, ``fit_time_``; sizes ``n_train_``, ``n_val_``; ``classes_``.
    """

    def _encode(self, y: np.ndarray) -> np.ndarray:
        codes = np.searchsorted(self.classes_, y)
        codes = np.clip(codes, 0, self.classes_.size - 1)
        return np.where(self.classes_[codes] == y, codes, -1)  # a class the forest never saw is always wrong

    def predict_proba(self, X: Any) -> np.ndarray:
        """The chosen tree's class probabilities (its leaf's class frequencies) for each row."""
        check_is_fitted(self, "policy_")
        X = validate_data(self, X, reset=False)
        sel = self._select_checked(X)
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
