"""HiGHS through highspy's flat-array ``passModel`` (the fastest way in; ARCHITECTURE.md, Backends)."""

from __future__ import annotations

import time

import numpy as np

from treeopt_dsl.ir import StandardForm
from treeopt_dsl.result import Status

from .base import Backend, RawResult, SolveOptions, relative_gap


class HighsBackend(Backend):
    name = "direct"
    solvers = ("highs",)
    problem_classes = frozenset({"LP", "MILP", "QP"})
    extra = "highs"
    features = frozenset({"time_limit", "gap", "threads", "seed", "warm_start", "log", "export"})

    @classmethod
    def available(cls) -> bool:
        try:
            import highspy  # noqa: F401
        except ImportError:
            return False
        return True

    @staticmethod
    def load(sf: StandardForm) -> object:
        """A ``highspy.Highs`` holding the standard form (no solve)."""
        import highspy

        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        A = sf.A
        inf = h.inf
        integrality = sf.integrality.astype(np.int32)
        args = (sf.n_cols, sf.n_rows, A.nnz)
        bounds = (np.clip(sf.col_lower, -inf, inf), np.clip(sf.col_upper, -inf, inf),
                  np.clip(sf.row_lower, -inf, inf), np.clip(sf.row_upper, -inf, inf))
        if sf.is_quadratic:
            Q = sf.Q.tocsc()
            from scipy.sparse import tril

            L = tril(Q, format="csc")  # HiGHS: ½ xᵀQx with the lower triangle, column-wise
            status = h.passModel(*args, L.nnz, 2, 1, 1, float(sf.c0), sf.c.astype(float), *bounds,
                                 *_csr(A), L.indptr[:-1].astype(np.int32) if L.nnz else np.zeros(sf.n_cols, np.int32),
                                 L.indices.astype(np.int32), L.data, integrality)
        else:
            status = h.passModel(*args, 2, 1, float(sf.c0), sf.c.astype(float), *bounds, *_csr(A), integrality)
        if status == highspy.HighsStatus.kError:
            raise RuntimeError("HiGHS rejected the model")
        return h

    def solve(self, sf: StandardForm, solver: str, options: SolveOptions) -> RawResult:
        import highspy

        self.require_class(sf, solver)
        t0 = time.perf_counter()
        h = self.load(sf)
        seen: list[str] = []  # log lines, kept to confirm that a MIP start was accepted
        listen = options.log_callback is not None or options.warm_start is not None
        if options.verbose or listen:
            h.setOptionValue("output_flag", True)
            h.setOptionValue("log_to_console", bool(options.verbose and options.log_callback is None))
        if listen:
            user_cb = options.log_callback

            def on_log(callback_type: object, message: str, data_out: object, data_in: object,
                       user_data: object) -> None:
                text = str(message).rstrip("\n")
                if "MIP start" in text:
                    seen.append(text)
                if user_cb is not None:
                    user_cb(text)

            h.setCallback(on_log, None)
            h.startCallback(highspy.cb.HighsCallbackType.kCallbackLogging)
        if options.time_limit is not None:
            h.setOptionValue("time_limit", float(options.time_limit))
        if options.gap is not None:
            h.setOptionValue("mip_rel_gap", float(options.gap))
        if options.threads is not None:
            h.setOptionValue("threads", int(options.threads))
        if options.seed is not None:
            h.setOptionValue("random_seed", int(options.seed))
        if options.feasibility_tol is not None:
            h.setOptionValue("primal_feasibility_tolerance", float(options.feasibility_tol))
            h.setOptionValue("mip_feasibility_tolerance", float(min(1e-6, options.feasibility_tol * 10)))
        if options.integrality_tol is not None and sf.is_mip:
            h.setOptionValue("mip_feasibility_tolerance", float(options.integrality_tol))
        for k, v in options.extra.items():
            h.setOptionValue(k, v)
        accepted = None
        if options.warm_start is not None:
            ws = np.asarray(options.warm_start, dtype=float)
            known = np.flatnonzero(np.isfinite(ws))
            st = h.setSolution(int(known.size), known.astype(np.int32), ws[known])
            accepted = st != highspy.HighsStatus.kError
        h.run()
        runtime = time.perf_counter() - t0
        if accepted and sf.is_mip:  # HiGHS logs "MIP start solution is feasible, objective value is ..."
            accepted = any("is feasible" in line for line in seen)
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
        if ms in (S.kOptimal, S.kModelEmpty):
            status = Status.OPTIMAL
        elif ms in (S.kTimeLimit, S.kIterationLimit, S.kInterrupt, S.kSolutionLimit):
            status = Status.TIME_LIMIT if has_sol else Status.TIME_LIMIT_NO_SOLUTION
        elif ms == S.kInfeasible:
            status = Status.INFEASIBLE
        elif ms in (S.kUnbounded, S.kUnboundedOrInfeasible):
            status = Status.UNBOUNDED if ms == S.kUnbounded else Status.INFEASIBLE
            if ms == S.kUnboundedOrInfeasible:
                status = _disambiguate(sf)
        else:
            status = Status.ERROR
        gap = relative_gap(obj, bound) if sf.is_mip else (0.0 if status is Status.OPTIMAL else None)
        return RawResult(status, x, obj, bound, gap, runtime, h.modelStatusToString(ms), accepted)


def _csr(A: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row starts, column indices and values as HiGHS takes them (int32, float64), without copies
    when the standard form already holds them so."""
    return (np.asarray(A.indptr[:-1], dtype=np.int32), np.asarray(A.indices, dtype=np.int32),
            np.asarray(A.data, dtype=np.float64))


def _disambiguate(sf: StandardForm) -> Status:
    """HiGHS may say "infeasible or unbounded"; a feasibility solve (zero objective) tells which."""
    from dataclasses import replace

    import highspy

    h = HighsBackend.load(replace(sf, c=np.zeros_like(sf.c), Q=None))
    h.run()
    return Status.UNBOUNDED if h.getModelStatus() == highspy.HighsModelStatus.kOptimal else Status.INFEASIBLE


BACKENDS = [HighsBackend]
