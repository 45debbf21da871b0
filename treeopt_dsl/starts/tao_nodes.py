"""TAO on CART's own nodes, as seed 004's author runs it (thesis Tables 3.4-3.6's TAO column).

Carreira-Perpiñán & Tavallali's TAO (NeurIPS 2018) alternates over the nodes of a fixed tree, deepest level
first: a leaf takes the majority class of the training points reaching it, a decision node the axis-aligned cut
of least 0/1 error on its *care points* (those its two subtrees classify differently, one of them correctly; the
target is the subtree that is right). :func:`~treeopt_dsl.starts.tao.tao` runs it on the library's complete
layout. This module runs it as the author of seed 004 does (his public code of the same TAO,
github.com/tom1092/Sparse-Minimal-Decision-Trees, ``local_optimizers.py``, read, not copied), which differs in
four readings that move test accuracy though not the training error much:

* the tree is CART's, node for node (a leaf above the last level stays a leaf);
* a node's candidate cuts lie on its care points' values only: after each group of equal values, at the
  midpoint to the next value when the group is one point, at the value itself when it is several (and "all
  left" only when the last group has several points); at least two care points are needed;
* the first cut of least error wins, in the order of the features and then of the values, even over the
  node's current cut (ties are not kept);
* a fixed number of passes (7), then a pure decision node becomes a leaf of its class and a node with an empty
  child is replaced by its other child.

With these readings and the author's splits (``[data] split = "sklearn"``) the TAO column of Tables 3.4-3.6
comes out as the paper prints it on the sets checked (``benchmarks/reproduction_causes.py --probe-author-splits``).
"""

from __future__ import annotations

import numpy as np

from treeopt_dsl.errors import DataError
from treeopt_dsl.models.decision_tree import DecisionTree

POSITIVE = 1  # the index of class +1 in the trees of this module (``classes = [-1, +1]``)
#: the TAOs a TAO or TMO run may use: the library's (:func:`~treeopt_dsl.starts.tao.tao`) or seed 004's author's
TAO_VARIANTS = ("library", "seed004")
#: the author's number of passes (``local_optimizers.py``)
AUTHOR_PASSES = 7


def _check_classes(tree: DecisionTree) -> None:
    if tree.classes is None or tree.classes.tolist() != [-1, 1]:
        got = None if tree.classes is None else tree.classes.tolist()
        raise DataError(f"the author's TAO takes a tree of classes [-1, 1] (CART fitted on -1/+1), got {got}")


def first_best_cut(Xc: np.ndarray, right: np.ndarray, w: np.ndarray) -> tuple[int, float] | None:
    """The author's cut on the care points ``Xc`` (``right``: the right subtree is the one that is right; ``w``
    their weights): the first ``(feature, threshold)`` of least weighted error, features in order, then values;
    ``None`` with fewer than two care points. Every feature at once (numpy over the sorted columns).

        >>> first_best_cut(np.array([[0.0], [1.0], [2.0]]), np.array([False, True, True]), np.ones(3))
        (0, 0.5)
    """
    m = len(Xc)
    if m < 2:
        return None
    order = np.argsort(Xc, axis=0, kind="stable")
    V = np.take_along_axis(Xc, order, axis=0)  # m x p, each column sorted
    R = right[order]
    W = w[order]
    ones_left = np.cumsum(W * R, axis=0)  # right-correct points sent left: errors
    zeros_left = np.cumsum(W * ~R, axis=0)
    loss = ones_left + (zeros_left[-1] - zeros_left)  # the cut after row i of each column
    end = np.ones_like(V, dtype=bool)  # row i ends its group of equal values
    end[:-1] = V[:-1] != V[1:]
    single = np.ones_like(V, dtype=bool)  # ... and the group is that row alone
    single[1:] = V[1:] != V[:-1]
    single &= end
    valid = end.copy()
    valid[-1] = V[-1] == V[-2]  # "all left": only where the last group has several points
    loss = np.where(valid, loss, np.inf).T  # features first: the first minimum in the author's order
    k = int(np.argmin(loss))
    if not np.isfinite(loss.flat[k]):
        return None
    j, i = divmod(k, m)
    thr = 0.5 * (V[i, j] + V[i + 1, j]) if single[i, j] and i < m - 1 else V[i, j]
    return j, float(thr)


def tao_nodes(X: np.ndarray, y: np.ndarray, tree: DecisionTree, *, n_iter: int = AUTHOR_PASSES,
              sample_weight: np.ndarray | None = None) -> tuple[DecisionTree, list[float]]:
    """The author's TAO (module doc) on ``tree`` (classes ``[-1, 1]``, ``dtype="float64"`` to compare ``x`` as
    the author's code does; its cuts and leaves are changed in place) with labels ``y`` in {-1, +1}: the pruned
    tree (a new one) and the weighted training error after each pass.

        >>> from sklearn.tree import DecisionTreeClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3)); y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
        >>> cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
        >>> tree, history = tao_nodes(X, y, DecisionTree.from_sklearn(cart, dtype="float64"))
        >>> bool(history[-1] <= np.sum(cart.predict(X) != y))
        True
    """
    _check_classes(tree)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    assert tree.classes is not None
    depth, leaf, classes = tree.node_depth, tree.is_leaf, tree.classes
    history = []
    for _ in range(int(n_iter)):
        for level in range(tree.depth, -1, -1):
            on = tree.decision_path(X)  # once per level: the nodes of one level hold disjoint rows
            for t in np.flatnonzero(depth == level):
                rows = np.flatnonzero(on[:, t])
                if len(rows) == 0:
                    continue
                if leaf[t]:  # the weighted majority; a tie goes to -1 (the author's class 0)
                    tree.value[t] = POSITIVE if w[rows][y[rows] > 0].sum() > w[rows][y[rows] < 0].sum() else 0
                    continue
                Xt = X[rows]
                left = classes[tree.predict_index(Xt, int(tree.left[t]))]
                right = classes[tree.predict_index(Xt, int(tree.right[t]))]
                care = (left != right) & ((left == y[rows]) | (right == y[rows]))
                cut = first_best_cut(Xt[care], right[care] == y[rows][care], w[rows][care])
                if cut is not None:
                    tree.feature[t], tree.threshold[t] = cut
        history.append(float(w[classes[tree.predict_index(X)] != y].sum()))
    return prune(X, y, tree), history


def prune(X: np.ndarray, y: np.ndarray, tree: DecisionTree) -> DecisionTree:
    """The author's last step, as a new tree: a decision node whose training rows share one class becomes a leaf
    of it, one with an empty child is replaced by its other child (nodes no row reaches stay as they are)."""
    _check_classes(tree)
    on = tree.decision_path(X)
    feature, threshold, left, right, value = (a.copy() for a in (tree.feature, tree.threshold, tree.left,
                                                                  tree.right, tree.value))
    n_rows = on.sum(axis=0)
    stack = [0]
    while stack:
        t = stack.pop()
        if n_rows[t] == 0 or left[t] < 0:
            continue
        rows = np.flatnonzero(on[:, t])
        if np.all(y[rows] == y[rows[0]]):
            feature[t], left[t], right[t], value[t] = -1, -1, -1, POSITIVE if y[rows[0]] > 0 else 0
        elif n_rows[left[t]] == 0 or n_rows[right[t]] == 0:
            keep = right[t] if n_rows[left[t]] == 0 else left[t]
            for arr in (feature, threshold, left, right, value):
                arr[t] = arr[keep]
            stack.append(t)  # the node now holds its child's subtree, over the same rows
        else:
            stack += [int(right[t]), int(left[t])]
    order = []  # the nodes still reached from the root, numbered in preorder
    stack = [0]
    while stack:
        t = stack.pop()
        order.append(t)
        if left[t] >= 0:
            stack += [int(right[t]), int(left[t])]
    idx = np.array(order)
    new = np.full(len(feature) + 1, -1)  # new[-1] = -1: a leaf's children stay -1
    new[idx] = np.arange(len(idx))
    return DecisionTree(feature=feature[idx], threshold=threshold[idx], left=new[left[idx]],
                        right=new[right[idx]], value=value[idx], classes=tree.classes,
                        n_features=tree.n_features, feature_names=tree.feature_names, dtype=tree.dtype)
