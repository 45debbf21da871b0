"""Faithfulness of a tree to an ensemble on the *whole* feature space (Problem 1, [vidal-schiffer-2020] lines 154-158).

Both decision functions are constant on the cells of the grid cut by the union of their thresholds, so
agreement everywhere is agreement on every cell. (Deciding it is NP-hard in general, Theorem 1 -- [vidal-schiffer-2020]
lines 160-164 -- but the grids of the paper's forests are small enough to sweep.) Two sweeps:

* ``exhaustive``: the class of both models on every cell of the union grid (numpy slice additions, one per
  leaf of each tree; no per-cell Python loop);
* ``leaf-regions``: the ensemble's class on every cell of its own grid, then for each leaf of the tree the box
  of grid cells it covers must be homogeneous with the leaf's class (one numpy comparison per leaf). Used when
  the union grid is large; it never enumerates more cells than the ensemble's grid;
* ``integer-program``: when the ensemble's grid is too large as well, each leaf's box is proved homogeneous
  with the leaf's class by the integer program of :mod:`.homogeneity` (one small MILP per leaf and rival
  class; ``n_cells`` is then 0: no cell is enumerated).

Example::

    >>> from treeopt_dsl.models.decision_tree import DecisionTree
    >>> from treeopt_dsl.bornagain.ensemble import Ensemble
    >>> stump = lambda f, t, a, b: DecisionTree([f, -1, -1], [t, 0, 0], [1, -1, -1], [2, -1, -1], [-1, a, b])
    >>> ens = Ensemble.hard_vote([stump(0, 0.5, 0, 1)] * 3, n_classes=2)
    >>> check_faithful(stump(0, 0.5, 0, 1), ens).ok
    True
    >>> bad = check_faithful(stump(0, 0.7, 0, 1), ens)
    >>> bad.ok, bad.counterexample.tolist(), bad.ensemble_class, bad.tree_class
    (False, [0.7], 1, 0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from treeopt_dsl.bornagain.cells import CellSpace, _box_indices
from treeopt_dsl.bornagain.ensemble import Ensemble
from treeopt_dsl.bornagain.homogeneity import violating_cell
from treeopt_dsl.errors import DataError
from treeopt_dsl.models.decision_tree import DecisionTree

__all__ = ["FaithfulResult", "check_faithful"]


@dataclass
class FaithfulResult:
    """Outcome of :func:`check_faithful`.

    Attributes
    ----------
    ok
        The tree and the ensemble agree everywhere.
    n_cells
        Cells compared.
    method
        "exhaustive" or "leaf-regions".
    counterexample
        A point where they disagree (``None`` if ``ok``).
    ensemble_class, tree_class
        The two class labels at the counterexample.
    """

    ok: bool
    n_cells: int
    method: str
    counterexample: np.ndarray | None = None
    ensemble_class: object = None
    tree_class: object = None

    def __bool__(self) -> bool:
        return self.ok


def _tree_class_index(tree: DecisionTree, ensemble: Ensemble) -> np.ndarray:
    """Map the tree's leaf values to the ensemble's class indices (by label)."""
    assert tree.classes is not None and ensemble.classes is not None
    if tree.classes.shape == ensemble.classes.shape and np.array_equal(tree.classes, ensemble.classes):
        return np.arange(tree.classes.size)
    lookup = {c.item() if hasattr(c, "item") else c: i for i, c in enumerate(ensemble.classes)}
    out = np.full(tree.classes.size, -1)
    for i, c in enumerate(tree.classes):
        out[i] = lookup.get(c.item() if hasattr(c, "item") else c, -1)
    return out


def _point(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """A point with ``lower < x <= upper`` coordinatewise."""
    safe_lower = np.where(np.isfinite(lower), lower, 0.0)
    return np.where(np.isfinite(upper), upper, np.where(np.isfinite(lower), safe_lower + np.maximum(1.0, np.abs(
        safe_lower)), 0.0))


def check_faithful(tree: DecisionTree, ensemble: Ensemble, max_cells: int = 2_000_000,
                   solver: str = "highs") -> FaithfulResult:
    """Check that ``tree`` predicts the ensemble's class on every point of the feature space.

    Enumerates the union grid when it has at most ``max_cells`` cells, else checks the tree's leaf regions
    on the ensemble's grid, or, when that grid too exceeds ``max_cells``, proves each leaf region homogeneous
    with the integer program of :mod:`.homogeneity` (on ``solver``). The returned counterexample is
    re-evaluated with both models' ``predict``.
    """
    if tree.n_features != ensemble.n_features:
        raise DataError(f"the tree has {tree.n_features} features, the ensemble {ensemble.n_features}")
    cmap = _tree_class_index(tree, ensemble)
    ens_levels = ensemble.thresholds()
    inner = ~tree.is_leaf
    union = [np.union1d(lv, tree.threshold[inner & (tree.feature == j)]) for j, lv in enumerate(ens_levels)]
    n_union = math.prod(len(lv) + 1 for lv in union)
    if n_union <= max_cells:
        ens_space = CellSpace.from_ensemble(ensemble, union)
        tree_ens = Ensemble.hard_vote([tree], n_classes=int(tree.value.max()) + 1, n_features=tree.n_features)
        tree_cls = cmap[CellSpace.from_ensemble(tree_ens, union).cls]
        diff = np.argwhere(tree_cls != ens_space.cls)
        if not diff.size:
            return FaithfulResult(True, n_union, "exhaustive")
        cell = diff[0]
        x = ens_space.representative(cell)
        return _counterexample(tree, ensemble, x, n_union, "exhaustive")
    blo, bhi = tree.node_boxes()
    leaves = np.flatnonzero(tree.is_leaf)
    if math.prod(len(lv) + 1 for lv in ens_levels) > max_cells:
        return _by_integer_program(tree, ensemble, cmap, blo, bhi, leaves, solver)
    space = CellSpace.from_ensemble(ensemble, ens_levels)
    lo, hi = _box_indices(blo[leaves], bhi[leaves], space.levels)
    for k, leaf in enumerate(leaves):
        region = space.region(lo[k], hi[k])
        bad = np.argwhere(region != cmap[tree.value[leaf]])
        if bad.size:
            cell = lo[k] + bad[0]
            lower = np.array([lv[i - 1] if i > 0 else -np.inf for lv, i in zip(space.levels, cell, strict=True)])
            upper = np.array([lv[i] if i < lv.size else np.inf for lv, i in zip(space.levels, cell, strict=True)])
            x = _point(np.maximum(lower, blo[leaf]), np.minimum(upper, bhi[leaf]))
            return _counterexample(tree, ensemble, x, space.n_cells, "leaf-regions")
    return FaithfulResult(True, space.n_cells, "leaf-regions")


def _by_integer_program(tree: DecisionTree, ensemble: Ensemble, cmap: np.ndarray, blo: np.ndarray,
                        bhi: np.ndarray, leaves: np.ndarray, solver: str) -> FaithfulResult:
    """Each leaf's box ``blo < x <= bhi`` proved homogeneous with the leaf's class by the integer program."""
    for leaf in leaves:
        x = violating_cell(ensemble, blo[leaf], bhi[leaf], int(cmap[tree.value[leaf]]), solver=solver)
        if x is not None:
            return _counterexample(tree, ensemble, x, len(leaves), "integer-program")
    return FaithfulResult(True, 0, "integer-program")


def _counterexample(tree: DecisionTree, ensemble: Ensemble, x: np.ndarray, n: int, method: str) -> FaithfulResult:
    xe = x.reshape(1, -1)
    ec, tc = ensemble.predict(xe)[0], tree.predict(xe)[0]
    if ec == tc:  # pragma: no cover - the cell arithmetic and predict disagree: a bug, say so loudly
        raise RuntimeError(f"check_faithful: the cell sweep found a disagreement at {x.tolist()} that predict "
                           "does not reproduce")
    return FaithfulResult(False, n, method, x, ec.item() if hasattr(ec, "item") else ec,
                          tc.item() if hasattr(tc, "item") else tc)
