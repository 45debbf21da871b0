"""SCIP through PySCIPOpt (``--solver scip``): the open-source route for MIQP such as MARGOT.

The model enters SCIP through its MPS reader (one C call instead of a Python call per row; the
``QUADOBJ`` section carries MARGOT's squared l2). SCIP runs single-threaded (``threads`` is
ignored). A warm start is a complete solution handed to SCIP's candidate storage; SCIP's log says
whether it became an incumbent.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from treeopt_dsl.backends._files import columns_by_name, mps_file
from treeopt_dsl.backends.base import Backend, Outcome, Run
from treeopt_dsl.backends.dialects import SCIP_NLP_HEURISTICS, UnknownOption, dialect
from treeopt_dsl.backends.native import importable
from treeopt_dsl.errors import OptionError, SolverNotAvailable

#: SCIP reads an MPS file in about this many times the seconds it took to write it (MARGOT on adult, 24 million
#: nonzeros: written in 17.6 s, read in 29.1 s at load 12 on 2 cores): the file's writing measures the machine's
#: pace, and a model SCIP could not even read within the time left is not loaded (``load_exceeds``)
READ_PER_WRITE = 1.7
#: what SCIP logs when a start became a solution (complete start / partial start completed by SCIP)
ACCEPTED = ("feasible solution given by solution candidate storage", "found by completesol heuristic")
_ACCEPTED = re.compile("|".join(re.escape(a) for a in ACCEPTED))


#: SCIP's heuristics that solve NLPs with its bundled Ipopt (off for quadratic and nonlinear models: the dialect)
NLP_HEURISTICS = SCIP_NLP_HEURISTICS


class ScipBackend(Backend):
    """SCIP direct. Interrupts: SCIP's own Ctrl-C catching is off (``misc/catchctrlc``); the solve runs
    in a worker thread (``optimizeNogil``) and SIGINT/SIGTERM call ``interruptSolve()``: SCIP stops
    with its incumbent."""

    name = "direct"
    solvers = ("scip",)
    problem_classes = frozenset({"LP", "MILP", "QP", "MIQP"})
    extra = "scip"
    features = frozenset({"time_limit", "gap", "seed", "warm_start", "log", "export", "interrupt", "lazy",
                          "cuts", "progress", "priority"})
    @classmethod
    def available(cls) -> bool:
        return importable("pyscipopt")

    def load_model(self, run: Run) -> None:
        try:
            import pyscipopt
        except ImportError:
            raise SolverNotAvailable("SCIP is not installed: `pip install treeopt-dsl[scip]`") from None
        m = pyscipopt.Model()
        run.model = m
        m.hideOutput()  # the log goes to a file, read back into run.emit (and stderr when verbose)
        stack = contextlib.ExitStack()
        run.data["stack"] = stack
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="treeopt-scip-")))
        t0 = time.perf_counter()
        with mps_file(run.sf) as path:
            written = time.perf_counter() - t0
            limit = run.options.time_limit
            if limit is not None and run.options.warm_start is not None and READ_PER_WRITE * written > limit - written:
                run.data["load_exceeds"] = (
                    f"SCIP would take about {READ_PER_WRITE * written:.0f} s to read this model "
                    f"({run.sf.A.nnz:,} nonzeros; writing its file took {written:.1f} s), more than the "
                    f"{max(0.0, limit - written):.0f} s left of the time limit: not run (a smaller --sample or a "
                    "longer --time-limit lets it run)")
                return
            m.readProblem(str(path))
        run.data["log_path"] = tmp / "scip.log"
        m.setLogfile(str(run.data["log_path"]))
        m.setParam("misc/catchctrlc", False)
        run.data["vars"] = columns_by_name(m.getVars(), run.sf.n_cols)
        if run.sf.priority is not None:  # the blocks' branching priorities: only the columns that have one (a few)
            for j in np.flatnonzero(run.sf.priority):
                m.chgVarBranchPriority(run.data["vars"][j], int(run.sf.priority[j]))

    def native_options(self, run: Run) -> dict[str, Any]:
        """SCIP's dialect, but threads: SCIP runs single-threaded here (``lp/threads`` is the LP solver's)."""
        return dialect("scip").native(run.sf, run.options, skip=("threads",))

    def set_option(self, run: Run, name: str, value: Any) -> None:
        try:
            run.model.setParam(name, value)
        except (KeyError, LookupError):
            raise UnknownOption(name) from None
        except (ValueError, TypeError) as exc:
            raise OptionError(f"SCIP refused {name}={value!r}: {exc}") from None

    def known_options(self, run: Run) -> list[str]:
        return list(run.model.getParams())

    def set_start(self, run: Run, start: np.ndarray) -> bool:
        m, variables = run.model, run.data["vars"]
        # a quadratic objective read from MPS gets SCIP's own variable (``qmatrixvar``) and row: a
        # full solution would leave it at 0 and fail that row, so SCIP completes a partial one
        own = m.getNVars() > run.sf.n_cols
        sol = m.createSol() if np.all(np.isfinite(start)) and not own else m.createPartialSol()
        for j in np.flatnonzero(np.isfinite(start)):
            m.setSolVal(sol, variables[j], float(start[j]))
        m.addSol(sol)
        return True

    @classmethod
    def start_pattern_for(cls, solver: str) -> re.Pattern[str] | None:
        return _ACCEPTED

    def run(self, run: Run) -> None:
        m = run.model
        failed: list[BaseException] = []
        if run.options.lazy is not None:
            _include_lazy(m, run.options.lazy, run.data["vars"], failed, run.options.cuts)
        if run.options.progress is not None and run.sf.is_mip:
            _include_progress(m, run)
        try:
            if run.guarded:
                m.optimizeNogil()
            else:
                m.optimize()
        finally:
            m.setLogfile("")  # flush and close
            path = run.data["log_path"]
            text = path.read_text(errors="replace") if path.exists() else ""
            if run.options.verbose:
                import sys

                sys.stderr.write(text)
            run.emit_text(text)
        if failed:
            raise failed[0]

    def request_stop(self, run: Run) -> None:
        if run.model is not None:
            run.model.interruptSolve()

    def read_solution(self, run: Run) -> Outcome:
        m = run.model
        st = m.getStatus()
        has_sol = m.getNSols() > 0
        x = np.array([m.getVal(v) for v in run.data["vars"]]) if has_sol else None
        obj = float(m.getObjVal()) if has_sol else None
        limits = ("timelimit", "gaplimit", "nodelimit", "totalnodelimit", "stallnodelimit", "memlimit", "sollimit",
                  "bestsollimit")
        outcome = {"optimal": "optimal", "infeasible": "infeasible", "unbounded": "unbounded",
                   "inforunbd": "infeasible_or_unbounded", "userinterrupt": "interrupted"}.get(
            st, "limit" if st in limits else "error")
        if st == "gaplimit" and has_sol:
            outcome = "optimal"  # stopped at the requested gap, as the other solvers report it
        bound = float(m.getDualbound()) if has_sol or outcome == "optimal" else None
        when = float(m.getSolTime(m.getBestSol())) if has_sol else None  # when SCIP found its incumbent
        return Outcome(outcome, x, obj, bound, f"scip: {st}", incumbent_time_s=when)

    def close(self, run: Run) -> None:
        if "stack" in run.data:
            run.data.pop("stack").close()


BACKENDS = [ScipBackend]


def _include_lazy(m: Any, lazy: Any, cols: list[Any], failed: list[BaseException], cuts: Any = None) -> None:
    """A SCIP constraint handler without constraints that enforces the lazy rows of ``lazy``: it rejects a
    solution the rows cut off (``conscheck``) and, at an LP or pseudo solution that violates some, adds them
    as constraints (``consenfolp`` / ``consenfops``). Dual reductions are switched off: they assume that the
    rows SCIP sees are all there is (the lazy rows hold no variable locks). ``cuts`` (rows valid at every point):
    also separated at every node's LP solution (``conssepalp``)."""
    import pyscipopt

    R = pyscipopt.SCIP_RESULT

    class LazyRows(pyscipopt.Conshdlr):
        def _cuts(self, sol: Any) -> Any:
            if failed:
                return None
            try:
                return lazy(np.array([self.model.getSolVal(sol, v) for v in cols], dtype=float))
            except Exception as exc:  # SCIP would swallow it: keep it for the caller
                failed.append(exc)
                self.model.interruptSolve()
                return None

        def conscheck(self, constraints: Any, solution: Any, checkintegrality: Any, checklprows: Any,
                      printreason: Any, completely: Any, **kw: Any) -> dict[str, Any]:
            return {"result": R.FEASIBLE if self._cuts(solution) is None else R.INFEASIBLE}

        def _enforce(self) -> dict[str, Any]:
            return self._add(self._cuts(None), R.FEASIBLE)

        def conssepalp(self, constraints: Any, nusefulconss: Any, **kw: Any) -> dict[str, Any]:
            if cuts is None or failed:
                return {"result": R.DIDNOTRUN}
            try:
                rows = cuts(np.array([self.model.getSolVal(None, v) for v in cols], dtype=float))
            except Exception as exc:
                failed.append(exc)
                self.model.interruptSolve()
                return {"result": R.DIDNOTRUN}
            return self._add(rows, R.DIDNOTFIND)

        def _add(self, cuts: Any, none: Any) -> dict[str, Any]:
            if cuts is None:
                return {"result": none}
            mdl = self.model
            A = cuts.A.tocsr()
            for r in range(A.shape[0]):
                lo, hi = A.indptr[r], A.indptr[r + 1]
                expr = pyscipopt.quicksum(float(c) * mdl.getTransformedVar(cols[j])
                                          for c, j in zip(A.data[lo:hi], A.indices[lo:hi], strict=True))
                lhs = float(cuts.lower[r]) if np.isfinite(cuts.lower[r]) else None
                rhs = float(cuts.upper[r]) if np.isfinite(cuts.upper[r]) else None
                cons = expr <= rhs if lhs is None else (expr >= lhs if rhs is None else pyscipopt.ExprCons(
                    expr, lhs=lhs, rhs=rhs))
                mdl.addCons(cons, name=f"lazy_{mdl.getNConss()}", removable=False)
            return {"result": R.CONSADDED}

        def consenfolp(self, constraints: Any, nusefulconss: Any, solinfeasible: Any) -> dict[str, Any]:
            return self._enforce()

        def consenfops(self, constraints: Any, nusefulconss: Any, solinfeasible: Any, objinfeasible: Any
                       ) -> dict[str, Any]:
            return self._enforce()

        def conslock(self, constraint: Any, locktype: Any, nlockspos: Any, nlocksneg: Any) -> None:
            pass

    m.setBoolParam("misc/allowstrongdualreds", False)
    m.setBoolParam("misc/allowweakdualreds", False)
    m.includeConshdlr(LazyRows(), "treeopt_lazy", "lazy rows of a treeopt-dsl block", sepapriority=0,
                      enfopriority=-1, chckpriority=-1, sepafreq=-1 if cuts is None else 1, propfreq=-1, eagerfreq=-1,
                      maxprerounds=0,
                      delaysepa=False, delayprop=False, needscons=False)


def _include_progress(m: Any, run: Run) -> None:
    """An event handler that reports SCIP's primal and dual bounds (``run.report``) when a better solution is
    found and after every solved node: the live progress of ``options.progress``."""
    import pyscipopt

    infinity = m.infinity()

    def finite(v: float) -> float | None:
        return None if abs(v) >= infinity else float(v)

    class Progress(pyscipopt.Eventhdlr):
        def eventinit(self) -> None:
            self.model.catchEvent(pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND, self)
            self.model.catchEvent(pyscipopt.SCIP_EVENTTYPE.NODESOLVED, self)

        def eventexit(self) -> None:
            self.model.dropEvent(pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND, self)
            self.model.dropEvent(pyscipopt.SCIP_EVENTTYPE.NODESOLVED, self)

        def eventexec(self, event: Any) -> None:
            mm = self.model
            run.report(finite(mm.getPrimalbound()), finite(mm.getDualbound()), mm.getSolvingTime())

    m.includeEventhdlr(Progress(), "treeopt_progress", "live incumbent and bound for treeopt-dsl")
