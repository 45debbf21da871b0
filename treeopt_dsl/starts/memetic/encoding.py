"""The fixed-length encoding of TMO ([aldinucci-memetic] §3.1; thesis §3.3, [aldinucci-thesis-2024] lines 880-905).

A tree of depth ``d`` is a list of ``2^d - 1`` node tuples in breadth-first order, left child first:
the balanced structure of depth ``d - 1`` (the last level, the leaves, is left out "without loss of
information": a leaf's class is the majority of the samples reaching it). Position ``z`` has children
``2z + 1`` and ``2z + 2``, the library's node order (:class:`~treeopt_dsl.topology.Topology`). A tuple is

* ``(f_z, tau_z)``: a branch, "right iff ``x[f_z] > tau_z``" (scikit-learn's "left iff ``<=``");
* ``(-1, -1)``: a leaf (:data:`LEAF`); ``(nil, nil)``: a missing node below a leaf (:data:`NIL`).

:class:`Genome` holds the two columns as arrays (``feature`` with the codes, ``threshold`` NaN off
branches). :func:`encode` reads a :class:`~treeopt_dsl.models.decision_tree.DecisionTree`; :func:`decode`
turns a genome back into the library's hyperplane layout ``(W, b)`` (what TAO optimizes) with majority
leaves, the paper's rule for every leaf a crossover creates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from treeopt_dsl.errors import DataError
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.models.tree import CONSTANT_OFFSET, constant_subtree
from treeopt_dsl.starts.tao import _thresholds
from treeopt_dsl.topology import Topology

#: feature code of a leaf, ``(-1, -1)`` in [aldinucci-memetic] §3.1
LEAF = -1
#: feature code of a missing node, ``(nil, nil)``
NIL = -2


@dataclass
class Genome:
    """TMO's encoding of one tree: ``feature[z]`` (a feature index, :data:`LEAF` or :data:`NIL`) and
    ``threshold[z]`` for the ``2^depth - 1`` positions in breadth-first order.

    Example::

        >>> g = Genome.empty(2)
        >>> g.feature.tolist(), g.kinds()
        ([-1, -2, -2], 'L..')
    """

    feature: np.ndarray
    threshold: np.ndarray

    @classmethod
    def empty(cls, depth: int) -> Genome:
        """A single leaf (the root) in a structure of ``depth``."""
        T = 2 ** int(depth) - 1
        f = np.full(T, NIL, dtype=np.int64)
        f[0] = LEAF
        return cls(f, np.full(T, np.nan))

    @property
    def depth(self) -> int:
        return int(np.log2(self.feature.size + 1))

    def copy(self) -> Genome:
        return Genome(self.feature.copy(), self.threshold.copy())

    def kinds(self) -> str:
        """One letter per position: ``B`` branch, ``L`` leaf, ``.`` nil (for tests and debugging)."""
        return "".join("B" if f >= 0 else ("L" if f == LEAF else ".") for f in self.feature)

    def check(self) -> None:
        """Raise :class:`DataError` unless the genome is a tree: the root exists, a branch's children are
        branches or leaves, a leaf's or a missing node's children are missing."""
        f = self.feature
        if f[0] == NIL:
            raise DataError("TMO genome: the root is missing")
        for z in range(1, f.size):
            parent = f[(z - 1) // 2]
            if (parent >= 0) == (f[z] == NIL):
                raise DataError(f"TMO genome: position {z} is {'missing' if f[z] == NIL else 'present'} under a "
                                f"{'branch' if parent >= 0 else 'leaf or missing node'}: {self.kinds()}")


def encode(tree: DecisionTree, depth: int) -> Genome:
    """The genome of ``tree`` (depth ``<= depth``) in a structure of ``depth`` ([aldinucci-memetic] §3.1)."""
    if tree.depth > depth:
        raise DataError(f"a depth-{tree.depth} tree does not fit TMO's depth-{depth} encoding")
    g = Genome.empty(depth)
    T = g.feature.size
    stack = [(0, 0)]
    while stack:
        z, node = stack.pop()
        if tree.left[node] < 0:
            g.feature[z] = LEAF
            continue
        g.feature[z], g.threshold[z] = int(tree.feature[node]), float(tree.threshold[node])
        if 2 * z + 1 < T:
            stack += [(2 * z + 1, int(tree.left[node])), (2 * z + 2, int(tree.right[node]))]
    return g


def route(g: Genome, X: np.ndarray) -> np.ndarray:
    """The position at which each sample stops: a leaf, or a branch of the last encoded level (whose two
    implicit children are leaves); one numpy step per level."""
    T = g.feature.size
    at = np.zeros(X.shape[0], dtype=np.int64)
    for _ in range(g.depth - 1):
        f = g.feature[at]
        moving = (f >= 0) & (2 * at + 1 < T)
        rows = np.flatnonzero(moving)
        if rows.size == 0:
            break
        right = X[rows, f[rows]] > g.threshold[at[rows]]
        at[rows] = 2 * at[rows] + 1 + right
    return at


def decode(g: Genome, X: np.ndarray, y: np.ndarray, weight: np.ndarray, *, eps: float = 0.0,
           leaf_threshold: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The genome as hyperplanes ``(W, b)`` of the library layout, every leaf labelled by the (weighted)
    majority of the samples reaching it ([aldinucci-memetic] §3.2); an empty leaf takes its parent's majority.

    A leaf above the last level sends everything left and its class is repeated below (as
    :func:`~treeopt_dsl.starts.tao.from_sklearn` does for CART); a branch on the last level is a
    classifier "+1 iff x_f > tau" or "+1 iff x_f <= tau", whichever its two majorities say.
    """
    topo = Topology(g.depth)
    T, p = g.feature.size, X.shape[1]
    thr, lt = _thresholds(eps, leaf_threshold)
    at = route(g, X)
    # weighted (+1, -1) mass per stopping position and side: side 0 = left/the leaf itself, 1 = right
    last = g.feature[at] >= 0
    side = np.zeros(at.size, dtype=np.int64)
    side[last] = X[np.flatnonzero(last), g.feature[at[last]]] > g.threshold[at[last]]
    key = 2 * at + side
    pos = np.bincount(key, weights=np.where(y > 0, weight, 0.0), minlength=2 * T)
    neg = np.bincount(key, weights=np.where(y > 0, 0.0, weight), minlength=2 * T)
    # subtree masses for the fallback of empty leaves: a position's mass is the sum over its two slots
    mass_pos, mass_neg = pos.reshape(T, 2).sum(1), neg.reshape(T, 2).sum(1)
    for z in range(T - 1, 0, -1):  # children before parents (positions, not samples)
        parent = (z - 1) // 2
        mass_pos[parent] += mass_pos[z]
        mass_neg[parent] += mass_neg[z]

    def majority(z: int, p_: float, n_: float) -> bool:
        if p_ + n_ <= 0:  # an empty side of a last-level branch: the branch's own majority
            p_, n_ = mass_pos[z], mass_neg[z]
        while p_ + n_ <= 0 and z > 0:  # no sample: the nearest ancestor's majority
            z = (z - 1) // 2
            p_, n_ = mass_pos[z], mass_neg[z]
        return bool(p_ >= n_)

    W = np.zeros((T, p))
    b = np.zeros(T)

    for z in range(T):
        f = int(g.feature[z])
        if f == NIL:
            continue
        if f == LEAF:
            constant_subtree(b, topo, z, majority(z, pos[2 * z], neg[2 * z]), thr, lt)
            continue
        tau = float(g.threshold[z])
        if topo.level[z] < topo.depth:
            W[z, f], b[z] = 1.0, thr - tau  # right iff x_f > tau
            continue
        lo, hi = majority(z, pos[2 * z], neg[2 * z]), majority(z, pos[2 * z + 1], neg[2 * z + 1])
        if lo == hi:
            b[z] = lt + (CONSTANT_OFFSET if hi else -CONSTANT_OFFSET)
        elif hi:  # +1 iff x_f > tau
            W[z, f] = 1.0
            b[z] = lt - tau if lt > 0 else -float(np.nextafter(tau, np.inf))
        else:  # +1 iff x_f <= tau
            W[z, f] = -1.0
            b[z] = lt + float(np.nextafter(tau, np.inf)) if lt > 0 else tau
    return W, b


def decode_multiclass(g: Genome, X: np.ndarray, codes: np.ndarray, weight: np.ndarray, n_classes: int, *,
                      eps: float = 0.0, leaf_threshold: float | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`decode` for class codes ``0 .. n_classes-1``: ``(W, b, leaf_classes)`` in the layout of
    :func:`~treeopt_dsl.starts.tao.tao_multiclass`, every leaf labelled by the weighted majority class of the samples
    reaching it (the lowest code on ties; an empty leaf takes its parent's majority, or the nearest non-empty
    ancestor's). A leaf above the last level sends everything left and every leaf below it gets its class; a branch
    on the last level sends ``x_f > tau`` to its right leaf."""
    topo = Topology(g.depth)
    T, p, K = g.feature.size, X.shape[1], int(n_classes)
    thr, lt = _thresholds(eps, leaf_threshold)
    at = route(g, X)
    last = g.feature[at] >= 0
    side = np.zeros(at.size, dtype=np.int64)
    side[last] = X[np.flatnonzero(last), g.feature[at[last]]] > g.threshold[at[last]]
    counts = np.bincount((2 * at + side) * K + np.asarray(codes, dtype=np.int64), weights=weight,
                         minlength=2 * T * K).reshape(2 * T, K)  # (position, side) x class
    mass = counts.reshape(T, 2, K).sum(1)
    for z in range(T - 1, 0, -1):  # children before parents (positions, not samples)
        mass[(z - 1) // 2] += mass[z]

    def majority(z: int, c: np.ndarray) -> int:
        while c.sum() <= 0 and z >= 0:  # no sample: the position's own mass, then its ancestors'
            c, z = mass[z], (z - 1) // 2 if z > 0 else -1
        return int(np.argmax(c))

    W = np.zeros((T, p))
    b = np.zeros(T)
    leaves = np.zeros(topo.n_leaves, dtype=np.intp)
    last0 = int(topo.last[0])
    for z in range(T):
        f = int(g.feature[z])
        if f == NIL:
            continue
        if f == LEAF:
            constant_subtree(b, topo, z, False, thr, lt)
            js = np.flatnonzero(topo.desc[z])
            leaves[2 * js] = leaves[2 * js + 1] = majority(z, counts[2 * z])
            continue
        tau = float(g.threshold[z])
        if topo.level[z] < topo.depth:
            W[z, f], b[z] = 1.0, thr - tau  # right iff x_f > tau
            continue
        k = z - last0
        W[z, f] = 1.0  # the right leaf iff x_f > tau
        b[z] = lt - tau if lt > 0 else -float(np.nextafter(tau, np.inf))
        leaves[2 * k], leaves[2 * k + 1] = majority(z, counts[2 * z]), majority(z, counts[2 * z + 1])
    return W, b, leaves
