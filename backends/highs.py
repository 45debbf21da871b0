"""HiGHS through highspy's flat-array ``passModel`` (the fastest way in; ARCHITECTURE.md, Backends).

Every ``highspy.Highs`` the library makes comes from :func:`new_highs`: highspy prints its banner
("Running HiGHS ...") on the process' standard output at the first construction, which would break
``treeopt ... --json``; it is constructed with file descriptor 1 pointed at ``/dev/null``.
HiGHS keeps one global thread scheduler per process, created by the first solve with the
``threads`` of that solve; a later solve asking another number fails ("scheduler has already been
initialized"), so a solve that sets ``threads`` resets the global scheduler first.

Interrupts: the solve runs in a worker thread (``run`` releases the GIL); SIGINT/SIGTERM set a flag
that HiGHS' interrupt callbacks (simplex, IPM, MIP) read, and HiGHS stops with its incumbent. HiGHS
does not read them inside its sub-MIP heuristics (a depth-3 OCT stopped at 15 s took 107 s to
return), so every improving solution is also kept from ``cbMipImprovingSolution``; when HiGHS has not
stopped ``stop_grace_s`` seconds after the signal, the result is that incumbent.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from treeopt_dsl.backends.base import Backend, Outcome, Run
from treeopt_dsl.backends.dialects import UnknownOption, dialect
from treeopt_dsl.backends.native import importable, load_highs
from treeopt_dsl.errors import OptionError
from treeopt_dsl.ir import StandardForm

#: HiGHS' log line for a MIP start that became the incumbent
_ACCEPTED = re.compile(r"MIP start solution is feasible")


class HighsBackend(Backend):
    name = "direct"
    solvers = ("highs",)
    problem_classes = frozenset({"LP", "MILP", "QP"})
    extra = "highs"
    features = frozenset({"time_limit", "gap", "threads", "seed", "warm_start", "log", "export", "interrupt",
                          "progress"})
    start_pattern = _ACCEPTED
    @classmethod
    def available(cls) -> bool:
        return importable("highspy")

    @staticmethod
    def load(sf: StandardForm) -> Any:
        """A ``highspy.Highs`` holding the standard form (no solve): :func:`~treeopt_dsl.backends.native.load_highs`."""
        return load_highs(sf)

    # ------------------------------------------------------------------ protocol hooks
    def load_model(self, run: Run) -> None:
        h = self.load(run.sf)
        run.model = h
        # the log always goes to run.emit (not the console): it carries the reason of an error
        h.setOptionValue("output_flag", True)
        h.setOptionValue("log_to_console", False)

        def on_log(event: Any) -> None:
            run.emit(str(event.message).rstrip("\n"))
            if run.options.verbose:
                import sys

                sys.stderr.write(str(event.message))

        h.cbLogging.subscribe(on_log)

    def set_option(self, run: Run, name: str, value: Any) -> None:
        import highspy

        if name == "threads":
            highspy.Highs.resetGlobalScheduler(True)  # else a new thread count fails: "already initialized"
        st = run.model.setOptionValue(name, value)
        if st == highspy.HighsStatus.kError:
            kind = run.model.getOptionType(name)
            if kind[0] != highspy.HighsStatus.kOk:
                raise UnknownOption(name)

            raise OptionError(f"HiGHS refused {name}={value!r}: {' '.join(run.log[-1:])}".rstrip(": "))

    def known_options(self, run: Run) -> list[str]:
        try:
            return [n for n in dir(run.model.getOptions()) if not n.startswith("_")]
        except Exception:  # older highspy without the option listing
            return dialect(run.solver).option_names()

    def set_start(self, run: Run, start: np.ndarray) -> bool:
        import highspy

        known = np.flatnonzero(np.isfinite(start))
        st = run.model.setSolution(int(known.size), known.astype(np.int32), start[known])
        return bool(st != highspy.HighsStatus.kError)

    def run(self, run: Run) -> None:
        h = run.model
        if run.guarded:
            def on_interrupt(event: Any) -> None:
                if run.stop_signal is not None:
                    event.interrupt()

            def on_improved(event: Any) -> None:  # kept for a stop HiGHS is slow to honour (Run.best)
                out = event.data_out
                run.found(out.objective_function_value, out.running_time)
                run.best = Outcome("interrupted", np.array(out.mip_solution, dtype=float),
                                   float(out.objective_function_value),
                                   float(out.mip_dual_bound) if np.isfinite(out.mip_dual_bound) else None,
                                   "HiGHS was still working (in a heuristic) when stopped: its last incumbent",
                                   incumbent_time_s=run.incumbent_time)

            for cb in (h.cbSimplexInterrupt, h.cbIpmInterrupt, h.cbMipInterrupt):
                cb.subscribe(on_interrupt)
            if run.sf.is_mip:
                h.cbMipImprovingSolution.subscribe(on_improved)
        elif run.sf.is_mip:
            def on_time(event: Any) -> None:  # the time of the latest incumbent (proof time is the rest)
                run.found(event.data_out.objective_function_value, event.data_out.running_time)

            h.cbMipImprovingSolution.subscribe(on_time)
        if run.options.progress is not None and run.sf.is_mip:
            def on_progress(event: Any) -> None:  # HiGHS calls its MIP interrupt check often: the live bounds
                out = event.data_out
                run.report(out.mip_primal_bound, out.mip_dual_bound, out.running_time)

            h.cbMipInterrupt.subscribe(on_progress)
            h.cbMipImprovingSolution.subscribe(on_progress)
        h.run()

    def read_solution(self, run: Run) -> Outcome:
        import highspy

        h, sf = run.model, run.sf
        ms = h.getModelStatus()
        info = h.getInfo()
        S = highspy.HighsModelStatus
        has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
        x = np.array(h.getSolution().col_value) if has_sol else None
        obj = float(info.objective_function_value) if has_sol else None
        if sf.is_mip:
            bound = float(info.mip_dual_bound) if np.isfinite(info.mip_dual_bound) else None
        else:
            bound = obj if ms == S.kOptimal else None
        if ms == S.kModelEmpty and x is None:
            x, obj = np.array(h.getSolution().col_value), float(info.objective_function_value)
        outcome = {S.kOptimal: "optimal", S.kModelEmpty: "optimal", S.kInfeasible: "infeasible",
                   S.kUnbounded: "unbounded", S.kUnboundedOrInfeasible: "infeasible_or_unbounded",
                   S.kInterrupt: "interrupted"}.get(ms, "error")
        if ms in (S.kTimeLimit, S.kIterationLimit, S.kSolutionLimit):
            outcome = "limit"
        return Outcome(outcome, x, obj, bound, h.modelStatusToString(ms))


BACKENDS = [HighsBackend]
