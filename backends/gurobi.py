"""Gurobi through gurobipy's matrix API (``--solver gurobi``; the fastest Gurobi route).

The standard form goes in as whole arrays: one ``addMVar`` for the columns, one ``addMConstr`` for
the rows (a ranged row ``l <= a·x <= u`` becomes an ``=`` row when ``l == u``, otherwise a ``>=``
and a ``<=`` row: Gurobi's matrix rows carry one sense), ``setMObjective`` with ``½ Q``. The pip
wheel's licence is size-limited (2000 variables and 2000 constraints); a larger model fails with
:class:`~treeopt_dsl.errors.ModelTooLarge` and a message that says so.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from treeopt_dsl.backends.base import Backend, Outcome, Run
from treeopt_dsl.backends.dialects import UnknownOption
from treeopt_dsl.backends.native import importable
from treeopt_dsl.errors import ModelTooLarge, OptionError, SolverNotAvailable
from treeopt_dsl.io._text import names as safe_names
from treeopt_dsl.ir import StandardForm

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

    The variables are ``model.getVars()`` in column order, with the branching priorities of ``sf.priority``; set
    ``names=False`` to skip naming.
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
    if sf.priority is not None:  # the blocks' branching priorities (StandardForm.priority)
        m.setAttr("BranchPriority", m.getVars(), sf.priority.tolist())
        m.update()
    if names:
        cn, rn = safe_names(sf, True)
        m.setAttr("VarName", m.getVars(), cn.tolist())
        suffix = np.array(["", "_lo", "_hi"], dtype=object)[np.select([sense == "=", sense == ">"], [0, 1], 2)]
        m.setAttr("ConstrName", m.getConstrs(), (rn[src] + suffix).tolist())
        m.update()
    return m


def add_lazy(model: Any, cols: list[Any], cuts: Any) -> None:
    """Hand the rows of ``cuts`` (:class:`~treeopt_dsl.formulation.Cuts`, or ``None``) to ``cbLazy`` (at ``MIPSOL``
    or, for rows valid at every point, at a node's relaxation, ``MIPNODE``)."""
    if cuts is None:
        return
    gp = _gurobipy()
    add = model.cbLazy
    A = cuts.A.tocsr()
    for r in range(A.shape[0]):  # one call per cut: the callback API takes one row at a time
        lo, hi = A.indptr[r], A.indptr[r + 1]
        expr = gp.LinExpr(A.data[lo:hi].tolist(), [cols[j] for j in A.indices[lo:hi]])
        if np.isfinite(cuts.upper[r]):
            add(expr <= float(cuts.upper[r]))
        if np.isfinite(cuts.lower[r]):
            add(expr >= float(cuts.lower[r]))


class GurobiBackend(Backend):
    """Gurobi direct (``--solver gurobi``).

    Interrupts: ``optimize`` runs in a worker thread (gurobipy releases the GIL); SIGINT/SIGTERM call
    ``model.terminate()`` and Gurobi returns its incumbent with status ``INTERRUPTED``."""

    name = "direct"
    solvers = ("gurobi",)
    problem_classes = frozenset({"LP", "MILP", "QP", "MIQP"})
    extra = "gurobi"
    features = frozenset({"time_limit", "gap", "threads", "seed", "warm_start", "log", "export", "interrupt",
                          "lazy", "cuts", "progress", "priority"})
    start_pattern = _ACCEPTED
    #: Gurobi's bound focus: measured on the lattice masters (heart, spambase, breast-wisconsin), docs/blocks.md
    bound_focus: ClassVar[dict[str, dict[str, Any]]] = {"gurobi": {"MIPFocus": 3}}
    @classmethod
    def available(cls) -> bool:
        return importable("gurobipy")

    def load_model(self, run: Run) -> None:
        gp = _gurobipy()
        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 0)
        env.start()
        run.data["env"] = env
        m = to_gurobi(run.sf, env, names=False)
        run.model = m
        m.Params.LogToConsole = int(bool(run.options.verbose))
        m.Params.OutputFlag = 1  # the log goes to run.emit: it carries the reason of an error

    def set_option(self, run: Run, name: str, value: Any) -> None:
        gp = _gurobipy()
        try:
            run.model.setParam(name, value)
        except gp.GurobiError as exc:
            if "Unknown parameter" in str(exc) or getattr(exc, "errno", None) == 10007:
                raise UnknownOption(name) from None
            raise OptionError(f"Gurobi refused {name}={value!r}: {exc}") from None

    def known_options(self, run: Run) -> list[str]:
        return [p for p in dir(run.model.Params) if p[:1].isupper()]

    def set_start(self, run: Run, start: np.ndarray) -> bool:
        GRB = _gurobipy().GRB
        m = run.model
        m.setAttr("Start", m.getVars(), np.where(np.isfinite(start), start, GRB.UNDEFINED).tolist())
        return True

    def run(self, run: Run) -> None:
        gp = _gurobipy()
        GRB = gp.GRB
        lazy, user = run.options.lazy, run.options.cuts
        cols = run.model.getVars() if lazy is not None or user is not None else None
        failed: list[BaseException] = []
        if lazy is not None:
            run.model.Params.LazyConstraints = 1
        if user is not None:
            run.model.Params.PreCrush = 1  # rows at node relaxations are on the original columns

        def on_message(model: Any, where: int) -> None:
            if where == GRB.Callback.MESSAGE:
                run.emit(model.cbGet(GRB.Callback.MSG_STRING).rstrip("\n"))
            elif where == GRB.Callback.MIPNODE and user is not None and \
                    model.cbGet(GRB.Callback.MIPNODE_STATUS) == GRB.OPTIMAL:
                try:  # the node's relaxation: rows valid everywhere that it violates, as lazy rows (Gurobi drops
                    # most user cuts (cbCut): measured, docs/blocks.md "Lattice cutting planes")
                    add_lazy(model, cols, user(np.array(model.cbGetNodeRel(cols))))
                except Exception as exc:
                    failed.append(exc)
                    model.terminate()
            elif where == GRB.Callback.MIP and run.options.progress is not None:
                run.report(model.cbGet(GRB.Callback.MIP_OBJBST), model.cbGet(GRB.Callback.MIP_OBJBND),
                           model.cbGet(GRB.Callback.RUNTIME))
            elif where == GRB.Callback.MIPSOL:  # the time of the latest incumbent (proof time is the rest)
                if lazy is not None:
                    try:
                        add_lazy(model, cols, lazy(np.array(model.cbGetSolution(cols))))
                    except Exception as exc:  # Gurobi swallows callback errors: keep it and stop
                        failed.append(exc)
                        model.terminate()
                run.found(model.cbGet(GRB.Callback.MIPSOL_OBJ), model.cbGet(GRB.Callback.RUNTIME))
                if run.options.progress is not None:  # the new solution may not be in OBJBST yet
                    best = min(model.cbGet(GRB.Callback.MIPSOL_OBJ), model.cbGet(GRB.Callback.MIPSOL_OBJBST))
                    run.report(best, model.cbGet(GRB.Callback.MIPSOL_OBJBND), model.cbGet(GRB.Callback.RUNTIME))
            if run.stop_signal is not None:
                model.terminate()

        run.model.optimize(on_message)
        if failed:
            raise failed[0]

    def request_stop(self, run: Run) -> None:
        if run.model is not None:
            run.model.terminate()

    def read_solution(self, run: Run) -> Outcome:
        GRB = _gurobipy().GRB
        m, sf = run.model, run.sf
        st = m.Status
        has_sol = m.SolCount > 0
        x = np.array(m.getAttr("X", m.getVars())) if has_sol else None
        obj = float(m.ObjVal) if has_sol else None
        bound = None
        if sf.is_mip and has_sol:
            bound = float(m.ObjBound)
        elif st == GRB.OPTIMAL:
            bound = obj
        limits = (GRB.TIME_LIMIT, GRB.NODE_LIMIT, GRB.ITERATION_LIMIT, GRB.SOLUTION_LIMIT, GRB.WORK_LIMIT,
                  GRB.SUBOPTIMAL)
        outcome = {GRB.OPTIMAL: "optimal", GRB.INFEASIBLE: "infeasible", GRB.UNBOUNDED: "unbounded",
                   GRB.INF_OR_UNBD: "infeasible_or_unbounded", GRB.INTERRUPTED: "interrupted"}.get(
            st, "limit" if st in limits else "error")
        return Outcome(outcome, x, obj, bound, f"gurobi status {st}")

    def close(self, run: Run) -> None:
        if "env" in run.data:
            if run.model is not None:
                run.model.dispose()
            run.data.pop("env").dispose()

    def translate_error(self, run: Run, exc: Exception) -> Exception | None:
        if getattr(exc, "errno", None) == 10010 or "size-limited" in str(exc):
            sf = run.sf
            return ModelTooLarge(
                f"this model has {sf.n_cols} variables and {sf.n_rows} constraints; the Gurobi licence "
                f"installed by pip allows {SIZE_LIMIT} of each. Install a full Gurobi licence, use a "
                "smaller --sample, or solve with --solver highs / scip")
        return None


BACKENDS = [GurobiBackend]
