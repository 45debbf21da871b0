"""The forest of a contextual tree (thesis §5.3, [aldinucci-thesis-2024] line 1651): CART's maximum depth validated over
{2, 3, 4}, then a random forest of ``B = 50`` trees of that depth, scikit-learn defaults otherwise; the matrix
of every tree's answer on every sample, computed once; a tree of the forest as the library's
:class:`~treeopt_dsl.models.decision_tree.DecisionTree`; a sample's decision path as text.

Loops here run over the ``B`` trees (or the depth levels of a path), never over samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from treeopt_dsl.models.decision_tree import DecisionTree

__all__ = ["fit_forest", "path_texts", "to_decision_tree", "tree_predictions", "tree_probabilities",
           "validate_depth"]


def _f32(X: np.ndarray) -> np.ndarray:
    """scikit-learn's trees compare ``float32(x)`` with their thresholds; ``check_input=False`` wants this."""
    return np.ascontiguousarray(X, dtype=np.float32)


def validate_depth(X_train: np.ndarray, y_train: np.ndarray, X_val: np.ndarray, y_val: np.ndarray,
                   depths: Sequence[int], regression: bool, seed: int) -> tuple[int, Any, dict[int, float]]:
    """The grid search of line 1651: a CART tree of each maximum depth fitted on the training part and scored
    on the validation part (accuracy, or mean squared error for regression); the best depth (the smaller one
    on a tie: the more interpretable), its fitted CART tree, and every depth's validation score."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    scores: dict[int, float] = {}
    fitted: dict[int, Any] = {}
    for d in sorted({int(v) for v in depths}):
        tree = (DecisionTreeRegressor if regression else DecisionTreeClassifier)(max_depth=d, random_state=seed)
        tree.fit(X_train, y_train)
        pred = tree.predict(X_val)
        scores[d] = float(np.mean((pred - y_val) ** 2)) if regression else float(np.mean(pred == y_val))
        fitted[d] = tree
    if regression:  # smallest error, then smallest depth
        best = min(scores, key=lambda d: (scores[d], d))
    else:  # largest accuracy, then smallest depth
        best = max(scores, key=lambda d: (scores[d], -d))
    return best, fitted[best], scores


def fit_forest(X: np.ndarray, y: np.ndarray, n_trees: int, depth: int, regression: bool, seed: int) -> Any:
    """A scikit-learn random forest of ``n_trees`` trees of maximum depth ``depth``, every other
    hyperparameter at scikit-learn's default (line 1651), fitted on the training part."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    cls = RandomForestRegressor if regression else RandomForestClassifier
    return cls(n_estimators=int(n_trees), max_depth=int(depth), random_state=seed).fit(X, y)


def tree_predictions(forest: Any, X: np.ndarray) -> np.ndarray:
    """``(n_samples, B)``: every tree's answer on every sample (class *codes* ``0..K-1`` into
    ``forest.classes_`` for a classifier, values for a regressor). One vectorized call per tree."""
    X32 = _f32(X)
    if hasattr(forest, "classes_"):
        return np.stack([t.predict(X32, check_input=False) for t in forest.estimators_], axis=1).astype(np.int64)
    return np.stack([t.predict(X32, check_input=False) for t in forest.estimators_], axis=1).astype(np.float64)


def tree_probabilities(forest: Any, X: np.ndarray, y_codes: np.ndarray) -> np.ndarray:
    """``(n_samples, B)``: the probability each tree gives sample ``i``'s true class ``y_codes[i]`` (its leaf's
    class frequency), for the supervised baseline's labels."""
    X32 = _f32(X)
    rows = np.arange(X32.shape[0])
    return np.stack([t.predict_proba(X32, check_input=False)[rows, y_codes] for t in forest.estimators_], axis=1)


def to_decision_tree(estimator: Any, classes: np.ndarray | None, feature_names: Sequence[str] | None) -> DecisionTree:
    """A tree of the forest as a :class:`DecisionTree` of the library (``dtype="float32"``, as scikit-learn).

    Classification (``classes`` given): the forest's trees are fitted on class codes; their leaves get
    ``classes`` back. Regression (``classes=None``): a :class:`DecisionTree` holds a class index per leaf, so
    the distinct leaf values become its ``classes`` and each leaf points at its value; ``predict`` then returns
    the leaf means, exactly as the scikit-learn tree.
    """
    names = tuple(feature_names) if feature_names is not None else None
    if classes is not None:
        t = DecisionTree.from_sklearn(estimator, feature_names=names)
        return DecisionTree(feature=t.feature, threshold=t.threshold, left=t.left, right=t.right, value=t.value,
                            classes=np.asarray(classes), n_features=t.n_features, feature_names=names,
                            dtype="float32")
    tr = estimator.tree_
    left = np.asarray(tr.children_left, dtype=np.int64)
    leaf = left < 0
    leaf_value = tr.value[:, 0, 0]
    values, index = np.unique(leaf_value[leaf], return_inverse=True)
    value = np.full(left.size, -1, dtype=np.int64)
    value[leaf] = index
    return DecisionTree(feature=np.where(leaf, -1, tr.feature), threshold=np.where(leaf, 0.0, tr.threshold),
                        left=left, right=np.asarray(tr.children_right, dtype=np.int64), value=value,
                        classes=values, n_features=int(tr.n_features), feature_names=names, dtype="float32")


def path_texts(tree: DecisionTree, X: np.ndarray, regression: bool, decimals: int = 2) -> list[str]:
    """Each sample's root-to-leaf path through ``tree`` in the library's tree text (the lines of
    :meth:`DecisionTree.text` that the sample passes), ending with the leaf's class (or value).

    The path is followed one depth level at a time for all samples together; only the final joining of the
    lines into strings touches each sample.
    """
    Xa = tree._check_X(X)
    n = Xa.shape[0]
    depth = tree.depth
    steps = np.full((n, depth), -1, dtype=np.int64)  # node tested at each level (-1 once at the leaf)
    went_left = np.zeros((n, depth), dtype=bool)
    node = np.zeros(n, dtype=np.int64)
    for level in range(depth):
        inner = tree.left[node] >= 0
        steps[inner, level] = node[inner]
        nd = node[inner]
        go = Xa[inner, tree.feature[nd]] <= tree.threshold[nd]
        went_left[inner, level] = go
        node[inner] = np.where(go, tree.left[nd], tree.right[nd])
    assert tree.classes is not None
    names = [tree._name(j) for j in range(int(tree.n_features or 0))]
    leaf_word = "value" if regression else "class"
    out: list[str] = []
    for i in range(n):
        lines = []
        for level in range(depth):
            v = steps[i, level]
            if v < 0:
                break
            op = "<=" if went_left[i, level] else "> "
            lines.append(f"{'|   ' * level}|--- {names[tree.feature[v]]} {op} {float(tree.threshold[v]):.{decimals}f}")
        leaf_val = tree.classes[tree.value[node[i]]]
        shown = f"{float(leaf_val):.{decimals + 2}g}" if regression else str(leaf_val)
        lines.append(f"{'|   ' * len(lines)}|--- {leaf_word}: {shown}")
        out.append("\n".join(lines))
    return out
