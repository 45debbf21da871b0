"""python-mip with CBC (``--solver cbc``): the COIN-OR route that pip installs everywhere.

The model enters through python-mip's MPS reader (python-mip has no matrix API; building it one
``add_constr`` per row costs seconds on the tree models). CBC solves LP and MILP only: a quadratic
model is refused before any work. CBC prints its log on the process' standard output; it is
captured for ``log_callback`` (after the solve) and for the warm-start report.
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

import numpy as np

from treeopt_dsl.errors import SolverNotAvailable
from treeopt_dsl.ir import StandardForm
from treeopt_dsl.result import Status

from ._files import captured_stdout, mps_file
from .base import Backend, RawResult, SolveOptions, importable, relative_gap, status_of

_ACCEPTED = re.compile(r"MIPStart provided solution with cost|mipstart provided solution", re.IGNORECASE)


class MipBackend(Backend):
    name = "mip"
    solvers = ("cbc",)
    problem_classes = frozenset({"LP", "MILP"})
    extra = "cbc"
    features = frozenset({"time_limit", "gap", "threads", "seed", "warm_start", "log", "export"})

    @classmethod
    def available(cls) -> bool:
        return importable("mip")

    def solve(self, sf: StandardForm, solver: str, options: SolveOptions) -> RawResult:
        try:
            import mip
        except (ImportError, OSError):
            raise SolverNotAvailable("CBC (python-mip) is not installed: `pip install treeopt-dsl[cbc]`") from None
        self.require_class(sf, solver)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="treeopt-cbc-") as tmp:
            log_path = Path(tmp) / "cbc.log"
            with captured_stdout(log_path, echo=options.verbose):
                m = mip.Model(solver_name=mip.CBC)
                m.verbose = 1 if (options.verbose or options.log_callback or options.warm_start is not None) else 0
                with mps_file(sf) as path:
                    m.read(str(path))
                # CBC's MPS reader drops the objective constant (the RHS of the objective row)
                if abs(float(m.objective_const) - float(sf.c0)) > 1e-12:
                    m.objective = m.objective + (float(sf.c0) - float(m.objective_const))
                variables = [None] * sf.n_cols
                for v in m.vars:
                    if v.name.startswith("x") and v.name[1:].isdigit():
                        variables[int(v.name[1:])] = v
                if options.gap is not None:
                    m.max_mip_gap = float(options.gap)
                if options.threads is not None:
                    m.threads = int(options.threads)
                if options.seed is not None:
                    m.seed = int(options.seed)
                if options.feasibility_tol is not None:
                    m.infeas_tol = float(options.feasibility_tol)
                if options.integrality_tol is not None and sf.is_mip:
                    m.integer_tol = max(1e-9, float(options.integrality_tol))
                for k, v in options.extra.items():
                    setattr(m, k, v)
                if options.warm_start is not None:
                    ws = np.asarray(options.warm_start, dtype=float)
                    ints = np.flatnonzero(np.isfinite(ws) & sf.integrality.astype(bool))
                    _set_start_by_index(m, [variables[j].idx for j in ints], ws[ints])
                kw = {} if options.time_limit is None else {"max_seconds": float(options.time_limit)}
                st = m.optimize(**kw)
            log = log_path.read_text(errors="replace")
        if options.log_callback is not None:
            for line in log.splitlines():
                options.log_callback(line)
        runtime = time.perf_counter() - t0
        S = mip.OptimizationStatus
        has_sol = m.num_solutions > 0 and st in (S.OPTIMAL, S.FEASIBLE)
        x = np.array([v.x for v in variables], dtype=float) if has_sol else None
        obj = float(m.objective_value) if has_sol else None
        outcome = {S.OPTIMAL: "optimal", S.FEASIBLE: "limit", S.NO_SOLUTION_FOUND: "limit", S.INFEASIBLE: "infeasible",
                   S.INT_INFEASIBLE: "infeasible", S.UNBOUNDED: "unbounded",
                   S.INF_OR_UNBD: "infeasible_or_unbounded"}.get(st, "error")
        status = status_of(outcome, has_sol, sf)
        if not status.has_solution:
            x = obj = None
        bound = float(m.objective_bound) if status.has_solution and sf.is_mip else (
            obj if status is Status.OPTIMAL else None)
        accepted = bool(_ACCEPTED.search(log)) if options.warm_start is not None else None
        if accepted is False and options.warm_start is not None and not sf.is_mip:
            accepted = None
        gap = relative_gap(obj, bound) if sf.is_mip else (0.0 if status is Status.OPTIMAL else None)
        return RawResult(status, x, obj, bound, gap, runtime, f"cbc: {st.name}", accepted)


def _set_start_by_index(m: object, idx: list[int], values: np.ndarray) -> None:
    """Hand CBC a MIP start by column index.

    python-mip's ``Model.start`` passes column *names*, which CBC fails to match after reading an
    MPS file ("MIPstart solution is not valid, column names do not match"); CBC's C API also takes
    indices (``Cbc_setMIPStartI``), which is what this calls.
    """
    from mip.cbc import cbclib, ffi

    n = len(idx)
    cbclib.Cbc_setMIPStartI(m.solver._model, n, ffi.new("int[]", list(idx)),  # type: ignore[attr-defined]
                            ffi.new("double[]", [float(v) for v in values]))


BACKENDS = [MipBackend]
