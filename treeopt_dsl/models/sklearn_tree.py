"""A fitted tree in scikit-learn's layout: the structure behind ``to_sklearn``, ``apply``, ``decision_path``,
``get_depth``, ``get_n_leaves`` and ``feature_importances_`` of the tree estimators.

:func:`flatten` reads a balanced :class:`~treeopt_dsl.models.tree.TreeModel` as a :class:`FlatTree`: the nodes a
sample can actually take, numbered depth first (left child first) as scikit-learn numbers them. A branch node whose
hyperplane has no feature (``w_t = 0``: every sample goes one way) is skipped, and a last-level node whose two
leaves hold the same class is one leaf, so a depth-2 tree whose lower splits are constant has the 2 leaves of its
root. An axis-aligned node whose coefficient is negative sends ``x_j <= c`` to the model's *right*: its children
are swapped (``flip``) so that the flat left child is always where scikit-learn's ``x <= threshold`` goes.

:func:`sklearn_classifier` builds a fitted :class:`sklearn.tree.DecisionTreeClassifier` from flat arrays (the
node array of :class:`sklearn.tree._tree.Tree`, set through ``__setstate__`` as unpickling does), so that
:func:`~sklearn.tree.plot_tree`, :func:`~sklearn.tree.export_text` and :func:`~sklearn.tree.export_graphviz` draw
it; :func:`impurity_importances` is scikit-learn's mean decrease in (weighted Gini) impurity and
:func:`oblique_importances` the definition this library uses for oblique trees.

Example::

    >>> import numpy as np
    >>> flat = FlatTree(node=np.array([0, -1, -1]), left=np.array([1, -1, -1]), right=np.array([2, -1, -1]),
    ...                 flip=np.zeros(3, bool), last=np.array([True, False, False]), code=np.array([-1, 0, 1]))
    >>> flat.depth_of().tolist(), flat.n_leaves
    ([0, 1, 1], 2)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.tree import DecisionTreeClassifier
from sklearn.tree._tree import NODE_DTYPE, TREE_LEAF, TREE_UNDEFINED, Tree

from treeopt_dsl.errors import CapabilityError, OptionError
from treeopt_dsl.models.tree import TreeModel

__all__ = ["FlatTree", "flatten", "impurity_importances", "node_weights", "oblique_importances",
           "prune_misclassification", "sklearn_classifier", "split_thresholds"]

#: how many ulps around the computed cut :func:`split_thresholds` searches for the model's exact boundary
ULP_WINDOW = 16


@dataclass
class FlatTree:
    """The reachable nodes of a :class:`TreeModel`, depth first (scikit-learn's numbering).

    Attributes
    ----------
    node
        The model's branch node ``t`` of each flat branch node, ``-1`` at leaves.
    left, right
        Flat children (``-1`` at leaves); ``left`` is where ``x_j <= threshold`` goes.
    flip
        The flat left child is the model's *right* side (an axis-aligned node with ``w_tj < 0``).
    last
        The node is on the model's last level (its rule is the leaf rule of ``predict``).
    code
        Class code (position in ``classes``) at leaves, ``-1`` at branch nodes.
    """

    node: np.ndarray
    left: np.ndarray
    right: np.ndarray
    flip: np.ndarray
    last: np.ndarray
    code: np.ndarray

    @property
    def n_nodes(self) -> int:
        return int(self.node.size)

    @property
    def n_leaves(self) -> int:
        return int(np.sum(self.left < 0))

    def depth_of(self) -> np.ndarray:
        """Depth of every flat node (root 0)."""
        return _depths(self.left, self.right)

    @property
    def depth(self) -> int:
        return int(self.depth_of().max())

    def goes_left(self, tree: TreeModel, X: Any) -> np.ndarray:
        """``(n_samples, n_nodes)``: whether each sample would go to the flat left child at each branch node
        (the model's own rule on its scores, so oblique nodes route exactly as ``predict``)."""
        V = tree.scores(X)
        inner = np.flatnonzero(self.node >= 0)
        out = np.zeros((V.shape[0], self.n_nodes), dtype=bool)
        for i in inner:  # at most 2^d - 1 columns, each one numpy comparison
            right = tree._side(V[:, self.node[i]], bool(self.last[i]))
            out[:, i] = right if self.flip[i] else ~right
        return out

    def apply(self, tree: TreeModel, X: Any) -> np.ndarray:
        """The flat leaf each sample reaches (one numpy step per level, never per sample)."""
        left = self.goes_left(tree, X)
        at = np.zeros(left.shape[0], dtype=np.int64)
        rows = np.arange(left.shape[0])
        while True:
            inner = self.left[at] >= 0
            if not inner.any():
                return at
            step = np.where(left[rows, at], self.left[at], self.right[at])
            at = np.where(inner, step, at)

    def decision_path(self, tree: TreeModel, X: Any) -> np.ndarray:
        """Boolean ``(n_samples, n_nodes)``: node ``i`` lies on the sample's path."""
        left = self.goes_left(tree, X)
        n = left.shape[0]
        on = np.zeros((n, self.n_nodes), dtype=bool)
        at = np.zeros(n, dtype=np.int64)
        rows = np.arange(n)
        on[:, 0] = True
        active = self.left[at] >= 0
        while active.any():
            r = rows[active]
            at[r] = np.where(left[r, at[r]], self.left[at[r]], self.right[at[r]])
            on[r, at[r]] = True
            active = self.left[at] >= 0
        return on


def _leaf_codes(tree: TreeModel, t: int) -> tuple[int, int]:
    """Class codes of the two leaves (side 0, side 1) below last-level node ``t``."""
    if tree.leaf_classes is None:
        return 0, 1
    j = int(np.searchsorted(tree.topology.last, t))
    return int(tree.leaf_classes[2 * j]), int(tree.leaf_classes[2 * j + 1])


def _constant_side(tree: TreeModel, t: int, last: bool) -> bool | None:
    """The side (``True``: right) every sample takes at node ``t``, or ``None`` when the node splits."""
    w = tree.W[t]
    used = np.flatnonzero(w != 0)
    if used.size == 0:
        return bool(tree._side(np.array([tree.b[t]]), last)[0])
    if used.size == 1 and getattr(tree.scaler, "kind", None) == "cuts":  # a 0/1 column: two possible scores
        s0, s1 = tree._side(np.array([tree.b[t], tree.b[t] + w[used[0]]]), last)
        if s0 == s1:
            return bool(s0)
    return None


def flatten(tree: TreeModel) -> FlatTree:
    """The :class:`FlatTree` of ``tree`` (the module docstring): constant splits skipped, a last-level node with
    two leaves of one class made a leaf, depth-first numbering, negative axis-aligned coefficients flipped."""
    topo = tree.topology
    node: list[int] = []
    left: list[int] = []
    right: list[int] = []
    flip: list[bool] = []
    last: list[bool] = []
    code: list[int] = []

    def new(t: int, f: bool, is_last: bool, c: int) -> int:
        node.append(t)
        left.append(-1)
        right.append(-1)
        flip.append(f)
        last.append(is_last)
        code.append(c)
        return len(node) - 1

    def visit(t: int) -> int:
        is_last = int(topo.level[t]) == topo.depth
        side = _constant_side(tree, t, is_last)
        codes = _leaf_codes(tree, t) if is_last else None
        if side is not None:
            if codes is not None:
                return new(-1, False, False, codes[int(side)])
            return visit(2 * t + 1 + int(side))
        if codes is not None and codes[0] == codes[1]:
            return new(-1, False, False, codes[0])
        used = np.flatnonzero(tree.W[t] != 0)
        f = bool(used.size == 1 and tree.W[t, used[0]] < 0)
        i = new(t, f, is_last, -1)
        if codes is not None:
            kids = [new(-1, False, False, codes[0]), new(-1, False, False, codes[1])]
        else:
            kids = [visit(2 * t + 1), visit(2 * t + 2)]
        if f:
            kids.reverse()
        left[i], right[i] = kids
        return i

    visit(0)
    ints = [np.asarray(v, dtype=np.int64) for v in (node, left, right)]
    return FlatTree(*ints, np.asarray(flip, dtype=bool), np.asarray(last, dtype=bool),
                    np.asarray(code, dtype=np.int64))


def split_thresholds(tree: TreeModel, flat: FlatTree, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """``(feature, threshold)`` of every flat node in the raw features' units, scikit-learn's rule: the flat left
    child iff ``x[feature] <= threshold`` (``-2``, scikit-learn's undefined, at leaves).

    The cut ``c = shift + scale (T - b) / w`` (``T`` the node's threshold: ``eps / 2`` inside, the leaf rule's at
    the last level) is refined to the model's exact boundary in float64: the largest ``x`` among ``c`` and its
    :data:`ULP_WINDOW` neighbours on each side that the model sends to the flat left child. Raises
    :class:`CapabilityError` when a split tests more than one feature (an oblique tree)."""
    feature = np.full(flat.n_nodes, TREE_UNDEFINED, dtype=np.int64)
    threshold = np.full(flat.n_nodes, float(TREE_UNDEFINED))
    sc = tree.scaler
    cuts = getattr(sc, "kind", None) == "cuts"
    for i in np.flatnonzero(flat.node >= 0):  # one node at a time: at most 2^d - 1
        t = int(flat.node[i])
        used = np.flatnonzero(tree.W[t] != 0)
        if used.size != 1:
            raise CapabilityError(f"to_sklearn: node {t} of the tree splits on {used.size} features (an oblique "
                                  "split); a scikit-learn DecisionTreeClassifier tests one feature per node, so only "
                                  "axis-aligned trees convert (e.g. formulation='oct' or 'olct_univariate')")
        j = int(used[0])
        if cuts:  # column j is [x_f > theta]: the flat left child is x_f <= theta either way (flip swaps sides)
            feature[i], threshold[i] = int(sc.bz.feature[j]), float(sc.bz.threshold[j])
            continue
        last = bool(flat.last[i])
        T = (tree.leaf_threshold if tree.leaf_threshold > 0 else 0.0) if last else tree.threshold
        c = float(sc.shift_[j] + sc.scale_[j] * (T - tree.b[t]) / tree.W[t, j])
        steps = np.arange(-ULP_WINDOW, ULP_WINDOW + 1)
        cand = c + steps * np.spacing(c) if np.isfinite(c) else np.array([c])
        cand = np.unique(cand)
        rows = np.tile(np.asarray(sc.shift_, dtype=float), (cand.size, 1))
        rows[:, j] = cand
        right = tree._side(tree.scores(rows, scaled=False)[:, t], last)
        goes_left = right if flat.flip[i] else ~right
        k = int(goes_left.sum())
        # monotone in x: the flat left side is a prefix of the sorted candidates; its last one is the threshold
        prefix = 0 < k < cand.size and bool(goes_left[:k].all())
        feature[i] = j
        threshold[i] = float(cand[k - 1]) if prefix else c
    return feature, threshold


def node_weights(on: np.ndarray, codes: np.ndarray, n_classes: int,
                 sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(weights, counts)`` per node from a ``(n_samples, n_nodes)`` path indicator: the training weight of each
    class (``n_nodes x n_classes``) and the number of samples reaching each node."""
    sw = np.ones(on.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    weights = np.zeros((on.shape[1], n_classes))
    for i in range(on.shape[1]):  # one bincount per node (at most 2^(d+1) - 1), no per-sample loop
        rows = on[:, i]
        weights[i] = np.bincount(codes[rows], weights=sw[rows], minlength=n_classes)
    return weights, on.sum(0).astype(np.int64)


def _depths(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Depth of every node (root 0), one level at a time from the root (any numbering)."""
    depth = np.zeros(left.size, dtype=np.int64)
    frontier, d = np.array([0]), 0
    while frontier.size:
        depth[frontier] = d
        inner = frontier[left[frontier] >= 0]
        frontier, d = np.concatenate([left[inner], right[inner]]), d + 1
    return depth


def _gini(weights: np.ndarray) -> np.ndarray:
    total = weights.sum(1)
    p = weights / np.where(total > 0, total, 1.0)[:, None]
    return np.where(total > 0, 1.0 - np.sum(p * p, axis=1), 0.0)


def impurity_importances(left: np.ndarray, right: np.ndarray, feature: np.ndarray, weights: np.ndarray,
                         n_features: int) -> np.ndarray:
    """scikit-learn's ``feature_importances_``: per feature, the weighted Gini impurity decrease
    ``W_i g_i - W_l g_l - W_r g_r`` summed over its splits, divided by the root's weight and normalized to sum 1
    (all zeros when no split decreases the impurity)."""
    g = _gini(weights)
    W = weights.sum(1)
    inner = np.flatnonzero(left >= 0)
    dec = W[inner] * g[inner] - W[left[inner]] * g[left[inner]] - W[right[inner]] * g[right[inner]]
    imp = np.bincount(feature[inner], weights=dec, minlength=n_features)[:n_features]
    total = imp.sum()
    return imp / total if total > 0 else imp


def oblique_importances(tree: TreeModel, flat: FlatTree, weights: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Importances of an oblique tree: ``sum_t W_t sum |w_tj| sd_j`` over the flat branch nodes, normalized to
    sum 1, with ``W_t`` the training weight reaching node ``t`` and ``sd_j`` the standard deviation of the scaled
    training feature ``j`` (``|w_tj| sd_j`` is the standardized coefficient: 1 sd of feature ``j`` moves the
    node's score by it)."""
    inner = np.flatnonzero(flat.node >= 0)
    reach = weights.sum(1)[inner]
    imp = (reach[:, None] * np.abs(tree.W[flat.node[inner]]) * np.asarray(spread)[None, :]).sum(0)
    total = imp.sum()
    return imp / total if total > 0 else imp


def sklearn_classifier(left: np.ndarray, right: np.ndarray, feature: np.ndarray, threshold: np.ndarray,
                       code: np.ndarray, weights: np.ndarray | None, counts: np.ndarray | None, classes: Any,
                       n_features: int, feature_names: Any = None) -> DecisionTreeClassifier:
    """A fitted :class:`sklearn.tree.DecisionTreeClassifier` with exactly this tree.

    ``code`` is each leaf's class code; ``weights``/``counts`` (training weight per class, samples per node) fill
    ``value``, ``impurity`` (Gini), ``weighted_n_node_samples`` and ``n_node_samples`` (``None``: one-hot values,
    zero counts). A leaf's ``value`` is the class fractions of its training weight, one-hot on the leaf's class
    when those fractions would rank another class first (scikit-learn predicts the ``argmax`` of ``value``).
    """
    classes = np.asarray(classes)
    K, n = int(classes.size), int(left.size)
    leaf = left < 0
    own = np.eye(K)[np.where(leaf, code, 0)]
    if weights is None:
        weights = own.copy()
        counts = np.zeros(n, dtype=np.int64)
    total = weights.sum(1)
    value = np.where(total[:, None] > 0, weights / np.where(total > 0, total, 1.0)[:, None], own)
    bad = leaf & (np.argmax(value, axis=1) != code)
    value[bad] = own[bad]
    nodes = np.zeros(n, dtype=NODE_DTYPE)
    nodes["left_child"] = np.where(leaf, TREE_LEAF, left)
    nodes["right_child"] = np.where(leaf, TREE_LEAF, right)
    nodes["feature"] = np.where(leaf, TREE_UNDEFINED, feature)
    nodes["threshold"] = np.where(leaf, float(TREE_UNDEFINED), threshold)
    nodes["impurity"] = _gini(weights)
    nodes["n_node_samples"] = counts
    nodes["weighted_n_node_samples"] = total
    nodes["missing_go_to_left"] = 0
    depth = _depths(left, right)
    tree = Tree(int(n_features), np.array([K], dtype=np.intp), 1)
    tree.__setstate__({"max_depth": int(depth.max()), "node_count": n, "nodes": nodes,
                       "values": np.ascontiguousarray(value[:, None, :])})
    clf = DecisionTreeClassifier(max_depth=int(depth.max()) or None)
    clf.tree_ = tree
    clf.classes_ = classes
    clf.n_classes_ = K
    clf.n_outputs_ = 1
    clf.n_features_in_ = int(n_features)
    clf.max_features_ = int(n_features)
    if feature_names is not None:
        clf.feature_names_in_ = np.asarray(feature_names, dtype=object)
    return clf


def cp_splits(left: np.ndarray, right: np.ndarray, weights: np.ndarray, cp: float) -> np.ndarray:
    """Which nodes stay split when a tree is pruned at rpart's ``cp`` (bool per node; see
    :func:`prune_misclassification`): ``left`` / ``right`` are the children (``-1`` at a leaf; children numbered
    after their parent), ``weights[i, c]`` the training weight of class ``c`` at node ``i`` (row 0: the root)."""
    if isinstance(cp, bool) or not isinstance(cp, (int, float)) or not 0.0 <= float(cp) < np.inf:
        raise OptionError(f"cp must be a number >= 0 (rpart's complexity parameter; its default 0.01), got {cp!r}")
    leaf_cost = weights.sum(1) - weights.max(1) + float(cp) * float(weights[0].sum() - weights[0].max())
    best, split = leaf_cost.copy(), np.zeros(left.size, dtype=bool)
    for i in range(left.size - 1, -1, -1):  # a node's children are decided before it (one pass over the nodes)
        if left[i] >= 0:
            sub = best[left[i]] + best[right[i]]
            if sub < leaf_cost[i] - 1e-9 * max(1.0, leaf_cost[i]):
                best[i], split[i] = sub, True
    return split


def kept_nodes(left: np.ndarray, right: np.ndarray, split: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nodes a pruning keeps (``split``: which stay split), renumbered depth first, left child first, as
    scikit-learn numbers its nodes: their old numbers and their new children (``-1`` at a leaf)."""
    order, stack = [], [0]
    while stack:
        i = stack.pop()
        order.append(i)
        if split[i]:
            stack += [right[i], left[i]]
    old = np.asarray(order)
    new = np.full(left.size, -1)
    new[old] = np.arange(old.size)
    keep = split[old]
    return old, np.where(keep, new[left[old]], -1), np.where(keep, new[right[old]], -1)


def prune_misclassification(clf: DecisionTreeClassifier, cp: float) -> DecisionTreeClassifier:
    """The subtree of a fitted tree that rpart's complexity parameter ``cp`` keeps (rpart's default is 0.01).

    Breiman et al.'s minimal cost-complexity pruning (1984, §3.3) in the misclassification cost rpart prunes
    classification trees in: the smallest subtree ``T`` of ``clf`` minimizing ``R(T) + alpha |T|``, with ``R`` the
    training weight misclassified at ``T``'s leaves, ``|T|`` its leaves and ``alpha = cp R(root)`` (rpart's "a
    split must decrease the overall lack of fit by a factor of cp"). A node is collapsed when its subtree does
    not beat it strictly (ties give the smaller tree). scikit-learn's own ``ccp_alpha`` prunes in Gini impurity,
    which keeps other subtrees.

        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]]); y = np.array([0, 0, 0, 1, 0, 1])
        >>> full = DecisionTreeClassifier(random_state=0).fit(X, y)
        >>> [int(prune_misclassification(full, cp).get_n_leaves()) for cp in (0.01, 0.3, 0.6)]
        [4, 2, 1]

    (``R(root)`` = 2 errors; at ``cp = 0.3`` the first split alone, 1 error + 2 x 0.6, beats both the whole tree,
    0 + 4 x 0.6, and the root, 2 + 0.6.)
    """
    t = clf.tree_
    left, right = np.asarray(t.children_left), np.asarray(t.children_right)
    val = np.asarray(t.value)[:, 0, :]
    weights = val / val.sum(1, keepdims=True) * np.asarray(t.weighted_n_node_samples)[:, None]
    old, nl, nr = kept_nodes(left, right, cp_splits(left, right, weights, cp))
    keep = nl >= 0
    return sklearn_classifier(nl, nr, np.asarray(t.feature)[old], np.asarray(t.threshold)[old],
                              np.where(keep, -1, weights[old].argmax(1)), weights[old],
                              np.asarray(t.n_node_samples)[old], clf.classes_, int(clf.n_features_in_),
                              getattr(clf, "feature_names_in_", None))
