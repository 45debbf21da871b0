"""Compile, solve, decode and certify a built formulation."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .errors import SolveError
from .formulation import Built
from .result import Certificate, SolveResult, Status

#: relative tolerance of the certificate's objective check
CERTIFICATE_TOL = 1e-5


def solve_built(built: Built, solver: str = "highs", backend: str | None = None, *, time_limit: float | None = None,
                gap: float | None = None, threads: int | None = None, seed: int | None = None,
                verbose: bool = False, log_callback: Any = None, warm_start: Any = None,
                raise_on_failure: bool = False, **extra: Any) -> SolveResult:
    """Solve ``built`` with ``solver`` and return the result with the decoded model and its certificate.

    Tolerances are set from the formulation's numerics (eps and the largest big-M) so that the
    solver cannot route a training sample across the gap the model keeps empty.
    """
    from treeopt_dsl.backends import SolveOptions, get_backend

    t0 = time.perf_counter()
    sf = built.compile()
    compile_s = time.perf_counter() - t0
    be = get_backend(solver, backend, sf)
    if warm_start is not None and not (isinstance(warm_start, np.ndarray) and warm_start.size == sf.n_cols
                                       and np.all(np.isfinite(warm_start))):
        from .warmstart import start_point

        warm_start = start_point(built, warm_start)
    tol = built.ctx.numerics.solver_tolerances()
    opts = SolveOptions(time_limit=time_limit, gap=gap, threads=threads, seed=seed, verbose=verbose,
                        log_callback=log_callback, warm_start=warm_start, extra=extra, **tol)
    raw = be.solve(sf, solver, opts)
    result = SolveResult(
        status=raw.status, objective=raw.objective, bound=raw.bound, gap=raw.gap, runtime_s=raw.runtime_s,
        solver=solver, backend=be.name, x=raw.x, compile_s=compile_s, size=sf.summary(), message=raw.message,
        options={k: v for k, v in {"time_limit": time_limit, "gap": gap, "threads": threads, "seed": seed,
                                   **tol}.items() if v is not None},
        built=built, warm_start_accepted=raw.warm_start_accepted)
    if raw.status.has_solution and raw.x is not None:
        if built.formulation.decoder is not None:
            result.model = built.decode(raw.x)
            result.certificate = certify(built, raw.x, float(raw.objective))
    elif raise_on_failure:
        raise SolveError(failure_message(result), result)
    return result


def certify(built: Built, x: np.ndarray, objective: float) -> Certificate:
    """Re-evaluate the decoded model: complete a point from its decisions alone and compare."""
    model = built.model
    start = np.full(x.shape, np.nan)
    decisions = built.formulation.decisions
    for name in decisions:
        fam = model.variables[name]
        start[fam.ids] = fam.values(x)
    xc = built.complete(start)
    mism = 0
    if "z" in built.ctx.roles:
        z = built.ctx["z"]
        mism = int(np.sum(np.argmax(z.values(x), 1) != np.argmax(z.values(xc), 1)))
    terms = model.objective_terms(xc)
    return Certificate(objective_solver=objective, objective_decoded=float(sum(terms.values())),
                       max_violation=model.max_violation(xc), routing_mismatches=mism,
                       tolerance=CERTIFICATE_TOL, terms=terms)


def failure_message(result: SolveResult) -> str:
    s = result.status
    if s is Status.INFEASIBLE:
        return "the model is infeasible: no tree satisfies the constraints (check bounds and parameters)"
    if s is Status.UNBOUNDED:
        return "the model is unbounded: add bounds or a regularizer"
    if s is Status.TIME_LIMIT_NO_SOLUTION:
        return (f"the time limit ({result.options.get('time_limit')} s) was reached before any feasible "
                "solution was found; raise --time-limit or give a warm start")
    return f"the solver stopped with status {s.value}: {result.message}"
