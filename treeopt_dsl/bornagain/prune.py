"""Post-pruning of a born-again tree with the training data (Vidal & Schiffer 2020, §4.4; [vidal-schiffer-2020] lines
300-311).

"Eliminate inexpressive tree sub-regions. From bottom to top: verify whether both sides of a split contain at
least one sample; eliminate every such *empty* split." A split whose one side receives no training sample is
replaced by its other (non-empty) child. Then, as the authors' code does (``create_nodes`` in BA-Trees'
``src/persistence.py``), a split whose two children are leaves of the same class becomes a leaf, bottom-up
(this changes no prediction anywhere). The predictions on the training samples are unchanged (every sample
of a removed split went to the kept child, where it is routed as before); faithfulness to the ensemble
elsewhere is given up ([vidal-schiffer-2020] line 313).

Example::

    >>> import numpy as np
    >>> from treeopt_dsl.models.decision_tree import DecisionTree
    >>> t = DecisionTree([0, 1, -1, -1, -1], [0.5, 0.5, 0, 0, 0], [1, 3, -1, -1, -1], [2, 4, -1, -1, -1],
    ...                  [-1, -1, 1, 0, 1])
    >>> p = prune_empty_splits(t, np.array([[0.0, 0.0], [0.0, 0.2], [1.0, 0.0]]))
    >>> p.n_leaves, p.predict(np.array([[0.0, 0.9]])).tolist()
    (2, [0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treeopt_dsl.models.decision_tree import DecisionTree

__all__ = ["node_counts", "prune_empty_splits"]


def node_counts(tree: DecisionTree, X: Any) -> np.ndarray:
    """Number of samples of ``X`` reaching each node (routed one depth level at a time)."""
    Xa = tree._check_X(X)
    counts = np.zeros(tree.n_nodes, dtype=np.int64)
    node = np.zeros(Xa.shape[0], dtype=np.int64)
    active = np.arange(Xa.shape[0])
    while active.size:
        counts += np.bincount(node[active], minlength=tree.n_nodes)
        nd = node[active]
        inner = tree.left[nd] >= 0
        active, nd = active[inner], nd[inner]
        go_left = Xa[active, tree.feature[nd]] <= tree.threshold[nd]
        node[active] = np.where(go_left, tree.left[nd], tree.right[nd])
    return counts


def prune_empty_splits(tree: DecisionTree, X: Any, merge_leaves: bool = True) -> DecisionTree:
    """Replace every split with an empty side (no sample of ``X``) by its non-empty child, bottom-up.

    Equivalently (the collapses commute), each node is replaced by the first descendant on its chain of
    single non-empty children. A node no sample reaches keeps its left child (it is then itself the empty
    side of its parent's split and disappears with it, unless it is the root). With ``merge_leaves`` (the
    authors' code), two sibling leaves of the same class are then merged into one leaf, bottom-up.
    """
    counts = node_counts(tree, X)
    left, right = tree.left, tree.right

    def resolve(n: int) -> int:
        while left[n] >= 0:
            if counts[right[n]] == 0:
                n = int(left[n])
            elif counts[left[n]] == 0:
                n = int(right[n])
            else:
                break
        return n

    feature: list[int] = []
    threshold: list[float] = []
    new_left: list[int] = []
    new_right: list[int] = []
    value: list[int] = []
    stack: list[tuple[int, int, int]] = [(resolve(0), -1, 0)]
    while stack:
        old, parent, side = stack.pop()
        new = len(feature)
        if parent >= 0:
            (new_left if side == 0 else new_right)[parent] = new
        feature.append(int(tree.feature[old]))
        threshold.append(float(tree.threshold[old]))
        new_left.append(-1)
        new_right.append(-1)
        value.append(int(tree.value[old]))
        if left[old] >= 0:
            stack.append((resolve(int(right[old])), new, 1))
            stack.append((resolve(int(left[old])), new, 0))
    if merge_leaves:  # nodes were numbered parents first: the reverse order sees children before parents
        for n in range(len(feature) - 1, -1, -1):
            a, b = new_left[n], new_right[n]
            if a >= 0 and new_left[a] < 0 and new_left[b] < 0 and value[a] == value[b]:
                feature[n], new_left[n], new_right[n], value[n] = -1, -1, -1, value[a]
        feature, threshold, new_left, new_right, value = _reachable(feature, threshold, new_left, new_right, value)
    return DecisionTree(feature=feature, threshold=threshold, left=new_left, right=new_right, value=value,
                        classes=tree.classes, n_features=tree.n_features, feature_names=tree.feature_names,
                        dtype=tree.dtype)


def _reachable(feature: list[int], threshold: list[float], left: list[int], right: list[int], value: list[int],
               ) -> tuple[list[int], list[float], list[int], list[int], list[int]]:
    """Drop the nodes no longer reachable from the root and renumber the others (root first)."""
    order: list[int] = []
    stack = [0]
    while stack:
        n = stack.pop()
        order.append(n)
        if left[n] >= 0:
            stack += [right[n], left[n]]
    new = {old: i for i, old in enumerate(order)}
    return ([feature[o] for o in order], [threshold[o] for o in order],
            [new[left[o]] if left[o] >= 0 else -1 for o in order],
            [new[right[o]] if right[o] >= 0 else -1 for o in order], [value[o] for o in order])
