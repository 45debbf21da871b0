"""TMO's stochastic node-wise crossover ([aldinucci-memetic] §3.2 and Algorithm 1; thesis §3.3, Figures 3.10-3.14).

Every position ``z`` of the child takes the second parent's tuple with probability ``CR`` and keeps the
first parent's otherwise. Taking a tuple of another kind changes the structure; the paper describes the
four conversions (Figures 2-5 of [aldinucci-memetic]), applied here to the child as it is being built:

* branch/leaf (Fig. 2): a branch becomes a leaf, its subtree is pruned;
* leaf/branch (Fig. 3): a leaf becomes the other parent's branch, its two children are new leaves;
* branch/nil (Fig. 4): the node is deleted, so its father becomes a leaf (the node's and its brother's
  subtrees are pruned);
* nil/branch (Fig. 5): a node appears below a leaf: the father becomes a branch with *random* parameters,
  the brother a new leaf, and the node takes the other parent's branch (its children new leaves).

Two cases the paper does not draw are read the same way: nil/leaf grows the father as in nil/branch
(the node is a leaf), and leaf/nil deletes the node as in branch/nil. A nil/branch or nil/leaf below a
missing father grows the missing ancestors the same way, from the nearest existing leaf down (each new
branch random, each brother a leaf). Positions are visited in breadth-first order, so a conversion at
a node sees the conversions already made above it. Leaf classes are not part of the encoding: every
leaf is labelled by majority when the child is decoded (:func:`~treeopt_dsl.starts.memetic.encoding.decode`).

"Random parameters" (Fig. 5) is read as a feature drawn uniformly and a threshold drawn uniformly among
the midpoints between consecutive distinct training values of that feature (a threshold outside the
data would make the new branch a constant).
"""

from __future__ import annotations

import numpy as np

from treeopt_dsl.starts.memetic.encoding import LEAF, NIL, Genome
from treeopt_dsl.starts.tao import AxisBins


class RandomSplits:
    """Draws the random branches of nil/branch conversions: a feature uniformly among those with two or
    more distinct values, then a midpoint between consecutive distinct values uniformly."""

    def __init__(self, bins: AxisBins) -> None:
        counts = np.diff(np.append(bins.start, bins.n_bins))
        self._features = np.flatnonzero(counts >= 2)
        self._start, self._counts, self._values = bins.start, counts, bins.values

    def __call__(self, rng: np.random.Generator) -> tuple[int, float]:
        if self._features.size == 0:  # every feature constant: any split is a constant one
            return 0, 0.0
        f = int(rng.choice(self._features))
        k = int(self._start[f] + rng.integers(0, self._counts[f] - 1))
        return f, 0.5 * (float(self._values[k]) + float(self._values[k + 1]))


def _prune(g: Genome, z: int) -> None:
    """Every descendant of ``z`` becomes missing."""
    T = g.feature.size
    lo, hi = 2 * z + 1, 2 * z + 2
    while lo < T:
        g.feature[lo:hi + 1] = NIL
        g.threshold[lo:hi + 1] = np.nan
        lo, hi = 2 * lo + 1, 2 * hi + 2


def _set_branch(g: Genome, z: int, f: int, tau: float) -> None:
    g.feature[z], g.threshold[z] = f, tau
    for c in (2 * z + 1, 2 * z + 2):  # new children (when missing) are leaves
        if c < g.feature.size and g.feature[c] == NIL:
            g.feature[c] = LEAF


def _set_leaf(g: Genome, z: int) -> None:
    g.feature[z], g.threshold[z] = LEAF, np.nan
    _prune(g, z)


def _grow(g: Genome, z: int, rng: np.random.Generator, random_split: RandomSplits) -> None:
    """Make room for a node at the missing position ``z``: its father (and missing ancestors) become
    random branches whose other children are leaves (nil/branch, [aldinucci-memetic] Fig. 5)."""
    parent = (z - 1) // 2
    if g.feature[parent] == NIL:
        _grow(g, parent, rng, random_split)
    if g.feature[parent] < 0:  # a leaf (possibly just grown): a random branch, both children leaves
        f, tau = random_split(rng)
        _set_branch(g, parent, f, tau)


def crossover(first: Genome, second: Genome, rng: np.random.Generator, rate: float,
              random_split: RandomSplits) -> Genome:
    """The child of ``first`` (kept with probability ``1 - rate`` per position) and ``second`` (taken with
    probability ``rate``, Algorithm 1's ``U[0,1] < CR``), repaired into a tree by the conversions of the
    module docstring (:func:`combine`).

    Example::

        >>> import numpy as np
        >>> from treeopt_dsl.starts.tao import AxisBins
        >>> a, b = Genome.empty(2), Genome(np.array([0, -1, -1]), np.array([0.5, np.nan, np.nan]))
        >>> child = crossover(a, b, np.random.default_rng(0), 1.0, RandomSplits(AxisBins.of(np.eye(2))))
        >>> child.kinds()  # every position from the second parent
        'BLL'
    """
    take = rng.random(first.feature.size) < rate
    return combine(first, second, take, rng, random_split)


def combine(first: Genome, second: Genome, take: np.ndarray, rng: np.random.Generator,
            random_split: RandomSplits) -> Genome:
    """``first`` with the tuples of ``second`` at the positions ``take``, converted in breadth-first order
    (branch/leaf, leaf/branch, branch/nil, nil/branch of [aldinucci-memetic] Figures 2-5)."""
    child = first.copy()
    for z in np.flatnonzero(take):
        f_new, tau_new = int(second.feature[z]), float(second.threshold[z])
        f_cur = int(child.feature[z])
        if f_new >= 0:  # branch from the second parent
            if f_cur == NIL:  # nil/branch
                _grow(child, z, rng, random_split)
            _set_branch(child, z, f_new, tau_new)  # branch/branch, leaf/branch (new leaves below)
        elif f_new == LEAF:
            if f_cur == NIL:  # nil/leaf: the father grows as in nil/branch
                _grow(child, z, rng, random_split)
                child.feature[z] = LEAF
            elif f_cur >= 0:  # branch/leaf
                _set_leaf(child, z)
        elif z > 0 and f_cur != NIL:  # branch/nil, leaf/nil: the father becomes a leaf
            _set_leaf(child, (z - 1) // 2)
    return child
