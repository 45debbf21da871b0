"""Is a region of the feature space homogeneous for a tree ensemble? An integer program, in the library's IR.

Vidal & Schiffer (2020), §4.5 ([vidal-schiffer-2020] lines 353-361): the heuristic born-again construction proves that
every
cell of a region has one class "by a MIP [that proves] uniformity or detect[s] a violating cell". The paper
does not print the program; this is the standard model of a point's path through every tree of an ensemble
(the one of Mišić, "Optimization of tree ensembles", 2020), restricted to the region:

* ``y[j, l]`` in {0, 1}: ``x_j <= t_{j,l}``, one column per distinct split value ``t_{j,l}`` of feature ``j``,
  monotone in ``l`` (``y[j, l] <= y[j, l + 1]``); the region ``lo < x <= hi`` fixes ``y = 0`` below ``lo`` and
  ``y = 1`` from ``hi`` on;
* ``lam[leaf]`` in {0, 1}: the leaf each tree sends the point to, one per tree (``sum = 1``);
* for every split node ``s`` of a tree on ``(j, t_{j,l})``: the leaves under its left child need ``y[j, l] = 1``,
  those under its right child ``y[j, l] = 0`` (``sum_left lam <= y``, ``sum_right lam <= 1 - y``);
* objective, for a rival class ``c``: maximize ``sum_leaf lam (S[leaf, c] - S[leaf, k])``, the rival's score
  minus the region's class ``k``'s (``S``: each leaf's vote or probability row).

Before the program, :func:`tree_bound` adds each tree's best reachable leaf independently (the program without
its consistency rows: cheap, and often enough in small regions). A rival whose maximum is below 0 (or 0 with
``c > k``: ties go to the first maximum) never wins anywhere in the region; when every rival fails, the region
is homogeneous. Otherwise the solver's ``y`` names a cell, turned into a point and checked with the
ensemble's own :meth:`~treeopt_dsl.bornagain.ensemble.Ensemble.predict_index`.
The model is compiled by :mod:`treeopt_dsl.ir` and solved by any MILP solver of the registry (``solver=``), so
the proof is the library's: a rival is ruled out only on an ``optimal`` status whose bound is below the line.

Example::

    >>> from treeopt_dsl.models.decision_tree import DecisionTree
    >>> from treeopt_dsl.bornagain.ensemble import Ensemble
    >>> stump = lambda f, t, a, b: DecisionTree([f, -1, -1], [t, 0, 0], [1, -1, -1], [2, -1, -1], [-1, a, b])
    >>> ens = Ensemble.hard_vote([stump(0, 0.5, 0, 1), stump(1, 0.5, 0, 1), stump(0, 1.5, 1, 0)], n_classes=2)
    >>> violating_cell(ens, [0.5, 0.5], [1.5, np.inf], 1) is None       # 0.5 < x0 <= 1.5, x1 > 0.5: class 1
    True
    >>> violating_cell(ens, [-np.inf, -np.inf], [np.inf, np.inf], 1).tolist()   # somewhere class 0
    [-0.5, -0.5]
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from treeopt_dsl.backends import SolveOptions, get_backend
from treeopt_dsl.bornagain.ensemble import Ensemble
from treeopt_dsl.errors import SolveError
from treeopt_dsl.ir import Model
from treeopt_dsl.ir.expr import Constraint, LinExpr
from treeopt_dsl.result import Status

__all__ = ["cell_point", "middle", "tree_bound", "violating_cell"]

#: scores closer than this count as a tie (hard votes are integers; soft votes are checked on the point)
TIE = 1e-9


def _rows(name: str, rows: list[np.ndarray], coefs: list[np.ndarray]) -> LinExpr:
    """A family of rows ``sum coef * x[ids]`` from ragged term lists (padding: id -1, coefficient 0)."""
    width = max((len(r) for r in rows), default=0)
    ids = np.full((len(rows), max(width, 1)), -1, dtype=np.int64)
    coef = np.zeros(ids.shape)
    for i, (r, c) in enumerate(zip(rows, coefs, strict=True)):
        ids[i, : len(r)], coef[i, : len(r)] = r, c
    return LinExpr((name,), {name: np.arange(len(rows))}, coef, ids)


def _subtree_leaves(left: np.ndarray, right: np.ndarray) -> list[np.ndarray]:
    """Per node, the leaves below it (node ids), children listed after parents or not."""
    n = len(left)
    order: list[int] = []
    stack = [0]
    while stack:  # pre-order: a parent before its children
        v = stack.pop()
        order.append(v)
        if left[v] >= 0:
            stack += [int(right[v]), int(left[v])]
    below: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * n
    for v in reversed(order):
        below[v] = np.array([v]) if left[v] < 0 else np.concatenate([below[left[v]], below[right[v]]])
    return below


class _PathModel:
    """The ensemble's path model, compiled once per ensemble (:func:`_path_model`); a region only fixes
    bounds of ``y`` (:meth:`bounds`) and a rival only changes the objective (:meth:`best_rival`)."""

    def __init__(self, ensemble: Ensemble) -> None:
        self.ensemble = ensemble
        self.levels = ensemble.thresholds()
        self.offsets = np.r_[0, np.cumsum([len(t) for t in self.levels])].astype(np.int64)
        n_y = int(self.offsets[-1])
        m = Model("born_again_homogeneity")
        self.y = m.add_variables("y", ("level",), {"level": n_y}, kind="binary", lower=0, upper=1)
        leaves, self.leaf_scores = [], []
        for tree, s in zip(ensemble.trees, ensemble.leaf_scores, strict=True):
            ids = np.flatnonzero(tree.left < 0)
            leaves.append(ids)
            self.leaf_scores.append(np.asarray(s, dtype=float)[ids])
        start = np.r_[0, np.cumsum([len(v) for v in leaves])].astype(np.int64)
        self.lam = m.add_variables("lam", ("leaf",), {"leaf": int(start[-1])}, kind="binary", lower=0, upper=1)
        lam0, y0 = self.lam.offset, self.y.offset
        one_rows = [lam0 + np.arange(start[t], start[t + 1]) for t in range(len(leaves))]
        rows: list[np.ndarray] = []
        coefs: list[np.ndarray] = []
        rhs: list[float] = []
        for t, tree in enumerate(ensemble.trees):
            pos = np.full(len(tree.left), -1, dtype=np.int64)
            pos[leaves[t]] = lam0 + start[t] + np.arange(len(leaves[t]))
            below = _subtree_leaves(tree.left, tree.right)
            for s in np.flatnonzero(tree.left >= 0):
                j = int(tree.feature[s])
                level = int(np.searchsorted(self.levels[j], tree.threshold[s]))
                col = y0 + int(self.offsets[j]) + level
                left, right = pos[below[tree.left[s]]], pos[below[tree.right[s]]]
                rows += [np.r_[left, col], np.r_[right, col]]  # sum_left lam - y <= 0; sum_right lam + y <= 1
                coefs += [np.r_[np.ones(len(left)), -1.0], np.r_[np.ones(len(right)), 1.0]]
                rhs += [0.0, 1.0]
        m.add_constraints("one_leaf", Constraint(_rows("tree", one_rows, [np.ones(len(r)) for r in one_rows]),
                                                 np.ones(len(one_rows)), np.ones(len(one_rows))))
        if rows:
            m.add_constraints("path", Constraint(_rows("split", rows, coefs), np.full(len(rows), -np.inf),
                                                 np.asarray(rhs)))
        mono = [np.array([y0 + o + k, y0 + o + k + 1]) for j, o in enumerate(self.offsets[:-1])
                for k in range(len(self.levels[j]) - 1)]
        if mono:
            m.add_constraints("order", Constraint(_rows("pair", mono, [np.array([1.0, -1.0])] * len(mono)),
                                                  np.full(len(mono), -np.inf), np.zeros(len(mono))))
        self.scores = np.concatenate(self.leaf_scores)
        self.sf = m.compile()

    def bounds(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Column bounds of the region ``lo < x <= hi``: ``y = 0`` for split values ``t <= lo`` (``x > t``),
        ``y = 1`` for ``t >= hi`` (``x <= t``)."""
        t = np.concatenate(self.levels) if self.levels else np.zeros(0)
        j = np.repeat(np.arange(len(self.levels)), np.diff(self.offsets))
        col_lower, col_upper = self.sf.col_lower.copy(), self.sf.col_upper.copy()
        ys = slice(self.y.offset, self.y.offset + t.size)
        col_upper[ys] = np.where(t <= lo[j], 0.0, 1.0)
        col_lower[ys] = np.where(t >= hi[j], 1.0, 0.0)
        if np.any(col_lower[ys] > col_upper[ys]):
            raise SolveError("the region is empty (a lower bound at or above its upper bound)")
        return col_lower, col_upper

    def best_rival(self, k: int, c: int, lo: np.ndarray, hi: np.ndarray, solver: str, backend: str | None,
                   time_limit: float | None) -> tuple[float, np.ndarray | None]:
        """``max (score_c - score_k)`` over the region (a proven upper bound) and the point attaining it."""
        c_vec = np.zeros(self.sf.c.shape[0])
        c_vec[self.lam.offset: self.lam.offset + self.scores.shape[0]] = -(self.scores[:, c] - self.scores[:, k])
        col_lower, col_upper = self.bounds(lo, hi)
        sf = replace(self.sf, c=c_vec, col_lower=col_lower, col_upper=col_upper)
        be = get_backend(solver, backend, sf)
        raw = be.solve(sf, solver, SolveOptions(time_limit=time_limit, threads=1))
        if raw.status is not Status.OPTIMAL or raw.bound is None:
            raise SolveError(f"the homogeneity program ended {raw.status.value} ({raw.message}): no proof either way")
        best = -float(raw.bound)
        return best, (None if raw.x is None else self.point(raw.x, lo, hi))

    def point(self, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """A point strictly inside the cell the ``y`` columns describe, within the region (the middle of
        ``(max(t_prev, lo), min(t_on, hi)]``; a split value itself would fall on the wrong side for trees that
        compare ``float32(x)``, as scikit-learn's do)."""
        y = np.round(x[self.y.offset: self.y.offset + int(self.offsets[-1])]) > 0.5
        return np.array([cell_point(t, y[self.offsets[j]: self.offsets[j + 1]], lo[j], hi[j])
                         for j, t in enumerate(self.levels)])


_MODELS: weakref.WeakKeyDictionary[Ensemble, _PathModel] = weakref.WeakKeyDictionary()


def _path_model(ensemble: Ensemble) -> _PathModel:
    """The ensemble's compiled path model, built at the first region that needs it (the heuristic and the
    faithfulness check ask at every region or leaf)."""
    if ensemble not in _MODELS:
        _MODELS[ensemble] = _PathModel(ensemble)
    return _MODELS[ensemble]


def cell_point(t: np.ndarray, below: np.ndarray, lo: float, hi: float) -> float:
    """The middle of the cell of split values ``t`` whose ``x <= t`` indicators are ``below``, cut to
    ``(lo, hi]``."""
    on, off = np.flatnonzero(below), np.flatnonzero(~below)
    upper = min(t[on[0]], hi) if on.size else hi
    lower = max(t[off[-1]] if off.size else -np.inf, lo)
    return float(middle(np.array([lower]), np.array([upper]))[0])


def middle(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """A point strictly inside each interval ``(lower, upper]``: its middle, or 1 inside its finite end
    when it is unbounded (0 when both ends are)."""
    lo_ok, up_ok = np.isfinite(lower), np.isfinite(upper)
    with np.errstate(invalid="ignore"):
        mid = lower + (upper - lower) / 2.0
    return np.where(lo_ok & up_ok, mid, np.where(up_ok, upper - 1.0, np.where(lo_ok, lower + 1.0, 0.0)))


def _ruled_out(advantage: float, c: int, k: int, vote: str) -> bool:
    """Whether a rival ``c`` whose best score advantage over ``k`` is ``advantage`` never wins."""
    return advantage < -TIE or (abs(advantage) <= TIE and c > k and vote == "hard")


_BOXES: weakref.WeakKeyDictionary[Any, tuple[np.ndarray, np.ndarray]] = weakref.WeakKeyDictionary()


def _boxes(tree: Any) -> tuple[np.ndarray, np.ndarray]:
    """``tree.node_boxes()``, computed once per tree (the heuristic asks for them at every region)."""
    if tree not in _BOXES:
        _BOXES[tree] = tree.node_boxes()
    return _BOXES[tree]


def tree_bound(ensemble: Ensemble, lo: np.ndarray, hi: np.ndarray, k: int) -> np.ndarray:
    """Per rival class ``c``, an upper bound on ``score_c - score_k`` over the region ``lo < x <= hi``: each
    tree's best leaf among those whose box meets the region, trees taken independently (the program without
    its consistency rows, the cheap test the paper runs before its MIP)."""
    out = np.zeros(ensemble.n_classes)
    for tree, s in zip(ensemble.trees, ensemble.leaf_scores, strict=True):
        blo, bhi = _boxes(tree)
        p = blo.shape[1]
        meets = np.all(np.maximum(blo, lo[:p]) < np.minimum(bhi, hi[:p]), axis=1) & tree.is_leaf
        sc = np.asarray(s, dtype=float)[meets]
        out += (sc - sc[:, [k]]).max(axis=0)
    return out


def violating_cell(ensemble: Ensemble, lo: Sequence[float], hi: Sequence[float], cls: int, *,
                   solver: str = "highs", backend: str | None = None,
                   time_limit: float | None = None) -> np.ndarray | None:
    """``None`` when the ensemble's class is ``cls`` on the whole region ``lo < x <= hi`` (proved by the integer
    program of the module docstring, one solve per rival class), else a point of the region whose class is
    not ``cls``. ``lo`` / ``hi`` hold one bound per feature (``-inf`` / ``inf`` for none).

    Raises :class:`~treeopt_dsl.errors.SolveError` when the solver ends without a proof (a time limit).
    """
    lo_a = np.asarray(lo, dtype=float).reshape(-1)
    hi_a = np.asarray(hi, dtype=float).reshape(-1)
    if lo_a.shape != (ensemble.n_features,) or hi_a.shape != (ensemble.n_features,):
        raise SolveError(f"lo and hi need one bound per feature ({ensemble.n_features})")
    if not 0 <= int(cls) < ensemble.n_classes:
        raise SolveError(f"cls must be a class index in 0..{ensemble.n_classes - 1}, got {cls}")
    bound = tree_bound(ensemble, lo_a, hi_a, int(cls))
    for c in range(ensemble.n_classes):
        if c == cls or _ruled_out(bound[c], c, int(cls), ensemble.vote):
            continue  # even with every tree at its best leaf for c, c cannot win: no program needed
        best, x = _path_model(ensemble).best_rival(int(cls), c, lo_a, hi_a, solver, backend, time_limit)
        if _ruled_out(best, c, int(cls), ensemble.vote):
            continue  # c never beats cls in the region
        if x is not None and int(ensemble.predict_index(x[None, :])[0]) != cls:
            return x
        if best > TIE:
            raise SolveError(f"the homogeneity program found a rival score {best:.3g} at a point the ensemble "
                             "classifies as the region's class: an inconsistent model")
    return None
