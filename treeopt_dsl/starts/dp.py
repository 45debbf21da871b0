"""The exact DP tree as a start of any tree formulation: the 0-1-loss optimum of the axis-aligned trees
(:mod:`treeopt_dsl.exact`), proven optimal for the compositions the engine solves exactly (OCT), a good
incumbent for the others (OLCT, OCT-H, MARGOT).

The start takes its tree from the same engines as the exact route, chosen by the same cost model
(:mod:`treeopt_dsl.exact.cost`): the count or STreeD on the exact binarization while it is small
(:func:`start_columns`), ConTree over every cut of continuous features when it is installed and expected within the
start's budget (breast-cancer, 12,486 cuts at depth 2: 0.02 s where the count over every cut takes 1.5 s), else the
count or STreeD on quantile cuts (an approximation, never called proven)."""

from __future__ import annotations

import numpy as np

from treeopt_dsl.backends import get_engine
from treeopt_dsl.defaults import DP_START_TIME, memory_budget
from treeopt_dsl.errors import FormulationError, SolverNotAvailable
from treeopt_dsl.exact import cost, depth2
from treeopt_dsl.exact.binarize import cuts_per_feature
from treeopt_dsl.exact.contree import fit_contree, precision_reason
from treeopt_dsl.exact.contree import weights_reason as contree_weights_reason
from treeopt_dsl.exact.dp import ROUTES, DPTask, constant_b, fit_dp, recognize, streed, weights_reason
from treeopt_dsl.formulation import Built
from treeopt_dsl.models.embed import is_tree, point_of
from treeopt_dsl.numeric import unseparable_pairs

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


def dp_candidate(built: Built, time_limit: float = DP_START_TIME,
                 max_thresholds: int | None = None) -> tuple[np.ndarray | None, dict[str, str] | None]:
    """``(point, proven_by)``: a warm start for any tree formulation with hyperplane decisions: the DP's
    0-1-loss tree (exact for OCT, the misclassification-optimal axis-aligned tree otherwise), made
    feasible by :func:`~treeopt_dsl.models.embed.point_of`; ``(None, None)`` deeper than 2 when neither pystreed
    nor pycontree can give it. ``proven_by``: the route (``{"solver", "backend"}``) that proved the point the
    formulation's optimum (a recognized composition, every cut searched, the engine proved it, and the point scores
    the engine's objective), else ``None``.

    Every cut is used (for a recognized composition the start is then the optimum) while there are at
    most :func:`start_columns` of them; otherwise ``max_thresholds`` quantile cuts per feature (default:
    that budget over the features) keep it fast, and the start is not proven. ``time_limit`` bounds the
    DP's own time.
    """
    ctx = built.ctx
    if not is_tree(built):
        raise FormulationError("the DP start needs a tree formulation (hyperplane decisions w, b or binary splits)")
    reason = weights_reason(ctx.data, ctx.topo.depth)
    if reason is not None:
        raise FormulationError(f"the DP start cannot take these weights: {reason}")
    task = recognize(built)
    proof = task is not None
    if task is None:
        task = DPTask(depth=ctx.topo.depth, C=1.0, alpha=0.0, eps=float(ctx.numerics.eps))
    budget = start_columns(ctx.topo.depth, proof=proof)
    cuts = cuts_per_feature(ctx.data.X)
    all_cuts = int(cuts.sum()) <= budget
    exact = proof and all_cuts
    n, p = ctx.data.n_samples, ctx.data.n_features
    binarized_s = cost.binarized(n, p, int(cuts.sum()), task.depth)[0] if all_cuts else np.inf
    if max_thresholds is None and _contree_takes(built, task, min(time_limit, binarized_s), int(cuts.sum())):
        tree = fit_contree(ctx.data, task, constant_b(built.formulation, ctx.data), time_limit)
        exact = proof
    else:
        if task.depth > depth2.MAX_DEPTH:
            try:
                streed()
            except SolverNotAvailable:
                return None, None
        if all_cuts:
            max_thresholds = None
        elif max_thresholds is None:
            max_thresholds = max(2, budget // max(1, ctx.data.n_features))
        tree = fit_dp(built, task, time_limit=time_limit, max_thresholds=max_thresholds)
    x = point_of(built, {"w": tree.W, "b": tree.b})
    # proven: the composition is the DP's problem, every cut was searched, and the point scores what the DP says
    proven = exact and tree.optimal and abs(built.model.objective_value(x) - tree.objective) <= 1e-6 * max(
        1.0, abs(tree.objective))
    solver, backend = ROUTES[tree.engine]
    return x, ({"solver": solver, "backend": backend} if proven else None)


def _contree_takes(built: Built, task: DPTask, within: float, cuts: int) -> bool:
    """Whether ConTree gives the start over every cut: installed, the data's weights and precision are its, no two
    distinct values closer than the model's margin can express (its cuts are then the model's), its expected time
    (:func:`treeopt_dsl.exact.cost.contree`) below ``within`` (the start's budget, or the count's expected time when
    it would search every cut; ``cuts``: the data's distinct cuts) and its memory within the budget."""
    engine = get_engine("contree")
    data = built.ctx.data
    if engine is None or not engine.available():
        return False
    if contree_weights_reason(data) or precision_reason(data.X):
        return False
    if task.min_gap > 0 and int(unseparable_pairs(data.X, task.min_gap).sum()) > 0:
        return False
    seconds, need = cost.contree(data.n_samples, data.n_features, task.depth, cuts)
    return seconds < within and need <= memory_budget()
