"""The exact dynamic program of born-again tree ensembles (Vidal & Schiffer, ICML 2020).

Problem 1 ([vidal-schiffer-2020] lines 154-158): find a decision tree of minimal size whose decision function equals the
ensemble's on the whole feature space. Only the ensemble's split levels matter (:mod:`.cells`): a tree is a
recursion over *regions* ``(z^L, z^R)`` of cells, and

* **Dynamic Program 1** ([vidal-schiffer-2020] lines 169-177): ``Φ(R) = 0`` if the region is homogeneous (``ID``),
  else the
  best over every feature ``j`` and level ``z^L_j <= l < z^R_j`` of ``1 + max(Φ(left), Φ(right))`` (depth);
  with ``1 + Φ(left) + Φ(right)`` counting splits instead (leaves = splits + 1), and with the pair
  ``(1 + max(depths), 1 + splits_left + splits_right)`` compared lexicographically for "depth then leaves";
* **Dynamic Program 2** ([vidal-schiffer-2020] lines 189-199) folds the homogeneity test into the recursion: a region is
  homogeneous iff for some split both halves are homogeneous (``Φ = 0``) and its two corner cells have the
  same class; so no region is ever scanned cell by cell;
* **Properties 2 and 3** ([vidal-schiffer-2020] lines 207-227): along a feature, ``Φ(left)`` grows and ``Φ(right)``
  shrinks
  with ``l``, so for the depth the best level is found by a binary search;
* **Algorithm 1** ([vidal-schiffer-2020] lines 233-260): the memoized recursion with the lower bound ``LB`` (the largest
  ``Φ`` of a sub-region met so far: a sub-region never needs a larger tree) and the upper bound ``UB`` (best
  split so far); the search of a region stops as soon as ``LB >= UB``.

Two exact solvers compute the same optimum:

``method="recursion"``
    Algorithm 1 verbatim, memoized on the pair of corner-cell keys (one Python ``int``), in the order of the
    authors' code (features in index order; binary search for the depth, scan of the levels with the same
    bounds for the two other objectives, with the authors' "skip the right half when ``1 + Φ(left) >= UB``"
    shortcut for the depth). The tree is read back from the memory as in their ``collectResultDP`` (first
    feature and level, in index order, whose memorized halves attain the optimum), so for the depth objective
    -- whose optimal tree is not unique -- it returns the very tree the paper counts the leaves of.
``method="table"``
    Bottom-up over all regions, vectorized with numpy: regions are grouped by their *shape* (the number of
    levels they span per feature); the values of all regions of one shape form one array indexed by the
    region's lower corner, and a split of every region of that shape at the same relative level is one
    elementwise operation on two slices of the arrays of the two child shapes. No bounds are needed (every
    region is computed once); memory is one small integer per region, so it is used only when the number of
    regions is below ``max_table_regions``.

``method="auto"`` (default) uses the table when it fits for the objectives "leaves" and "depth-leaves" and the
recursion for "depth" (its binary search and bounds visit few regions, and it reproduces the paper's tree).

The "depth-leaves" objective is the authors' hierarchical DP: each region's value is the pair (depth, splits)
of its best tree, children's pairs combined as above (their code encodes it as ``100000 * depth + splits``).
This minimizes the depth exactly; the number of leaves is the minimum among trees whose *every subtree* is
itself depth-then-leaves optimal for its region, the quantity of the paper's Table 2 ("DL"). The authors' code
stops a region's search when the largest value of a sub-region met reaches the best split's value; that bound
is valid for the depth and the leaves but not for the pair (a sub-region may need more splits at equal depth),
and on Pima-Diabetes fold 2 it returns 143 leaves where 134 are optimal (the paper's DL average 206.7 vs 205.8).
Both solvers here are exact for the recurrence (the recursion bounds the pair by the sub-regions' depths only);
``paper_bounds=True`` makes the recursion use the authors' bound, to reproduce their figures (with
``method="auto"`` it selects the recursion; the table, which has no bounds, refuses it).

Example::

    >>> from treeopt_dsl.models.decision_tree import DecisionTree
    >>> from treeopt_dsl.bornagain.ensemble import Ensemble
    >>> stump = lambda f, t, a, b: DecisionTree([f, -1, -1], [t, 0, 0], [1, -1, -1], [2, -1, -1], [-1, a, b])
    >>> ens = Ensemble.hard_vote([stump(0, 0.5, 0, 1), stump(1, 0.5, 0, 1), stump(0, 1.5, 1, 0)], n_classes=2)
    >>> res = born_again(ens, objective="leaves")
    >>> res.depth, res.n_leaves, res.status
    (3, 4, 'optimal')
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from treeopt_dsl.bornagain.cells import CellSpace
from treeopt_dsl.bornagain.ensemble import Ensemble
from treeopt_dsl.errors import ModelTooLarge, OptionError
from treeopt_dsl.models.decision_tree import DecisionTree

__all__ = ["OBJECTIVES", "BornAgainResult", "born_again", "solve_cells"]

OBJECTIVES = ("depth", "leaves", "depth-leaves")
_DL = 1 << 20  # "depth-leaves" values are depth * _DL + splits (the authors use 100000)


class _TimeUp(Exception):
    pass


@dataclass
class BornAgainResult:
    """The born-again tree and the run's statistics.

    Attributes
    ----------
    tree
        The optimal faithful tree (``None`` if the time limit stopped the search).
    objective
        "depth", "leaves" or "depth-leaves".
    status
        "optimal" or "time_limit".
    depth, n_leaves
        Of the returned tree.
    value
        The DP's optimum at the root (depth; number of splits; ``depth * 2**20 + splits``).
    time
        Wall seconds of the whole construction (cells, filtering, DP, tree extraction).
    time_dp
        Wall seconds of the DP alone.
    method
        "recursion" or "table".
    n_cells, n_cells_filtered
        Grid sizes before / after dropping the useless levels.
    n_regions
        Regions memorized (recursion) or computed (table).
    n_calls
        Recursive calls (recursion only).
    """

    tree: DecisionTree | None
    objective: str
    status: str
    depth: int | None
    n_leaves: int | None
    value: int | None
    time: float
    time_dp: float
    method: str
    n_cells: int
    n_cells_filtered: int
    n_regions: int
    n_calls: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------------------
# recursion (Algorithm 1, memoized on corner keys)
# ---------------------------------------------------------------------------------------------------------------
def _combine_fn(objective: str) -> Callable[[int, int], int]:
    if objective == "depth":
        return lambda a, b: 1 + (a if a > b else b)
    if objective == "leaves":
        return lambda a, b: 1 + a + b
    return lambda a, b: _DL * (1 + max(a // _DL, b // _DL)) + 1 + a % _DL + b % _DL


def _recursion(space: CellSpace, objective: str, deadline: float, paper_bounds: bool = False,
               ) -> tuple[int, dict[int, int], int]:
    """Algorithm 1 on the cell grid; returns (root value, memory, number of calls)."""
    sizes = space.shape
    p = len(sizes)
    codes = [math.prod(sizes[k + 1:]) for k in range(p)]
    n_cells = space.n_cells
    cls = space.cls.reshape(-1).tolist()
    feats = [(codes[k], sizes[k]) for k in range(p) if sizes[k] > 1]
    memo: dict[int, int] = {}
    calls = [0]
    inf = sys.maxsize
    base_diff = 1 if objective != "depth-leaves" else _DL + 1

    def tick() -> None:
        if time.perf_counter() > deadline:
            raise _TimeUp

    def depth_rec(b: int, t: int) -> int:
        if b == t:
            return 0
        key = b * n_cells + t
        v = memo.get(key)
        if v is not None:
            return v
        calls[0] += 1
        if not calls[0] & 0xFFFF:
            tick()
        lb, ub = 0, inf
        for code, size in feats:
            if lb >= ub:
                break
            lo = (b // code) % size
            hi = (t // code) % size
            tl, tu = lo, hi
            while tl < tu and lb < ub:
                m = (tl + tu) >> 1
                left = depth_rec(b, t + code * (m - hi))
                if left > lb:
                    lb = left
                if 1 + left >= ub:
                    tu = m
                    continue
                right = depth_rec(b + code * (m + 1 - lo), t)
                if left == 0 and right == 0:  # Dynamic Program 2: both halves homogeneous
                    v = 0 if cls[b] == cls[t] else 1
                    memo[key] = v
                    return v
                if right > lb:
                    lb = right
                if 1 + right < ub:
                    ub = 1 + (left if left > right else right)
                if 1 + left >= ub:  # Property 2: Φ(left) only grows with the level
                    tu = m
                if 1 + right >= ub:  # Property 3: Φ(right) only grows as the level decreases
                    tl = m + 1
        memo[key] = ub
        return ub

    def scan_rec(b: int, t: int) -> int:
        if b == t:
            return 0
        key = b * n_cells + t
        v = memo.get(key)
        if v is not None:
            return v
        calls[0] += 1
        if not calls[0] & 0xFFFF:
            tick()
        lb, ub = 0, inf
        dl = objective == "depth-leaves"
        dl_exact = dl and not paper_bounds
        for code, size in feats:
            if lb >= ub:
                break
            lo = (b // code) % size
            hi = (t // code) % size
            bb = b + code * (1 - lo)
            tt = t - code * hi
            for m in range(lo, hi):
                left = scan_rec(b, tt + code * m)
                right = scan_rec(bb + code * m, t)
                if left == 0 and right == 0:
                    v = 0 if cls[b] == cls[t] else base_diff
                    memo[key] = v
                    return v
                if dl_exact:  # only the depth of a sub-region bounds the pair from below
                    left_lb, right_lb = left - left % _DL, right - right % _DL
                else:
                    left_lb, right_lb = left, right
                if left_lb > lb:
                    lb = left_lb
                if right_lb > lb:
                    lb = right_lb
                if dl:
                    dd = left // _DL if left > right else right // _DL
                    val = _DL * (1 + dd) + 1 + left % _DL + right % _DL
                else:
                    val = 1 + left + right
                if val < ub:
                    ub = val
                if lb >= ub:
                    break
        memo[key] = ub
        return ub

    rec = depth_rec if objective == "depth" else scan_rec
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * sum(sizes) + 1000))
    try:
        root = rec(0, n_cells - 1)
    finally:
        sys.setrecursionlimit(limit)
    return root, memo, calls[0]


def _extract_from_memo(space: CellSpace, objective: str, memo: dict[int, int], root: int,
                       ) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    """Rebuild the tree from the memory (``collectResultDP``): the first split whose halves attain the value."""
    sizes = space.shape
    p = len(sizes)
    codes = [math.prod(sizes[k + 1:]) for k in range(p)]
    n_cells = space.n_cells
    cls = space.cls.reshape(-1)
    comb = _combine_fn(objective)
    feature: list[int] = []
    level: list[int] = []
    left_: list[int] = []
    right_: list[int] = []
    value: list[int] = []

    def known(b: int, t: int) -> int | None:
        return 0 if b == t else memo.get(b * n_cells + t)

    stack: list[tuple[int, int, int, int, int]] = [(0, n_cells - 1, root, -1, 0)]
    while stack:
        b, t, opt, parent, side = stack.pop()
        node = len(feature)
        if parent >= 0:
            (left_ if side == 0 else right_)[parent] = node
        feature.append(-1)
        level.append(-1)
        left_.append(-1)
        right_.append(-1)
        value.append(-1)
        if opt == 0:
            value[node] = int(cls[b])
            continue
        found = False
        for k in range(p):
            code, size = codes[k], sizes[k]
            lo, hi = (b // code) % size, (t // code) % size
            for m in range(lo, hi):
                tl, br = t + code * (m - hi), b + code * (m + 1 - lo)
                a, c = known(b, tl), known(br, t)
                if a is not None and c is not None and comb(a, c) == opt:
                    feature[node], level[node] = k, m
                    stack.append((br, t, c, node, 1))
                    stack.append((b, tl, a, node, 0))
                    found = True
                    break
            if found:
                break
        if not found:  # pragma: no cover - the optimum is always attained by a memorized split
            raise RuntimeError("born-again DP: no memorized split attains the region's value")
    return feature, level, left_, right_, value


# ---------------------------------------------------------------------------------------------------------------
# table (bottom-up over region shapes, numpy)
# ---------------------------------------------------------------------------------------------------------------
def _table(space: CellSpace, objective: str, deadline: float) -> dict[tuple[int, ...], np.ndarray]:
    """Values of every region, per shape ``s`` (levels spanned per feature): ``A[s][lo]`` for region ``lo..lo+s``.

    Shapes are visited in lexicographic order, so the two halves of every split (same shape but a smaller
    extent along the split feature) are known before their parent.
    """
    sizes = space.shape
    p = len(sizes)
    cls = space.cls
    # depth <= sum of the sizes < 256; splits < number of cells; "depth-leaves" packs depth << 20 | splits
    small = space.n_cells <= np.iinfo(np.uint16).max
    dtype = {"depth": np.uint8, "leaves": np.uint16 if small else np.int32, "depth-leaves": np.int32}[objective]
    big = np.iinfo(dtype).max
    mask = _DL - 1
    A: dict[tuple[int, ...], np.ndarray] = {}
    for s in itertools.product(*(range(n) for n in sizes)):
        if time.perf_counter() > deadline:
            raise _TimeUp
        out_shape = tuple(n - k for n, k in zip(sizes, s, strict=True))
        if not any(s):
            A[s] = np.zeros(out_shape, dtype=dtype)
            continue
        # corner classes of every region of this shape
        c_lo = cls[tuple(slice(0, n) for n in out_shape)]
        c_hi = cls[tuple(slice(k, None) for k in s)]
        best = np.full(out_shape, big, dtype=dtype)
        homog: np.ndarray | None = None
        for j in range(p):
            sj = s[j]
            for o in range(sj):
                sl = s[:j] + (o,) + s[j + 1:]
                sr = s[:j] + (sj - o - 1,) + s[j + 1:]
                idx_l = (slice(None),) * j + (slice(0, out_shape[j]),)
                idx_r = (slice(None),) * j + (slice(o + 1, o + 1 + out_shape[j]),)
                L = A[sl][idx_l]
                R = A[sr][idx_r]
                if homog is None:  # Dynamic Program 2: homogeneous iff both halves are and the corners agree
                    homog = (L == 0) & (R == 0) & (c_lo == c_hi)
                if objective == "depth":
                    v = np.maximum(L, R)
                    v += 1
                elif objective == "leaves":
                    v = L + R
                    v += 1
                else:  # ((max depth + 1) << 20) + (splits_L + splits_R + 1), without any division
                    v = np.maximum(L, R)
                    v |= mask
                    v += 1
                    w = L + R
                    w += 1
                    w &= mask
                    v += w
                np.minimum(best, v, out=best)
        assert homog is not None
        best[homog] = 0
        A[s] = best
    return A


def _extract_from_table(space: CellSpace, objective: str, A: dict[tuple[int, ...], np.ndarray],
                        ) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    """Rebuild an optimal tree: at each region the first split (feature, then level) attaining its value."""
    sizes = space.shape
    p = len(sizes)
    comb = _combine_fn(objective)
    feature: list[int] = []
    level: list[int] = []
    left_: list[int] = []
    right_: list[int] = []
    value: list[int] = []

    def val(lo: tuple[int, ...], hi: tuple[int, ...]) -> int:
        s = tuple(b - a for a, b in zip(lo, hi, strict=True))
        return int(A[s][lo])

    stack: list[tuple[tuple[int, ...], tuple[int, ...], int, int]] = [((0,) * p, tuple(n - 1 for n in sizes), -1, 0)]
    while stack:
        lo, hi, parent, side = stack.pop()
        node = len(feature)
        if parent >= 0:
            (left_ if side == 0 else right_)[parent] = node
        feature.append(-1)
        level.append(-1)
        left_.append(-1)
        right_.append(-1)
        value.append(-1)
        opt = val(lo, hi)
        if opt == 0:
            value[node] = int(space.cls[lo])
            continue
        done = False
        for k in range(p):
            for m in range(lo[k], hi[k]):
                hl = hi[:k] + (m,) + hi[k + 1:]
                lr = lo[:k] + (m + 1,) + lo[k + 1:]
                if comb(val(lo, hl), val(lr, hi)) == opt:
                    feature[node], level[node] = k, m
                    stack.append((lr, hi, node, 1))
                    stack.append((lo, hl, node, 0))
                    done = True
                    break
            if done:
                break
        if not done:  # pragma: no cover
            raise RuntimeError("born-again DP: no split attains the region's value")
    return feature, level, left_, right_, value


# ---------------------------------------------------------------------------------------------------------------
# public entry points
# ---------------------------------------------------------------------------------------------------------------
def _tree_from_arrays(space: CellSpace, arrays: tuple[list[int], list[int], list[int], list[int], list[int]],
                      n_features: int, classes: Any, feature_names: Any, dtype: str) -> DecisionTree:
    feature, level, left_, right_, value = arrays
    thr = [float(space.levels[f][m]) if f >= 0 else 0.0 for f, m in zip(feature, level, strict=True)]
    return DecisionTree(feature=feature, threshold=thr, left=left_, right=right_, value=value, classes=classes,
                        n_features=n_features, feature_names=feature_names, dtype=dtype)


def solve_cells(space: CellSpace, objective: str = "depth", method: str = "auto", time_limit: float | None = None,
                max_table_regions: int = 300_000_000, paper_bounds: bool = False,
                ) -> tuple[tuple[list[int], ...] | None, dict[str, Any]]:
    """Run the DP on a (filtered) cell grid; returns the tree as node lists on level indices, and statistics.

    The node lists are ``(feature, level, left, right, value)``; ``None`` when the time limit stopped the run.
    """
    if objective not in OBJECTIVES:
        raise OptionError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    if method not in ("auto", "recursion", "table"):
        raise OptionError(f"method must be 'auto', 'recursion' or 'table', got {method!r}")
    if time_limit is not None and time_limit <= 0:
        raise OptionError(f"time_limit must be positive, got {time_limit}")
    if paper_bounds and method == "table":
        raise OptionError("paper_bounds=True is the bound of Algorithm 1, the recursion: use method='recursion' or "
                          "'auto' with it, or paper_bounds=False with method='table' (the table has no bounds)")
    if method == "auto":  # the authors' bound lives in the recursion only: paper_bounds runs it
        fits = space.n_regions() <= max_table_regions
        method = "table" if objective != "depth" and fits and not paper_bounds else "recursion"
    deadline = time.perf_counter() + (time_limit if time_limit is not None else math.inf)
    t0 = time.perf_counter()
    stats: dict[str, Any] = {"method": method, "n_calls": 0}
    try:
        if method == "recursion":
            root, memo, calls = _recursion(space, objective, deadline, paper_bounds)
            stats.update(n_regions=len(memo), n_calls=calls, value=root)
            arrays = _extract_from_memo(space, objective, memo, root)
        else:
            A = _table(space, objective, deadline)
            stats.update(n_regions=space.n_regions(), value=int(A[tuple(n - 1 for n in space.shape)].flat[0]))
            arrays = _extract_from_table(space, objective, A)
    except _TimeUp:
        stats.update(status="time_limit", time_dp=time.perf_counter() - t0, value=None)
        stats.setdefault("n_regions", 0)
        return None, stats
    stats.update(status="optimal", time_dp=time.perf_counter() - t0)
    return arrays, stats


def born_again(ensemble: Ensemble, objective: str = "depth", method: str = "auto", time_limit: float | None = None,
               max_table_regions: int = 300_000_000, paper_bounds: bool = False,
               max_cells: int = 50_000_000) -> BornAgainResult:
    """The smallest decision tree with exactly the ensemble's decision function (Problem 1, [vidal-schiffer-2020] l.
    154).

    Args:
        ensemble: the tree ensemble (hard or soft vote).
        objective: "depth" (D), "leaves" (L) or "depth-leaves" (DL: depth, then leaves, hierarchically).
        method: "recursion" (Algorithm 1), "table" (vectorized bottom-up) or "auto" (see the module docstring).
        time_limit: wall seconds for the DP; on expiry the result has ``status="time_limit"`` and no tree.
        max_table_regions: "auto" uses the table only below this many regions (memory: 1-4 bytes per region).
        paper_bounds: run the authors' Algorithm 1 with their lower bound (the largest encoded value of a
            sub-region): ``method="auto"`` then picks the recursion, ``method="table"`` is refused
            (:class:`~treeopt_dsl.errors.OptionError`). For "depth-leaves" it reproduces the paper's Table 2
            but is not a valid bound for the pair and can stop a region's search early (Pima-Diabetes fold 2:
            143 leaves instead of the optimal 134); for "depth" and "leaves" it is the bound used anyway.
        max_cells: the dense cell grid is refused (:class:`~treeopt_dsl.errors.ModelTooLarge`) beyond this
            many cells (8 bytes per cell and class; the paper's forests have at most 2e6 cells): use
            :func:`~treeopt_dsl.bornagain.heuristic.born_again_heuristic` for larger ensembles.

    The tree's thresholds are the ensemble's own split values; it reproduces the ensemble on every cell
    (:func:`treeopt_dsl.bornagain.faithful.check_faithful` verifies it).
    """
    t0 = time.perf_counter()
    n_cells = math.prod(len(t) + 1 for t in ensemble.thresholds())
    if n_cells > max_cells:
        raise ModelTooLarge(f"the ensemble's split values cut the feature space into {n_cells:.3g} cells, beyond "
                            f"max_cells={max_cells:.3g} for the exact dynamic program: use the heuristic "
                            "(born_again_heuristic, --heuristic) or raise max_cells")
    full = CellSpace.from_ensemble(ensemble)
    space = full.filtered()
    arrays, st = solve_cells(space, objective, method, time_limit, max_table_regions, paper_bounds)
    tree = None
    if arrays is not None:
        tree = _tree_from_arrays(space, arrays, ensemble.n_features, ensemble.classes, ensemble.feature_names,
                                 ensemble.dtype)
    return BornAgainResult(tree=tree, objective=objective, status=st["status"],
                           depth=tree.depth if tree is not None else None,
                           n_leaves=tree.n_leaves if tree is not None else None, value=st["value"],
                           time=time.perf_counter() - t0, time_dp=st["time_dp"], method=st["method"],
                           n_cells=full.n_cells, n_cells_filtered=space.n_cells, n_regions=st["n_regions"],
                           n_calls=st["n_calls"])
