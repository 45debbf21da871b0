"""The route registry: which backend drives which solver, which exact engine answers which solver name, and
picking one for a model. The one place where a solver's name is looked up.

Installed as ``treeopt_dsl.backends``. ``get_backend("highs")`` returns the fastest capable MILP/NLP route;
``backend=`` picks one by name. ``get_engine("streed")`` returns an exact engine
(:class:`~treeopt_dsl.backends.engine.Engine`), registered through the entry-point group
:data:`~treeopt_dsl.backends.engine.ROUTE_GROUP` (the library's own in its ``pyproject.toml``). Unknown or missing
solvers fail before any work, naming the pip extra that installs them.
"""

from __future__ import annotations

import importlib
import warnings
from importlib.metadata import entry_points

from treeopt_dsl.backends.base import Backend, RawResult, SolveOptions
from treeopt_dsl.backends.engine import ROUTE_GROUP, Engine, Estimate
from treeopt_dsl.backends.highs import HighsBackend
from treeopt_dsl.errors import CapabilityError, OptionError, SolverNotAvailable
from treeopt_dsl.ir import Model, StandardForm
from treeopt_dsl.result import relative_gap

#: backend modules in order of preference (fastest route first for each solver). A module that
#: does not exist in this version is skipped; a module whose *solver* is not installed still
#: registers (its ``available()`` says False, so the error can name the pip extra).
MODULES = ("highs", "gurobi", "scip", "mip", "linopy", "pyomo", "nlp")


def _discover() -> list[type[Backend]]:
    found: list[type[Backend]] = []
    for mod in MODULES:
        try:
            m = importlib.import_module(f"{__name__}.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{mod}":
                continue
            raise
        found.extend(getattr(m, "BACKENDS", ()))
    return found


#: every backend class, fastest first for each solver it drives
BACKENDS: list[type[Backend]] = _discover()

#: solvers the project knows of, with the pip extra that brings each
KNOWN_SOLVERS: dict[str, str] = {"highs": "highs", "cbc": "cbc", "gurobi": "gurobi", "scip": "scip", "ipopt": "nlp"}


_ENGINES: dict[str, Engine] = {}


def engines() -> dict[str, Engine]:
    """The exact engines by solver name, loaded once from the entry-point group :data:`ROUTE_GROUP` (a broken entry
    point is skipped with a warning naming it)."""
    if not _ENGINES:
        for ep in entry_points(group=ROUTE_GROUP):
            try:
                engine = ep.load()()
            except Exception as exc:  # a third party's route must not break the library
                warnings.warn(f"route entry point {ep.name!r} ({ep.value}) was not registered: {exc}", RuntimeWarning,
                              stacklevel=2)
                continue
            for solver in engine.solvers:
                _ENGINES.setdefault(solver, engine)
    return _ENGINES


def get_engine(solver: str) -> Engine | None:
    """The exact engine that answers to ``solver`` (``None``: a MILP/NLP solver, :func:`get_backend`)."""
    return engines().get(solver.lower())


#: the solver name that lets the registry choose the route (:func:`plan_route`)
AUTO = "auto"


def plan_route(solver: str, spec: object, data: object, fallback: str, engines: bool = True
               ) -> tuple[str, dict[str, object] | None]:
    """The route a solve of ``spec`` on ``data`` takes: ``solver`` itself, or, for :data:`AUTO`, the exact engine
    whose estimate is the lowest among those that take the composition (each engine's ``estimate(spec, data)``:
    seconds, or ``None`` with the reason it does not take it), else ``fallback`` (the formulation's MILP/NLP solver).
    Decided before anything is built; the report (``chosen``, ``why``, every engine's estimate) goes into the result.
    ``engines=False`` (a MILP backend was named): ``fallback``.
    """
    if solver.lower() != AUTO:
        return solver, None
    if not engines:
        return fallback, {"chosen": fallback, "why": f"{fallback}: a backend was named", "estimates": {}}
    estimates: dict[str, dict[str, object]] = {}
    for engine in dict.fromkeys(_engines().values()):
        est = engine.estimate(spec, data)
        estimates[engine.solvers[0]] = {"seconds": est.seconds, "why": est.why, "bytes": est.bytes}
    takers = {k: v for k, v in estimates.items() if v["seconds"] is not None}
    if takers:
        chosen = min(takers, key=lambda k: float(takers[k]["seconds"]))  # type: ignore[arg-type]
        others = ", ".join(f"{k} ~{float(v['seconds']):.2g} s" for k, v in takers.items() if k != chosen)
        why = (f"{chosen} proves this composition ({takers[chosen]['why']}; estimated "
               f"{float(takers[chosen]['seconds']):.2g} s{'; ' + others if others else ''})")
    else:
        chosen = fallback
        reasons = sorted({str(v["why"]) for v in estimates.values()})
        why = f"{fallback}: no exact engine takes it ({'; '.join(reasons) or 'none installed'})"
    return chosen, {"chosen": chosen, "why": why, "estimates": estimates}


def check_route_options(solver: str, options: dict[str, object]) -> None:
    """Refuse an engine's own option (``max_thresholds``) handed to a solver that is not that engine."""
    for key in options:
        owners = sorted(name for name, e in engines().items() if key in e.options and name != solver.lower())
        if owners and get_engine(solver) is None:
            raise OptionError(f"{key} applies to the exact route(s) {', '.join(owners)} (--solver "
                              f"{owners[0]}), not to {solver}")


def problem_class(sf: StandardForm) -> str:
    return sf.problem_class


def get_backend(solver: str, backend: str | None = None, sf: StandardForm | Model | None = None) -> Backend:
    """The backend to use for ``solver`` (and the problem class of ``sf``, a standard form or a model), or a
    clear error."""
    solver = solver.lower()
    if solver not in KNOWN_SOLVERS:
        if solver in engines():
            raise CapabilityError(f"{solver} is an exact engine, not a MILP solver: it answers through "
                                  "treeopt_dsl.solve.solve_built (spec.solve, Built.solve)")
        known = [*KNOWN_SOLVERS, *engines()]
        raise SolverNotAvailable(f"unknown solver {solver!r}; known solvers: {', '.join(known)}")
    routes = [b for b in BACKENDS if solver in b.solvers and (backend is None or b.name == backend)]
    if not routes:
        names = sorted({b.name for b in BACKENDS if solver in b.solvers})
        if backend is not None and names:
            raise CapabilityError(f"backend {backend!r} does not drive {solver!r}; use one of {names}")
        raise SolverNotAvailable(
            f"no installed backend drives {solver!r} in this version; "
            f"install it with `pip install treeopt-dsl[{KNOWN_SOLVERS[solver]}]` once supported, or use --solver highs")
    # the first route that has the solver (and takes the model's class) wins; a route is asked only when the
    # ones before it cannot answer, so a HiGHS solve does not import linopy or pyomo to learn they are there
    pc = sf.problem_class if sf is not None else None
    first: type[Backend] | None = None
    for b in routes:
        if not b.solver_available(solver):
            continue
        first = first or b
        if pc is None or pc in b.classes_for(solver):
            return b()
    if first is None:
        raise SolverNotAvailable(
            f"solver {solver!r} is not installed: `pip install treeopt-dsl[{routes[0].extra}]`")
    raise CapabilityError(
        f"{solver} (backend {first.name}) cannot solve a {pc} model; "
        + ("MIQP needs SCIP or Gurobi" if pc == "MIQP" else
           "NLP models need --solver ipopt (pip install treeopt-dsl[nlp])" if pc in ("NLP", "MINLP") else
           "choose another solver"))


#: the solvers tried, in this order, when the formulation's own solver cannot take its model's class (``auto``):
#: SCIP before Gurobi, whose pip wheel carries a license limited to 2,000 rows and columns
CLASS_SOLVERS = ("highs", "scip", "gurobi", "ipopt", "cbc")


def capable_solver(model: StandardForm | Model, preferred: str) -> str:
    """``preferred`` when it is installed and takes ``model``'s problem class, else the first of
    :data:`CLASS_SOLVERS` that does (MARGOT's MIQP: SCIP, then Gurobi), else the clear error of
    :func:`get_backend` for ``preferred``. Used by ``solver="auto"`` once the model is built, before any start."""
    for solver in (preferred, *CLASS_SOLVERS):
        try:
            get_backend(solver, None, model)
        except (CapabilityError, SolverNotAvailable):
            continue
        return solver
    get_backend(preferred, None, model)  # raises the error that names what is missing
    return preferred


#: the solvers whose lazy-constraint callbacks drive lattice cutting planes (``ors loss="true"``), fastest first as
#: measured (docs/blocks.md, "Optimal in the true loss"); HiGHS, which has no such callback, re-solves instead
LAZY_SOLVERS = ("gurobi", "scip")


def lazy_solver(fallback: str = "highs") -> str:
    """The first of :data:`LAZY_SOLVERS` that is installed and adds lazy rows from its callback (the feature
    ``"lazy"``), else ``fallback``: the route ``solver="auto"`` takes for a model whose rows come lazily.

        >>> lazy_solver() in (*LAZY_SOLVERS, "highs")
        True
    """
    for solver in LAZY_SOLVERS:
        try:
            be = get_backend(solver)
        except (CapabilityError, SolverNotAvailable):
            continue
        if "lazy" in be.features_for(solver):
            return solver
    return fallback


def available_solvers() -> list[dict[str, object]]:
    """One row per (backend, solver): installed or not, problem classes and options."""
    rows = []
    for b in BACKENDS:
        for s in b.solvers:
            rows.append({"solver": s, "backend": b.name, "installed": b.solver_available(s),
                         "problem_classes": sorted(b.classes_for(s)), "features": sorted(b.features_for(s)),
                         "extra": b.extra})
    return rows


def available_routes() -> list[dict[str, object]]:
    """Every route: the backends' rows (:func:`available_solvers`), then one per exact engine (``treeopt solvers``)."""
    return [*available_solvers(), *(e.row() for e in dict.fromkeys(engines().values()))]


__all__ = [
    "AUTO",
    "BACKENDS",
    "CLASS_SOLVERS",
    "ROUTE_GROUP",
    "Backend",
    "Engine",
    "Estimate",
    "HighsBackend",
    "RawResult",
    "SolveOptions",
    "available_routes",
    "available_solvers",
    "capable_solver",
    "check_route_options",
    "engines",
    "get_backend",
    "get_engine",
    "lazy_solver",
    "plan_route",
    "relative_gap",
]


_engines = engines  # plan_route's name for it (its argument ``engines`` shadows the function)
