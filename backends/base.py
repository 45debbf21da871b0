"""The backend protocol: what a backend can do, the options it honours, and the raw answer it gives.

:meth:`Backend.solve` is a template method, the one place where the protocol lives:

1. refuse a solver that is not installed and a problem class the route does not solve;
2. (options were validated when :class:`SolveOptions` was made);
3. ``load_model`` the model into the solver; map the common options to the solver's names through the
   solver's :class:`~treeopt_dsl.backends.dialects.Dialect` and ``set_option`` them, then the solver-specific
   pass-through options (``SolveOptions.extra``): an unknown name raises :class:`~treeopt_dsl.errors.OptionError`
   *before* the solve starts, with close matches among the common names and the solver's own;
4. hand over the warm start (``set_start``);
5. ``run`` the solver, with SIGINT and SIGTERM handlers installed (main thread only) that ask the
   solver to stop at its next opportunity (``request_stop``) and are restored afterwards; the
   result then carries the incumbent with ``Status.INTERRUPTED`` (or ``INTERRUPTED_NO_SOLUTION``);
6. ``read_solution``: the backend says what its solver's status means (one of :data:`OUTCOMES`),
   the point, the objective and the bound; the template maps the status (:func:`status_of`),
   computes the gap (:func:`relative_gap`), decides from the log whether a warm start was used
   (``start_pattern``), puts the solver's own reason in the message when it failed, and builds
   the :class:`RawResult`.

Solver output never reaches the process' standard output (``--json`` prints exactly one JSON
document there): file descriptor 1 points at standard error during a verbose solve and at
``/dev/null`` otherwise, and ``log_callback`` receives every log line.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import difflib
import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from treeopt_dsl.backends.dialects import UnknownOption, dialect
from treeopt_dsl.backends.native import settle_infeasible_or_unbounded, solver_stdout
from treeopt_dsl.defaults import check_gap, check_seed, check_threads, check_time_limit, check_tolerance
from treeopt_dsl.errors import CapabilityError, OptionError, SolverNotAvailable
from treeopt_dsl.ir import StandardForm
from treeopt_dsl.progress import ProgressEvent, warn_callback_failed
from treeopt_dsl.result import Status, improves, relative_gap

#: the options every backend understands (the fields of :class:`SolveOptions` but ``extra``)
COMMON_OPTIONS = ("time_limit", "gap", "threads", "seed", "verbose", "log_callback", "progress", "warm_start",
                  "feasibility_tol", "integrality_tol")


@dataclass
class SolveOptions:
    """Options every backend maps to its solver's own names (``None`` = the solver's default).

    Checked once, here: ``time_limit`` is a number of seconds ``>= 0`` (``0`` stops at once: the
    solver returns what presolve found, usually ``time_limit_no_solution``); ``gap`` a relative MIP
    gap ``>= 0``; ``threads`` an integer ``>= 0`` (``0`` = the solver's automatic choice); ``seed``
    an integer ``>= 0``; tolerances positive numbers; ``extra`` maps solver option names (as the
    solver spells them) to values, checked by the backend before the solve starts.
    """

    time_limit: float | None = None
    gap: float | None = None  # relative MIP gap
    threads: int | None = None
    seed: int | None = None
    verbose: bool = False
    log_callback: Callable[[str], None] | None = None
    #: ``progress(event)`` with a :class:`~treeopt_dsl.progress.ProgressEvent` whenever the incumbent or the bound
    #: moves, read from the solver's own callbacks on routes with the feature "progress" (HiGHS, Gurobi, SCIP
    #: direct); :func:`treeopt_dsl.solve.solve_built` reads the log for the others
    progress: Callable[[Any], None] | None = None
    warm_start: np.ndarray | None = None  # a full column vector (NaN = unknown)
    feasibility_tol: float | None = None
    integrality_tol: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # solver-specific, passed through
    #: lazy constraints: ``lazy(x)`` returns the rows (:class:`~treeopt_dsl.formulation.Cuts`) an integer point
    #: ``x`` violates, or ``None``; only routes with the feature "lazy" take it (:mod:`treeopt_dsl.lazy`)
    lazy: Callable[[np.ndarray], Any] | None = None
    #: user cuts: ``cuts(x)`` returns rows valid at *every* point (:class:`~treeopt_dsl.formulation.Cuts`) that a
    #: node's fractional relaxation ``x`` violates, or ``None``; routes with the feature "cuts" add them at the
    #: nodes of their search (Gurobi's ``cbLazy`` at ``MIPNODE``, SCIP's separation), the others never call it
    cuts: Callable[[np.ndarray], Any] | None = None

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise :class:`OptionError` naming the first bad option and what is allowed (:mod:`treeopt_dsl.defaults`
        holds the one check of each)."""
        check_time_limit(self.time_limit)
        check_gap(self.gap)
        check_threads(self.threads)
        check_seed(self.seed)
        check_tolerance(self.feasibility_tol, "feasibility_tol")
        check_tolerance(self.integrality_tol, "integrality_tol")
        if self.log_callback is not None and not callable(self.log_callback):
            raise OptionError(f"log_callback must be callable, got {self.log_callback!r}")
        if self.progress is not None and not callable(self.progress):
            raise OptionError(f"progress must be callable (it receives a ProgressEvent), got {self.progress!r}")
        if not isinstance(self.extra, dict) or not all(isinstance(k, str) for k in self.extra):
            raise OptionError(f"extra must map option names (str) to values, got {self.extra!r}")


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
    #: seconds from the solver's start to the incumbent it returned (``None``: the route cannot tell)
    incumbent_time_s: float | None = None
    #: what the solver claimed when the route did not take it (``OPTIMAL`` for an objective that is not its point's)
    claimed: Status | None = None
    #: the solver's own iteration count (Ipopt's ``iter_count``); ``None`` where the route does not report one
    iterations: int | None = None


#: what a solver's own status means, before the incumbent is looked at ("interrupted": the solver
#: says the user stopped it, e.g. Gurobi's or CBC's own Ctrl-C handling)
OUTCOMES = ("optimal", "limit", "interrupted", "infeasible", "unbounded", "infeasible_or_unbounded", "error")

#: relative difference between a MIP solver's reported objective and its returned point's objective beyond which
#: the two are taken to belong to different points (:meth:`Backend._result`)
OBJECTIVE_MISMATCH = 1e-6

#: signals that stop a solve, with the words the result's message uses
SIGNALS = {"SIGINT": "interrupted by SIGINT (Ctrl-C)", "SIGTERM": "stopped by SIGTERM"}
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class Outcome:
    """What a backend read from its solver after the run (see :meth:`Backend.read_solution`).

    ``objective`` defaults to ``sf.objective(x)``; ``accepted`` overrides the log-based warm-start
    detection; ``status`` lets a backend settle the status itself (e.g. a local NLP method)."""

    outcome: str
    x: np.ndarray | None = None
    objective: float | None = None
    bound: float | None = None
    message: str = ""
    accepted: bool | None = None
    status: Status | None = None
    #: the solver's time when it found the returned incumbent (None: unknown; see ``Run.incumbent_time``)
    incumbent_time_s: float | None = None
    #: the solver's own iteration count (Ipopt's ``iter_count``), or ``None``
    iterations: int | None = None


@dataclass
class Run:
    """One solve in progress: the solver's model, the log seen so far and whether a signal stopped it."""

    sf: StandardForm
    solver: str
    options: SolveOptions
    model: Any = None
    log: list[str] = field(default_factory=list)
    stop_signal: str | None = None
    #: False when the backend could not hand the warm start over
    start_loaded: bool | None = None
    #: backend scratch space (temporary files, handles, native options collected for the call)
    data: dict[str, Any] = field(default_factory=dict)
    #: whether SIGINT/SIGTERM handlers are installed for this run (main thread)
    guarded: bool = False
    #: when the stop signal arrived (``time.perf_counter()``)
    stop_time: float | None = None
    #: the solver's clock when its latest improving solution was found (set through :meth:`found`)
    incumbent_time: float | None = None
    #: the objective of the best point so far (the loaded warm start's at first), for :meth:`found`
    best_objective: float = math.inf
    #: the best point the solver reported through a callback so far (see :meth:`Backend.incumbent`)
    best: Outcome | None = None
    #: True when the wait was ended after a stop request while the solver still ran (its worker
    #: thread is left to finish on its own; the result is ``best``)
    abandoned: bool = False

    @property
    def listening(self) -> bool:
        """Whether the log must be collected (for ``log_callback`` or to see a warm start accepted)."""
        return self.options.log_callback is not None or self.options.warm_start is not None

    def emit(self, line: str) -> None:
        """One log line: kept (for warm-start detection and error reasons) and passed to ``log_callback``."""
        self.log.append(line)
        if self.options.log_callback is not None:
            self.options.log_callback(line)

    def emit_text(self, text: str) -> None:
        """A whole log read after the solve, line by line."""
        for line in text.splitlines():
            self.emit(line)

    def found(self, objective: float, time_s: float) -> None:
        """A solver's callback found an incumbent of ``objective`` at ``time_s``: it becomes the incumbent's time
        only when it improves on the best point before it (the warm start, at time 0) by more than a tie
        (:func:`~treeopt_dsl.result.improves`), so the time to the final incumbent is when an answer of its
        quality first existed."""
        if improves(float(objective), self.best_objective):
            self.best_objective = float(objective)
            self.incumbent_time = float(time_s)

    def report(self, incumbent: float | None, bound: float | None, time_s: float) -> None:
        """The solver's incumbent and bound, from one of its callbacks: passed to ``options.progress`` as a
        :class:`~treeopt_dsl.progress.ProgressEvent` when either moved. Non-finite values mean "none yet". An
        exception in the user's callback is kept (raised after the solve) and the callback is not called again."""
        cb = self.options.progress
        if cb is None or "progress_error" in self.data:
            return
        inc = float(incumbent) if incumbent is not None and np.isfinite(incumbent) else None
        bnd = float(bound) if bound is not None and np.isfinite(bound) else None
        if (inc, bnd) == self.data.get("progress_last"):
            return
        self.data["progress_last"] = (inc, bnd)

        try:
            cb(ProgressEvent(inc, bnd, relative_gap(inc, bnd), float(time_s), "callback"))
        except Exception as exc:  # a solver's callback must not unwind through C code
            self.data["progress_error"] = exc


def unknown_option(name: str, solver: str, known: Iterable[str] = ()) -> OptionError:
    """An :class:`OptionError` naming ``name`` with close matches among the common option names and ``known``."""
    pool = list(dict.fromkeys([*COMMON_OPTIONS, *known]))
    close = difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
    if not close:  # solver names are long and prefixed ("limits/time"): compare without the prefix too
        tails = {p.rsplit("/", 1)[-1].rsplit(".", 1)[-1].lower(): p for p in pool}
        close = [tails[t] for t in difflib.get_close_matches(name.lower(), list(tails), n=3, cutoff=0.6)]
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return OptionError(f"unknown option {name!r} for {solver}{hint} (common options: {', '.join(COMMON_OPTIONS)})")


class Backend:
    """Subclasses declare ``name``, ``solvers``, ``problem_classes`` and implement the
    hooks ``load_model``, ``set_option``, ``set_start``, ``run``, ``request_stop`` and ``read_solution``."""

    name: ClassVar[str]
    solvers: ClassVar[tuple[str, ...]]
    problem_classes: ClassVar[frozenset[str]]  # among LP, MILP, QP, MIQP, NLP
    extra: ClassVar[str]  # the pip extra that installs it
    features: ClassVar[frozenset[str]] = frozenset()  # time_limit, gap, threads, seed, warm_start, log, export
    #: True when the solver's log reports the objective without the model's constant ``sf.c0`` (linopy)
    log_omits_constant: ClassVar[bool] = False
    #: what the solver logs when it used a warm start (None: a start handed over counts as used)
    start_pattern: ClassVar[re.Pattern[str] | None] = None
    #: run the solver in a worker thread while the main thread waits for signals (the solver's call
    #: must release the GIL); False: run in the calling thread
    threaded: ClassVar[bool] = True
    #: seconds a solver may take to honour a stop request before the wait ends with the incumbent its
    #: callbacks reported (``Run.best``); HiGHS, for one, does not look at its interrupt callbacks
    #: inside sub-MIP heuristics and may otherwise run on to the time limit
    stop_grace_s: ClassVar[float] = 3.0
    #: seconds past its time limit a solver may run before the wait ends with the best point known (its callbacks'
    #: incumbent, else the warm start): HiGHS' presolve and root LP do not read the clock (issue 36: 24 minutes of
    #: ``HPresolve::sparsify`` under a 120 s limit); the abandoned solver finishes on its own in its worker
    limit_grace_s: ClassVar[float] = 1.0
    #: solver options (as the solver spells them) that turn its search towards the bound, per solver: taken by the
    #: masters whose remaining gap is the bound's (the lattice masters of ``ors loss="true"``, :func:`~treeopt_dsl.
    #: lazy.solve_lazy`) unless the user sets the same names; ``{}``: none measured (docs/blocks.md, "The designs
    #: measured")
    bound_focus: ClassVar[dict[str, dict[str, Any]]] = {}

    # ------------------------------------------------------------------ capabilities
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
    def bound_focus_for(cls, solver: str) -> dict[str, Any]:
        """The options of :attr:`bound_focus` for ``solver`` (a copy; ``{}`` when there are none)."""
        return dict(cls.bound_focus.get(solver, {}))

    @classmethod
    def features_for(cls, solver: str) -> frozenset[str]:
        """The options/features honoured with ``solver`` (default: ``features``)."""
        return cls.features

    def require_class(self, sf: StandardForm, solver: str) -> None:
        """Refuse a model of a class this backend does not solve with ``solver`` (instead of silently
        dropping its quadratic part or its integrality and answering another problem)."""
        pc = sf.problem_class
        if pc not in self.classes_for(solver):
            raise CapabilityError(f"{solver} through backend {self.name!r} cannot solve a {pc} model "
                                  f"(it solves {', '.join(sorted(self.classes_for(solver)))})")

    def require_installed(self, solver: str) -> None:
        """Raise :class:`SolverNotAvailable` (naming the pip extra) when ``solver`` cannot be driven here."""
        if not self.solver_available(solver):
            raise SolverNotAvailable(f"{solver} through backend {self.name!r} is not installed: "
                                     f"`pip install treeopt-dsl[{self.extra}]`")

    # ------------------------------------------------------------------ the template
    def solve(self, sf: StandardForm, solver: str, options: SolveOptions) -> RawResult:
        """Solve ``sf`` with ``solver``: the protocol of the module docstring, the same for every backend."""
        self.require_installed(solver)
        self.require_class(sf, solver)
        options.validate()
        if options.lazy is not None and "lazy" not in self.features_for(solver):
            raise CapabilityError(f"{solver} through backend {self.name!r} takes no lazy constraints "
                                  "(treeopt_dsl.lazy re-solves with the cuts as rows instead)")
        t0 = time.perf_counter()
        run = Run(sf, solver, options)
        run.data["clock"] = (t0, options.time_limit)  # the guard's clock: loading and the start count
        early = self.settle(run)
        if early is not None:
            return self._result(run, early, time.perf_counter() - t0)
        try:
            with solver_stdout(options.verbose):
                self.load_model(run)
                if "load_exceeds" in run.data and options.warm_start is not None \
                        and np.all(np.isfinite(options.warm_start)):  # the start, as a time limit
                    return self._result(run, Outcome("limit", np.asarray(options.warm_start, dtype=float),
                                                      message=run.data["load_exceeds"], incumbent_time_s=0.0),
                                        time.perf_counter() - t0)
                if options.time_limit is not None:  # one clock: loading the model (seconds in SCIP's API) counts
                    run.options = dataclasses.replace(
                        options, time_limit=max(0.0, options.time_limit - (time.perf_counter() - t0)))
                self._apply_options(run)
                if options.warm_start is not None:
                    start = np.asarray(options.warm_start, dtype=float)
                    run.start_loaded = self.set_start(run, start)
                    if run.start_loaded and sf.is_mip and np.all(np.isfinite(start)):
                        run.found(float(sf.objective(start)), 0.0)  # an answer of the start's quality exists at 0
                        run.data["start"] = start
                self._execute(run)
                out = self.read_solution(run) if not run.abandoned else self._abandoned(run)
            if "progress_error" in run.data:
                warn_callback_failed(run.data["progress_error"], stacklevel=3)
        except Exception as exc:
            mapped = self.translate_error(run, exc)
            if mapped is not None and mapped is not exc:
                raise mapped from exc
            raise
        finally:
            if not run.abandoned:  # an abandoned solver still runs in its worker: leave its model alone
                self.close(run)
        return self._result(run, out, time.perf_counter() - t0)

    def _apply_options(self, run: Run) -> None:
        """The common options under the solver's names, then the pass-through ones (unknown names refused)."""
        for name, value in self.native_options(run).items():
            self.set_option(run, name, value)
        for name, value in run.options.extra.items():
            try:
                self.set_option(run, name, value)
            except UnknownOption:
                raise unknown_option(name, run.solver, self.known_options(run)) from None

    def _execute(self, run: Run) -> None:
        """``run`` the solver, stopping it on SIGINT/SIGTERM (handlers only in the main thread)."""
        with stop_on_signals(lambda sig: self._stop(run, sig)) as guarded:
            run.guarded = guarded
            if guarded and self.threaded:
                t0, limit = run.data.get("clock", (time.perf_counter(), run.options.time_limit))

                def give_up() -> bool:
                    now = time.perf_counter()
                    late = run.stop_time is not None and now - run.stop_time > self.stop_grace_s
                    overran = limit is not None and now - t0 > limit + self.limit_grace_s
                    known = run.best is not None or (overran and "start" in run.data)
                    run.abandoned = (late or overran) and known
                    run.data["overran"] = run.abandoned and overran and not late
                    return run.abandoned

                run_in_worker(lambda: self.run(run), give_up=give_up,
                              on_abandon=lambda: setattr(run, "abandoned", True))
            else:
                self.run(run)

    def _abandoned(self, run: Run) -> Outcome:
        """The outcome of a run whose wait ended before the solver did: after a signal, the incumbent its callbacks
        reported; past the time limit (``limit_grace_s``), that incumbent or the warm start, as a time limit."""
        if not run.data.get("overran"):
            return run.best or Outcome("interrupted")
        why = (f"{run.solver} did not stop at its time limit ({run.options.time_limit:g} s; it reads its clock "
               f"neither in presolve nor in the root LP): left to finish in the background {self.limit_grace_s:g} s "
               "later, with the best point known")
        if run.best is not None and run.best.x is not None:
            return Outcome("limit", run.best.x, run.best.objective, run.best.bound, why,
                           incumbent_time_s=run.best.incumbent_time_s)
        return Outcome("limit", run.data["start"], message=f"{why} (the warm start)", incumbent_time_s=0.0)

    def _stop(self, run: Run, signame: str) -> None:
        """A signal arrived: ask the solver to stop, or, on a route that cannot be stopped (no
        "interrupt" feature) or at the second SIGINT, end the wait with ``KeyboardInterrupt``."""
        again = run.stop_signal == "SIGINT" and signame == "SIGINT"
        if run.stop_signal is None:
            run.stop_signal = signame
            run.stop_time = time.perf_counter()
        if again or "interrupt" not in self.features_for(run.solver):
            raise KeyboardInterrupt(f"{SIGNALS[signame]}: {run.solver} through {self.name!r} cannot be stopped "
                                    "with its incumbent" if not again else f"{SIGNALS[signame]} (twice): abandoned")
        self.request_stop(run)

    def _result(self, run: Run, out: Outcome, runtime: float) -> RawResult:
        """Map an :class:`Outcome` to the common :class:`RawResult` (status, gap, start report, message)."""
        sf = run.sf
        x = out.x
        status = out.status or status_of(out.outcome, x is not None, sf)
        claimed: Status | None = None
        message = out.message
        if run.stop_signal is not None or out.outcome == "interrupted":
            if status in (Status.TIME_LIMIT, Status.TIME_LIMIT_NO_SOLUTION, Status.ERROR) \
                    or out.outcome == "interrupted":
                status = Status.INTERRUPTED if x is not None else Status.INTERRUPTED_NO_SOLUTION
                message = f"{SIGNALS[run.stop_signal or 'SIGINT']}; {message}".rstrip("; ")
        if not status.has_solution:
            x = None
        obj = out.objective if out.objective is not None or x is None else float(sf.objective(x))
        obj = obj if x is not None else None
        if x is not None and obj is not None and sf.is_mip:
            mine = float(sf.objective(x))
            if abs(mine - obj) > OBJECTIVE_MISMATCH * max(1.0, abs(obj)):
                # the point returned is not the one the objective belongs to (HiGHS 1.16 hands back its warm
                # start's vector when the start's presolved image, with better continuous values, won): report
                # what the point scores, and no proof
                message = (f"{message}; {run.solver} reported objective {obj:.10g} but returned a point of "
                           f"objective {mine:.10g}: not proven").lstrip("; ")
                if status is Status.OPTIMAL:  # a claim about another point: no proof of this one, and no limit
                    claimed, status = status, Status.FEASIBLE
                obj = mine
        bound = out.bound if out.bound is not None and math.isfinite(out.bound) else None
        if bound is None and status is Status.OPTIMAL and sf.problem_class in ("LP", "QP"):
            bound = obj
        gap = relative_gap(obj, bound)
        if status is Status.ERROR:
            message = with_reason(message, run.log)
        when = out.incumbent_time_s if out.incumbent_time_s is not None else run.incumbent_time
        if obj is not None and run.incumbent_time is not None and math.isfinite(run.best_objective) \
                and not improves(obj, run.best_objective):
            when = run.incumbent_time  # the answer ties a point known earlier (the start, at 0): its time
        return RawResult(status, x, obj, bound, gap, runtime, message, self._accepted(run, out),
                         incumbent_time_s=when if x is not None else None, claimed=claimed,
                         iterations=out.iterations)

    def _accepted(self, run: Run, out: Outcome) -> bool | None:
        """Whether the solver used the warm start: ``None`` without one, else what the backend or the log says."""
        if run.options.warm_start is None:
            return None
        if run.start_loaded is False:
            return False
        if out.accepted is not None:
            return out.accepted
        pattern = self.start_pattern_for(run.solver)
        if pattern is None or not run.sf.is_mip:
            return True
        return any(pattern.search(line) for line in run.log)

    # ------------------------------------------------------------------ hooks
    def settle(self, run: Run) -> Outcome | None:
        """An answer found before any solver work (e.g. a term-less row ``0 >= 1``), or ``None``."""
        return None

    def load_model(self, run: Run) -> None:  # pragma: no cover - interface
        """Put ``run.sf`` into the solver (``run.model``) and hook the log up to ``run.emit``."""
        raise NotImplementedError

    def native_options(self, run: Run) -> dict[str, Any]:
        """The common options under the solver's own names, with the values it takes (its
        :class:`~treeopt_dsl.backends.dialects.Dialect`, one for every route that drives it)."""
        return dialect(run.solver).native(run.sf, run.options)

    def set_option(self, run: Run, name: str, value: Any) -> None:  # pragma: no cover - interface
        """Set one solver option by the solver's own name; raise :class:`UnknownOption` if the solver has none."""
        raise NotImplementedError

    def known_options(self, run: Run) -> Iterable[str]:
        """The solver's own option names, where it can list them (for suggestions)."""
        return dialect(run.solver).option_names()

    def set_start(self, run: Run, start: np.ndarray) -> bool:
        """Hand the warm start (NaN = unknown) to the solver; ``False`` if this route cannot."""
        return False

    def run(self, run: Run) -> None:  # pragma: no cover - interface
        """Solve (blocking). Called in a worker thread when ``threaded`` and signals are watched."""
        raise NotImplementedError

    def request_stop(self, run: Run) -> None:
        """Ask the running solver to stop at its next opportunity (called from the signal handler)."""

    def read_solution(self, run: Run) -> Outcome:  # pragma: no cover - interface
        """What the solver's status means, the point, objective and bound."""
        raise NotImplementedError

    def close(self, run: Run) -> None:
        """Release what ``load_model`` acquired (called whatever happened)."""

    def translate_error(self, run: Run, exc: Exception) -> Exception | None:
        """A clearer exception for a solver's error (e.g. a licence size limit), or ``None``."""
        return None

    @classmethod
    def start_pattern_for(cls, solver: str) -> re.Pattern[str] | None:
        """What ``solver`` logs when it used a start (default: ``start_pattern``)."""
        return cls.start_pattern


# ---------------------------------------------------------------------- shared machinery
def status_of(outcome: str, has_solution: bool, sf: StandardForm) -> Status:
    """The common :class:`Status` of a solver outcome: a limit with an incumbent is ``TIME_LIMIT``,
    without one ``TIME_LIMIT_NO_SOLUTION``; a user interrupt ``INTERRUPTED`` (with or without one);
    "infeasible or unbounded" is settled by a feasibility solve."""
    if outcome == "optimal":
        return Status.OPTIMAL if has_solution else Status.ERROR
    if outcome == "limit":
        return Status.TIME_LIMIT if has_solution else Status.TIME_LIMIT_NO_SOLUTION
    if outcome == "interrupted":
        return Status.INTERRUPTED if has_solution else Status.INTERRUPTED_NO_SOLUTION
    if outcome == "infeasible":
        return Status.INFEASIBLE
    if outcome == "unbounded":
        return Status.UNBOUNDED
    if outcome == "infeasible_or_unbounded":
        return settle_infeasible_or_unbounded(sf)
    return Status.ERROR


def with_reason(message: str, log: list[str], lines: int = 3) -> str:
    """``message`` plus the solver's own reason: the last log lines that mention an error (else the last lines)."""
    errs = [ln.strip() for ln in log if re.search(r"error|invalid|fail", ln, re.IGNORECASE) and ln.strip()]
    tail = errs[-lines:] or [ln.strip() for ln in log if ln.strip()][-lines:]
    reason = " | ".join(t for t in tail if t not in message)
    return f"{message}: {reason}" if reason else message


@contextlib.contextmanager
def stop_on_signals(on_signal: Callable[[str], None]) -> Iterator[bool]:
    """While the block runs, SIGINT and SIGTERM call ``on_signal(name)`` instead of stopping the process;
    the previous handlers come back afterwards. Yields whether the handlers are installed (only the
    main thread of the main interpreter can install them)."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    previous: dict[int, Any] = {}

    def handler(signum: int, frame: Any) -> None:
        on_signal(signal.Signals(signum).name)

    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main interpreter
        for sig, old in previous.items():
            signal.signal(sig, old)
        yield False
        return
    try:
        yield True
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


def end_if_terminated(message: str, report: Callable[[], str]) -> None:
    """Honour a SIGTERM that stopped a solve (its result's ``message`` says so) when the program has no SIGTERM
    handler of its own (a Python program; the CLI installs one and prints the result itself): print ``report()``
    (the incumbent) on stderr, then end the process as SIGTERM's default action does (exit status 143 in a shell).
    Called by the solve's face (:func:`treeopt_dsl.solve.solve_built`) once the result is decoded and certified."""
    if SIGNALS["SIGTERM"] not in (message or "") or threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
        return
    try:
        sys.stderr.write(f"treeopt: SIGTERM: ending the program; {report()}\n")
        sys.stderr.flush()
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


#: the ends (set when they finish) of solver threads whose wait was given up (a stop or a time limit they did not
#: honour): while unset, the thread still runs native code
_ABANDONED: list[threading.Event] = []
#: seconds the end of a Python program waits for abandoned solvers before it ends the process itself
EXIT_WAIT_S = 30.0


def _abandon(done: threading.Event) -> None:
    if not _ABANDONED:
        atexit.register(_end_with_abandoned_solvers)
    _ABANDONED.append(done)


def abandoned_solvers() -> list[threading.Event]:
    """The ends of the abandoned solver threads still running (native code that would abort the interpreter's
    shutdown)."""
    return [d for d in _ABANDONED if not d.is_set()]


def exit_now_if_abandoned(code: int) -> None:
    """End the process at once with ``code`` when an abandoned solver still runs: the interpreter's shutdown would
    destroy the solver's threads under it (``terminate called without an active exception``, SIGABRT). The
    command line calls this after printing its result (:func:`treeopt_dsl.cli.console`)."""
    if abandoned_solvers():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _end_with_abandoned_solvers() -> None:
    """At the end of a Python program: wait up to :data:`EXIT_WAIT_S` for the abandoned solvers to finish on their
    own, then end the process (status 1) rather than abort in the interpreter's shutdown."""
    deadline = time.monotonic() + EXIT_WAIT_S
    for done in abandoned_solvers():
        done.wait(max(0.0, deadline - time.monotonic()))
    if abandoned_solvers():
        sys.stderr.write("treeopt: a solver left running past its time limit or a stop was still running at exit; "
                         "ending the process\n")
        exit_now_if_abandoned(1)


def run_in_worker(fn: Callable[[], None], poll_s: float = 0.05, give_up: Callable[[], bool] | None = None,
                  on_abandon: Callable[[], None] | None = None) -> None:
    """Run ``fn`` in a worker thread while this (main) thread waits, so that signal handlers run
    promptly; re-raise what ``fn`` raised. ``give_up()`` (asked at every poll) ends the wait early,
    leaving the worker (a daemon thread) to finish on its own. A wait ended by an exception of the main
    thread (``KeyboardInterrupt`` from a second Ctrl-C) also leaves a running worker abandoned, and
    ``on_abandon()`` tells the caller, so that nobody frees the model the solver still reads and the
    program's end does not abort in the solver's threads.

    The worker's end is an event it sets itself: ``Thread.is_alive`` says False for a running thread once a
    ``join`` was interrupted by an exception (CPython before 3.13), which let a second Ctrl-C abort the process
    at its end (the interpreter's shutdown unwound HiGHS' C++ frames: ``terminate called without an active
    exception``)."""
    errors: list[BaseException] = []
    done = threading.Event()

    def target() -> None:
        try:
            # the stop signals go to the waiting main thread, never to the solver's own threads (they inherit
            # this mask), so no native wait of the solver is interrupted
            signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
            fn()
        except BaseException as exc:  # handed to the caller
            errors.append(exc)
        finally:
            done.set()

    worker = threading.Thread(target=target, name="treeopt-solver", daemon=True)
    worker.start()
    try:
        while not done.wait(poll_s):
            if give_up is not None and not done.is_set() and give_up():
                _abandon(done)
                return
    except BaseException:
        if not done.is_set():
            _abandon(done)
            if on_abandon is not None:
                on_abandon()
        raise
    if errors:
        raise errors[0]
