"""Tree ensembles whose decision function the born-again tree reproduces (Vidal & Schiffer 2020, Problem 1).

An :class:`Ensemble` is a list of :class:`~treeopt_dsl.models.decision_tree.DecisionTree` plus, for every tree,
the score vector each of its nodes adds to the class scores of a sample reaching it
(``leaf_scores[t]``, shape ``(n_nodes, n_classes)``). The ensemble's class is the argmax of the summed scores
(divided by ``divisor``), the *first* maximum on ties:

* **hard vote** (``vote="hard"``, the forests of the paper and of the BA-Trees code): a leaf adds 1 to its
  majority class; ties go to the smallest class index, the rule of ``RandomForest::majorityClass`` in the
  authors' C++ code (``std::max_element`` returns the first maximum);
* **soft vote** (``vote="soft"``, scikit-learn's ``RandomForestClassifier`` / ``ExtraTreesClassifier``): a leaf
  adds its class-probability vector; scikit-learn sums the trees' probabilities in tree order, divides by the
  number of trees and takes ``np.argmax`` (first maximum). :meth:`Ensemble.from_sklearn` stores exactly the
  per-leaf probabilities scikit-learn computes and :meth:`Ensemble.predict` repeats the same float operations
  in the same order, so the predictions agree exactly, ties included.

Either way the decision function is constant on every *cell* of the grid cut by the ensemble's thresholds
(each tree is), so the born-again construction (:mod:`.cells`, :mod:`.dp`) only needs the class of each cell,
which it computes from these same scores: the soft vote is handled by the same region DP as the hard vote.

Example::

    >>> from treeopt_dsl.models.decision_tree import DecisionTree
    >>> stump = lambda f, t, a, b: DecisionTree([f, -1, -1], [t, 0, 0], [1, -1, -1], [2, -1, -1], [-1, a, b])
    >>> ens = Ensemble.hard_vote([stump(0, 0.5, 0, 1), stump(1, 0.5, 0, 1), stump(0, 1.5, 1, 0)], n_classes=2)
    >>> ens.predict(np.array([[1.0, 1.0], [0.0, 0.0], [2.0, 1.0]])).tolist()
    [1, 0, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError
from treeopt_dsl.models.decision_tree import DecisionTree, feature_matrix

__all__ = ["Ensemble"]


@dataclass(eq=False)
class Ensemble:
    """A tree ensemble with a majority (hard) or averaged-probability (soft) vote.

    Attributes
    ----------
    trees
        The member trees (their ``value`` is each leaf's majority class index).
    n_features, n_classes
        Input dimension and number of classes.
    leaf_scores
        Per tree, the score row each node adds (``(n_nodes, n_classes)``; int for hard votes).
    vote
        ``"hard"`` or ``"soft"``.
    divisor
        The summed scores are divided by it before the argmax (the number of trees for a soft vote,
        as scikit-learn does; 1 for a hard vote).
    classes
        Class labels (default ``0 .. n_classes - 1``).
    feature_names
        Optional names, passed on to the born-again tree.
    dtype
        ``"float32"`` if the trees compare ``float32(x)`` (scikit-learn), else ``"float64"``.
    """

    trees: list[DecisionTree]
    n_features: int
    n_classes: int
    leaf_scores: list[np.ndarray]
    vote: str = "hard"
    divisor: float = 1.0
    classes: np.ndarray | None = None
    feature_names: tuple[str, ...] | None = None
    dtype: str = "float64"

    def __post_init__(self) -> None:
        if not self.trees:
            raise DataError("an Ensemble needs at least one tree")
        if len(self.leaf_scores) != len(self.trees):
            raise DataError(f"{len(self.leaf_scores)} score tables for {len(self.trees)} trees")
        for t, (tree, s) in enumerate(zip(self.trees, self.leaf_scores, strict=True)):
            if tree.n_features is not None and tree.n_features > self.n_features:
                raise DataError(f"tree {t} uses {tree.n_features} features, the ensemble has {self.n_features}")
            if s.shape != (tree.n_nodes, self.n_classes):
                raise DataError(f"tree {t}: score table of shape {s.shape}, expected "
                                f"{(tree.n_nodes, self.n_classes)}")
        if self.vote not in ("hard", "soft"):
            raise DataError(f"vote must be 'hard' or 'soft', got {self.vote!r}")
        self.check_thresholds()
        self.classes = np.arange(self.n_classes) if self.classes is None else np.asarray(self.classes)
        if self.classes.size != self.n_classes:
            raise DataError(f"{self.classes.size} class labels for {self.n_classes} classes")
        if self.feature_names is not None:
            self.feature_names = tuple(str(s) for s in self.feature_names)
            if len(self.feature_names) != self.n_features:
                raise DataError(f"{len(self.feature_names)} feature names for {self.n_features} features")

    # ------------------------------------------------------------------ construction
    @classmethod
    def hard_vote(cls, trees: Sequence[DecisionTree], n_classes: int | None = None, n_features: int | None = None,
                  classes: Any = None, feature_names: Sequence[str] | None = None) -> Ensemble:
        """A majority vote of ``trees`` (each leaf votes for its class; ties to the smallest class index)."""
        trees = list(trees)
        if not trees:
            raise DataError("an Ensemble needs at least one tree")
        if n_classes is None:
            n_classes = max(int(t.value.max()) for t in trees) + 1
        if n_features is None:
            n_features = max(int(t.n_features or 0) for t in trees)
        scores = []
        for i, t in enumerate(trees):
            if t.value.max() >= n_classes:
                raise DataError(f"tree {i} has a leaf of class {int(t.value.max())}, but n_classes={n_classes}")
            s = np.zeros((t.n_nodes, n_classes), dtype=np.int64)
            leaves = np.flatnonzero(t.is_leaf)
            s[leaves, t.value[leaves]] = 1
            scores.append(s)
        return cls(trees=trees, n_features=int(n_features), n_classes=int(n_classes), leaf_scores=scores,
                   vote="hard", divisor=1.0, classes=classes,
                   feature_names=tuple(feature_names) if feature_names is not None else None)

    @classmethod
    def from_sklearn(cls, model: Any, feature_names: Sequence[str] | None = None) -> Ensemble:
        """From a fitted ``RandomForestClassifier``, ``ExtraTreesClassifier`` or ``DecisionTreeClassifier``.

        The result's :meth:`predict` equals ``model.predict`` exactly: each leaf scores with the probability
        vector scikit-learn's tree ``predict_proba`` returns (its ``tree_.value`` row, class fractions), the
        rows are summed in tree order and divided by the number of trees (soft vote), inputs are compared in
        float32 as scikit-learn does.
        """
        estimators = getattr(model, "estimators_", None)
        if estimators is None:
            if hasattr(model, "tree_"):
                estimators = [model]
            else:
                raise DataError(f"{type(model).__name__} is not a fitted scikit-learn tree or forest classifier")
        if getattr(model, "n_outputs_", 1) != 1:
            raise DataError("only single-output scikit-learn classifiers can be converted")
        if not hasattr(model, "classes_") or np.ndim(model.classes_) != 1:
            raise DataError(f"{type(model).__name__} is not a single-output classifier (no 1-d classes_)")
        if len(estimators) == 0:
            raise DataError(f"{type(model).__name__} holds no trees (estimators_ is empty): fit it with "
                            "n_estimators >= 1")
        if any(not hasattr(e, "tree_") for e in estimators):
            raise DataError(f"{type(model).__name__}: every member must be a decision tree")
        if feature_names is None and hasattr(model, "feature_names_in_"):
            feature_names = [str(s) for s in model.feature_names_in_]
        n_classes = len(model.classes_)
        trees, scores = [], []
        for k, e in enumerate(estimators):
            try:
                trees.append(DecisionTree.from_sklearn(e))
            except DataError as exc:  # name the member: the message of DecisionTree knows only the node
                raise DataError(f"{type(model).__name__}: tree {k}: {exc}") from None
            # scikit-learn >= 1.4 stores the class fractions in tree_.value and predict_proba returns them as is
            scores.append(np.array(e.tree_.value[:, 0, :n_classes], dtype=np.float64))
        for t in trees:
            t.classes = np.asarray(model.classes_)
        return cls(trees=trees, n_features=int(trees[0].n_features or 0), n_classes=n_classes, leaf_scores=scores,
                   vote="soft", divisor=float(len(trees)), classes=np.asarray(model.classes_),
                   feature_names=tuple(feature_names) if feature_names is not None else None, dtype="float32")

    # ------------------------------------------------------------------ evaluation
    @property
    def n_trees(self) -> int:
        return len(self.trees)

    def _check_X(self, X: Any) -> np.ndarray:
        return feature_matrix(X, self.n_features, "the ensemble")

    def scores(self, X: Any) -> np.ndarray:
        """Summed (then divided) class scores, ``(n_samples, n_classes)``: vote counts or mean probabilities."""
        Xa = self._check_X(X)
        out = np.zeros((Xa.shape[0], self.n_classes), dtype=self.leaf_scores[0].dtype)
        for tree, s in zip(self.trees, self.leaf_scores, strict=True):
            if tree.n_features != self.n_features:  # a tree trained on fewer columns sees the first ones
                out += s[tree.apply(Xa[:, : tree.n_features])]
            else:
                out += s[tree.apply(Xa)]
        if self.vote == "soft":
            out = out / self.divisor
        return out

    def predict_index(self, X: Any) -> np.ndarray:
        """Class index of each sample (first maximum of the scores)."""
        return np.argmax(self.scores(X), axis=1)

    def predict(self, X: Any) -> np.ndarray:
        """Class label of each sample."""
        assert self.classes is not None
        return self.classes[self.predict_index(X)]

    def check_thresholds(self) -> None:
        """Raise a :class:`DataError` naming the tree and node of a NaN or infinite split threshold.

        :class:`DecisionTree` refuses one when it is built; this catches a threshold changed afterwards (NaN
        compares false both ways: the cell grid, the dynamic program and the heuristic cannot place it).
        """
        for t, tree in enumerate(self.trees):
            bad = np.flatnonzero(~tree.is_leaf & ~np.isfinite(tree.threshold))
            if bad.size:
                raise DataError(f"tree {t}: node {int(bad[0])} splits at threshold {tree.threshold[bad[0]]} "
                                f"({bad.size} such node(s)); a split needs a finite threshold")

    def thresholds(self) -> list[np.ndarray]:
        """Per feature, the sorted distinct split values the trees use (the hyperplane levels of the paper);
        a :class:`DataError` for a non-finite one (:meth:`check_thresholds`)."""
        self.check_thresholds()
        per: list[list[np.ndarray]] = [[] for _ in range(self.n_features)]
        for tree in self.trees:
            inner = ~tree.is_leaf
            for j in np.unique(tree.feature[inner]):
                per[int(j)].append(tree.threshold[inner & (tree.feature == j)])
        return [np.unique(np.concatenate(v)) if v else np.zeros(0) for v in per]
