"""The exact DP route for axis-aligned 0-1-loss trees (OCT, Bertsimas & Dunn 2017): the depth-1/2 count
(:mod:`~treeopt_dsl.exact.depth2`) and STreeD deeper.

OCT's objective (formulations/oct.py, blocks ZeroOneLoss and L0) is

    C_d sum_i xi_i + alpha sum_t ||w_t||_0,   with ||w_t||_0 <= 1 (3.14, budget 1)

where ``xi_i`` is 1 when the last-layer node sample ``i`` reaches misclassifies it (3.9). Over the training
data, an axis-aligned split is one of finitely many cuts (:func:`~treeopt_dsl.exact.binarize.binarize`), so
the problem is the optimal decision tree over binary features that STreeD (van der Linden, de Weerdt and
Demirović, "Necessary and sufficient conditions for optimal decision trees using dynamic programming",
NeurIPS 2023; ``pystreed``) solves by dynamic programming in milliseconds at depth 2-3, where the MILP
needs minutes. With ``alpha > 0`` we solve one STreeD problem per number of branch nodes ``k`` (an exact,
integer trade-off, instead of STreeD's floating cost-complexity) and stop once ``alpha k`` alone exceeds
the best objective found.

The DP tree is embedded in the library's complete tree of depth ``d``: a split at an inner node becomes
``w_t = e_j``, ``b_t = -threshold + eps/2`` (right iff ``w_t·x + b_t > eps/2``, with every training sample at
least ``eps/2`` from the band, as (3.7) and (3.9) require); a leaf above the last layer becomes "go left
always" (``w_t = 0, b_t = -1``) with both subtrees repeating its class (as :func:`~treeopt_dsl.starts.resolver.
embed_tree` does); a last-layer split whose leaves predict one class becomes a constant. The point is
completed by the formulation's blocks and certified like any solver's answer: ``optimal`` only when STreeD
proved optimality, the certificate passes and the certified objective equals the DP's.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from importlib import import_module
from importlib.machinery import EXTENSION_SUFFIXES
from importlib.util import find_spec, module_from_spec, spec_from_file_location
from pathlib import Path
from typing import Any

import numpy as np

from treeopt_dsl.backends import get_engine
from treeopt_dsl.blocks import (
    L0,
    BendersFlow,
    BigMForwarding,
    BinarySplits,
    FlowRouting,
    FlowZeroOneLoss,
    ObliqueSplit,
    Routing,
    ZeroOneLoss,
)
from treeopt_dsl.defaults import DP_TIME_LIMIT, MEMORY_ENV, memory_budget, memory_text
from treeopt_dsl.errors import CapabilityError, FormulationError, ModelTooLarge, SolverNotAvailable
from treeopt_dsl.exact import cost, depth2
from treeopt_dsl.exact.binarize import Binarization, binarize, cuts_per_feature
from treeopt_dsl.formulation import BuildContext, Built, Formulation
from treeopt_dsl.models.embed import from_decisions, is_flow, point_of
from treeopt_dsl.result import SolveResult, Status
from treeopt_dsl.solve import certify

#: the solver name that selects this route (``treeopt solve oct --solver streed``)
SOLVER = "streed"
BACKEND = "dp"
INSTALL_HINT = "install the DP solver: pip install treeopt-dsl[dp] (or pip install pystreed)"

#: the row and objective families OCT's blocks add (anything else is a side constraint the DP does not model)
_ROW_PREFIXES = ("w_l0_up", "w_l0_lo", "w_l0_budget", "w_l0_count", "route", "forward_left_level",
                 "forward_right_level", "zero_one_neg_level", "zero_one_pos_level",
                 # the leaf classes of K > 2 classes (ZeroOneLoss.build_multiclass)
                 "leaf_side", "zero_one_leaf_left", "zero_one_leaf_right", "leaf_class_one", "zero_one_leaf_reached",
                 "zero_one_leaf_class")
_OBJECTIVE_TERMS = ("loss", "l0")


@dataclass(frozen=True)
class DPTask:
    """What the DP solves: depth ``d``, the last level's loss weight ``C``, the penalty ``alpha`` per used split,
    the strict-inequality gap ``eps`` and the magnitude ``w_scale`` of a split's single weight."""

    depth: int
    C: float
    alpha: float
    eps: float
    w_scale: float = 1.0

    @property
    def min_gap(self) -> float:
        """Values closer than this cannot be separated with ``|w_j| <= w_scale`` and the margin ``eps``."""
        return self.eps / self.w_scale * (1.0 + 1e-6)


@dataclass
class DPTree:
    """A DP tree in the library's layout, with what the DP itself says about it."""

    W: np.ndarray
    b: np.ndarray
    errors: float  # misclassified training samples (their total weight), counted on the binarized data
    n_splits: int  # nonzero rows of W
    objective: float  # C * errors + alpha * n_splits
    optimal: bool  # every STreeD run proved optimality (and the binarization is exact)
    runtime_s: float
    predictions: np.ndarray  # ±1 per training sample, from the DP tree on the binarized data
    n_columns: int
    runs: int
    #: what searched the trees: ``"count"`` (:mod:`~treeopt_dsl.exact.depth2`, depth 1-2) or ``"streed"``
    engine: str = "streed"
    #: per feature, consecutive distinct values closer than ``count_below`` (``None``: not counted)
    unseparable: np.ndarray | None = None
    #: what the run says besides its numbers (a run abandoned past its time limit)
    note: str = ""


# --------------------------------------------------------------------------- recognition
def _inspect(built: Built) -> DPTask | str:
    """The task, or the reason the composition is not one a DP solver takes exactly."""
    if built.ctx.topology is not None and is_flow(built):
        weights = weights_reason(built.ctx.data, built.ctx.topo.depth)
        return weights if weights else _inspect_flow(built)
    task = inspect_blocks(built.formulation, built.ctx)
    if isinstance(task, str):
        return task
    extra_terms = _extra_rows_or_terms(built, _ROW_PREFIXES)
    return extra_terms if extra_terms else task


def inspect_blocks(f: Formulation, ctx: BuildContext) -> DPTask | str:
    """The task of a big-M composition read from its blocks alone, or why it is not one: what
    :func:`recognize` decides before the model is built (``ctx`` needs the data, topology and numerics, no
    variables). These blocks add only their own rows and objective terms, so a model built from nothing else
    is the DP's problem; rows added to a built model are checked on it (:func:`recognize`)."""
    if ctx.topology is None:
        return "it is not a tree formulation (no depth)"
    weights = weights_reason(ctx.data, ctx.topo.depth)
    if weights:
        return weights
    kinds = [type(b) for b in f.blocks]
    reasons = []
    if not any(isinstance(b, L0) and b.of == "w" and b.budget is not None and np.ndim(b.budget) == 0
               and int(b.budget) == 1 for b in f.blocks):
        reasons.append("its splits are oblique (the DP route needs axis-aligned splits: L0 with budget 1 on w)")
    allowed = (ObliqueSplit, L0, Routing, BigMForwarding, ZeroOneLoss)
    extra = [k.__name__ for k in kinds if k not in allowed]
    if extra:
        reasons.append(f"block(s) {extra} add objective terms or rows a DP solver does not model (it takes "
                       "axis-aligned splits, the 0-1 loss at the last level and a penalty per split only)")
    if reasons:
        return "; ".join(reasons)
    for need in allowed:
        n = kinds.count(need)
        if n != 1:
            return f"it has {n} {need.__name__} blocks (the DP route needs exactly one)"
    split = next(b for b in f.blocks if isinstance(b, ObliqueSplit))
    l0 = next(b for b in f.blocks if isinstance(b, L0))
    loss = next(b for b in f.blocks if isinstance(b, ZeroOneLoss))
    if l0.of != "w" or l0.over != "feature" or l0.budget is None or np.ndim(l0.budget) != 0 or int(l0.budget) != 1:
        return "its splits are oblique (the DP route needs axis-aligned splits: L0 with budget 1 on w)"
    if l0.exact:
        return "L0(exact=True) forces a feature at every node (the DP tree may use constant nodes)"
    if np.ndim(l0.penalty) != 0 or np.ndim(l0.penalty_floor) != 0 or float(l0.penalty_floor) != 0.0:
        return "its split penalty is not one alpha per used split (per-node penalties or a floor)"
    if loss.levels != "last":
        return "its 0-1 loss counts errors at every level (the DP route needs levels='last')"
    C = float(loss._weights.weights(ctx)[-1])
    w_scale = 1.0 if split.w_bound is None else min(1.0, float(split.w_bound))
    return DPTask(depth=ctx.topo.depth, C=C, alpha=float(l0.penalty), eps=float(ctx.numerics.eps), w_scale=w_scale)


#: the largest total of integer sample weights the DP route expands into repeated rows
MAX_REPEATED_ROWS = 200_000


def weights_reason(data: Any, depth: int | None = None) -> str | None:
    """Why the DP route cannot take ``data``'s sample weights at ``depth`` (``None``: no weights; any weights at
    depth 1-2, where the count weighs every row; integer weights deeper, which STreeD takes as repeated rows:
    its classification task counts rows and has no instance weights)."""
    if not data.weighted or (depth is not None and depth <= depth2.MAX_DEPTH):
        return None
    w = data.weights
    if not np.all(w == np.round(w)):
        return ("the sample weights are not integers (at depth 3 and deeper STreeD counts misclassified rows; the DP "
                "route takes integer weights as repeated rows there, any weights at depth 1-2); the MILP takes any "
                "weights")
    if float(w.sum()) > MAX_REPEATED_ROWS:
        return f"the integer sample weights sum to {w.sum():.0f} rows, above {MAX_REPEATED_ROWS} (memory)"
    return None


def _inspect_flow(built: Built) -> DPTask | str:
    """The flow routings (FlowOCT, BendersOCT) of ``oct``: the same trees on 0/1 columns."""
    f = built.formulation
    allowed = (BinarySplits, L0, FlowRouting, FlowZeroOneLoss, BendersFlow)
    extra = [type(b).__name__ for b in f.blocks if not isinstance(b, allowed)]
    if extra:
        return f"block(s) {extra} add objective terms or rows a DP solver does not model"
    l0 = [b for b in f.blocks if isinstance(b, L0)]
    if len(l0) > 1 or (l0 and (l0[0].of != "select" or l0[0].budget is not None or np.ndim(l0[0].penalty) != 0
                              or float(l0[0].penalty_floor) != 0.0)):
        return "its split penalty is not one alpha per used split"
    loss = next((b for b in f.blocks if isinstance(b, (FlowZeroOneLoss, BendersFlow))), None)
    if loss is None:
        return "it has no flow loss"
    extra_terms = _extra_rows_or_terms(built, _FLOW_ROWS)
    if extra_terms:
        return extra_terms
    return DPTask(depth=built.ctx.topo.depth, C=float(loss.C), alpha=float(l0[0].penalty) if l0 else 0.0,
                  eps=float(built.ctx.numerics.eps))


#: the row families of the flow routings' blocks
_FLOW_ROWS = ("select_one", "select_right_child", "flow_conservation", "flow_left_arc", "flow_right_arc",
              "flow_sink_arc", "leaf_class_one", "select_l0_count")


def _extra_rows_or_terms(built: Built, rows: tuple[str, ...]) -> str | None:
    """Why the model has more than the DP's problem: row families outside ``rows`` (side constraints), objective
    terms besides the 0-1 loss and the split penalty, a quadratic objective (``None``: nothing more)."""
    wrong = [n for n in built.model.constraints if not n.startswith(rows)]
    if wrong or built.model.nl_constraints:
        return f"it has side constraints {(wrong + list(built.model.nl_constraints))[:4]} a DP solver does not model"
    terms = [n for n in built.model.objective if n not in _OBJECTIVE_TERMS]
    if terms:
        return f"its objective has terms {terms} besides the 0-1 loss and the split penalty"
    if any(_is_quadratic(e) for e in built.model.objective.values()):
        return "its objective is quadratic"
    return None


def _is_quadratic(expr: Any) -> bool:
    return type(expr).__name__ == "QuadExpr"


def recognize(built: Built) -> DPTask | None:
    """The :class:`DPTask` when ``built`` is a composition a DP solver solves exactly, else ``None``
    (:func:`why_not_dp` says why): axis-aligned splits (``L0(budget=1)`` on ``w``), the 0-1 loss at the
    last level, an optional ``alpha`` per used split, no other objective term or side constraint."""
    task = _inspect(built)
    return task if isinstance(task, DPTask) else None


def why_not_dp(built: Built) -> str | None:
    """Why ``built`` is not a DP task (``None`` when it is one)."""
    task = _inspect(built)
    return None if isinstance(task, DPTask) else task


# --------------------------------------------------------------------------- the DP
def streed() -> Any:
    """pystreed's compiled core (``pystreed.cstreed``: ``ParameterHandler``, ``RandomEngine`` and
    ``initialize_streed_solver``), or :class:`~treeopt_dsl.errors.SolverNotAvailable` with the install hint. The core
    is called directly (:func:`_run`), as :func:`treeopt_dsl.exact.contree.contree` does for ConTree: the
    scikit-learn wrapper ``STreeDClassifier.fit`` validates its parameters, binarizes and validates the data again
    on every call (measured: 9 ms of a 17 ms fit on monks-3 at depth 3, docs/benchmarks.md), which
    :func:`fit_tree` has already done."""
    try:
        return compiled_core("pystreed", "cstreed")
    except ImportError:
        raise SolverNotAvailable(f"the streed solver needs pystreed: {INSTALL_HINT}") from None


def compiled_core(package: str, name: str) -> Any:
    """The compiled extension ``package.name`` loaded without running ``package/__init__.py``: pystreed's and
    pycontree's import their scikit-learn wrappers, and with them scikit-learn (0.8-3 s in a fresh process, more
    than the engine on small data; the exact route calls the cores directly). The module is registered under its
    full name, so that importing the package later reuses it (an extension module is loaded once per process);
    an installation laid out otherwise is imported the ordinary way. Raises ``ImportError`` when it is missing.

    >>> compiled_core("pystreed", "cstreed").__name__  # doctest: +SKIP
    'pystreed.cstreed'
    """
    full = f"{package}.{name}"
    if full in sys.modules:
        return sys.modules[full]
    spec = find_spec(package)  # the package's location, without executing it
    if spec is None:
        raise ImportError(f"no module named {package!r}")
    for folder in spec.submodule_search_locations or []:
        for suffix in EXTENSION_SUFFIXES:
            path = Path(folder) / f"{name}{suffix}"
            if path.is_file():
                core_spec = spec_from_file_location(full, path)
                if core_spec is None or core_spec.loader is None:
                    continue
                module = module_from_spec(core_spec)
                sys.modules[full] = module
                try:
                    core_spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[full]
                    raise
                if package in sys.modules:
                    setattr(sys.modules[package], name, module)
                return module
    return import_module(full)


#: STreeD's parameters as ``STreeDClassifier(optimization_task="accuracy", random_seed=0)`` sets them (the core's
#: own defaults differ: feature ordering "in-order", a one-hour limit); depth, nodes, time limit and the terminal
#: solver are set per run
_STREED_PARAMS: dict[str, Any] = {
    "optimization_task": "accuracy", "hyper_tune": False, "all_trees": False, "min_leaf_node_size": 1,
    "cost_complexity": 0.0, "feature_ordering": "gini", "verbose": False, "print_intermediates": False,
    "random_seed": 0, "num_hyper_params": 10, "num_hyper_runs": 5, "use_branch_caching": False,
    "use_dataset_caching": True, "use_similarity_lower_bound": True, "use_upper_bound": True,
    "use_lower_bound": True, "upper_bound": float(2**31 - 1), "confidence_coefficient": 0.25,
    "accuracy_objective": "misclassification-score", "tune_method": "tree-size", "use_task_lower_bound": True,
}


def _run(Z: np.ndarray, y01: np.ndarray, depth: int, nodes: int, time_limit: float) -> tuple[Any, bool]:
    """One STreeD fit on 0/1 columns ``Z`` and class codes ``y01``: the tree (pystreed's node objects) and whether
    it proved optimality."""
    core = streed()
    params = core.ParameterHandler()
    for key, value in _STREED_PARAMS.items():
        setattr(params, key, value)
    # pystreed 1.4's specialised depth-2 ("terminal") solver can miss the optimum under a node limit below the
    # full tree (seen: max_depth=2, max_num_nodes=2 reports 1 error, proven, where a 2-split tree has 0; the
    # brute-force test finds such cases): node-limited runs use the general recursion only.
    params.max_depth, params.max_num_nodes = int(depth), int(min(nodes, 2**depth - 1))
    params.use_terminal_solver = nodes >= 2**depth - 1
    params.time_limit = float(max(time_limit, 1e-3))
    solver = core.initialize_streed_solver(params, core.RandomEngine(0))
    result = solver._solve(np.ascontiguousarray(Z, dtype=np.intc), np.ascontiguousarray(y01, dtype=np.int32), [])
    if not result.is_feasible():
        raise RuntimeError("STreeD found no feasible tree")
    return solver._get_tree(result), bool(result.is_optimal())


def check_binarized(data: Any, depth: int, max_thresholds: int | None = None, cuts: np.ndarray | None = None) -> None:
    """Refuse before binarizing a run of the count or STreeD that would not fit the memory budget
    (:mod:`~treeopt_dsl.exact.cost`, :func:`~treeopt_dsl.defaults.memory_budget`), naming what would fit.
    ``cuts``: :func:`~treeopt_dsl.exact.binarize.cuts_per_feature` of ``data.X`` when known."""
    every = cuts_per_feature(data.X) if cuts is None else cuts
    cuts = every if max_thresholds is None else np.minimum(every, int(max_thresholds))
    n = int(round(float(data.weights.sum()))) if data.weighted and depth > depth2.MAX_DEPTH else data.n_samples
    need, budget = cost.binarized(n, data.n_features, int(cuts.sum()), depth)[1], memory_budget()
    if need > budget:
        fits = cost.binarized_fits(n, every, depth, budget)
        engine = "the count" if depth <= depth2.MAX_DEPTH else "STreeD"
        raise ModelTooLarge(
            f"{engine} over {int(cuts.sum())} threshold columns on {n} rows at depth {depth} needs "
            f"~{memory_text(need)} of memory, above the budget of {memory_text(budget)} (set {MEMORY_ENV} to change "
            f"it); what would fit: {'; '.join([*fits, '--solver contree (continuous features, no binarization)'])}")


def _run_or_explain(Z: np.ndarray, y01: np.ndarray, depth: int, nodes: int, time_limit: float) -> tuple[Any, bool]:
    """:func:`_run`, with STreeD running out of memory said as a :class:`ModelTooLarge`."""
    try:
        return _run(Z, y01, depth, nodes, time_limit)
    except MemoryError:
        raise ModelTooLarge(f"STreeD ran out of memory on {Z.shape[1]} threshold columns at depth {depth}: pass "
                            "max_thresholds=K (--max-thresholds K: at most K quantile cuts per feature) or lower the "
                            "depth") from None


def _predict(node: Any, Z: np.ndarray) -> np.ndarray:
    """Class-code predictions (STreeD's labels: 0/1 for two classes) of a STreeD tree on 0/1 columns (left:
    column 0, right: column 1), by node masks."""
    out = np.zeros(Z.shape[0], dtype=np.int64)
    stack = [(node, np.ones(Z.shape[0], dtype=bool))]
    while stack:  # one numpy op per tree node
        nd, at = stack.pop()
        if nd.is_leaf_node():
            out[at] = int(nd.label)
            continue
        right = Z[:, int(nd.feature)] == 1
        stack += [(nd.left_child, at & ~right), (nd.right_child, at & right)]
    return out


def _embed(node: Any | None, label: float, bz: Binarization, task: DPTask, n_features: int,
           b_cap: float, multiclass: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A STreeD tree on ``bz``'s threshold columns as the library's complete tree (:func:`embed_nodes`)."""
    return embed_nodes(node, label, task, n_features, b_cap, multiclass,
                       cut=lambda nd: (int(bz.feature[int(nd.feature)]), float(bz.threshold[int(nd.feature)])))


def embed_nodes(node: Any | None, label: float, task: DPTask, n_features: int, b_cap: float, multiclass: bool,
                cut: Any) -> tuple[np.ndarray, np.ndarray]:
    """A DP tree as the library's complete tree of depth ``d`` (``W``, ``b``); see the module docstring. ``node``
    has ``is_leaf_node()``, ``label``, ``left_child`` and ``right_child``; ``cut(node)`` gives its split "``x_j <=
    thr`` goes left" as ``(j, thr)`` (any engine's nodes). ``multiclass``: only the splits are embedded (a constant
    last-level node sends everything left, a split one right iff ``x_j > thr``); the 0-1 loss block completes
    every leaf's class (the weighted majority, as the engines' leaf labels)."""
    d, a, half = task.depth, task.w_scale, task.eps / 2
    n_nodes = 2**d - 1
    W = np.zeros((n_nodes, n_features))
    b = np.zeros(n_nodes)
    const = min(1.0, b_cap)

    def leaf_label(nd: Any) -> float:
        if multiclass:
            return float(int(nd.label))
        return 1.0 if int(nd.label) == 1 else -1.0

    def place(nd: Any | None, cls: float, t: int, h: int) -> None:
        last = h == d
        if nd is None or nd.is_leaf_node():
            c = cls if nd is None else leaf_label(nd)
            if last:
                b[t] = -const if multiclass else c * const  # predict c always: v = ±const, beyond eps/2 on its side
                return
            b[t] = -const  # go left always; both subtrees repeat the class
            place(None, c, 2 * t + 1, h + 1)
            place(None, c, 2 * t + 2, h + 1)
            return
        j, thr = cut(nd)
        if last:
            cl, cr = leaf_label(nd.left_child), leaf_label(nd.right_child)
            if cl == cr:  # a split that changes no prediction: a constant (no used feature)
                b[t] = -const if multiclass else cl * const
                return
            s = 1.0 if multiclass else cr  # +1: predict +1 iff x_j > thr; -1: predict +1 iff x_j <= thr
            W[t, j], b[t] = s * a, -s * a * thr + half
            return
        W[t, j], b[t] = a, -a * thr + half  # right iff a (x_j - thr) > 0
        place(nd.left_child, cls, 2 * t + 1, h + 1)
        place(nd.right_child, cls, 2 * t + 2, h + 1)

    place(node, label, 0, 1)
    return W, b


def fit_dp(built: Built, task: DPTask, time_limit: float | None = None,
           max_thresholds: int | None = None) -> DPTree:
    """The optimal tree of ``task`` on ``built``'s (scaled) training data, in the library's layout."""
    return fit_tree(built.ctx.data, task, constant_b(built.formulation, built.ctx.data), time_limit, max_thresholds)


def constant_b(f: Formulation, data: Any, B: float | None = None) -> float:
    """The ``|b|`` a constant node uses (at most 1, within the split block's bound ``B`` on ``b``: read from the
    block when not given)."""
    if B is None:
        split = next((b for b in f.blocks if isinstance(b, ObliqueSplit)), None)
        B = split.bounds(data.X)[1] if split is not None else np.inf
    return float(B) if np.isfinite(B) else 1.0


def fit_tree(data: Any, task: DPTask, b_cap: float = 1.0, time_limit: float | None = None,
             max_thresholds: int | None = None, count_below: float | None = None,
             min_gap: float | None = None, cuts: np.ndarray | None = None) -> DPTree:
    """The optimal tree of ``task`` on ``data`` (scaled training data), in the library's layout: by
    :mod:`~treeopt_dsl.exact.depth2` at depth 1-2 (exhaustive counting, any sample weights), by STreeD deeper;
    ``b_cap``: :func:`constant_b`; ``count_below``: count the values closer than this into ``unseparable``
    (:func:`~treeopt_dsl.exact.binarize.binarize`); ``min_gap``: values closer than this are not separated (default:
    the task's, what the MILP's margin can express; 0: every distinct cut, the exact route's); ``cuts``:
    :func:`~treeopt_dsl.exact.binarize.cuts_per_feature` of ``data.X`` when known (the size check reads them)."""
    t0 = time.perf_counter()
    X = data.X
    reason = weights_reason(data, task.depth)
    if reason is not None:
        raise FormulationError(f"the DP route cannot take these weights: {reason}")
    K, multiclass = data.n_classes, data.n_classes > 2
    y = data.class_index  # class codes 0..K-1 (0/1 for two classes), what STreeD labels
    w = data.weights
    limit = DP_TIME_LIMIT if time_limit is None else float(time_limit)
    check_binarized(data, task.depth, max_thresholds, cuts)
    bz = binarize(X, max_thresholds=max_thresholds, min_gap=task.min_gap if min_gap is None else min_gap,
                  count_below=count_below)
    mass = np.bincount(y, weights=w, minlength=K)
    majority = float(np.argmax(mass)) if multiclass else (1.0 if mass[1] >= mass[0] else -1.0)
    major_code = int(np.argmax(mass)) if multiclass else int(mass[1] >= mass[0])
    # candidates: the constant tree, then the DP's tree(s)
    best_node: Any | None = None
    best_pred = np.full(y.size, major_code)
    best_obj = task.C * float(np.sum(w * (best_pred != y)))
    optimal, runs, note = bz.exact, 0, ""

    def consider(node: Any) -> None:
        nonlocal best_node, best_pred, best_obj
        pred = _predict(node, bz.Z)
        W, _ = _embed(node, majority, bz, task, X.shape[1], b_cap, multiclass)
        obj = task.C * float(np.sum(w * (pred != y))) + task.alpha * int(np.count_nonzero(np.abs(W).sum(1)))
        if obj < best_obj - 1e-12:
            best_node, best_pred, best_obj = node, pred, obj

    max_nodes = 2**task.depth - 1
    trivial = bz.n_columns == 0 or int(np.count_nonzero(mass)) <= 1
    engine = "count" if task.depth <= depth2.MAX_DEPTH else "streed"
    if not trivial and engine == "count":  # one exhaustive count with alpha in its objective
        solved = depth2.solve(bz.Z, y, task.depth, C=task.C, alpha=task.alpha, weights=w if data.weighted else None,
                              n_classes=K, groups=bz.feature, time_limit=limit)
        consider(solved.node)
        optimal, runs = optimal and solved.complete, 1
    elif not trivial:  # STreeD; with alpha > 0 one run per number of branch nodes k (an exact integer trade-off)
        rep = np.round(w).astype(np.int64)  # integer weights (checked): a row of weight k is k repeated rows
        Zr, yr = (bz.Z, y) if not data.weighted else (np.repeat(bz.Z, rep, axis=0), np.repeat(y, rep))
        for k in [max_nodes] if task.alpha == 0 else range(1, max_nodes + 1):
            if task.alpha * k >= best_obj and task.alpha > 0:
                break  # alpha k alone is no better than the best tree: no larger tree can win
            left = limit - (time.perf_counter() - t0)
            if left <= 0:
                optimal = False
                break
            setup = cost.streed_setup(yr.size, bz.n_columns)
            if setup > left:  # STreeD would overrun the limit before its search reads the clock: not started
                optimal = False
                note = (f"STreeD not started: setting up its caches over {bz.n_columns} columns is estimated at "
                        f"~{setup:.2g} s, above the {max(left, 0.0):.2g} s left of the time limit (it reads its clock "
                        "only in its search); --solver contree (continuous features) or --max-thresholds K answer "
                        "sooner")
                if runs == 0 and task.depth > depth2.MAX_DEPTH and cost.binarized(
                        bz.Z.shape[0], X.shape[1], bz.n_columns, depth2.MAX_DEPTH)[0] < left:
                    note += "; the best tree known is the optimal depth-2 tree (the count)"
                    consider(depth2.solve(bz.Z, y, depth2.MAX_DEPTH, C=task.C, alpha=task.alpha,
                                          weights=w if data.weighted else None, n_classes=K, groups=bz.feature,
                                          time_limit=left).node)
                break
            # STreeD's clock starts after its setup: its search gets what the setup leaves of the limit
            node, proved = _run_or_explain(Zr, yr.astype(np.int32), min(task.depth, k), k, left - setup)
            runs += 1
            optimal = optimal and proved
            consider(node)
    W, b = _embed(best_node, majority, bz, task, X.shape[1], b_cap, multiclass)
    n_splits = int(np.count_nonzero(np.abs(W).sum(1)))
    errors = float(np.sum(w * (best_pred != y)))  # weighted (the count of errors without weights)
    errors = int(errors) if errors == int(errors) else errors
    return DPTree(W=W, b=b, errors=errors, n_splits=n_splits, objective=task.C * errors + task.alpha * n_splits,
                  optimal=optimal, runtime_s=time.perf_counter() - t0,
                  predictions=best_pred if multiclass else np.where(best_pred == 1, 1, -1),
                  n_columns=bz.n_columns, runs=runs, engine=engine, unseparable=bz.closer, note=note)


#: how :func:`describe` names each engine
ENGINES = {"count": "exact depth-1/2 count (treeopt_dsl.exact.depth2)", "streed": "STreeD", "contree": "ConTree"}
#: the route (solver, backend) each engine answers as
ROUTES = {"count": (SOLVER, BACKEND), "streed": (SOLVER, BACKEND), "contree": ("contree", "contree")}


def describe(tree: DPTree, max_thresholds: int | None = None) -> str:
    """The message of a DP answer: the engine, errors, splits, columns, runs, time, and what is not proven."""
    cols = "every distinct cut" if tree.engine == "contree" else f"{tree.n_columns} threshold columns"
    msg = (f"{ENGINES[tree.engine]}: {tree.errors} errors, {tree.n_splits} splits over {cols} "
           f"({tree.runs} run(s), {tree.runtime_s:.3g} s)")
    if tree.note:
        msg += f"; {tree.note}"
    if not tree.optimal:
        msg += "; optimality not proven (" + ("time limit" if max_thresholds is None else
                                              f"max_thresholds={max_thresholds} is an approximation") + ")"
    return msg


# --------------------------------------------------------------------------- the route
def solve_dp(built: Built, time_limit: float | None = None, max_thresholds: int | None = None) -> SolveResult:
    """Solve ``built`` (a recognized composition, :func:`recognize`) exactly by DP and certify the answer.

    ``max_thresholds`` (an approximation: at most that many cuts per feature) makes the result ``feasible``, not
    ``optimal`` (the DP optimum is over a subset of the cuts); a DP stopped by ``time_limit`` returns its
    certified tree as ``time_limit``; ``uncertified`` only when the formulation's certificate does not
    reproduce the DP tree.
    """
    task = _inspect(built)
    if not isinstance(task, DPTask):
        raise CapabilityError(f"the {SOLVER} solver cannot solve {built.formulation.name}: {task}")
    # no compile: no solver reads a matrix here (the size is counted on the model; export compiles on demand)
    t0 = time.perf_counter()
    size = built.model.size()
    compile_s = time.perf_counter() - t0
    tree = fit_dp(built, task, time_limit=time_limit, max_thresholds=max_thresholds)
    t1 = time.perf_counter()

    flow = is_flow(built)
    x = (point_of if flow else from_decisions)(built, {"w": tree.W, "b": tree.b})
    # from_decisions completes the point from w and b alone: when those are all the decisions, it is the point
    # the certificate would complete again
    done = not flow and set(built.formulation.decisions) == {"w", "b"}
    cert = certify(built, x, tree.objective, str(size["problem_class"]), completed=x if done else None)
    model = built.decode(x)
    agrees = cert.ok and abs(cert.objective_decoded - tree.objective) <= cert.tolerance * max(1.0, abs(tree.objective))
    res = dp_result(tree, cert, agrees, "the formulation's certificate", time_limit, max_thresholds, x=x,
                    compile_s=compile_s, size=size, model=model, built=built)
    t2 = time.perf_counter()
    res.timing = {"prepare": compile_s, "search": t1 - t0 - compile_s, "certify": t2 - t1, "total": t2 - t0}
    return res


def dp_result(tree: DPTree, cert: Any, agrees: bool, checked_by: str, time_limit: float | None,
              max_thresholds: int | None, **fields: Any) -> SolveResult:
    """The result of a DP tree whose certificate is ``cert`` (``agrees``: it reproduces the DP's tree and objective;
    ``checked_by`` names it in the message). What is proven: the optimum (the DP's proof and the certificate), a
    certified tree stopped by the time limit, a certified tree optimal only over a subset of the cuts
    (``feasible``), or a tree the certificate does not reproduce (``uncertified``, with its own objective).
    ``fields``: the rest of the :class:`~treeopt_dsl.result.SolveResult` (``x``, ``size``, ``model``, ...)."""
    proven = tree.optimal and agrees
    msg = describe(tree, max_thresholds)
    if not agrees:
        msg += f"; {checked_by} does not reproduce the DP tree: {cert}"
    if proven:
        status = Status.OPTIMAL
    elif not agrees:
        status = Status.UNCERTIFIED
    else:
        status = Status.TIME_LIMIT if max_thresholds is None else Status.FEASIBLE
    objective = tree.objective if agrees else cert.objective_decoded
    return SolveResult(
        status=status, objective=objective, bound=objective if proven else None, gap=0.0 if proven else None,
        runtime_s=tree.runtime_s, solver=ROUTES[tree.engine][0], backend=ROUTES[tree.engine][1], message=msg,
        options={k: v for k, v in {"time_limit": time_limit, "max_thresholds": max_thresholds}.items()
                 if v is not None},
        certificate=cert, solver_status=(Status.OPTIMAL if tree.optimal else Status.TIME_LIMIT) if not proven else None,
        **fields)


def solve_exact(built: Built, time_limit: float | None = None, max_thresholds: int | None = None) -> SolveResult:
    """The DP route's answer for ``built`` (:func:`solve_dp`) with the model's resolution note.

    Raises :class:`~treeopt_dsl.errors.CapabilityError` naming why when the composition is not one a DP
    solver solves exactly."""
    reason = why_not_dp(built)
    if reason is not None:
        raise CapabilityError(f"the {SOLVER} solver (exact DP for axis-aligned 0-1-loss trees) cannot solve "
                              f"{built.formulation.name}: {reason}; use a MILP solver such as highs")
    if built.ctx.topo.depth > depth2.MAX_DEPTH:
        streed()  # a missing pystreed is SolverNotAvailable with the install hint (depth 1-2 count without it)
    res = solve_dp(built, time_limit=time_limit, max_thresholds=max_thresholds)
    # cuts the model's margin cannot express, as on the MILP route
    return with_resolution(res, built.notes().get("resolution"))


def maybe_solve_dp(built: Built, solver: str, **options: Any) -> SolveResult | None:
    """The DP route's answer when ``solver`` names it in the registry (else ``None``, the MILP path goes on).
    Takes ``time_limit`` and ``max_thresholds``; MIP options (gap, threads, seed, warm starts, verbosity,
    callbacks) do not apply and are ignored."""
    engine = get_engine(solver)
    if engine is None or engine.name != BACKEND:
        return None
    return engine.solve_built(built, **options)


def with_resolution(res: SolveResult, report: dict[str, Any] | None) -> SolveResult:
    """``res`` with its :attr:`~treeopt_dsl.result.SolveResult.resolution` report and a sentence about it."""
    res.resolution = report
    if report is not None:
        res.message += (f"; {report['unseparable_pairs']} pair(s) of distinct training values lie closer than "
                        "eps/w_bound and cannot be split apart (--param cuts=all expresses every cut)")
    return res










