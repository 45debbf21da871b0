"""What a solve returns: status, objective, bound, gap, timings, values and the certificate."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

import numpy as np

#: relative difference below which two objectives are a tie: a solver's "improving" point this close to the best
#: before it (HiGHS reports points 1e-14 from its start) is not an improvement, and does not move the incumbent's time
TIE_RTOL = 1e-6


def improves(objective: float, than: float) -> bool:
    """Whether ``objective`` is lower than ``than`` by more than a tie (``TIE_RTOL`` relative); anything improves
    on ``than = inf`` (nothing yet).

        >>> improves(99.0, 100.0), improves(100.0 - 1e-12, 100.0), improves(5.0, float("inf"))
        (True, False, True)
    """
    return not np.isfinite(than) or objective < than - TIE_RTOL * max(1.0, abs(than))


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """``|obj - bound| / max(1e-10, |obj|)``, the convention HiGHS and Gurobi report."""
    if objective is None or bound is None or not np.isfinite(objective) or not np.isfinite(bound):
        return None
    return abs(objective - bound) / max(1e-10, abs(objective))


def engine_timing(inner: dict[str, float] | None, runtime_s: float, total: float) -> dict[str, float]:
    """The ``timing`` of an exact engine's answer over a whole call of ``total`` seconds: the engine's own
    ``search`` and ``certify`` (``inner``, else its ``runtime_s`` as the search), and everything else of the call as
    ``prepare``, so that the parts add up to the total.

    >>> engine_timing({"prepare": 0.125, "search": 0.5, "certify": 0.25, "total": 0.875}, 0.5, 1.0)
    {'prepare': 0.25, 'search': 0.5, 'certify': 0.25, 'total': 1.0}
    """
    search = float(inner["search"]) if inner and "search" in inner else float(runtime_s)
    certify = float(inner.get("certify", 0.0)) if inner else 0.0
    return {"prepare": max(0.0, total - search - certify), "search": search, "certify": certify, "total": total}


class Status(str, Enum):
    """What a solve proved. A contract: ``optimal`` means the solver proved it *and* the decoded model's
    certificate reproduces it; a solver's claim whose certificate fails is ``uncertified``."""

    OPTIMAL = "optimal"
    LOCAL_OPTIMUM = "local_optimum"  # a local solver's optimality conditions (Ipopt's KKT) on a nonconvex model
    FEASIBLE = "feasible"  # a feasible point with no proof, no limit reached (a start kept over a worse local end)
    TIME_LIMIT = "time_limit"  # stopped at a limit with an incumbent
    TIME_LIMIT_NO_SOLUTION = "time_limit_no_solution"
    INTERRUPTED = "interrupted"  # stopped by the user (Ctrl-C, SIGTERM) with an incumbent
    INTERRUPTED_NO_SOLUTION = "interrupted_no_solution"
    UNCERTIFIED = "uncertified"  # the solver returned a point the decoded model does not reproduce
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"  # includes "infeasible or unbounded" when the solver cannot tell
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        """Whether the result carries a point (and, for tree formulations, a decoded model)."""
        return self in (Status.OPTIMAL, Status.LOCAL_OPTIMUM, Status.FEASIBLE, Status.TIME_LIMIT, Status.INTERRUPTED,
                        Status.UNCERTIFIED)

    @property
    def proven(self) -> bool:
        """Whether the answer is proven optimal (and certified)."""
        return self is Status.OPTIMAL


@dataclass
class Certificate:
    """The decoded model re-evaluated on the training data, against what the solver reported.

    ``objective_decoded`` is the formulation's objective at the point completed from the decoded
    model alone (routing from its hyperplanes, slacks from its loss); ``max_violation`` is how far
    that point is from feasible (non-zero when, e.g., a constant big-M is too small for the tree the
    solver found); ``routing_mismatches`` counts samples the decoded model routes differently from
    the solver's ``z``.
    """

    objective_solver: float
    objective_decoded: float
    max_violation: float
    routing_mismatches: int
    tolerance: float
    violation_tolerance: float = 1e-5
    terms: dict[str, float] = field(default_factory=dict)

    @property
    def abs_diff(self) -> float:
        return abs(self.objective_solver - self.objective_decoded)

    @property
    def ok(self) -> bool:
        return (self.abs_diff <= self.tolerance * max(1.0, abs(self.objective_solver))
                and self.max_violation <= self.violation_tolerance and self.routing_mismatches == 0)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "abs_diff": self.abs_diff, "ok": self.ok}

    def __str__(self) -> str:
        word = "ok" if self.ok else "MISMATCH"
        return (f"certificate {word}: solver objective {self.objective_solver:.6g}, decoded model "
                f"{self.objective_decoded:.6g} (|diff| {self.abs_diff:.2e}), max violation "
                f"{self.max_violation:.1e}, routing mismatches {self.routing_mismatches}")


@dataclass
class SolveResult:
    status: Status
    objective: float | None
    bound: float | None
    gap: float | None
    runtime_s: float
    solver: str
    backend: str
    x: np.ndarray | None = field(default=None, repr=False)
    compile_s: float = 0.0
    size: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    certificate: Certificate | None = None
    model: Any = field(default=None, repr=False)  # the decoded, fitted model
    built: Any = field(default=None, repr=False)
    warm_start_accepted: bool | None = None
    #: one entry per start of a multistart solve (objective, status, runtime); the result is the best
    starts: list[dict[str, Any]] = field(default_factory=list)
    #: which start of a multistart gave the result (``"random 3"``, ``"given 0"``), else ``None``
    won: str | None = None
    #: seconds from the solver's start to the incumbent it returned (the rest of ``runtime_s`` went into the
    #: proof); ``None`` when the route cannot tell (CBC, linopy, pyomo) or the answer is not the solver's
    incumbent_time_s: float | None = None
    #: what the solver itself claimed when that differs from ``status`` (e.g. ``optimal`` for an
    #: ``uncertified`` result), else ``None``
    solver_status: Status | None = None
    #: distinct training values of a feature that lie closer than the model's smallest expressible cut
    #: (``eps / w_bound``): ``{"smallest_cut_gap", "unseparable_pairs", "features": {name: pairs}}``, or ``None``
    resolution: dict[str, Any] | None = None
    #: the warm start: which won (``"cart"``, ``"greedy"``, ``"dp"``, ``"given"``), its objective, every
    #: candidate's objective (``warm_start="auto"``) and the time spent on them; ``None`` without a start
    start: dict[str, Any] | None = None
    #: a solver whose optimality claims are not taken on trust (CBC, :mod:`treeopt_dsl.backends.dialects`): what it
    #: claimed (``claimed_status``, ``claimed_objective``, ``claimed_bound``) and what the verifier's second solve
    #: found (``by``, ``status``, ``objective``, ``bound``, ``time_s``); ``None`` for the other solvers
    verification: dict[str, Any] | None = None
    #: how ``solver="auto"`` chose the route (:func:`treeopt_dsl.backends.plan_route`): ``chosen``, ``why`` and every
    #: exact engine's estimate; ``None`` for a named solver
    route: dict[str, Any] | None = None
    #: where the call's time went, in seconds (``FormulationSpec.solve``: ``prepare_build``, ``start``, ``solve``,
    #: ``total``); ``time_limit`` bounds the total: the solver gets what preparing, building and the starts left.
    #: An exact engine's answer (:func:`engine_timing`): ``prepare`` (the route's choice, reading the composition,
    #: the size checks; the model's build when the engine needs one), ``search`` (the engine, its binarization
    #: included), ``certify`` (decoding and checking the tree) and ``total``
    timing: dict[str, float] | None = None
    #: a loss proven in its true function (``ors loss="true"``, :func:`treeopt_dsl.lazy.outer_approximation`): the
    #: true objective, the lower bound, the gap ``(UB - LB) / max(1, |UB|)`` and its ``tol``, the ``iterations``, the
    #: tangent rows added and every iteration's ``history``; ``None`` otherwise
    outer_approximation: dict[str, Any] | None = None
    #: the last-layer refinement (thesis Remark 1, :func:`treeopt_dsl.starts.refine.refine_result`) applied to
    #: ``model`` after the solve: the exact objective before and after and the nodes refitted; ``None`` without it
    refinement: dict[str, Any] | None = None
    #: the solver's own iteration count (Ipopt's ``iter_count``; a multistart: the kept start's, every start's in
    #: ``starts``); ``None`` where the route does not report one (the MILP routes)
    iterations: int | None = None
    #: the scale search after the solve (``ors scale="search"``): the multiplier and intercept that minimize the true
    #: log-loss for the card's fixed points (``multiplier``, ``intercept``, their values before, the summed true
    #: log-loss ``loss_before`` / ``loss_after``, ``proven``: what the status is about); ``model`` is the scaled
    #: card, ``objective`` and the certificate the proven card's; ``None`` without it
    scale_search: dict[str, Any] | None = None
    #: ``ors multiplier="auto"``: the multiplier chosen with the start's card before the solve
    #: (:func:`treeopt_dsl.starts.risk.search_multiplier`: ``multiplier``, the card's true ``loss``, ``seconds``,
    #: ``nonzeros``); the status and certificate are the card's at that multiplier; ``None`` otherwise
    multiplier_search: dict[str, Any] | None = None

    @property
    def improvement(self) -> float | None:
        """How much the solver improved on its start (start objective - objective; 0 for a tie, ``TIE_RTOL``),
        or ``None``."""
        if self.start is None or self.start.get("objective") is None or self.objective is None:
            return None
        start, objective = float(self.start["objective"]), float(self.objective)
        return start - objective if improves(objective, start) or improves(start, objective) else 0.0

    @property
    def values(self) -> dict[str, Any]:
        """Every variable family's values as an ``xarray.DataArray`` with the model's coordinates."""
        import xarray as xr

        if self.x is None or self.built is None:
            return {}
        return {name: xr.DataArray(f.values(self.x), dims=f.dims, coords=f.coords)
                for name, f in self.built.model.variables.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status.value, "objective": self.objective, "bound": self.bound, "gap": self.gap,
            "runtime_s": round(self.runtime_s, 4), "compile_s": round(self.compile_s, 4),
            "incumbent_time_s": None if self.incumbent_time_s is None else round(self.incumbent_time_s, 4),
            "solver": self.solver, "backend": self.backend, **self.size,
            "certificate": self.certificate.to_dict() if self.certificate else None,
            "message": self.message, "options": self.options,
            "warm_start_accepted": self.warm_start_accepted,
            **({"solver_status": self.solver_status.value} if self.solver_status is not None else {}),
            **({"start": {**self.start, "improvement": self.improvement}} if self.start is not None else {}),
            **({"resolution": self.resolution} if self.resolution is not None else {}),
            **({"verification": self.verification} if self.verification is not None else {}),
            **({"route": self.route} if self.route is not None else {}),
            **({"timing": {k: round(v, 4) for k, v in self.timing.items()}} if self.timing is not None else {}),
            **({"outer_approximation": self.outer_approximation} if self.outer_approximation is not None else {}),
            **({"starts": self.starts, "won": self.won} if self.starts else {}),
            **({"refinement": self.refinement} if self.refinement is not None else {}),
            **({"scale_search": self.scale_search} if self.scale_search is not None else {}),
            **({"multiplier_search": self.multiplier_search} if self.multiplier_search is not None else {}),
        }
