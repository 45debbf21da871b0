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
import scipy.sparse as sp

from treeopt_dsl.backends.base import RawResult
from treeopt_dsl.backends.native import IncrementalLP
from treeopt_dsl.progress import ProgressEvent
from treeopt_dsl.result import Status, relative_gap

#: the share of the tolerance of a proof by lattice cutting planes (``ors proof="lcpa"``) the master MILP's own
#: relative gap may take (the cuts' slack, :meth:`~treeopt_dsl.blocks.LatticeLogisticLoss.slack`, is far below the rest)
LATTICE_GAP_SHARE = 0.9
#: rounds of row generation before giving up (each round adds every violated row of the master's answer)
MAX_ROUNDS = 500


def recomplete(built: Any, x: np.ndarray) -> np.ndarray:
    """The point of ``x``'s decisions (polished), every other column completed by the blocks."""
    return built.completed(built.polish(x))


#: the relaxation phase of :func:`relaxation_cuts`: at most this share of the time limit, this many LP rounds, and
#: it stops once the relaxation's (positive) bound has risen by less than RELAXATION_STALL (relative) over
#: RELAXATION_WINDOW rounds
RELAXATION_SHARE, RELAXATION_ROUNDS, RELAXATION_STALL, RELAXATION_WINDOW = 0.2, 2000, 1e-6, 50
#: a row of the relaxation phase is kept when the last LP's point holds it to within this (relative) slack, at most
#: as many as the master has columns (the tightest)
RELAXATION_TIGHT = 1e-6


def relaxation_cuts(built: Any, sf: Any, time_limit: float | None, start: np.ndarray | None = None
                    ) -> tuple[Any, dict[str, Any]]:
    """RiskSLIM's initial phase: Kelley's cutting planes on the LP relaxation of the master ``sf``. Each round solves
    the LP (HiGHS, re-solved from its basis: :class:`~treeopt_dsl.backends.native.IncrementalLP`) and appends the
    blocks' :meth:`~treeopt_dsl.formulation.Built.tangents` at its (fractional) answer, until none is violated,
    the bound stalls (:data:`RELAXATION_STALL`) or ``time_limit`` / :data:`RELAXATION_ROUNDS`. The rows hold at any
    point, so they are valid rows of the master: ``sf`` with them appended is returned, with the cuts at ``start``
    (a good card: tight where the optimum likely is) and the report ``{"rounds", "cuts", "bound", "time_s"}``."""
    t0 = time.perf_counter()
    extra = [] if start is None else [c for c in (built.tangents(start, every=True),) if c is not None]
    lp = IncrementalLP(sf if not extra else sf.with_rows(*_parts(extra), name="start_cuts"), time_limit)
    rounds, bound, history, x_last, n_solved = 0, -np.inf, [], None, 0
    while rounds < RELAXATION_ROUNDS and (time_limit is None or time.perf_counter() - t0 < time_limit):
        ans = lp.solve()
        if ans is None:
            break
        x, obj = ans
        x_last, n_solved = x, len(extra)  # the rows the LP held when it gave x
        rounds += 1
        bound = max(bound, obj)
        history.append(bound)
        if len(history) > RELAXATION_WINDOW and history[-RELAXATION_WINDOW - 1] > 0 and \
                bound - history[-RELAXATION_WINDOW - 1] <= RELAXATION_STALL * max(1.0, abs(bound)):
            break
        cuts = built.tangents(x)
        if cuts is None:
            break
        lp.add_rows(cuts.A, cuts.lower, cuts.upper)
        extra.append(cuts)
    made = sum(c.n_rows for c in extra)
    if x_last is not None and extra:  # keep the rows the last LP holds tight (and the ones made after it): the
        # others only cost the master's LPs (and a size-limited licence its rows)
        held, later = extra[:n_solved], extra[n_solved:]
        if held:
            A, lo, _ = _parts(held)
            slack = (A @ x_last - lo) / np.maximum(1.0, np.abs(lo))
            tight = slack <= RELAXATION_TIGHT
            if tight.sum() > sf.n_cols:  # a vertex needs at most one tight row per column: the tightest
                tight &= slack <= np.partition(slack, sf.n_cols - 1)[sf.n_cols - 1]
            held = [type(held[0])(A[tight], lo[tight], np.full(int(tight.sum()), np.inf))] if tight.any() else []
        extra = held + later
    info = {"rounds": rounds, "cuts": made, "kept": sum(c.n_rows for c in extra), "bound": None
            if not np.isfinite(bound) else float(bound), "time_s": round(time.perf_counter() - t0, 4)}
    return (sf.with_rows(*_parts(extra), name="relaxation_cuts") if extra else sf), info


def _parts(cuts: list[Any]) -> tuple[Any, np.ndarray, np.ndarray]:
    """Rows of several :class:`~treeopt_dsl.formulation.Cuts` stacked as ``(A, lower, upper)``."""
    return (sp.vstack([c.A for c in cuts], format="csr"), np.concatenate([c.lower for c in cuts]),
            np.concatenate([c.upper for c in cuts]))


def solve_lazy(built: Any, be: Any, sf: Any, solver: str, opts: Any) -> Any:
    """Solve ``sf`` (the master of ``built``) so that no lazy row of ``built`` is violated by the answer. A master
    whose blocks have rows valid at fractional points too (:attr:`~treeopt_dsl.formulation.Built.has_tangents`)
    first gets them on its LP relaxation (:func:`relaxation_cuts`, a share of the time limit), then is solved with
    the backend's :attr:`~treeopt_dsl.backends.base.Backend.bound_focus` options under the user's own."""
    if built.has_tangents:
        t0 = time.perf_counter()
        budget = None if opts.time_limit is None else RELAXATION_SHARE * opts.time_limit
        start = None if opts.warm_start is None else recomplete(built, opts.warm_start)
        sf, info = relaxation_cuts(built, sf, budget, start)
        built.ctx.state(built)["relaxation"] = info  # the route's report reads it (solve.py)
        if opts.time_limit is not None:
            opts = replace(opts, time_limit=max(0.0, opts.time_limit - (time.perf_counter() - t0)))
        # what is left after the relaxation phase is the integrality gap: the solver's bound focus, if it has one
        # (the user's own options win)
        opts = replace(opts, extra={**be.bound_focus_for(solver), **opts.extra})
    if "lazy" in be.features_for(solver):
        user = built.tangents if built.has_tangents and "cuts" in be.features_for(solver) else None
        raw = be.solve(sf, solver, replace(opts, lazy=built.separate, cuts=user))
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
    status, last, accepted = Status.TIME_LIMIT, "", None
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
        if rounds == 1:
            accepted = raw.warm_start_accepted
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
    # optimal to the relative gap the master was asked for (the lattice masters run to 90% of their tolerance)
    if status is Status.OPTIMAL and bound is not None and relative_gap(best_obj, bound) > max(
            1e-9, (opts.gap or 0.0) * (1.0 + 1e-6)):
        status = Status.TIME_LIMIT
    if bound is not None and bound > best_obj:
        bound = best_obj  # a master bound above a completed point: the point is optimal to round-off
    msg = (f"row generation: {rounds} round(s), {n_cuts} lazy row(s) added ({solver} through {be.name!r} has no "
           f"lazy-constraint callback); last solve: {last}"
           + (f"; stopped after {MAX_ROUNDS} rounds with rows still violated" if rounds >= MAX_ROUNDS
              and status is not Status.OPTIMAL else ""))
    return RawResult(status, best_x, None if best_x is None else best_obj, bound, relative_gap(best_obj, bound)
                     if best_x is not None else None, time.perf_counter() - t0, msg, warm_start_accepted=accepted)


#: iterations of the outer approximation before giving up (each adds a tangent row per under-estimated sample)
MAX_ITERATIONS = 200
#: the share of the outer approximation's tolerance each MILP may leave open (its relative gap) and the share the
#: samples left uncut may add up to: together under the tolerance, so an iteration that cuts nothing has converged
INNER_GAP_SHARE, SLACK_SHARE = 0.25, 0.5


def outer_gap(upper: float, lower: float) -> float:
    """``(UB - LB) / max(1, |UB|)``: the relative gap the outer approximation stops at.

        >>> round(outer_gap(2.0, 1.999), 6), outer_gap(0.5, 0.25)  # below 1 the gap is absolute
        (0.0005, 0.25)
    """
    if not (np.isfinite(upper) and np.isfinite(lower)):
        return float("inf")
    return max(0.0, upper - lower) / max(1.0, abs(upper))


def outer_approximation(built: Any, be: Any, sf: Any, solver: str, opts: Any, tol: float
                        ) -> tuple[RawResult, dict[str, Any]]:
    """Prove ``built``'s optimum in the true functions its :attr:`~treeopt_dsl.formulation.Built.outer` blocks'
    rows under-estimate (the logistic loss of ``ors loss="true"``) to the relative gap ``tol``.

    Each iteration solves the MILP with the rows so far: a relaxation of the true problem (the tangents of a convex
    function lie below it), so its best *bound* (not its objective: it may stop early) is a lower bound ``LB``.
    The true objective of its answer (:meth:`~treeopt_dsl.formulation.Built.exact_objective`, at the point completed
    from its decisions) is an upper bound; the best such point is kept. The loop stops when
    :func:`outer_gap` ``<= tol``; otherwise the blocks add tangent rows at the margins of the answer and of the best
    point (:meth:`~treeopt_dsl.formulation.Built.refine`) and the MILP is solved again from the best point. The
    time limit holds for the whole loop: each MILP gets what is left. Each MILP's relative gap is at most
    ``INNER_GAP_SHARE * tol`` (or ``opts.gap`` when smaller).

    Returns the answer (status ``optimal`` when the gap closed; its objective the true one, its bound ``LB``) and
    the report kept as ``SolveResult.outer_approximation``.
    """
    t0 = time.perf_counter()
    limit = opts.time_limit
    inner_gap = tol * INNER_GAP_SHARE if opts.gap is None else min(float(opts.gap), tol * INNER_GAP_SHARE)
    outer_log, progress = opts.log_callback, opts.progress
    opts = replace(opts, gap=inner_gap, progress=None,
                   log_callback=None if outer_log is None else (lambda line: outer_log(f"milp| {line}")))
    prior = built.outer_cuts()  # rows a previous solve of this built model added: still valid
    cur = sf if prior is None else sf.with_rows(prior.A, prior.lower, prior.upper, name="tangents0")
    best_x: np.ndarray | None = None
    best = np.inf
    lower, rows, it, status, last, surrogate = -np.inf, 0 if prior is None else prior.n_rows, 0, Status.TIME_LIMIT, \
        "", None
    if opts.warm_start is not None:
        best_x = recomplete(built, opts.warm_start)
        best = built.exact_objective(best_x)
        # tight at the start's margins from the first MILP on (a good start is often the optimum's neighbour)
        first = built.refine(best_x, SLACK_SHARE * tol * max(1.0, abs(best)))
        if first is not None:
            cur = cur.with_rows(first.A, first.lower, first.upper, name="tangents_start")
            rows += first.n_rows
    history: list[dict[str, Any]] = []
    accepted = None
    while it < MAX_ITERATIONS:
        left = None if limit is None else limit - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            status = Status.TIME_LIMIT
            break
        it += 1
        warm = None if best_x is None else built.completed(best_x)  # lifted to every row added so far
        raw = be.solve(cur, solver, replace(opts, time_limit=left, warm_start=warm))
        if raw.status is Status.TIME_LIMIT and warm is not None and left is not None and \
                time.perf_counter() - t0 < limit - 1e-3 and raw.bound is None:
            # a limit that is not the time (HiGHS may stop on its start's vector, backends/highs.py): without it
            raw = be.solve(cur, solver, replace(opts, time_limit=limit - (time.perf_counter() - t0), warm_start=None))
        last = raw.message
        if it == 1:
            accepted = raw.warm_start_accepted
        if raw.bound is not None and np.isfinite(raw.bound):  # a relaxation's bound bounds the true optimum
            lower = max(lower, float(raw.bound))
        if raw.x is None:
            status = raw.status if raw.status in (Status.INFEASIBLE, Status.UNBOUNDED) else (
                Status.INTERRUPTED if raw.status in (Status.INTERRUPTED, Status.INTERRUPTED_NO_SOLUTION)
                else Status.TIME_LIMIT)
            break
        xc = recomplete(built, raw.x)
        true = built.exact_objective(xc)
        surrogate = raw.objective
        if best_x is None or true < best - 1e-12 * max(1.0, abs(best)):
            best_x, best = xc, true
        gap = outer_gap(best, lower)
        history.append({"iteration": it, "milp_status": raw.status.value, "milp_objective": raw.objective,
                        "milp_bound": raw.bound, "true_objective": true, "lower_bound": lower, "gap": gap,
                        "time_s": round(time.perf_counter() - t0, 4)})
        if outer_log is not None:
            outer_log(f"treeopt outer approximation: iteration {it} rows {rows} best {best:.10g} bound {lower:.10g} "
                      f"gap {gap:.3g} time {time.perf_counter() - t0:.1f}s")
        if progress is not None:
            progress(ProgressEvent(best, lower, gap, time.perf_counter() - t0, "outer"))
        if gap <= tol:
            status = Status.OPTIMAL
            break
        if raw.status is not Status.OPTIMAL:  # stopped by its limit or by the user: no time for another round
            status = Status.INTERRUPTED if raw.status is Status.INTERRUPTED else Status.TIME_LIMIT
            break
        slack = SLACK_SHARE * tol * max(1.0, abs(best))
        # at the answer's margins (cuts it off) and at the best point's (tight where the optimum likely is)
        cuts = [c for c in (built.refine(xc, slack), built.refine(built.completed(best_x), slack)) if c is not None]
        if not cuts:  # every sample is within its share of the tolerance, yet the gap is open: round-off
            status = Status.FEASIBLE
            last = f"{last}; no sample's loss is under-estimated beyond the tolerance, yet the gap is {gap:.3g}"
            break
        for k, c in enumerate(cuts):
            cur = cur.with_rows(c.A, c.lower, c.upper, name=f"tangents{it}_{k}")
            rows += c.n_rows
    else:  # MAX_ITERATIONS without closing the gap: no proof, and no limit of the user's reached
        status = Status.FEASIBLE
    gap = outer_gap(best, lower)
    if status is Status.OPTIMAL and gap > tol:
        status = Status.TIME_LIMIT
    info = {"true_objective": None if best_x is None else best, "lower_bound": lower if np.isfinite(lower) else None,
            "gap": gap if np.isfinite(gap) else None, "tol": tol, "iterations": it, "rows_added": rows,
            "surrogate_objective": surrogate, "inner_gap": inner_gap, "history": history}
    msg = (f"outer approximation: {it} MILP solve(s), {rows} tangent row(s) added; last MILP: {last}"
           + (f"; stopped after {MAX_ITERATIONS} iterations" if it >= MAX_ITERATIONS and status is not
              Status.OPTIMAL else ""))
    if best_x is None:
        status = {Status.TIME_LIMIT: Status.TIME_LIMIT_NO_SOLUTION,
                  Status.INTERRUPTED: Status.INTERRUPTED_NO_SOLUTION}.get(status, status)
        return RawResult(status, None, None, info["lower_bound"], None, time.perf_counter() - t0, msg), info
    return RawResult(status, best_x, best, info["lower_bound"], relative_gap(best, info["lower_bound"]),
                     time.perf_counter() - t0, msg, warm_start_accepted=accepted), info
