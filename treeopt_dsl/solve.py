"""Compile, solve, decode and certify a built formulation."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from treeopt_dsl.errors import SolveError
from treeopt_dsl.formulation import Built
from treeopt_dsl.result import Certificate, SolveResult, Status, improves

#: relative tolerance of the certificate's objective check (LP, MILP, QP, MIQP)
CERTIFICATE_TOL = 1e-5

#: what "the decoded model agrees with the solver" means per problem class (docs/DESIGN.md,
#: "Certificates"): (relative objective tolerance, absolute row/bound violation tolerance).
#: A MIP solver's point is feasible to ~1e-7 per unscaled row, and the decoded tree reproduces its
#: objective to round-off. An interior-point NLP solver (Ipopt) stops at a KKT tolerance with
#: coefficients at ~1e-8..1e-6 where the optimum has zeros; decoding sets |a| <= 1e-6 to zero, which
#: moves the objective by up to lambda * p * 1e-6 (6e-5 at S-ORCT's largest lambda on sonar): 1e-3.
CERTIFICATE_TOLERANCES: dict[str, tuple[float, float]] = {
    "LP": (CERTIFICATE_TOL, 1e-5), "MILP": (CERTIFICATE_TOL, 1e-5), "QP": (CERTIFICATE_TOL, 1e-5),
    "MIQP": (CERTIFICATE_TOL, 1e-5), "NLP": (1e-3, 1e-6), "MINLP": (1e-3, 1e-6)}


def solve_built(built: Built, solver: str = "highs", backend: str | None = None, *, time_limit: float | None = None,
                gap: float | None = None, threads: int | None = None, seed: int | None = None,
                verbose: bool = False, log_callback: Any = None, warm_start: Any = None,
                raise_on_failure: bool = False, progress: Any = None, **extra: Any) -> SolveResult:
    """Solve ``built`` with ``solver`` and return the result with the decoded model and its certificate.

    ``progress``: a callable that receives a :class:`~treeopt_dsl.progress.ProgressEvent` (incumbent, bound,
    gap, seconds, source) whenever the incumbent or the bound moves, from the solver's own callbacks (HiGHS,
    Gurobi and SCIP through their direct APIs) or else from its log; ``True`` draws a progress bar (tqdm:
    the terminal, or a notebook widget) on stderr.

    Tolerances are set from the formulation's numerics (eps and the largest big-M) so that the
    solver cannot route a training sample across the gap the model keeps empty.
    """
    from treeopt_dsl.backends import SolveOptions, get_backend
    from treeopt_dsl.backends.base import RawResult
    from treeopt_dsl.backends.dialects import dialect

    if solver == "streed":  # the exact DP route (treeopt_dsl.exact): no MILP, no solver options
        from treeopt_dsl.errors import OptionError
        from treeopt_dsl.exact.dp import maybe_solve_dp

        unknown = sorted(set(extra) - {"max_thresholds"})
        if unknown:
            raise OptionError(f"unknown option(s) {unknown} for streed (it takes time_limit and max_thresholds)")
        return maybe_solve_dp(built, solver, time_limit=time_limit, **extra)
    model = built.model
    be = get_backend(solver, backend, model)  # the solver can take this class of model: said before any work
    start_report: dict[str, Any] | None = None
    if isinstance(warm_start, str) and warm_start == "auto":
        from treeopt_dsl.warmstart import auto_start

        warm_start, start_report = auto_start(built)
        if start_report.get("interrupted"):  # Ctrl-C while the starts were computed: the best start is the answer
            if warm_start is None:
                raise KeyboardInterrupt("interrupted while computing the warm starts")
            result = SolveResult(status=Status.INTERRUPTED, objective=None, bound=None, gap=None, runtime_s=0.0,
                                 solver=solver, backend=be.name, compile_s=0.0, size=model.size(), built=built)
            raw = _start_as_result(RawResult(Status.INTERRUPTED_NO_SOLUTION, None, None, None, None, 0.0,
                                             "interrupted by SIGINT (Ctrl-C) while computing the starts"),
                                   model, warm_start, start_report)
            _take(result, raw)
            result.start = start_report
            _decode_and_certify(result, built, raw)
            return result
        if warm_start is not None and start_report.get("proven"):  # the exact DP tree is this model's optimum
            obj = float(start_report["objective"])
            result = SolveResult(
                status=Status.OPTIMAL, objective=obj, bound=obj, gap=0.0, runtime_s=start_report["time_s"],
                solver="streed", backend="dp", x=warm_start, compile_s=0.0, size=model.size(),
                message=f"the exact DP start (STreeD) is proven optimal for this composition, so {solver} was not "
                        "run (--warm-start none or cart runs it)", options={"warm_start": "auto"}, built=built)
            result.start = start_report
            _decode_and_certify(result, built, RawResult(Status.OPTIMAL, warm_start, obj, obj, 0.0, 0.0))
            return result
    elif warm_start is not None and not (isinstance(warm_start, np.ndarray) and warm_start.size == model.n_vars
                                         and np.all(np.isfinite(warm_start))):
        from treeopt_dsl.warmstart import start_point

        name = warm_start if isinstance(warm_start, str) else "given"  # a strategy says its name
        warm_start = start_point(built, warm_start)
        start_report = {"chosen": name, "candidates": {}}
    # compiled only now: a start proven optimal (above) needs no matrix
    t0 = time.perf_counter()
    sf = built.compile()
    compile_s = time.perf_counter() - t0
    if warm_start is not None and start_report is not None and start_report.get("objective") is None:
        start_report["objective"] = float(sf.objective(warm_start))
    tol = built.ctx.numerics.solver_tolerances()
    bar = None
    if progress is True:  # a bar for Python users: terminal or notebook
        from treeopt_dsl.progress import Progress

        bar = Progress()
        progress = bar.event
    if progress is not None and warm_start is not None and start_report is not None:
        # the start is a feasible, completed point: the first incumbent, shown before the solver's presolve
        from treeopt_dsl.progress import ProgressEvent, warn_callback_failed

        try:
            progress(ProgressEvent(float(start_report["objective"]), None, None, 0.0, "start"))
        except Exception as exc:  # as the backends do: a failing callback is not called again, the solve goes on
            warn_callback_failed(exc)
            progress = None
    callbacks = "progress" in (be.features_for(solver) if hasattr(be, "features_for") else ())
    if progress is not None and not callbacks:  # no progress callbacks on this route: read its log
        from treeopt_dsl.progress import log_progress

        log_callback = log_progress(progress, log_callback,
                                    offset=float(sf.c0) if getattr(be, "log_omits_constant", False) else 0.0)
        progress = None
    opts = SolveOptions(time_limit=time_limit, gap=gap, threads=threads, seed=seed, verbose=verbose,
                        log_callback=log_callback, progress=progress, warm_start=warm_start, extra=extra, **tol)
    try:
        if built.lazy:  # a master: its blocks add rows lazily (Benders cuts)
            from treeopt_dsl.lazy import solve_lazy

            raw = solve_lazy(built, be, sf, solver, opts)
        else:
            raw = be.solve(sf, solver, opts)
    except KeyboardInterrupt as exc:  # a route that cannot stop with its incumbent (CBC): keep the start
        if warm_start is None:
            raise
        raw = RawResult(Status.INTERRUPTED_NO_SOLUTION, None, None, None, None, time.perf_counter() - t0,
                        f"{exc or 'interrupted'}; {solver} through {be.name!r} returns no incumbent when stopped")
    finally:
        if bar is not None:
            bar.close()
    verification = None
    if sf.is_mip and not dialect(solver).proves_mip and raw.status.has_solution:
        left = None if time_limit is None else max(0.0, float(time_limit) - (time.perf_counter() - t0))
        raw, verification = verify_claim(built, sf, solver, raw, opts, left)
    result = SolveResult(
        status=raw.status, objective=raw.objective, bound=raw.bound, gap=raw.gap, runtime_s=raw.runtime_s,
        solver=solver, backend=be.name, x=raw.x, compile_s=compile_s, size=sf.summary(), message=raw.message,
        options={k: v for k, v in {"time_limit": time_limit, "gap": gap, "threads": threads, "seed": seed,
                                   **tol}.items() if v is not None},
        built=built, warm_start_accepted=raw.warm_start_accepted, incumbent_time_s=raw.incumbent_time_s,
        verification=verification)
    if verification is not None and verification.get("claimed_status") != raw.status.value:
        result.solver_status = Status(verification["claimed_status"])
    if warm_start is not None and start_report is not None and _worse_than_start(raw, start_report["objective"]):
        raw = _start_as_result(raw, model, warm_start, start_report)  # never worse than the start
        _take(result, raw)
    result.start = start_report
    _decode_and_certify(result, built, raw)
    if (result.status is Status.UNCERTIFIED and warm_start is not None and start_report is not None
            and start_report["objective"] <= result.objective):  # the solver's point is worse than the start
        claim, why = result.solver_status, result.message
        raw = _start_as_result(raw, model, warm_start, start_report)
        _take(result, raw)
        result.certificate = None
        _decode_and_certify(result, built, raw)
        result.solver_status, result.message = claim, f"{result.message}; the solver's own answer: {why}"
    if not result.status.has_solution and raise_on_failure:
        raise SolveError(failure_message(result), result)
    return result


def verify_claim(built: Built, sf: Any, solver: str, raw: Any, opts: Any, time_left: float | None
                 ) -> tuple[Any, dict[str, Any]]:
    """The answer of a solver whose MILP claims are not taken on trust (:class:`~treeopt_dsl.backends.dialects.
    Dialect` ``proves_mip=False``, CBC), made into what can be backed: its bound is dropped whatever its status (it
    has been measured above the true optimum); an ``optimal`` claim is checked by the dialect's ``verifier``
    (HiGHS) in a second solve started from the claimed point, within ``time_left`` seconds. The verifier's proof
    makes the answer ``optimal`` (its point and bound, the better of the two points); a verifier stopped by its
    limit leaves ``time_limit`` with its own bound; no time left or no answer leaves ``feasible``. Returns the
    new raw result and the report kept as ``SolveResult.verification``."""
    from dataclasses import replace

    from treeopt_dsl.backends import get_backend
    from treeopt_dsl.backends.dialects import dialect
    from treeopt_dsl.result import relative_gap

    d = dialect(solver)
    report: dict[str, Any] = {"by": d.verifier, "claimed_status": (raw.claimed or raw.status).value,
                              "claimed_objective": raw.objective,
                              "claimed_bound": raw.bound, "why": d.why}
    note = f"{solver}'s bound {raw.bound:.10g} is not taken ({d.why})" if raw.bound is not None else ""
    raw = replace(raw, bound=None, gap=None, message=f"{raw.message}; {note}".strip("; "))
    if Status.OPTIMAL not in (raw.status, raw.claimed):
        report["status"] = "not asked: no optimality claim"
        return raw, report
    if d.verifier is None or (time_left is not None and time_left <= 0):
        report["status"] = "not run: no time left" if d.verifier is not None else "not run: no verifier"
        return replace(raw, status=Status.FEASIBLE, message=f"{raw.message}; {solver} claimed optimal; "
                       f"not verified ({report['status']})"), report
    be = get_backend(d.verifier, None, sf)
    vopts = replace(opts, time_limit=time_left, warm_start=np.asarray(raw.x, dtype=float), progress=None,
                    log_callback=None)
    if built.lazy:
        from treeopt_dsl.lazy import solve_lazy

        v = solve_lazy(built, be, sf, d.verifier, vopts)
    else:
        v = be.solve(sf, d.verifier, vopts)
    report.update(status=v.status.value, objective=v.objective, bound=v.bound, time_s=round(v.runtime_s, 4))
    runtime = raw.runtime_s + v.runtime_s
    best = raw
    if v.status.has_solution and v.x is not None and v.objective is not None and v.objective <= raw.objective:
        best = v  # the verifier started from the claim: its point is no worse
    claim = float(raw.objective)
    refuted = v.objective is not None and improves(float(v.objective), claim)
    verdict = (f"{d.verifier} refuted it: the optimum is below, at {v.objective:.10g}" if refuted and
               v.status is Status.OPTIMAL else f"{d.verifier} found a better point, {v.objective:.10g}" if refuted
               else f"{d.verifier} proved it" if v.status is Status.OPTIMAL
               else f"{d.verifier} ended with {v.status.value} before proving it")
    message = f"{raw.message}; {solver} claimed optimal at {claim:.10g}; {verdict}".strip("; ")
    bound = v.bound if v.bound is not None and best.objective is not None and \
        v.bound <= float(best.objective) + 1e-9 * max(1.0, abs(float(best.objective))) else None
    if v.status is Status.OPTIMAL:
        status = Status.OPTIMAL
    elif v.status in (Status.INTERRUPTED, Status.INTERRUPTED_NO_SOLUTION):
        status = Status.INTERRUPTED
    elif v.status in (Status.TIME_LIMIT, Status.TIME_LIMIT_NO_SOLUTION):
        status = Status.TIME_LIMIT
    else:
        status, bound = Status.FEASIBLE, None
    out = replace(best, status=status, bound=bound, gap=relative_gap(best.objective, bound), runtime_s=runtime,
                  message=message, warm_start_accepted=raw.warm_start_accepted,
                  incumbent_time_s=None if best is v else raw.incumbent_time_s)
    return out, report


def _worse_than_start(raw: Any, start_objective: float) -> bool:
    """Whether the solver's answer is no answer, or a worse one than the start it was given."""
    if not raw.status.has_solution or raw.x is None or raw.objective is None:
        return True
    return raw.objective > start_objective + 1e-9 * max(1.0, abs(start_objective))


def _take(result: SolveResult, raw: Any) -> None:
    result.status, result.objective, result.bound, result.gap = raw.status, raw.objective, raw.bound, raw.gap
    result.x, result.message, result.incumbent_time_s = raw.x, raw.message, raw.incumbent_time_s


def resolution(built: Built) -> dict[str, Any] | None:
    """For an axis-aligned tree whose splits keep a margin ``eps`` with ``|w| <= w_bound``: the pairs of consecutive
    distinct (scaled) training values of a feature closer than ``eps / w_bound``, which no axis-aligned
    split of this model can put a cut between (``None`` when there are none or the model has no such
    split). ``oct`` with ``cuts="all"`` splits threshold columns instead and can express every cut."""
    from treeopt_dsl.numeric import unseparable_pairs
    from treeopt_dsl.warmstart import _budget

    gap = smallest_cut_gap(built.formulation, float(built.ctx.numerics.eps))
    if gap is None or "w" not in built.ctx or _budget(built) != 1:
        return None  # (an oblique split may separate such samples by another feature)
    return resolution_of(gap, unseparable_pairs(built.ctx.data.X, gap), built.ctx.data.feature_names)


def smallest_cut_gap(f: Any, eps: float) -> float | None:
    """``eps / w_bound`` of ``f``'s split block: the closest two values an axis-aligned split with margin ``eps``
    can put a cut between (``None`` without a split block or with unbounded ``w``)."""
    from treeopt_dsl.blocks.splits import ObliqueSplit

    split = next((b for b in f.blocks if isinstance(b, ObliqueSplit)), None)
    return None if split is None or split.w_bound is None else eps / float(split.w_bound)


def resolution_of(gap: float, counts: np.ndarray, names: Sequence[str]) -> dict[str, Any] | None:
    """The :func:`resolution` report of ``counts`` (unseparable pairs per feature) at the smallest cut ``gap``."""
    if not counts.any():
        return None
    return {"smallest_cut_gap": gap, "unseparable_pairs": int(counts.sum()),
            "features": {names[j]: int(c) for j, c in enumerate(counts) if c}}


def _decode_and_certify(result: SolveResult, built: Built, raw: Any) -> None:
    """Decode the (polished) point and certify it; a failed certificate demotes the status."""
    if not raw.status.has_solution or raw.x is None or built.formulation.decoder is None:
        return
    note = resolution(built)
    if note is not None:
        result.resolution = note
        result.message = (f"{result.message}; {note['unseparable_pairs']} pair(s) of distinct training values lie "
                          f"closer than eps/w_bound = {note['smallest_cut_gap']:.2g} (scaled) and cannot be split "
                          "apart by this model (oct: --param cuts=all expresses every cut)").lstrip("; ")
    xp = built.polish(raw.x)
    objective = float(raw.objective)
    # the point of the solver's decisions alone (every other column set by the blocks, as the certificate does)
    xc = built.completed(xp)
    for point, what in ((xp, "continuous columns completed"), (xc, "every column completed from its decisions")):
        better = built.model.objective_value(point)
        if better < objective - 1e-6 * max(1.0, abs(objective)) and built.model.max_violation(point) <= 1e-7:
            # the solver's decisions describe a better point than its own (a flow below capacity, an error
            # indicator at 1 for a sample the tree classifies correctly): that point is the answer
            _take_better(result, objective, better, point, what)
            objective = better
            xp = point
    result.model = built.decode(xp)
    result.certificate = certify(built, xp, objective, built.model.problem_class, completed=xc)
    if not result.certificate.ok:
        _uncertified(result, built, raw.x)


def _take_better(result: SolveResult, claimed: float, better: float, x: np.ndarray, what: str) -> None:
    """``x`` (objective ``better``) replaces the solver's point (``claimed``), with the solver's bound when it is
    still a bound; a bound above ``better`` proves nothing, so an ``optimal`` claim resting on it is withdrawn."""
    from treeopt_dsl.result import relative_gap

    result.message = (f"{result.message}; the solver's point scored {claimed:.10g}, its tree {better:.10g} "
                      f"({what})").lstrip("; ")
    result.objective, result.x = better, x
    if result.bound is not None and result.bound > better + 1e-6 * max(1.0, abs(better)):
        result.message += f"; its bound {result.bound:.10g} lies above that tree: not a bound, no proof"
        result.bound = None
        if result.status is Status.OPTIMAL:
            result.solver_status, result.status = Status.OPTIMAL, Status.FEASIBLE
    result.gap = relative_gap(better, result.bound)


def _start_as_result(raw: Any, model: Any, start: np.ndarray, report: dict[str, Any] | None) -> Any:
    """The solver ended without a point or with a worse one than the start it was given (e.g. a start it
    did not accept, or a limit before it reached it): the start is the answer, never proven optimal."""
    from dataclasses import replace

    from treeopt_dsl.result import relative_gap

    obj = model.objective_value(start)
    bound = raw.bound if raw.bound is not None and raw.bound <= obj + 1e-9 * max(1.0, abs(obj)) else None
    status = raw.status
    if status in (Status.INTERRUPTED, Status.INTERRUPTED_NO_SOLUTION):
        status = Status.INTERRUPTED
    elif status is Status.OPTIMAL and bound is not None and relative_gap(obj, bound) <= 1e-9:
        pass  # the solver's bound proves the start
    elif status in (Status.TIME_LIMIT, Status.TIME_LIMIT_NO_SOLUTION):
        status = Status.TIME_LIMIT
    else:  # the solver ended on its own (a worse local optimum, an error, a wrong claim): no proof, no limit
        status = Status.FEASIBLE
    name = (report or {}).get("chosen") or "given"
    msg = (f"kept the {name} start (objective {obj:.6g}): the solver ended with {raw.status.value}"
           + (f" at objective {raw.objective:.6g}" if raw.objective is not None else "") + f" [{raw.message}]")
    return replace(raw, status=status, x=np.array(start, dtype=float), objective=obj, bound=bound,
                   gap=relative_gap(obj, bound), message=msg, incumbent_time_s=0.0)


def _uncertified(result: SolveResult, built: Built, x: np.ndarray) -> None:
    """Demote a result whose certificate failed: the status says so (never ``optimal``), the
    objective is what the returned model achieves, and the message names the cause."""
    cert = result.certificate
    assert cert is not None
    where, worst = built.model.worst_violation(x)
    cause = (f"the solver's own point violates {where} by {worst:.2g} (beyond its tolerance: the solver's "
             "scaled tolerances accepted it)" if worst > cert.violation_tolerance else
             "the decoded model does not reproduce the solver's point")
    result.message = (f"{result.solver} reported {result.status.value} with objective {cert.objective_solver:.6g}, "
                      f"but {cause}; the returned model's objective is {cert.objective_decoded:.6g} "
                      f"({cert.routing_mismatches} routing mismatches, max violation {cert.max_violation:.2g}) "
                      f"[solver message: {result.message}]")
    result.solver_status = result.status
    result.status = Status.UNCERTIFIED
    result.objective = cert.objective_decoded
    from treeopt_dsl.result import relative_gap

    if result.bound is not None and result.bound > cert.objective_decoded + 1e-9 * max(1.0, abs(result.bound)):
        result.bound = None  # a bound above a point the model achieves is not a bound of this model
    result.gap = relative_gap(result.objective, result.bound)


def certify(built: Built, x: np.ndarray, objective: float, problem_class: str = "MILP",
            completed: np.ndarray | None = None) -> Certificate:
    """Re-evaluate the decoded model: complete a point from its decisions alone and compare, with the
    tolerances of ``problem_class`` (:data:`CERTIFICATE_TOLERANCES`). ``completed``: ``built.completed(x)``
    when the caller already has it (a point made from the decisions alone, e.g. the exact DP's tree).

    The decoded objective is the model's own objective terms at the completed point, so it carries the data's
    sample weights exactly as the solver's objective does (every loss block multiplies its per-sample term by
    ``w_i``): a weighted fit is certified on ``sum_i w_i loss_i`` (tests/test_weights_multiclass.py recounts it
    from the model's predictions)."""
    model = built.model
    xc = built.completed(x) if completed is None else completed
    mism = 0
    if "z" in built.ctx.roles:
        z = built.ctx["z"]
        mism = int(np.sum(np.argmax(z.values(x), 1) != np.argmax(z.values(xc), 1)))
    terms = model.objective_terms(xc)
    obj_tol, viol_tol = CERTIFICATE_TOLERANCES.get(problem_class, (CERTIFICATE_TOL, 1e-5))
    return Certificate(objective_solver=objective, objective_decoded=float(sum(terms.values())),
                       max_violation=model.max_violation(xc), routing_mismatches=mism,
                       tolerance=obj_tol, violation_tolerance=viol_tol, terms=terms)


def failure_message(result: SolveResult) -> str:
    s = result.status
    if s is Status.INFEASIBLE:
        return "the model is infeasible: no tree satisfies the constraints (check bounds and parameters)"
    if s is Status.UNBOUNDED:
        return "the model is unbounded: add bounds or a regularizer"
    if s is Status.TIME_LIMIT_NO_SOLUTION:
        return (f"the time limit ({result.options.get('time_limit')} s) was reached before any feasible "
                "solution was found; raise --time-limit or give a warm start")
    if s is Status.INTERRUPTED_NO_SOLUTION:
        return f"the solve was interrupted before any feasible solution was found ({result.message})"
    return f"the solver stopped with status {s.value}: {result.message}"
