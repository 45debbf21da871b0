"""The cell grid of a tree ensemble: split levels, the class of every cell, regions and their homogeneity.

Vidal & Schiffer (2020), "Construction Process" ([vidal-schiffer-2020] lines 148-165): the hyperplanes (split values)
of the
ensemble cut each feature's axis into intervals; the product of these intervals are the *cells*, on each of
which the ensemble's decision function is constant. With ``t_0 < ... < t_{m-1}`` the distinct split values of
feature ``j`` (its *levels*), cell index ``i`` of that feature is the interval ``(t_{i-1}, t_i]`` (``t_{-1} = -inf``,
``t_m = +inf``), so feature ``j`` has ``m + 1`` cell indices. A *region* ``(z^L, z^R)`` is the box of cells with
``z^L <= z <= z^R`` coordinatewise (Dynamic Program 1, [vidal-schiffer-2020] lines 169-177).

:class:`CellSpace` holds the class of every cell as a dense array of shape ``(n_0, ..., n_{p-1})``, computed
tree by tree and leaf by leaf: each leaf of each tree is a box of cells and adds its score row to the box
(a numpy slice), so the work is a few dozen slice additions over the grid, with no per-cell Python loop.
Split levels across which the class never changes are dropped (:meth:`CellSpace.filtered`, the
``exportUsefulHyperplanes`` step of the authors' code): merging the two cells on either side of such a level
changes neither the decision function nor the optimum of Problem 1, and shrinks the grid a lot.

Example::

    >>> from treeopt_dsl.models.decision_tree import DecisionTree
    >>> from treeopt_dsl.bornagain.ensemble import Ensemble
    >>> stump = lambda f, t, a, b: DecisionTree([f, -1, -1], [t, 0, 0], [1, -1, -1], [2, -1, -1], [-1, a, b])
    >>> ens = Ensemble.hard_vote([stump(0, 0.5, 0, 1), stump(1, 0.5, 0, 1), stump(0, 1.5, 1, 0)], n_classes=2)
    >>> space = CellSpace.from_ensemble(ens)
    >>> space.shape, space.cls.tolist()
    ((3, 2), [[0, 1], [1, 1], [0, 1]])
    >>> space.is_homogeneous((0, 1), (2, 1)), space.is_homogeneous((0, 0), (1, 1))
    (True, False)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from treeopt_dsl.bornagain.ensemble import Ensemble

__all__ = ["CellSpace", "cell_scores"]


def _box_indices(tree_lo: np.ndarray, tree_hi: np.ndarray, levels: Sequence[np.ndarray]) -> tuple[np.ndarray,
                                                                                                  np.ndarray]:
    """Convert float boxes ``lo < x <= hi`` (rows = nodes) to inclusive cell-index ranges on ``levels``.

    A cell ``(t_{i-1}, t_i]`` lies in ``(lo, hi]`` iff ``t_{i-1} >= lo`` and ``t_i <= hi`` (every box bound is a
    level or infinite): the first index is the number of levels ``<= lo``, the last the number ``< hi``.
    """
    n, p = tree_lo.shape
    lo = np.zeros((n, p), dtype=np.int64)
    hi = np.zeros((n, p), dtype=np.int64)
    for j in range(p):
        lo[:, j] = np.searchsorted(levels[j], tree_lo[:, j], side="right")
        hi[:, j] = np.searchsorted(levels[j], tree_hi[:, j], side="left")
    return lo, hi


def cell_scores(ensemble: Ensemble, levels: Sequence[np.ndarray]) -> np.ndarray:
    """The ensemble's summed (then divided) class scores on every cell of the grid cut by ``levels``.

    ``levels`` must contain every threshold the ensemble uses (it may contain more). Returns an array of shape
    ``(len(levels[0]) + 1, ..., n_classes)``. Trees are added in order and the soft vote is divided at the end,
    the float operations of :meth:`Ensemble.scores`, so the argmax is the ensemble's prediction on any point of
    the cell, ties included.
    """
    shape = tuple(len(lv) + 1 for lv in levels)
    out = np.zeros((*shape, ensemble.n_classes), dtype=ensemble.leaf_scores[0].dtype)
    for tree, s in zip(ensemble.trees, ensemble.leaf_scores, strict=True):
        blo, bhi = tree.node_boxes()
        if blo.shape[1] < len(levels):  # a tree over the first columns only
            pad = len(levels) - blo.shape[1]
            blo = np.hstack([blo, np.full((blo.shape[0], pad), -np.inf)])
            bhi = np.hstack([bhi, np.full((bhi.shape[0], pad), np.inf)])
        leaves = np.flatnonzero(tree.is_leaf)
        lo, hi = _box_indices(blo[leaves], bhi[leaves], levels)
        for k, leaf in enumerate(leaves):
            out[tuple(slice(a, b + 1) for a, b in zip(lo[k], hi[k], strict=True))] += s[leaf]
    if ensemble.vote == "soft":
        out = out / ensemble.divisor
    return out


@dataclass(eq=False)
class CellSpace:
    """The ensemble's class on every cell of a grid of split levels.

    Attributes
    ----------
    levels
        Per feature, the sorted split values that bound its cells (cell ``i`` is ``(t_{i-1}, t_i]``).
    cls
        Class index of every cell, shape ``tuple(len(l) + 1 for l in levels)``, C order (feature 0 most
        significant, like the ``codeBook`` of the authors' code).
    n_classes
        Number of classes.
    """

    levels: list[np.ndarray]
    cls: np.ndarray
    n_classes: int

    @classmethod
    def from_ensemble(cls, ensemble: Ensemble, levels: Sequence[np.ndarray] | None = None) -> CellSpace:
        """The full grid of the ensemble's own thresholds (or of ``levels``, which must include them)."""
        lv = [np.asarray(v, dtype=np.float64) for v in (levels if levels is not None else ensemble.thresholds())]
        scores = cell_scores(ensemble, lv)
        return cls(levels=lv, cls=np.argmax(scores, axis=-1).astype(np.int16), n_classes=ensemble.n_classes)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.cls.shape)

    @property
    def n_features(self) -> int:
        return len(self.levels)

    @property
    def n_cells(self) -> int:
        return int(self.cls.size)

    def n_regions(self) -> int:
        """Number of distinct regions ``(z^L, z^R)``: the product of ``n_j (n_j + 1) / 2``."""
        return math.prod(n * (n + 1) // 2 for n in self.shape)

    def useful_levels(self) -> list[np.ndarray]:
        """Per feature, a mask of the levels across which the class changes somewhere in the grid."""
        out = []
        for j in range(self.n_features):
            if self.shape[j] < 2:
                out.append(np.zeros(0, dtype=bool))
                continue
            changed = np.diff(self.cls, axis=j) != 0
            other = tuple(a for a in range(self.n_features) if a != j)
            out.append(np.any(changed, axis=other) if other else changed)
        return out

    def filtered(self) -> CellSpace:
        """The grid without the useless levels (the class on each merged run of cells is constant)."""
        useful = self.useful_levels()
        keep = [np.append(np.flatnonzero(u), n - 1) for u, n in zip(useful, self.shape, strict=True)]
        return CellSpace(levels=[lv[u] for lv, u in zip(self.levels, useful, strict=True)],
                         cls=np.ascontiguousarray(self.cls[np.ix_(*keep)]), n_classes=self.n_classes)

    def region(self, lo: Sequence[int], hi: Sequence[int]) -> np.ndarray:
        """The classes of the cells of region ``lo <= z <= hi`` (a view)."""
        return self.cls[tuple(slice(a, b + 1) for a, b in zip(lo, hi, strict=True))]

    def is_homogeneous(self, lo: Sequence[int], hi: Sequence[int]) -> bool:
        """``ID(z^L, z^R)`` of Dynamic Program 1: are all cells of the region of one class?"""
        r = self.region(lo, hi)
        return bool(np.all(r == r.flat[0]))

    def representative(self, cell: Sequence[int]) -> np.ndarray:
        """A point inside the cell: its upper bound ``t_i``, or ``t_{m-1} + 1`` for the last interval."""
        pt = np.empty(self.n_features)
        for j, i in enumerate(cell):
            lv = self.levels[j]
            pt[j] = lv[i] if i < lv.size else (lv[-1] + max(1.0, abs(lv[-1])) if lv.size else 0.0)
        return pt

    def cell_of(self, X: np.ndarray) -> np.ndarray:
        """Cell index of each sample, ``(n_samples, n_features)`` (``x <= t_i`` belongs to cell ``i`` or below)."""
        X = np.asarray(X, dtype=np.float64)
        return np.stack([np.searchsorted(lv, X[:, j], side="left") for j, lv in enumerate(self.levels)], axis=1)
