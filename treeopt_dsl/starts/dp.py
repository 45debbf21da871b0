"""The exact DP tree as a start of any tree formulation: the 0-1-loss optimum of the axis-aligned trees
(:mod:`treeopt_dsl.exact`), proven optimal for the compositions the engine solves exactly (OCT), a good
incumbent for the others (OLCT, OCT-H, MARGOT)."""

from __future__ import annotations

import numpy as np

from treeopt_dsl.defaults import DP_START_TIME
from treeopt_dsl.errors import FormulationError, SolverNotAvailable
from treeopt_dsl.exact import depth2
from treeopt_dsl.exact.dp import BACKEND, SOLVER, DPTask, fit_dp, recognize, streed, weights_reason
from treeopt_dsl.formulation import Built
from treeopt_dsl.models.embed import is_tree, point_of

#: the route whose proof a proven DP start is (the result names it as the solver)
PROVEN_BY = {"solver": SOLVER, "backend": BACKEND}


#: the threshold columns the automatic start may binarize, by depth: at depth 1-2 the count
#: (:mod:`~treeopt_dsl.exact.depth2`; breast-cancer, 569 x 30, depth 2: all 15,310 columns in 1.5 s, where STreeD
#: took 60 s on 12,486), deeper STreeD, whose cost grows faster (200 x 30, depth 3: 480 columns 1 s, 960 columns
#: 2.3 s)
START_COLUMNS = {1: 20000, 2: 16000}


START_COLUMNS_DEEPER = 400


#: the same for a composition the DP does not solve (OLCT, MARGOT, OCT-H: its tree is only a start, so searching
#: every cut buys no proof; the default job's start took 1.6 s instead of about 0.3 s with all 12,486 columns)
START_COLUMNS_ONLY_START = {1: 20000, 2: 2000}


def start_columns(depth: int, proof: bool = True) -> int:
    """How many threshold columns the automatic start binarizes for a tree of ``depth`` (``proof``: the
    composition is the DP's problem, so searching every cut can prove the optimum)."""
    return (START_COLUMNS if proof else START_COLUMNS_ONLY_START).get(depth, START_COLUMNS_DEEPER)


def dp_start(built: Built, time_limit: float = DP_START_TIME, max_thresholds: int | None = None) -> np.ndarray | None:
    """The point of :func:`dp_candidate` (``None`` when pystreed is not installed)."""
    return dp_candidate(built, time_limit, max_thresholds)[0]


def n_exact_columns(X: np.ndarray) -> int:
    """How many threshold columns an exact binarization of ``X`` has (distinct values - 1 per feature)."""
    if X.size == 0:
        return 0
    S = np.sort(X, axis=0)
    return int(np.count_nonzero(np.diff(S, axis=0) > 0))


def dp_candidate(built: Built, time_limit: float = DP_START_TIME,
                 max_thresholds: int | None = None) -> tuple[np.ndarray | None, bool]:
    """``(point, proven)``: a warm start for any tree formulation with hyperplane decisions: the DP's
    0-1-loss tree (exact for OCT, the misclassification-optimal axis-aligned tree otherwise), made
    feasible by :func:`~treeopt_dsl.models.embed.point_of`; ``(None, False)`` deeper than 2 when pystreed is
    not installed. ``proven``: the point is the formulation's proven optimum (a recognized composition,
    every cut searched, the DP proved it, and the point scores the DP's objective).

    Every cut is used (for a recognized composition the start is then the optimum) while there are at
    most :func:`start_columns` of them; otherwise ``max_thresholds`` quantile cuts per feature (default:
    that budget over the features) keep it fast, and the start is not proven. ``time_limit`` bounds the
    DP's own time.
    """
    ctx = built.ctx
    if ctx.topology is not None and ctx.topo.depth > depth2.MAX_DEPTH:
        try:
            streed()
        except SolverNotAvailable:
            return None, False
    if not is_tree(built):
        raise FormulationError("the DP start needs a tree formulation (hyperplane decisions w, b or binary splits)")
    reason = weights_reason(ctx.data, ctx.topo.depth)
    if reason is not None:
        raise FormulationError(f"the DP start cannot take these weights: {reason}")
    task = recognize(built)
    budget = start_columns(ctx.topo.depth, proof=task is not None)
    all_cuts = n_exact_columns(ctx.data.X) <= budget
    exact = task is not None and all_cuts
    if task is None:
        task = DPTask(depth=ctx.topo.depth, C=1.0, alpha=0.0, eps=float(ctx.numerics.eps))
    if all_cuts:
        max_thresholds = None
    elif max_thresholds is None:
        max_thresholds = max(2, budget // max(1, ctx.data.n_features))
    tree = fit_dp(built, task, time_limit=time_limit, max_thresholds=max_thresholds)
    x = point_of(built, {"w": tree.W, "b": tree.b})
    # proven: the composition is the DP's problem, every cut was searched, and the point scores what the DP says
    proven = exact and tree.optimal and abs(built.model.objective_value(x) - tree.objective) <= 1e-6 * max(
        1.0, abs(tree.objective))
    return x, proven
