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

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class NodeTree:
    """A binary tree in scikit-learn's ``tree_`` arrays (what :func:`~treeopt_dsl.starts.tao.from_sklearn`
    reads): ``children_left`` / ``children_right`` (-1 at a leaf), ``feature``, ``threshold`` ("left iff
    ``x[feature] <= threshold``"), ``value`` (``n x 1 x 2``: one-hot of the leaf's class, -1 first, +1 second)."""

    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray

    @classmethod
    def of(cls, tree_: Any) -> NodeTree:
        """A copy of a fitted scikit-learn ``tree_`` (two classes, -1 then +1), its leaves labelled as CART's."""
        value = np.asarray(tree_.value)[:, 0, :2]
        one_hot = np.zeros((len(value), 1, 2))
        one_hot[np.arange(len(value)), 0, value.argmax(axis=1)] = 1.0
        return cls(np.array(tree_.children_left), np.array(tree_.children_right), np.array(tree_.feature),
                   np.array(tree_.threshold, dtype=float), one_hot)

    @property
    def max_depth(self) -> int:
        """The depth of the deepest node (what :func:`~treeopt_dsl.starts.tao.from_sklearn` checks)."""
        return int(self.depths().max())

    def depths(self) -> np.ndarray:
        """Each node's depth (the root's 0)."""
        d = np.zeros(len(self.feature), dtype=int)
        for t in range(len(d)):  # children follow their parent in scikit-learn's and this module's order
            for c in (self.children_left[t], self.children_right[t]):
                if c >= 0:
                    d[c] = d[t] + 1
        return d

    def is_leaf(self, t: int) -> bool:
        return bool(self.children_left[t] < 0)

    def label(self, t: int) -> int:
        """The class (-1 or +1) of leaf ``t``."""
        return 1 if self.value[t, 0, 1] > self.value[t, 0, 0] else -1

    def set_label(self, t: int, label: int) -> None:
        self.value[t, 0] = (0.0, 1.0) if label > 0 else (1.0, 0.0)

    def reach(self, X: np.ndarray) -> dict[int, np.ndarray]:
        """The rows of ``X`` reaching each node from the root (every node of the root's tree)."""
        out = {0: np.arange(len(X))}
        stack = [0]
        while stack:
            t = stack.pop()
            if self.is_leaf(t):
                continue
            rows = out[t]
            go_left = X[rows, self.feature[t]] <= self.threshold[t]
            out[int(self.children_left[t])], out[int(self.children_right[t])] = rows[go_left], rows[~go_left]
            stack += [int(self.children_left[t]), int(self.children_right[t])]
        return out

    def predict_from(self, X: np.ndarray, t: int) -> np.ndarray:
        """The class (-1 / +1) the subtree rooted at ``t`` gives each row of ``X``."""
        out = np.empty(len(X), dtype=int)
        stack = [(t, np.arange(len(X)))]
        while stack:
            s, rows = stack.pop()
            if self.is_leaf(s):
                out[rows] = self.label(s)
                continue
            go_left = X[rows, self.feature[s]] <= self.threshold[s]
            stack += [(int(self.children_left[s]), rows[go_left]), (int(self.children_right[s]), rows[~go_left])]
        return out


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


def tao_nodes(X: np.ndarray, y: np.ndarray, tree: NodeTree, *, n_iter: int = 7,
              sample_weight: np.ndarray | None = None) -> tuple[NodeTree, list[float]]:
    """The author's TAO (module doc) on ``tree`` (changed in place and returned) with labels ``y`` in {-1, +1};
    the second value is the weighted training error after each pass.

        >>> from sklearn.tree import DecisionTreeClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3)); y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
        >>> cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
        >>> tree, history = tao_nodes(X, y, NodeTree.of(cart.tree_))
        >>> bool(history[-1] <= np.sum(cart.predict(X) != y))
        True
    """
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    depth = tree.depths()
    history = []
    for _ in range(int(n_iter)):
        for level in range(int(depth.max()), -1, -1):
            reach = tree.reach(X)  # once per level: the nodes of one level hold disjoint rows
            for t, rows in reach.items():
                if depth[t] != level or len(rows) == 0:
                    continue
                if tree.is_leaf(t):  # the weighted majority; a tie goes to -1 (the author's class 0)
                    tree.set_label(t, 1 if w[rows][y[rows] > 0].sum() > w[rows][y[rows] < 0].sum() else -1)
                    continue
                Xt = X[rows]
                left = tree.predict_from(Xt, int(tree.children_left[t]))
                right = tree.predict_from(Xt, int(tree.children_right[t]))
                care = (left != right) & ((left == y[rows]) | (right == y[rows]))
                cut = first_best_cut(Xt[care], right[care] == y[rows][care], w[rows][care])
                if cut is not None:
                    tree.feature[t], tree.threshold[t] = cut
        pred = tree.predict_from(X, 0)
        history.append(float(w[pred != y].sum()))
    prune(X, y, tree)
    return tree, history


def prune(X: np.ndarray, y: np.ndarray, tree: NodeTree) -> None:
    """The author's last step: a decision node whose training rows share one class becomes a leaf of it, one
    with an empty child is replaced by its other child (nodes no row reaches stay as they are)."""
    reach = tree.reach(X)
    stack = [0]
    while stack:
        t = stack.pop()
        rows = reach.get(t, np.empty(0, dtype=int))
        if len(rows) == 0 or tree.is_leaf(t):
            continue
        left, right = int(tree.children_left[t]), int(tree.children_right[t])
        if np.all(y[rows] == y[rows[0]]):
            tree.children_left[t] = tree.children_right[t] = -1
            tree.set_label(t, int(y[rows[0]]))
        elif len(reach[left]) == 0 or len(reach[right]) == 0:
            keep = right if len(reach[left]) == 0 else left
            for arr in (tree.children_left, tree.children_right, tree.feature, tree.threshold):
                arr[t] = arr[keep]
            tree.value[t] = tree.value[keep]
            stack.append(t)  # the node now holds its child's subtree, over the same rows
        else:
            stack += [right, left]
