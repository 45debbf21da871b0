"""The exact DP as a route of the registry (``--solver streed``): registered through the entry-point group
``treeopt_dsl.routes`` in the package's ``pyproject.toml``, so that the solve pipeline names no engine.

It answers a registered formulation before any model is built when the spec's own blocks make a DP task
(:func:`treeopt_dsl.exact.direct.solve_spec`), and a built model otherwise (:func:`treeopt_dsl.exact.dp.solve_exact`,
which refuses with the reason a composition it does not solve exactly). Options: ``time_limit`` and
``max_thresholds``; a MILP solve's options (gap, threads, seed, warm starts, callbacks) do not apply and are
ignored.
"""

from __future__ import annotations

from typing import Any

from treeopt_dsl.backends.engine import Engine
from treeopt_dsl.errors import SolverNotAvailable
from treeopt_dsl.exact.direct import solve_spec
from treeopt_dsl.exact.dp import BACKEND, SOLVER, solve_exact, streed
from treeopt_dsl.result import SolveResult

__all__ = ["StreedEngine"]


class StreedEngine(Engine):
    """Axis-aligned trees with a separable 0-1 loss and a penalty per split (OCT, Bertsimas & Dunn 2017): the exact
    depth-1/2 count (:mod:`treeopt_dsl.exact.depth2`) and STreeD deeper (``pip install treeopt-dsl[dp]``)."""

    name = BACKEND
    solvers = (SOLVER,)
    extra = "dp"
    options = frozenset({"max_thresholds"})
    problem_classes = ("DP:oct",)

    def available(self) -> bool:
        try:
            streed()
        except SolverNotAvailable:
            return False
        return True

    def solve_spec(self, spec: Any, data: Any, backend: str | None = None, **options: Any) -> SolveResult | None:
        if backend not in (None, self.name):
            return None  # the built route says which backends exist
        return solve_spec(spec, data, **self.check_options(options))

    def solve_built(self, built: Any, **options: Any) -> SolveResult:
        return solve_exact(built, **self.check_options(options))
