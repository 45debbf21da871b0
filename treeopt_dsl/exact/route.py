"""The exact engines as routes of the registry: ``--solver streed`` (the depth-1/2 count and STreeD on the exact
binarization) and ``--solver contree`` (ConTree on the continuous features), registered through the entry-point group
``treeopt_dsl.routes`` in the package's ``pyproject.toml``, so that the solve pipeline names none of them.

Each answers a registered formulation before any model is built when the spec's own blocks make a DP task
(:func:`treeopt_dsl.exact.direct.solve_spec`, every distinct cut) and a built model otherwise
(:func:`treeopt_dsl.exact.dp.solve_exact`, the built model's cuts, refusing with the reason a composition it does not
solve exactly). Options: ``time_limit`` (and ``max_thresholds`` for ``streed``); a MILP solve's options (gap, threads,
seed, warm starts, callbacks) do not apply and are ignored.

:meth:`Engine.estimate` is what ``--solver auto`` compares (:func:`treeopt_dsl.backends.plan_route`): seconds from a
cost model fitted on ``benchmarks/exact_routes.py``'s measurements (docs/benchmarks.md, "Exact routes"), ``None``
with the reason when the engine does not take the composition or would not fit in memory.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

import numpy as np

from treeopt_dsl.backends import engines
from treeopt_dsl.backends.engine import Engine, Estimate
from treeopt_dsl.defaults import MEMORY_ENV, memory_budget, memory_text
from treeopt_dsl.errors import CapabilityError, ModelTooLarge
from treeopt_dsl.exact import cost, depth2
from treeopt_dsl.exact.direct import Reading, read, solve_spec
from treeopt_dsl.exact.dp import (
    BACKEND,
    SOLVER,
    DPTask,
    solve_exact,
    weights_reason,
)
from treeopt_dsl.result import SolveResult

__all__ = ["ContreeEngine", "StreedEngine", "check_size"]

#: the optional engines found installed in this process
_INSTALLED: set[str] = set()


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (pystreed and pycontree import scikit-learn: 0.8 s).
    A module found is remembered for the process (a lookup costs about 0.5 ms, a third of a small exact call); one
    not found is looked up again, so that installing it in a running session is seen."""
    if module not in _INSTALLED and find_spec(module) is not None:
        _INSTALLED.add(module)
    return module in _INSTALLED


def _rows(r: Reading) -> int:
    """The rows an engine that counts rows sees (integer weights repeated)."""
    return int(round(float(r.prepared.weights.sum()))) if r.prepared.weighted else r.prepared.n_samples


def _too_large(need: float, budget: int) -> str:
    return f"needs ~{memory_text(need)} of memory, above the budget of {memory_text(budget)}"


class StreedEngine(Engine):
    """Axis-aligned trees with a separable 0-1 loss and a penalty per split (OCT, Bertsimas & Dunn 2017) on the exact
    binarization: the depth-1/2 count (:mod:`treeopt_dsl.exact.depth2`, any sample weights) and STreeD deeper
    (``pip install treeopt-dsl[dp]``)."""

    name = BACKEND
    solvers = (SOLVER,)
    extra = "dp"
    options = frozenset({"max_thresholds"})
    problem_classes = ("DP:oct",)

    def available(self) -> bool:
        return installed("pystreed")

    def estimate(self, spec: Any, data: Any, reading: Any = None, max_thresholds: int | None = None,
                 budget: int | None = None) -> Estimate:
        r = read(spec, data) if reading is None else reading
        if isinstance(r, str):
            return Estimate(None, r)
        task: DPTask = r.task
        reason = weights_reason(r.prepared, task.depth)
        if reason is not None:
            return Estimate(None, reason)
        if task.depth > depth2.MAX_DEPTH and not self.available():
            return Estimate(None, "pystreed is not installed (pip install treeopt-dsl[dp])")
        n, p = _rows(r), r.prepared.n_features
        c = int(r.cuts.sum() if max_thresholds is None else np.minimum(r.cuts, int(max_thresholds)).sum())
        seconds, need = cost.binarized(n, p, c, task.depth)
        what = f"{'the count' if task.depth <= depth2.MAX_DEPTH else 'STreeD'} over {c} cuts"
        budget = memory_budget() if budget is None else budget
        if need > budget:
            return Estimate(None, f"{what} {_too_large(need, budget)}", need)
        return Estimate(seconds, what, need)

    def fits(self, r: Reading, budget: int) -> list[str]:
        """What would fit in ``budget`` on this data when the exact binarization does not
        (:func:`~treeopt_dsl.exact.cost.binarized_fits`)."""
        return cost.binarized_fits(_rows(r), r.cuts, r.task.depth, budget)

    def solve_spec(self, spec: Any, data: Any, backend: str | None = None, **options: Any) -> SolveResult | None:
        if backend not in (None, self.name):
            return None  # the built route says which backends exist
        options = self.check_options(options)
        r = read(spec, data)
        if isinstance(r, Reading):
            check_size(self, spec, data, r, max_thresholds=options.get("max_thresholds"))
        return solve_spec(spec, data, engine="dp", reading=r if isinstance(r, Reading) else None, **options)

    def solve_built(self, built: Any, **options: Any) -> SolveResult:
        return solve_exact(built, **self.check_options(options))


def check_size(engine: Engine, spec: Any, data: Any, r: Reading, **options: Any) -> None:
    """Refuse before it starts a run of ``engine`` that would not fit the memory budget
    (:func:`treeopt_dsl.defaults.memory_budget`): a :class:`~treeopt_dsl.errors.ModelTooLarge` naming what would
    fit (a smaller problem for this engine, another engine and its estimate)."""
    budget = memory_budget()
    est = engine.estimate(spec, data, reading=r, budget=budget, **options)
    if est.seconds is not None or est.bytes <= budget:
        return
    fits = engine.fits(r, budget) if hasattr(engine, "fits") else []
    for other in dict.fromkeys(engines().values()):
        if other is not engine and other.available():
            alt = other.estimate(spec, data, reading=r, budget=budget)
            if alt.seconds is not None:
                fits.append(f"--solver {other.solvers[0]} ({alt.why}, ~{alt.seconds:.2g} s, "
                            f"~{memory_text(alt.bytes)})")
    raise ModelTooLarge(f"{engine.solvers[0]} on {spec.name} at depth {r.task.depth}: {est.why} (set "
                        f"{MEMORY_ENV} to change it); what would fit: "
                        f"{'; '.join(fits) or 'a smaller sample or fewer features'}")


class ContreeEngine(Engine):
    """The same trees by ConTree on the continuous features (every distinct cut, no binarization; ``pip install
    treeopt-dsl[contree]``): it answers a registered formulation before anything is built; on a built model it
    defers to the count and STreeD, which certify on the model's rows."""

    name = "contree"
    solvers = ("contree",)
    extra = "contree"
    problem_classes = ("DP:oct",)

    def available(self) -> bool:
        return installed("pycontree")

    def estimate(self, spec: Any, data: Any, reading: Any = None, budget: int | None = None) -> Estimate:
        r = read(spec, data) if reading is None else reading
        if isinstance(r, str):
            return Estimate(None, r)
        if not self.available():
            return Estimate(None, "pycontree is not installed (pip install treeopt-dsl[contree])")
        reason = r.contree_reason
        if reason is not None:
            return Estimate(None, reason)
        n, p, d = _rows(r), r.prepared.n_features, r.task.depth
        seconds, need = cost.contree(n, p, d, int(r.cuts.sum()))
        budget = memory_budget() if budget is None else budget
        if need > budget:
            return Estimate(None, f"ConTree on {p} features {_too_large(need, budget)}", need)
        return Estimate(seconds, f"ConTree on {p} features", need)

    def solve_spec(self, spec: Any, data: Any, backend: str | None = None, **options: Any) -> SolveResult | None:
        if backend not in (None, self.name):
            return None
        options = self.check_options(options)
        r = read(spec, data)
        if isinstance(r, str):
            raise CapabilityError(f"the contree solver (exact trees on continuous features) cannot solve {spec.name}: "
                                  f"{r}; use a MILP solver such as highs")
        check_size(self, spec, data, r)
        return solve_spec(spec, data, engine="contree", reading=r, **options)

    def solve_built(self, built: Any, **options: Any) -> SolveResult:
        raise CapabilityError("contree answers a registered formulation before any model is built "
                              "(spec.solve(data, solver='contree')); a built model takes --solver streed, which "
                              "certifies on its rows")

