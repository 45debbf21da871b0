"""SCIP through PySCIPOpt (``--solver scip``): the open-source route for MIQP such as MARGOT.

The model enters SCIP through its MPS reader (one C call instead of a Python call per row; the
``QUADOBJ`` section carries MARGOT's squared l2). SCIP runs single-threaded (``threads`` is
ignored). A warm start is a complete solution handed to SCIP's candidate storage; SCIP's log says
whether it became an incumbent.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from treeopt_dsl.errors import SolverNotAvailable
from treeopt_dsl.ir import StandardForm
from treeopt_dsl.result import Status

from ._files import mps_file
from .base import Backend, RawResult, SolveOptions, importable, relative_gap, status_of

#: what SCIP logs when a start became a solution (complete start / partial start completed by SCIP)
ACCEPTED = ("feasible solution given by solution candidate storage", "found by completesol heuristic")


class ScipBackend(Backend):
    name = "direct"
    solvers = ("scip",)
    problem_classes = frozenset({"LP", "MILP", "QP", "MIQP"})
    extra = "scip"
    features = frozenset({"time_limit", "gap", "seed", "warm_start", "log", "export"})

    @classmethod
    def available(cls) -> bool:
        return importable("pyscipopt")

    def solve(self, sf: StandardForm, solver: str, options: SolveOptions) -> RawResult:
        try:
            import pyscipopt
        except ImportError:
            raise SolverNotAvailable("SCIP is not installed: `pip install treeopt-dsl[scip]`") from None
        t0 = time.perf_counter()
        m = pyscipopt.Model()
        if not options.verbose:
            m.hideOutput()
        with mps_file(sf) as path, tempfile.TemporaryDirectory(prefix="treeopt-scip-") as tmp:
            m.readProblem(str(path))
            log_path = Path(tmp) / "scip.log"
            m.setLogfile(str(log_path))
            if options.time_limit is not None:
                m.setParam("limits/time", float(options.time_limit))
            if options.gap is not None:
                m.setParam("limits/gap", float(options.gap))
            if options.seed is not None:
                m.setParam("randomization/randomseedshift", int(options.seed) % 2**31)
            if options.feasibility_tol is not None:
                m.setParam("numerics/feastol", float(options.feasibility_tol))
            for k, v in options.extra.items():
                m.setParam(k, v)
            variables = [None] * sf.n_cols  # the writer names columns x<j>; SCIP may add its own (QP)
            for v in m.getVars():
                if v.name.startswith("x") and v.name[1:].isdigit():
                    variables[int(v.name[1:])] = v
            if options.warm_start is not None:
                ws = np.asarray(options.warm_start, dtype=float)
                # a quadratic objective read from MPS gets SCIP's own variable (``qmatrixvar``) and row: a
                # full solution would leave it at 0 and fail that row, so SCIP completes a partial one
                own = m.getNVars() > sf.n_cols
                sol = m.createSol() if np.all(np.isfinite(ws)) and not own else m.createPartialSol()
                for j in np.flatnonzero(np.isfinite(ws)):
                    m.setSolVal(sol, variables[j], float(ws[j]))
                m.addSol(sol)
            m.optimize()
            m.setLogfile("")  # flush and close
            log = log_path.read_text(errors="replace") if log_path.exists() else ""
        if options.log_callback is not None:
            for line in log.splitlines():
                options.log_callback(line)
        runtime = time.perf_counter() - t0
        st = m.getStatus()
        has_sol = m.getNSols() > 0
        x = np.array([m.getVal(v) for v in variables]) if has_sol else None
        obj = float(m.getObjVal()) if has_sol else None
        limits = ("timelimit", "gaplimit", "nodelimit", "totalnodelimit", "stallnodelimit", "memlimit", "sollimit",
                  "bestsollimit", "userinterrupt")
        outcome = {"optimal": "optimal", "infeasible": "infeasible", "unbounded": "unbounded",
                   "inforunbd": "infeasible_or_unbounded"}.get(st, "limit" if st in limits else "error")
        if st == "gaplimit" and has_sol:
            outcome = "optimal"  # stopped at the requested gap, as the other solvers report it
        status = status_of(outcome, has_sol, sf)
        if not status.has_solution:
            x = obj = None
        bound = float(m.getDualbound()) if status.has_solution else None
        if bound is not None and not np.isfinite(bound):
            bound = None
        accepted = any(a in log for a in ACCEPTED) if options.warm_start is not None else None
        gap = relative_gap(obj, bound) if sf.is_mip else (0.0 if status is Status.OPTIMAL else None)
        return RawResult(status, x, obj, bound, gap, runtime, f"scip: {st}", accepted)


BACKENDS = [ScipBackend]
