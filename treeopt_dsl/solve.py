"""The solve pipeline: a built formulation, a route, a start given as values; compile, solve, decode and certify.

A route is looked up in the registry (:mod:`treeopt_dsl.backends`): an exact engine answers the built model itself;
a MILP/NLP backend gets the compiled standard form. A start is values only (:class:`Start`: a point and the report
of how it was made); named starts (``"auto"``, ``"greedy"``, ...) are made into values by the faces through
:func:`treeopt_dsl.starts.resolve` before this runs. Every answer is polished, decoded and certified, and its
status says what is proven (docs/DESIGN.md, "Certificates and statuses").
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from treeopt_dsl.backends import SolveOptions, check_route_options, get_backend, get_engine
from treeopt_dsl.backends.base import RawResult, end_if_terminated
from treeopt_dsl.backends.dialects import dialect
from treeopt_dsl.defaults import check_time_limit
from treeopt_dsl.errors import CapabilityError, OptionError, SolveError
from treeopt_dsl.lazy import outer_approximation, solve_lazy
from treeopt_dsl.progress import Progress, ProgressEvent, log_progress, warn_callback_failed
from treeopt_dsl.result import Certificate, SolveResult, Status, improves, relative_gap

if TYPE_CHECKING:
    from treeopt_dsl.ir import Model, StandardForm


class Built(Protocol):
    """A built formulation as the pipeline reads it (:class:`treeopt_dsl.formulation.Built` is one): its model,
    the standard form it compiles to, and how its blocks complete, polish, separate and decode a point."""

    formulation: Any
    ctx: Any

    @property
    def model(self) -> Model: ...

    @property
    def lazy(self) -> bool: ...

    def compile(self) -> StandardForm: ...

    def complete(self, x: np.ndarray) -> np.ndarray: ...

    def completed(self, x: np.ndarray) -> np.ndarray: ...

    def project(self, x: np.ndarray) -> np.ndarray: ...

    def polish(self, x: np.ndarray) -> np.ndarray: ...

    def decode(self, x: np.ndarray) -> Any: ...

    def notes(self) -> dict[str, Any]: ...

    @property
    def outer(self) -> list[Any]: ...

    def exact_terms(self, x: np.ndarray, model: Any = None) -> dict[str, float]: ...

    def exact_objective(self, x: np.ndarray, model: Any = None) -> float: ...


@dataclass
class Start:
    """A warm start as values: ``x``, a full feasible point of the built model (``None``: none was found), and
    ``report``, how it was made: ``{"chosen", "objective", "candidates", "time_s"}``, ``"proven": True`` with
    ``"proven_by": {"solver", "backend"}`` when the point is the formulation's proven optimum (the route that proved
    it is named; the solver is then not run), ``"interrupted": True`` when Ctrl-C stopped the starts."""

    x: np.ndarray | None
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def proven(self) -> bool:
        return self.x is not None and bool(self.report.get("proven"))

    @property
    def interrupted(self) -> bool:
        return bool(self.report.get("interrupted"))


def as_start(built: Built, warm_start: Any) -> Start | None:
    """``warm_start`` as a :class:`Start` of ``built``: ``None``, a :class:`Start`, or a column vector of the model's
    size (NaN: completed by the blocks). A name or a fitted model is refused: the faces resolve those
    (:func:`treeopt_dsl.starts.resolve`)."""
    if warm_start is None or isinstance(warm_start, Start):
        return warm_start
    x = np.asarray(warm_start, dtype=float) if isinstance(warm_start, (np.ndarray, list, tuple)) else None
    if x is None or x.ndim != 1 or x.size != built.model.n_vars:
        raise OptionError(f"warm_start must be values here (a Start, or a column vector of {built.model.n_vars} "
                          f"entries), got {type(warm_start).__name__}: a named start or a fitted model is made into "
                          "values by treeopt_dsl.starts.resolve(built, warm_start) (spec.solve and the estimators "
                          "do it)")
    x = built.project(x)  # a start a block's constraints refuse is moved onto them first (Block.project)
    return Start(x if np.all(np.isfinite(x)) else built.complete(x), {"chosen": "given", "candidates": {}})


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
    engine = get_engine(solver)
    if engine is not None:  # an exact engine answers the built model itself (no matrix, no MILP options)
        return engine.solve_built(built, time_limit=check_time_limit(time_limit), **extra)
    check_route_options(solver, extra)
    model = built.model
    be = get_backend(solver, backend, model)  # the solver can take this class of model: said before any work
    start = as_start(built, warm_start)
    start_report = None if start is None else start.report
    warm_start = None if start is None else start.x
    if start is not None and start.interrupted:  # Ctrl-C while the starts were computed: the best start is it
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
    if built.outer:  # proven in the true functions its rows under-estimate: the outer approximation
        return _solve_outer(built, be, solver, start, progress=progress, raise_on_failure=raise_on_failure,
                            options=dict(time_limit=time_limit, gap=gap, threads=threads, seed=seed, verbose=verbose,
                                         log_callback=log_callback, extra=extra))
    if start is not None and start.proven:  # the start is this model's proven optimum (the exact DP tree of oct)
        by = start.report.get("proven_by", {})
        obj = float(start.report["objective"]) if start.report.get("objective") is not None else \
            float(model.objective_value(warm_start))
        result = SolveResult(
            status=Status.OPTIMAL, objective=obj, bound=obj, gap=0.0, runtime_s=float(start.report.get("time_s", 0.0)),
            solver=by.get("solver", "start"), backend=by.get("backend", "start"), x=warm_start, compile_s=0.0,
            size=model.size(), message=f"the {start.report.get('chosen')} start is proven optimal for this "
            f"composition, so {solver} was not run (--warm-start none or cart runs it)",
            options={"warm_start": "auto"}, built=built)
        result.start = start_report
        _decode_and_certify(result, built, RawResult(Status.OPTIMAL, warm_start, obj, obj, 0.0, 0.0))
        return result
    # compiled only now: a start proven optimal (above) needs no matrix
    t0 = time.perf_counter()
    sf = built.compile()
    compile_s = time.perf_counter() - t0
    if warm_start is not None and start_report is not None and start_report.get("objective") is None:
        start_report["objective"] = float(sf.objective(warm_start))
    tol = built.ctx.numerics.solver_tolerances()
    bar = None
    if progress is True:  # a bar for Python users: terminal or notebook
        bar = Progress()
        progress = bar.event
    if progress is not None and warm_start is not None and start_report is not None:
        # the start is a feasible, completed point: the first incumbent, shown before the solver's presolve
        try:
            progress(ProgressEvent(float(start_report["objective"]), None, None, 0.0, "start"))
        except Exception as exc:  # as the backends do: a failing callback is not called again, the solve goes on
            warn_callback_failed(exc)
            progress = None
    callbacks = "progress" in (be.features_for(solver) if hasattr(be, "features_for") else ())
    if progress is not None and not callbacks:  # no progress callbacks on this route: read its log
        log_callback = log_progress(progress, log_callback,
                                    offset=float(sf.c0) if getattr(be, "log_omits_constant", False) else 0.0)
        progress = None
    opts = SolveOptions(time_limit=time_limit, gap=gap, threads=threads, seed=seed, verbose=verbose,
                        log_callback=log_callback, progress=progress, warm_start=warm_start, extra=extra, **tol)
    try:
        if built.lazy:  # a master: its blocks add rows lazily (Benders cuts)
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
        verification=verification, iterations=raw.iterations)
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
    end_if_terminated(f"{raw.message}; {result.message}",
                      lambda: f"the incumbent: status {result.status.value}, objective {result.objective}")
    if not result.status.has_solution and raise_on_failure:
        raise SolveError(failure_message(result), result)
    return result


def start_answer(built: Built, start: Start) -> SolveResult:
    """The start itself as the answer: decoded and certified, no solver run.

    The papers' "warm start alone" (thesis Fig. 3.8's OLCT-W: the greedy logistic start before the MILP). The
    status is ``feasible`` (nothing is proven; the bound is ``None``, or the start's own when it is proven optimal,
    as the exact DP tree of ``oct``); ``solver`` and ``backend`` are ``"start"``; ``runtime_s`` is the time the
    start took when its report says (``time_s``).

        >>> import numpy as np
        >>> from treeopt_dsl.formulations import get_formulation
        >>> from treeopt_dsl.data import Dataset
        >>> from treeopt_dsl.starts import resolve
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2)); y = np.where(X[:, 0] > 0, 1, -1)
        >>> built = get_formulation("oct", depth=1).build(Dataset.from_arrays(X, y))
        >>> res = start_answer(built, resolve(built, "cart"))
        >>> res.status.value, res.solver, res.certificate.ok
        ('feasible', 'start', True)
    """
    if start is None or start.x is None:
        raise OptionError("start_answer needs a start with a point (the start found none)")
    x = np.asarray(start.x, dtype=float)
    obj = float(built.model.objective_value(x))
    proven = start.proven
    status = Status.OPTIMAL if proven else Status.FEASIBLE
    chosen = start.report.get("chosen") or "given"
    result = SolveResult(status=status, objective=obj, bound=obj if proven else None, gap=0.0 if proven else None,
                         runtime_s=float(start.report.get("time_s", 0.0)), solver="start", backend="start", x=x,
                         size=built.model.size(), message=f"the {chosen} start alone (no solver run)", built=built,
                         options={"warm_start": chosen})
    result.start = start.report
    _decode_and_certify(result, built, RawResult(status, x, obj, result.bound, result.gap, result.runtime_s))
    return result


def _solve_outer(built: Built, be: Any, solver: str, start: Start | None, progress: Any, raise_on_failure: bool,
                 options: dict[str, Any]) -> SolveResult:
    """:func:`solve_built` for a model with :attr:`~treeopt_dsl.formulation.Built.outer` blocks (``ors
    loss="true"``): :func:`~treeopt_dsl.lazy.outer_approximation` proves the optimum in the true loss; the result's
    objective is the true objective, its bound the MILPs' best bound, ``outer_approximation`` the loop's report, and
    the certificate recomputes the true objective from the decoded model."""
    blocks = built.outer
    if not dialect(solver).proves_mip:
        raise CapabilityError(f"{blocks[0].true_name} is proven from the MILPs' bounds, and {solver}'s are not taken "
                              f"({dialect(solver).why}): use a solver whose MILP bounds are proofs (highs, gurobi, "
                              "scip), or the tangent surrogate (ors --param loss=tangent)")
    tol = min(float(b.tol) for b in blocks)
    start_report = None if start is None else start.report
    warm_start = None if start is None else start.x
    if warm_start is not None and start_report is not None:  # the start's objective in the loss that is proven
        start_report["objective"] = built.exact_objective(built.completed(warm_start))
    t0 = time.perf_counter()
    sf = built.compile()
    compile_s = time.perf_counter() - t0
    tolerances = built.ctx.numerics.solver_tolerances()
    bar = None
    if progress is True:
        bar = Progress()
        progress = bar.event
    opts = SolveOptions(progress=progress, warm_start=warm_start, **options, **tolerances)
    try:
        raw, info = outer_approximation(built, be, sf, solver, opts, tol)
    finally:
        if bar is not None:
            bar.close()
    gap = info["gap"]
    proven = (f"optimal in {blocks[0].true_name} to relative gap {gap:.2g} (tolerance {tol:g})"
              if raw.status is Status.OPTIMAL else
              f"{blocks[0].true_name}: the best card's gap to the bound is {gap:.3g} (tolerance {tol:g}), not proven"
              if gap is not None else f"{blocks[0].true_name}: no bound")
    result = SolveResult(
        status=raw.status, objective=raw.objective, bound=raw.bound, gap=raw.gap, runtime_s=raw.runtime_s,
        solver=solver, backend=be.name, x=raw.x, compile_s=compile_s, size=sf.summary(),
        message=f"{proven}; {raw.message}",
        options={k: v for k, v in {**{k: options[k] for k in ("time_limit", "gap", "threads", "seed")}, "loss_tol": tol,
                                   **tolerances}.items() if v is not None}, built=built,
        warm_start_accepted=raw.warm_start_accepted)
    result.start = start_report
    result.outer_approximation = info
    if raw.status.has_solution and raw.x is not None:
        xc = built.completed(raw.x)
        result.model = built.decode(xc)
        terms = built.exact_terms(xc, model=result.model)  # the true loss recomputed from the decoded model
        obj_tol, viol_tol = CERTIFICATE_TOLERANCES["MILP"]
        result.certificate = Certificate(objective_solver=float(raw.objective), objective_decoded=float(sum(
            terms.values())), max_violation=built.model.max_violation(xc), routing_mismatches=0, tolerance=obj_tol,
            violation_tolerance=viol_tol, terms=terms)
        if not result.certificate.ok:
            _uncertified(result, built, xc)
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


def _decode_and_certify(result: SolveResult, built: Built, raw: Any) -> None:
    """Decode the (polished) point and certify it; a failed certificate demotes the status."""
    if not raw.status.has_solution or raw.x is None or built.formulation.decoder is None:
        return
    note = built.notes().get("resolution")
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
    notes = built.notes()
    proven_in = notes.get("proven_in")
    if notes.get("proven_to_gap") is not None:  # a loss proven to a relative gap (lattice cutting planes)
        _lattice_report(result, built, notes)
    elif proven_in is not None and result.status is Status.OPTIMAL:  # a loss whose rows under-estimate it
        result.message = f"optimal in {proven_in}; {result.message}".rstrip("; ")


def _lattice_report(result: SolveResult, built: Built, notes: dict[str, Any]) -> None:
    """The status line and report of a loss proven by lattice cutting planes (``ors proof="lcpa"``): optimal in it
    to the relative gap ``(UB - LB) / max(1, |UB|)`` of the card's true loss and the master's bound (a gap above the
    tolerance is no proof), kept as ``result.outer_approximation`` with the cuts made."""
    tol = float(notes["proven_to_gap"])
    if result.certificate is not None and result.certificate.ok:  # the card's true loss (the solver's epigraph
        # may lie below it by the cuts' slack): what the user reads
        result.objective = float(result.certificate.objective_decoded)
        if result.bound is not None:
            result.bound = min(float(result.bound), result.objective)
        result.gap = relative_gap(result.objective, result.bound)
    ub, lb = result.objective, result.bound
    gap = None if ub is None or lb is None else max(0.0, ub - lb) / max(1.0, abs(ub))
    what = notes.get("proven_in", "the true loss")
    if result.status is Status.OPTIMAL and gap is not None and gap > tol * (1.0 + 1e-9):
        result.solver_status, result.status = Status.OPTIMAL, Status.FEASIBLE
        result.message = f"{result.message}; the master stopped at a gap above the tolerance {tol:g}"
    if result.status is Status.OPTIMAL and gap is not None:
        head = f"optimal in {what} to relative gap {gap:.2g} (tolerance {tol:g})"
    elif gap is not None:
        head = f"{what}: the best card's gap to the bound is {gap:.3g} (tolerance {tol:g}), not proven"
    else:
        head = f"{what}: no bound"
    result.message = f"{head}; {result.message}".rstrip("; ")
    result.outer_approximation = {"method": "lcpa", "true_objective": ub, "lower_bound": lb, "gap": gap, "tol": tol,
                                  **notes.get("lattice", {}),
                                  "relaxation": built.ctx.state(built).get("relaxation")}


def _take_better(result: SolveResult, claimed: float, better: float, x: np.ndarray, what: str) -> None:
    """``x`` (objective ``better``) replaces the solver's point (``claimed``), with the solver's bound when it is
    still a bound; a bound above ``better`` proves nothing, so an ``optimal`` claim resting on it is withdrawn."""
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
    ``w_i``): a weighted fit is certified on ``sum_i w_i loss_i`` (tests/estimator/test_weights_multiclass.py recounts
    it from the model's predictions)."""
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

#: the solver of :func:`relaxation_bound` (HiGHS, a core dependency), whatever solver the MILP would use
RELAXATION_SOLVER = "highs"


@dataclass(frozen=True)
class Relaxation:
    """The relaxation's optimum (``bound``, a lower bound of the model's optimum when ``status`` is ``"optimal"``;
    ``nan`` otherwise), HiGHS' status text and the seconds it took."""

    bound: float
    status: str
    seconds: float

    def to_dict(self) -> dict[str, float | str]:
        return {"lp_bound": self.bound, "lp_bound_status": self.status, "lp_bound_s": round(self.seconds, 4)}


def relaxation_bound(model: Built | StandardForm, time_limit: float | None = None) -> Relaxation:
    """The optimum of ``model`` with every integrality requirement dropped: how tight a composition is before any
    branching.

    A MILP's proof is its root bound raised by branching; the LP (or, for MARGOT's squared l2, the convex QP)
    relaxation is where that starts, and comparing it between two compositions of the same problem (big-M and flow
    routing, the paper's ``M`` and a derived one, a row per tangent and the breakpoints) is how a researcher sees
    which is tighter without running either to the end::

        >>> from treeopt_dsl import Dataset
        >>> from treeopt_dsl.formulations import get_formulation
        >>> data = Dataset.from_arrays([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]], [1, -1, 1, -1])
        >>> r = relaxation_bound(get_formulation("oct", depth=1).build(data))
        >>> r.status, r.bound <= 0.0 + 1e-9   # the optimum is 0 errors; the relaxation is below it
        ('optimal', True)

    ``treeopt compile FORMULATION --data D --lp-bound`` prints it. The relaxation drops integrality only: a block's
    lazy rows (the Benders master's cuts) are not in it, so for such a model it is the master's bound, still a valid
    bound of the formulation. Solved by :data:`RELAXATION_SOLVER` (HiGHS, a core dependency) through the route
    registry, whatever solver the MILP would use.

    ``model`` is a built formulation (``spec.build(data)``) or its standard form. A nonlinear model (S-ORCT) has no
    LP relaxation: :class:`~treeopt_dsl.errors.CapabilityError`. At ``time_limit`` seconds the status says so and
    the bound is ``nan`` (a simplex stopped early bounds nothing).
    """
    if check_time_limit(time_limit) == 0:
        raise OptionError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    sf = model if hasattr(model, "integrality") else model.compile()
    if sf.nonlinear or sf.nl_constraints:
        raise CapabilityError(f"the model is {sf.problem_class}: it has no LP or QP relaxation to bound it by")
    relaxed = dataclasses.replace(sf, integrality=np.zeros_like(sf.integrality))
    raw = get_backend(RELAXATION_SOLVER, None, relaxed).solve(relaxed, RELAXATION_SOLVER,
                                                              SolveOptions(time_limit=time_limit))
    bound = float(raw.objective) if raw.status is Status.OPTIMAL and raw.objective is not None else float("nan")
    return Relaxation(bound, raw.status.value, raw.runtime_s)
