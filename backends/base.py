"""The backend protocol: what a backend can do, the options it honours, and the raw answer it gives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from treeopt_dsl.ir import StandardForm
from treeopt_dsl.result import Status


@dataclass
class SolveOptions:
    """Options every backend maps to its solver's own names (``None`` = the solver's default)."""

    time_limit: float | None = None
    gap: float | None = None  # relative MIP gap
    threads: int | None = None
    seed: int | None = None
    verbose: bool = False
    log_callback: Callable[[str], None] | None = None
    warm_start: np.ndarray | None = None  # a full column vector (NaN = unknown)
    feasibility_tol: float | None = None
    integrality_tol: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # solver-specific, passed through


@dataclass
class RawResult:
    status: Status
    x: np.ndarray | None
    objective: float | None
    bound: float | None
    gap: float | None
    runtime_s: float
    message: str = ""
    warm_start_accepted: bool | None = None


class Backend:
    """Subclasses declare ``name``, ``solvers``, ``problem_classes`` and implement :meth:`solve`."""

    name: ClassVar[str]
    solvers: ClassVar[tuple[str, ...]]
    problem_classes: ClassVar[frozenset[str]]  # among LP, MILP, QP, MIQP, NLP
    extra: ClassVar[str]  # the pip extra that installs it
    features: ClassVar[frozenset[str]] = frozenset()  # time_limit, gap, threads, seed, warm_start, export

    @classmethod
    def available(cls) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    @classmethod
    def solver_available(cls, solver: str) -> bool:
        """Whether ``solver`` can be driven here now (backends driving several solvers refine this)."""
        return cls.available()

    @classmethod
    def classes_for(cls, solver: str) -> frozenset[str]:
        """The problem classes this backend solves with ``solver`` (default: all of ``problem_classes``)."""
        return cls.problem_classes

    @classmethod
    def features_for(cls, solver: str) -> frozenset[str]:
        """The options/features honoured with ``solver`` (default: ``features``)."""
        return cls.features

    def solve(self, sf: StandardForm, solver: str, options: SolveOptions) -> RawResult:  # pragma: no cover
        raise NotImplementedError

    def require_class(self, sf: StandardForm, solver: str) -> None:
        """Refuse a model of a class this backend does not solve with ``solver`` (instead of silently
        dropping its quadratic part or its integrality and answering another problem)."""
        from treeopt_dsl.errors import CapabilityError

        pc = sf.problem_class
        if pc not in self.classes_for(solver):
            raise CapabilityError(f"{solver} through backend {self.name!r} cannot solve a {pc} model "
                                  f"(it solves {', '.join(sorted(self.classes_for(solver)))})")


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """``|obj - bound| / max(1e-10, |obj|)``, the convention HiGHS and Gurobi report."""
    if objective is None or bound is None or not np.isfinite(objective) or not np.isfinite(bound):
        return None
    return abs(objective - bound) / max(1e-10, abs(objective))


#: what a solver's own status means, before the incumbent is looked at
OUTCOMES = ("optimal", "limit", "infeasible", "unbounded", "infeasible_or_unbounded", "error")


def status_of(outcome: str, has_solution: bool, sf: StandardForm) -> Status:
    """The common :class:`Status` of a solver outcome: a limit with an incumbent is ``TIME_LIMIT``,
    without one ``TIME_LIMIT_NO_SOLUTION``; "infeasible or unbounded" is settled by a feasibility solve."""
    if outcome == "optimal":
        return Status.OPTIMAL
    if outcome == "limit":
        return Status.TIME_LIMIT if has_solution else Status.TIME_LIMIT_NO_SOLUTION
    if outcome == "infeasible":
        return Status.INFEASIBLE
    if outcome == "unbounded":
        return Status.UNBOUNDED
    if outcome == "infeasible_or_unbounded":
        from .highs import _disambiguate

        return _disambiguate(sf)
    return Status.ERROR


def importable(module: str) -> bool:
    """Whether ``module`` imports (a backend is available when its solver library does)."""
    import importlib

    try:
        importlib.import_module(module)
    except (ImportError, OSError):  # OSError: a bundled solver library failed to load
        return False
    return True
