"""python-mip with CBC (``--solver cbc``): the COIN-OR route that pip installs everywhere.

The model enters through python-mip's MPS reader (python-mip has no matrix API; building it one
``add_constr`` per row costs seconds on the tree models). CBC solves LP and MILP only: a quadratic
model is refused before any work. CBC prints its log on the process' standard output; it is
captured for ``log_callback`` (after the solve) and for the warm-start report.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from treeopt_dsl.backends._files import columns_by_name, mps_file
from treeopt_dsl.backends.base import Backend, Outcome, Run
from treeopt_dsl.backends.dialects import UnknownOption, dialect
from treeopt_dsl.backends.native import captured_stdout, importable
from treeopt_dsl.errors import SolverNotAvailable
from treeopt_dsl.result import Status

#: a "not optimal" end before this share of the time limit is CBC stopping on its own, not the limit
EARLY = 0.9

_ACCEPTED = re.compile(r"MIPStart provided solution with cost|mipstart provided solution", re.IGNORECASE)


class MipBackend(Backend):
    """python-mip with CBC. Interrupts: python-mip 2.0 gives no way to stop CBC's search from outside
    (its progress callback's answer is ignored, the limits are copied when the search starts), so this
    route does not claim "interrupt": SIGINT/SIGTERM end the solve with ``KeyboardInterrupt`` at once
    (the template abandons the worker thread) instead of being ignored until the time limit.

    Nor can the incumbent be kept for ``Run.best`` with the CBC that python-mip 2.0 loads (cbcbox
    2.935): CBC's ``Cbc_addIncCallback`` is never called at log level >= 1 (the level this route needs
    for its log), because ``CbcSolver`` replaces the C interface's event handler with its own output
    handler before branch and bound; at log level 0 it is called, but CBC then crashes (SIGSEGV in
    ``CbcBnBOutput::onStrongStats``, from ``dealWithEventHandler(endSearch)``) at the end of every
    search. The progress callback only fires for the root LP and preprocessing, and the ``CbcModel``
    it hands over cannot be stopped through the C API (``CbcModel::setCutoff`` from another thread
    corrupted the heap).

    Lazy constraints (Benders cuts) are not taken through python-mip's ``lazy_constrs_generator``: with it,
    CBC hung past its time limit in about one BendersOCT solve of four on monks-3 (depth 2, 10 s; in the
    main thread and in a worker, whatever the thread count), as ODTlearn's own BendersOCT on CBC did on a toy
    matrix here. A route that may never return is worse than a slower one: CBC gets row generation
    (:mod:`treeopt_dsl.lazy`), each round a fresh, time-limited CBC solve."""

    name = "mip"
    solvers = ("cbc",)
    problem_classes = frozenset({"LP", "MILP"})
    extra = "cbc"
    features = frozenset({"time_limit", "gap", "threads", "seed", "warm_start", "log", "export"})
    #: CBC's common options as python-mip spells them (``Model`` attributes; ``time_limit`` is
    #: ``optimize(max_seconds=)``); the values are CBC's dialect's
    spelling: ClassVar[dict[str, str]] = {
        "time_limit": "max_seconds", "gap": "max_mip_gap", "threads": "threads", "seed": "seed",
        "feasibility_tol": "infeas_tol", "integrality_tol": "integer_tol"}
    start_pattern = _ACCEPTED

    @classmethod
    def available(cls) -> bool:
        return importable("mip")

    def load_model(self, run: Run) -> None:
        try:
            import mip
        except (ImportError, OSError):
            raise SolverNotAvailable("CBC (python-mip) is not installed: `pip install treeopt-dsl[cbc]`") from None
        stack = contextlib.ExitStack()
        run.data["stack"] = stack
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="treeopt-cbc-")))
        run.data["log_path"] = log_path = tmp / "cbc.log"
        sf = run.sf
        with captured_stdout(log_path):
            m = mip.Model(solver_name=mip.CBC)
            m.verbose = 1
            with mps_file(sf) as path:
                m.read(str(path))
        run.model = m
        # CBC's MPS reader drops the objective constant (the RHS of the objective row)
        if abs(float(m.objective_const) - float(sf.c0)) > 1e-12:
            m.objective = m.objective + (float(sf.c0) - float(m.objective_const))
        run.data["vars"] = columns_by_name(m.vars, sf.n_cols)

    def native_options(self, run: Run) -> dict[str, Any]:
        return {self.spelling[k]: v for k, v in dialect("cbc").values(run.sf, run.options).items()
                if k in self.spelling}

    def set_option(self, run: Run, name: str, value: Any) -> None:
        if name in ("max_seconds", "time_limit_s"):
            run.data["max_seconds"] = float(value)
            return
        if name.startswith("_") or not hasattr(type(run.model), name) or callable(getattr(run.model, name)):
            raise UnknownOption(name)  # setattr would make a new attribute python-mip never reads
        setattr(run.model, name, value)

    def known_options(self, run: Run) -> list[str]:
        cls = type(run.model)
        return [n for n in dir(cls) if not n.startswith("_") and isinstance(getattr(cls, n), property)]

    def set_start(self, run: Run, start: np.ndarray) -> bool:
        ints = np.flatnonzero(np.isfinite(start) & run.sf.integrality.astype(bool))
        _set_start_by_index(run.model, [run.data["vars"][j].idx for j in ints], start[ints])
        return True

    def run(self, run: Run) -> None:
        limit = run.options.time_limit if run.options.time_limit is not None else run.data.get("max_seconds")
        kw = {} if limit is None else {"max_seconds": float(limit)}
        t0 = time.perf_counter()
        with captured_stdout(run.data["log_path"], echo=run.options.verbose):
            run.data["status"] = run.model.optimize(**kw)
        run.data["elapsed"], run.data["limit"] = time.perf_counter() - t0, limit
        run.emit_text(run.data["log_path"].read_text(errors="replace"))

    def read_solution(self, run: Run) -> Outcome:
        import mip

        m, sf, st = run.model, run.sf, run.data["status"]
        S = mip.OptimizationStatus
        has_sol = m.num_solutions > 0 and st in (S.OPTIMAL, S.FEASIBLE)
        x = np.array([v.x for v in run.data["vars"]], dtype=float) if has_sol else None
        obj = float(m.objective_value) if has_sol else None
        outcome = {S.OPTIMAL: "optimal", S.FEASIBLE: "limit", S.NO_SOLUTION_FOUND: "limit", S.INFEASIBLE: "infeasible",
                   S.INT_INFEASIBLE: "infeasible", S.UNBOUNDED: "unbounded",
                   S.INF_OR_UNBD: "infeasible_or_unbounded"}.get(st, "error")
        bound = float(m.objective_bound) if has_sol and sf.is_mip else None
        limit = run.data.get("limit")
        if outcome == "limit" and (limit is None or run.data.get("elapsed", 0.0) < EARLY * float(limit)):
            # CBC also ends "not optimal" well before its limit (seen after 0.7 s of 60): no limit was reached
            return Outcome(outcome, x, obj, bound, f"cbc: {st.name}, stopped after {run.data.get('elapsed', 0):.2g} s "
                           f"of {'no limit' if limit is None else f'{float(limit):g} s'} without a proof",
                           status=Status.FEASIBLE if x is not None else Status.ERROR)
        return Outcome(outcome, x, obj, bound, f"cbc: {st.name}")

    def _accepted(self, run: Run, out: Outcome) -> bool | None:
        if run.options.warm_start is not None and not run.sf.is_mip:
            return None  # CBC says nothing of a start for an LP
        return super()._accepted(run, out)

    def close(self, run: Run) -> None:
        if "stack" in run.data:
            run.data.pop("stack").close()


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
