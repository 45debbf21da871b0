"""Gurobi through gurobipy's matrix API (``--solver gurobi``; the fastest Gurobi route).

The standard form goes in as whole arrays: one ``addMVar`` for the columns, one ``addMConstr`` for
the rows (a ranged row ``l <= a·x <= u`` becomes an ``=`` row when ``l == u``, otherwise a ``>=``
and a ``<=`` row: Gurobi's matrix rows carry one sense), ``setMObjective`` with ``½ Q``. The pip
wheel's licence is size-limited (2000 variables and 2000 constraints); a larger model fails with
:class:`~treeopt_dsl.errors.ModelTooLarge` and a message that says so.
"""

from __future__ import annotations

import re
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from treeopt_dsl.errors import ModelTooLarge, SolverNotAvailable
from treeopt_dsl.ir import StandardForm
from treeopt_dsl.result import Status

from .base import Backend, RawResult, SolveOptions, importable, relative_gap, status_of

#: limits of the restricted licence that ships with the pip wheel
SIZE_LIMIT = 2000
_ACCEPTED = re.compile(r"User MIP start produced solution|Loaded user MIP start with objective")


def _gurobipy() -> Any:
    try:
        import gurobipy
    except ImportError:
        raise SolverNotAvailable("Gurobi is not installed: `pip install treeopt-dsl[gurobi]`") from None
    return gurobipy


def rows_by_sense(sf: StandardForm) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """The rows as one-sided rows: matrix, sense (``=``, ``>``, ``<``), rhs, and the source row of each."""
    lo, up = sf.row_lower, sf.row_upper
    eq = np.isfinite(lo) & (lo == up)
    ge = np.isfinite(lo) & ~eq
    le = np.isfinite(up) & ~eq
    src = np.concatenate([np.flatnonzero(eq), np.flatnonzero(ge), np.flatnonzero(le)])
    sense = np.concatenate([np.full(eq.sum(), "="), np.full(ge.sum(), ">"), np.full(le.sum(), "<")])
    rhs = np.concatenate([lo[eq], lo[ge], up[le]])
    return sp.csr_matrix(sf.A[src]), sense, rhs, src


def to_gurobi(sf: StandardForm, env: Any = None, names: bool = True) -> Any:
    """The standard form as a ``gurobipy.Model`` (variables and rows named after the formulation's families).

    The variables are ``model.getVars()`` in column order; set ``names=False`` to skip naming.
    """
    gp = _gurobipy()
    GRB = gp.GRB
    m = gp.Model(sf.name, env=env) if env is not None else gp.Model(sf.name)
    vtype = np.where(sf.integrality.astype(bool), GRB.INTEGER, GRB.CONTINUOUS)
    lb = np.where(np.isneginf(sf.col_lower), -GRB.INFINITY, sf.col_lower)
    ub = np.where(np.isposinf(sf.col_upper), GRB.INFINITY, sf.col_upper)
    x = m.addMVar(sf.n_cols, lb=lb, ub=ub, vtype=vtype)
    A, sense, rhs, src = rows_by_sense(sf)
    if A.shape[0]:
        m.addMConstr(A, x, sense, rhs)
    if sf.Q is not None and sf.Q.nnz:
        m.setMObjective(0.5 * sp.csr_matrix(sf.Q), sf.c, float(sf.c0), sense=GRB.MINIMIZE)
    else:
        m.setMObjective(None, sf.c, float(sf.c0), sense=GRB.MINIMIZE)
    m.update()
    if names:
        from treeopt_dsl.io._text import names as safe_names

        cn, rn = safe_names(sf, True)
        m.setAttr("VarName", m.getVars(), cn.tolist())
        suffix = np.array(["", "_lo", "_hi"], dtype=object)[np.select([sense == "=", sense == ">"], [0, 1], 2)]
        m.setAttr("ConstrName", m.getConstrs(), (rn[src] + suffix).tolist())
        m.update()
    return m


class GurobiBackend(Backend):
    """Gurobi direct (``--solver gurobi``)."""

    name = "direct"
    solvers = ("gurobi",)
    problem_classes = frozenset({"LP", "MILP", "QP", "MIQP"})
    extra = "gurobi"
    features = frozenset({"time_limit", "gap", "threads", "seed", "warm_start", "log", "export"})

    @classmethod
    def available(cls) -> bool:
        return importable("gurobipy")

    def solve(self, sf: StandardForm, solver: str, options: SolveOptions) -> RawResult:
        gp = _gurobipy()
        GRB = gp.GRB
        t0 = time.perf_counter()
        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 0)
        env.start()
        log: list[str] = []
        try:
            m = to_gurobi(sf, env, names=False)
            listen = options.log_callback is not None or options.warm_start is not None
            m.Params.LogToConsole = int(bool(options.verbose))
            m.Params.OutputFlag = int(bool(options.verbose or listen))
            if options.time_limit is not None:
                m.Params.TimeLimit = float(options.time_limit)
            if options.gap is not None:
                m.Params.MIPGap = float(options.gap)
            if options.threads is not None:
                m.Params.Threads = int(options.threads)
            if options.seed is not None:
                m.Params.Seed = int(options.seed) % 2_000_000_000
            if options.feasibility_tol is not None:
                m.Params.FeasibilityTol = max(1e-9, float(options.feasibility_tol))
            if options.integrality_tol is not None and sf.is_mip:
                m.Params.IntFeasTol = max(1e-9, float(options.integrality_tol))
            for k, v in options.extra.items():
                m.setParam(k, v)
            if options.warm_start is not None:
                ws = np.asarray(options.warm_start, dtype=float)
                m.setAttr("Start", m.getVars(), np.where(np.isfinite(ws), ws, GRB.UNDEFINED).tolist())

            def on_message(model: Any, where: int) -> None:
                if where == GRB.Callback.MESSAGE:
                    text = model.cbGet(GRB.Callback.MSG_STRING).rstrip("\n")
                    log.append(text)
                    if options.log_callback is not None:
                        options.log_callback(text)

            try:
                m.optimize(on_message if listen else None)
            except gp.GurobiError as exc:
                if getattr(exc, "errno", None) == 10010 or "size-limited" in str(exc):
                    raise ModelTooLarge(
                        f"this model has {sf.n_cols} variables and {sf.n_rows} constraints; the Gurobi licence "
                        f"installed by pip allows {SIZE_LIMIT} of each. Install a full Gurobi licence, use a "
                        "smaller --sample, or solve with --solver highs / scip") from None
                raise
            return self._result(m, sf, GRB, time.perf_counter() - t0, log, options.warm_start is not None)
        finally:
            env.dispose()

    @staticmethod
    def _result(m: Any, sf: StandardForm, GRB: Any, runtime: float, log: list[str], started: bool) -> RawResult:
        st = m.Status
        has_sol = m.SolCount > 0
        x = np.array(m.getAttr("X", m.getVars())) if has_sol else None
        obj = float(m.ObjVal) if has_sol else None
        bound = None
        if sf.is_mip and has_sol:
            bound = float(m.ObjBound)
        elif st == GRB.OPTIMAL:
            bound = obj
        limits = (GRB.TIME_LIMIT, GRB.NODE_LIMIT, GRB.ITERATION_LIMIT, GRB.SOLUTION_LIMIT, GRB.INTERRUPTED,
                  GRB.WORK_LIMIT, GRB.SUBOPTIMAL)
        outcome = {GRB.OPTIMAL: "optimal", GRB.INFEASIBLE: "infeasible", GRB.UNBOUNDED: "unbounded",
                   GRB.INF_OR_UNBD: "infeasible_or_unbounded"}.get(st, "limit" if st in limits else "error")
        status = status_of(outcome, has_sol, sf)
        if not status.has_solution:
            x = obj = bound = None
        accepted = (any(_ACCEPTED.search(line) for line in log) if sf.is_mip else True) if started else None
        gap = relative_gap(obj, bound) if sf.is_mip else (0.0 if status is Status.OPTIMAL else None)
        return RawResult(status, x, obj, bound, gap, runtime, f"gurobi status {st}", accepted)


BACKENDS = [GurobiBackend]
