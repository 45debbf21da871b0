"""Backend registry: which backend drives which solver, and picking one for a model.

Installed as ``treeopt_dsl.backends``. ``get_backend("highs")`` returns the fastest capable route;
``backend=`` picks one by name. Unknown or missing solvers fail before any work, naming the pip
extra that installs them.
"""

from __future__ import annotations

import importlib

from treeopt_dsl.backends.base import Backend, RawResult, SolveOptions
from treeopt_dsl.backends.highs import HighsBackend
from treeopt_dsl.errors import CapabilityError, SolverNotAvailable
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


def problem_class(sf: StandardForm) -> str:
    return sf.problem_class


def get_backend(solver: str, backend: str | None = None, sf: StandardForm | Model | None = None) -> Backend:
    """The backend to use for ``solver`` (and the problem class of ``sf``, a standard form or a model), or a
    clear error."""
    solver = solver.lower()
    if solver not in KNOWN_SOLVERS:
        raise SolverNotAvailable(f"unknown solver {solver!r}; known solvers: {', '.join(KNOWN_SOLVERS)}")
    routes = [b for b in BACKENDS if solver in b.solvers and (backend is None or b.name == backend)]
    if not routes:
        names = sorted({b.name for b in BACKENDS if solver in b.solvers})
        if backend is not None and names:
            raise CapabilityError(f"backend {backend!r} does not drive {solver!r}; use one of {names}")
        raise SolverNotAvailable(
            f"no installed backend drives {solver!r} in this version; "
            f"install it with `pip install treeopt-dsl[{KNOWN_SOLVERS[solver]}]` once supported, or use --solver highs")
    installed = [b for b in routes if b.solver_available(solver)]
    if not installed:
        raise SolverNotAvailable(
            f"solver {solver!r} is not installed: `pip install treeopt-dsl[{routes[0].extra}]`")
    if sf is not None:
        pc = sf.problem_class
        capable = [b for b in installed if pc in b.classes_for(solver)]
        if not capable:
            raise CapabilityError(
                f"{solver} (backend {installed[0].name}) cannot solve a {pc} model; "
                + ("MIQP needs SCIP or Gurobi" if pc == "MIQP" else
                   "NLP models need --solver ipopt (pip install treeopt-dsl[nlp])" if pc in ("NLP", "MINLP") else
                   "choose another solver"))
        return capable[0]()
    return installed[0]()


def available_solvers() -> list[dict[str, object]]:
    """One row per (backend, solver): installed or not, problem classes and options."""
    rows = []
    for b in BACKENDS:
        for s in b.solvers:
            rows.append({"solver": s, "backend": b.name, "installed": b.solver_available(s),
                         "problem_classes": sorted(b.classes_for(s)), "features": sorted(b.features_for(s)),
                         "extra": b.extra})
    return rows


__all__ = ["BACKENDS", "Backend", "HighsBackend", "RawResult", "SolveOptions", "available_solvers", "get_backend",
           "relative_gap"]
