"""Solving a model whose blocks add lazy constraints (:meth:`treeopt_dsl.formulation.Block.separate`).

A route with a lazy-constraint callback (the backend feature ``"lazy"``: Gurobi's ``cbLazy``, a SCIP constraint
handler) adds the violated rows at every integer point the search finds: branch and cut on one tree. Every other
route gets *row generation*: solve the master, separate at its answer, append the violated rows, solve again from
the best point known, until the answer violates no row. That is HiGHS (its callbacks cannot add rows), CBC
(python-mip's lazy constraint generator hung CBC past its time limit here: backends/mip.py) and the modelling
layers (linopy, pyomo).

What the result claims: the master is a relaxation of the formulation, so its bound is a bound of the
formulation; its point is only a solution once no row is violated. The best point known is always the
master's tree *completed* by the blocks (the loss it really has, e.g. ``g_i = 1`` exactly for the correctly
classified samples), which satisfies every lazy row: when time runs out, that point and the master's bound
are returned with ``time_limit``, never ``optimal``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from treeopt_dsl.backends.base import RawResult
from treeopt_dsl.result import Status, relative_gap

#: rounds of row generation before giving up (each round adds every violated row of the master's answer)
MAX_ROUNDS = 500


def recomplete(built: Any, x: np.ndarray) -> np.ndarray:
    """The point of ``x``'s decisions (polished), every other column completed by the blocks."""
    return built.completed(built.polish(x))


def solve_lazy(built: Any, be: Any, sf: Any, solver: str, opts: Any) -> Any:
    """Solve ``sf`` (the master of ``built``) so that no lazy row of ``built`` is violated by the answer."""
    if "lazy" in be.features_for(solver):
        raw = be.solve(sf, solver, replace(opts, lazy=built.separate))
        raw.message = f"{raw.message}; lazy cuts through {solver}'s callback".lstrip("; ")
        return raw
    return row_generation(built, be, sf, solver, opts)


def row_generation(built: Any, be: Any, sf: Any, solver: str, opts: Any) -> Any:
    """Solve, separate, append the violated rows, re-solve from the best completed point (module docstring)."""
    t0 = time.perf_counter()
    limit = opts.time_limit
    best_x: np.ndarray | None = None
    best_obj = np.inf
    if opts.warm_start is not None:
        best_x = recomplete(built, opts.warm_start)
        best_obj = float(sf.objective(best_x))
    bound: float | None = None
    cur, n_cuts, rounds = sf, 0, 0
    outer = opts.log_callback

    def say(line: str) -> None:  # one progress line per round (progress.py reads it)
        if outer is not None:
            outer(line)

    # the master's own log goes through marked: its incumbent is not the formulation's (it claims every cut
    # sample), so progress displays must not read it as one
    inner = None if outer is None else (lambda line: outer(f"master| {line}"))
    opts = replace(opts, log_callback=inner)
    status, last = Status.TIME_LIMIT, ""
    while rounds < MAX_ROUNDS:
        left = None if limit is None else limit - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            status = Status.TIME_LIMIT
            break
        rounds += 1
        raw = be.solve(cur, solver, replace(opts, time_limit=left, warm_start=best_x))
        if (raw.status is Status.TIME_LIMIT or raw.claimed is Status.OPTIMAL) and best_x is not None \
                and raw.x is not None and (
                left is None or time.perf_counter() - t0 < limit) and built.separate(raw.x) is None:
            # a limit that is not the time: the solver could not finish from the start (HiGHS may hand back its
            # start's vector, see backends/highs.py); this round again without it
            raw = be.solve(cur, solver, replace(opts, time_limit=None if limit is None
                                                else limit - (time.perf_counter() - t0), warm_start=None))
        last = raw.message
        if raw.bound is not None and np.isfinite(raw.bound):  # the master's bound bounds the formulation
            bound = raw.bound if bound is None else max(bound, raw.bound)
        if raw.status in (Status.INFEASIBLE, Status.UNBOUNDED) or raw.x is None:
            status = raw.status if raw.status in (Status.INFEASIBLE, Status.UNBOUNDED) else (
                Status.INTERRUPTED if raw.status in (Status.INTERRUPTED, Status.INTERRUPTED_NO_SOLUTION)
                else Status.TIME_LIMIT)
            if best_x is None:
                return replace(raw, runtime_s=time.perf_counter() - t0,
                               message=f"row generation, round {rounds}: {raw.message}")
            break
        xc = recomplete(built, raw.x)
        obj = float(sf.objective(xc))
        if best_x is None or obj < best_obj - 1e-9 * max(1.0, abs(best_obj)):
            best_x, best_obj = xc, obj
        cuts = built.separate(raw.x)
        say(f"treeopt row generation: round {rounds} rows {n_cuts + (0 if cuts is None else cuts.n_rows)} "
            f"best {best_obj:.10g} bound {'-' if bound is None else f'{bound:.10g}'} "
            f"time {time.perf_counter() - t0:.1f}s")
        if cuts is None:  # the master's answer satisfies every row: it is the formulation's answer
            status = raw.status
            if status is Status.OPTIMAL:
                best_x, best_obj = raw.x, float(raw.objective if raw.objective is not None else obj)
                bound = best_obj if raw.bound is None else raw.bound
            break
        if raw.status in (Status.INTERRUPTED, Status.INTERRUPTED_NO_SOLUTION):
            status = Status.INTERRUPTED
            break
        cur = cur.with_rows(cuts.A, cuts.lower, cuts.upper, name=f"cuts{rounds}")
        n_cuts += cuts.n_rows
    if status is Status.OPTIMAL and bound is not None and relative_gap(best_obj, bound) > 1e-9:
        status = Status.TIME_LIMIT
    if bound is not None and bound > best_obj:
        bound = best_obj  # a master bound above a completed point: the point is optimal to round-off
    msg = (f"row generation: {rounds} round(s), {n_cuts} lazy row(s) added ({solver} through {be.name!r} has no "
           f"lazy-constraint callback); last solve: {last}"
           + (f"; stopped after {MAX_ROUNDS} rounds with rows still violated" if rounds >= MAX_ROUNDS
              and status is not Status.OPTIMAL else ""))
    return RawResult(status, best_x, None if best_x is None else best_obj, bound, relative_gap(best_obj, bound)
                     if best_x is not None else None, time.perf_counter() - t0, msg)
