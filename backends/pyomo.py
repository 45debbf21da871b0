"""Pyomo: the standard form as a ``ConcreteModel`` with indexed components, solved through Pyomo.

Routes (Pyomo 6.10): HiGHS, Gurobi and SCIP through the new solver interface
(``pyomo.contrib.solver``: ``highs``, ``gurobi_persistent`` (``gurobi_direct`` is linear-only),
``scip_direct`` -- the last one drives
PySCIPOpt in-process, so no ``scip`` executable is needed); CBC through the classic ``cbc`` shell
interface with the executable found on ``PATH`` or shipped by the ``cbcbox`` wheel; Ipopt through
``pyomo.contrib.solver``'s ``ipopt`` when an ``ipopt`` executable is on ``PATH`` (continuous models
only; the nonlinear terms of an NLP are translated by :func:`pyomo_values`).

=========  ====================  ==================================  ==============================
solver     problem classes       warm start                          bound / gap
=========  ====================  ==================================  ==============================
highs      LP, MILP, QP          no (the interface has no MIP start)  from the results
gurobi     LP, MILP, QP, MIQP    yes (``warmstart_discrete_vars``)    from the results
scip       LP, MILP, QP, MIQP    yes (``warmstart_discrete_vars``)    from the results
cbc        LP, MILP              yes (``warmstart=True``)             lower bound of the results
ipopt      LP, QP, NLP           yes (the initial point)              none (a local method)
=========  ====================  ==================================  ==============================

Building a Pyomo model costs a Python object per variable, per row and per term: that is Pyomo's
known price, and the reason the other backends exist. :func:`to_pyomo` keeps it to one
comprehension per family.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import re
import sys
from dataclasses import replace
from typing import Any

import numpy as np

from treeopt_dsl.backends._exe import find_executable
from treeopt_dsl.backends.base import (
    Backend,
    Outcome,
    Run,
    SolveOptions,
    status_of,
)
from treeopt_dsl.backends.dialects import dialect
from treeopt_dsl.backends.linopy import _feasible, check_empty_rows, column_families, families, row_activity
from treeopt_dsl.backends.native import settle_infeasible_or_unbounded
from treeopt_dsl.errors import CapabilityError, ModelTooLarge, SolverNotAvailable
from treeopt_dsl.ir import StandardForm
from treeopt_dsl.ir.labels import expand, shape_of
from treeopt_dsl.result import Status

_ALL = ("highs", "gurobi", "scip", "cbc", "ipopt")
_CLASSES = {"highs": frozenset({"LP", "MILP", "QP"}), "gurobi": frozenset({"LP", "MILP", "QP", "MIQP"}),
            "scip": frozenset({"LP", "MILP", "QP", "MIQP"}), "cbc": frozenset({"LP", "MILP"}),
            "ipopt": frozenset({"LP", "QP", "NLP"})}
_CONTRIB = {"highs": "highs", "gurobi": "gurobi_persistent", "scip": "scip_direct", "ipopt": "ipopt"}
_BASE_FEATURES = frozenset({"time_limit", "gap", "threads", "log", "export"})
_WARM = frozenset({"gurobi", "scip", "cbc"})
#: what the solver logs when it used a MIP start (SCIP's log says nothing: a start it was given counts)
_START_SEEN = {"gurobi": re.compile(r"Loaded user MIP start with objective|User MIP start produced solution"),
               "cbc": re.compile(r"MIPStart provided solution with cost")}


class _LogStream(io.TextIOBase):
    """A text stream pyomo can ``tee`` into: each complete line goes to ``log_callback`` (and to
    stderr when ``verbose``), so ``--log FILE`` and progress work through pyomo too."""

    def __init__(self, callback: Any, echo: bool) -> None:
        self.callback, self.echo, self._buf = callback, echo, ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.echo:
            sys.stderr.write(text)
        self._buf += text
        *lines, self._buf = self._buf.split("\n")
        for line in lines:
            self.callback(line)
        return len(text)

    def flush(self) -> None:
        if self._buf:
            self.callback(self._buf)
            self._buf = ""


def _tee(o: SolveOptions) -> Any:
    return _LogStream(o.log_callback, bool(o.verbose)) if o.log_callback is not None else bool(o.verbose)


def _pyomo_installed() -> bool:
    """Whether pyomo is installed, without importing it (the import is paid where pyomo is used)."""
    return importlib.util.find_spec("pyomo") is not None


# ---------------------------------------------------------------------------------------- export
def _index(dims: tuple[str, ...], coords: dict[str, Any]) -> list:
    """A family's coordinates as Pyomo index keys (label tuples, a bare label for one dimension), in
    the C order of the standard form. Falls back to integer positions if labels repeat."""
    import itertools

    labels = [np.asarray(coords[d]).tolist() for d in dims]
    keys = list(itertools.product(*labels))
    if len(set(keys)) != len(keys):
        keys = list(itertools.product(*[range(len(lab)) for lab in labels]))
    if len(dims) == 1:
        keys = [k[0] for k in keys]
    return keys


def _component_name(model: Any, name: str) -> str:
    """``name`` unless it clashes with an attribute of ``ConcreteModel`` (then ``name_``)."""
    while hasattr(model, name):
        name += "_"
    return name


def to_pyomo(sf: StandardForm) -> Any:
    """The standard form as a ``pyomo.environ.ConcreteModel``.

    One indexed ``Var`` per column family (named after it, indexed by the family's coordinate labels:
    a label for one dimension, a tuple of labels for several, a scalar ``Var`` for none), one indexed
    ``Constraint`` per row family (indexed by the labels of its kept entries; ranged rows stay one
    ranged constraint), and ``objective`` = ``c.x + ½ xᵀQx + c0`` minimized. A family whose name is
    already an attribute of ``ConcreteModel`` gets a trailing ``_``; columns and rows of a hand-made
    form that no family covers go to the flat families ``x`` / ``c``. Rows without terms (or without
    a finite side) are left out; one that excludes 0 raises :class:`ModelError`. ``model.x_cols``
    lists the variable of every standard-form column, so ``np.array([v.value for v in
    model.x_cols])`` is the solution in the formulation's column order.

    Pyomo builds a Python object per variable, row and term whatever the route (``Constraint(rule=)``,
    ``LinearExpression``, or the ``pyomo.kernel`` ``matrix_constraint``, which lives in the separate
    kernel modelling layer that ``pyomo.environ`` solvers and users' ``ConcreteModel`` code do not
    mix with); each row here is one ``LinearExpression`` made straight from its CSR slice, one
    comprehension per family, which skips Pyomo's expression generation.
    """
    import pyomo.environ as pe
    from pyomo.core.expr.numeric_expr import LinearExpression

    check_empty_rows(sf)
    m = pe.ConcreteModel(name=sf.name)
    cols: list[Any] = [None] * sf.n_cols
    inf = math.inf
    for fam, dims, coords, pos in column_families(sf):
        flat = pos.ravel()
        integer = bool(sf.integrality[flat].any())
        lo, up = sf.col_lower[flat], sf.col_upper[flat]
        binary = integer and bool(np.all(lo >= 0) and np.all(up <= 1))
        domain = pe.Binary if binary else (pe.Integers if integer else pe.Reals)
        name = _component_name(m, fam)
        var = pe.Var(_index(dims, coords), domain=domain, dense=True) if dims else pe.Var(domain=domain)
        m.add_component(name, var)
        datas = list(var.values())
        for vd, lb, ub in zip(datas, lo.tolist(), up.tolist(), strict=True):
            vd.setlb(None if lb == -inf else lb)
            vd.setub(None if ub == inf else ub)
        for j, vd in zip(flat.tolist(), datas, strict=True):
            cols[j] = vd
    m.x_cols = cols  # plain attribute: the column -> VarData map

    A = sf.A.tocsr()
    ind, ptr, dat = A.indices, A.indptr, A.data
    carried, _ = row_activity(sf)
    for fam, dims, coords, pos in families(sf.rows, sf.n_rows, "c", "_row"):
        idx = pos.ravel()
        ent = np.flatnonzero(idx >= 0)
        ent = ent[carried[idx[ent]]]
        if ent.size == 0:
            continue
        if dims:
            all_keys = _index(dims, coords)
            keys = [all_keys[e] for e in ent.tolist()]
        else:
            keys = [None]
        rows = idx[ent].tolist()
        lo = [None if v == -inf else v for v in sf.row_lower[idx[ent]].tolist()]
        up = [None if v == inf else v for v in sf.row_upper[idx[ent]].tolist()]
        # one comprehension per family: a row's expression straight from its CSR slice
        body = {k: (lw, LinearExpression(constant=0.0, linear_coefs=dat[ptr[r]:ptr[r + 1]].tolist(),
                                         linear_vars=[cols[j] for j in ind[ptr[r]:ptr[r + 1]].tolist()]), uw)
                for k, r, lw, uw in zip(keys, rows, lo, up, strict=True)}
        name = _component_name(m, fam)
        if dims:
            m.add_component(name, pe.Constraint(list(body), rule=lambda _m, *k, body=body: body[k[0] if len(k) == 1
                                                                                               else k]))
        else:
            m.add_component(name, pe.Constraint(expr=body[None]))

    nz = np.flatnonzero(sf.c)
    obj: Any = LinearExpression(constant=float(sf.c0), linear_coefs=sf.c[nz].tolist(),
                                linear_vars=[cols[j] for j in nz.tolist()])
    if sf.is_quadratic:
        from scipy.sparse import triu

        U = triu(sf.Q, format="coo")  # ½ xᵀQx = Σ_{i<j} Q_ij x_i x_j + Σ_i ½ Q_ii x_i²
        qc = (np.where(U.row == U.col, 0.5, 1.0) * U.data).tolist()
        obj = obj + sum(q * cols[i] * cols[j] for q, i, j in zip(qc, U.row.tolist(), U.col.tolist(), strict=True))
    if sf.nonlinear or sf.nl_constraints:
        xs = np.empty(sf.n_cols + 1, dtype=object)
        xs[:-1] = cols
        xs[-1] = 0.0  # id -1 (padding) reads 0, as in LinExpr.evaluate
        for term in sf.nonlinear.values():
            obj = obj + _total(pyomo_values(term, xs))
        for name, con in sf.nl_constraints.items():
            vals = np.asarray(pyomo_values(con.expr, xs), dtype=object).ravel()
            body = {k: (None if lo == -inf else lo, v, None if up == inf else up)
                    for k, (v, lo, up) in enumerate(zip(vals, con.lower.ravel().tolist(), con.upper.ravel().tolist(),
                                                        strict=True))}
            m.add_component(_component_name(m, name), pe.Constraint(list(body), rule=lambda _m, k, b=body: b[k]))
    m.add_component(_component_name(m, "objective"), pe.Objective(expr=obj, sense=pe.minimize))
    return m


def pyomo_values(expr: Any, xs: np.ndarray) -> Any:
    """An ``NLExpr`` as a numpy object array of Pyomo expressions over the variables ``xs`` (column
    order, plus a trailing 0 for padding ids): the numpy evaluation rules applied to Pyomo objects,
    so the Pyomo model computes exactly what the IR does (one Python object per entry, as Pyomo
    needs anyway)."""
    import pyomo.environ as pe


    unary = {"exp": pe.exp, "log": pe.log, "log1p": lambda v: pe.log(1 + v), "neg": lambda v: -v,
             "logistic": lambda v: 0.5 * (1 + pe.tanh(0.5 * v)), "softplus": lambda v: pe.log(1 + pe.exp(v))}

    def visit(node: Any, args: tuple) -> Any:
        op = node.op
        if op == "linear":
            e = node.args[0]
            return (np.asarray(e.coef, dtype=float) * xs[e.vars]).sum(-1) + np.broadcast_to(e.const, e.shape)
        if op == "quadratic":
            q = node.args[0]
            return (q.qcoef * xs[q.qi] * xs[q.qj]).sum(-1) + visit(type(node)("linear", (q.lin,), q.lin.dims,
                                                                               q.lin.coords), ())
        if op == "const":
            return np.asarray(node.args[0], dtype=float)
        if op in unary:
            return np.frompyfunc(unary[op], 1, 1)(args[0])
        shape = shape_of(node.dims, node.coords)
        if op in ("+", "-", "*", "/"):
            a, b = (expand(np.asarray(v, dtype=object), c.dims, node.dims, shape)
                    for c, v in zip(node.args, args, strict=True))
            return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[op](a, b)
        (child,) = node.args
        v = np.asarray(args[0], dtype=object)
        if node.reduce_dim is None:
            return _total(v)
        return (np.sum if op == "sum" else np.prod)(v, axis=child.dims.index(node.reduce_dim))

    return expr.fold(visit)


def _total(v: Any) -> Any:
    """The sum of an object array's entries (a Pyomo expression), or ``v`` itself when it is one."""
    return sum(np.asarray(v, dtype=object).ravel().tolist()) if isinstance(v, np.ndarray) else v


def solution_vector(m: Any, sf: StandardForm) -> np.ndarray:
    """The values of a model made by :func:`to_pyomo` as a standard-form column vector (NaN where a
    variable has none). A column in no row and not in the objective never reaches the solver: any
    value in its bounds is optimal, it gets the one nearest 0 (integral for an integer column)."""
    vals = np.array([np.nan if vd.value is None else vd.value for vd in m.x_cols], dtype=float)
    unused = np.isnan(vals) & (sf.c == 0) & (np.diff(sf.A.tocsc().indptr) == 0)
    if sf.is_quadratic:
        unused &= np.diff(sf.Q.tocsc().indptr) == 0
    lo = np.where(sf.integrality > 0, np.ceil(sf.col_lower), sf.col_lower)
    vals[unused] = np.clip(0.0, lo, sf.col_upper)[unused]
    return vals


# ---------------------------------------------------------------------------------------- backend
class PyomoBackend(Backend):
    """Solve through Pyomo (``--backend pyomo``). See the module docstring for the support table."""

    name = "pyomo"
    solvers = _ALL
    problem_classes = frozenset({"LP", "MILP", "QP", "MIQP"})
    extra = "pyomo"
    features = _BASE_FEATURES | {"warm_start", "seed"}
    #: pyomo's solve is not stopped from outside: SIGINT/SIGTERM end the solve with ``KeyboardInterrupt``
    #: (no "interrupt" feature; a CBC child process gets a terminal's Ctrl-C itself); calling thread
    threaded = False

    @classmethod
    def available(cls) -> bool:
        return _pyomo_installed()

    @classmethod
    def solver_available(cls, solver: str) -> bool:
        if solver not in _ALL or not _pyomo_installed():
            return False
        if solver in ("cbc", "ipopt"):
            return find_executable(solver) is not None
        if solver == "gurobi":
            mod = "gurobipy"
        elif solver == "scip":
            mod = "pyscipopt"
        else:
            mod = "highspy"
        return importlib.util.find_spec(mod) is not None

    @classmethod
    def classes_for(cls, solver: str) -> frozenset[str]:
        return _CLASSES.get(solver, frozenset())

    @classmethod
    def features_for(cls, solver: str) -> frozenset[str]:
        f = set(_BASE_FEATURES)
        if solver in _WARM:
            f.add("warm_start")
        if solver in ("highs", "gurobi", "scip", "cbc"):
            f.add("seed")
        if solver == "ipopt":
            f -= {"gap"}
            f.add("warm_start")
        return frozenset(f)

    @staticmethod
    def to_pyomo(sf: StandardForm) -> Any:
        return to_pyomo(sf)

    # ------------------------------------------------------------------ protocol hooks
    def require_installed(self, solver: str) -> None:
        if not self.solver_available(solver):
            raise SolverNotAvailable(
                f"pyomo cannot drive {solver!r} here: `pip install treeopt-dsl[pyomo,{solver}]`"
                + (f" and put an `{solver}` executable on PATH" if solver in ("ipopt",) else ""))

    def require_class(self, sf: StandardForm, solver: str) -> None:
        if sf.problem_class not in self.classes_for(solver):
            raise CapabilityError(f"pyomo with {solver} cannot solve a {sf.problem_class} model")

    def settle(self, run: Run) -> Outcome | None:
        if row_activity(run.sf)[1].any():  # pyomo cannot carry the term-less row "0 >= 1"
            return Outcome("infeasible", message="pyomo: a row without terms excludes 0", accepted=False)
        return None

    def load_model(self, run: Run) -> None:
        run.model = to_pyomo(run.sf)
        run.data["extra"] = {}

    def set_option(self, run: Run, name: str, value: Any) -> None:
        dialect(run.solver).check_option(name, value)
        run.data["extra"][name] = value

    def known_options(self, run: Run) -> list[str]:
        return dialect(run.solver).option_names()

    def set_start(self, run: Run, start: np.ndarray) -> bool:
        if not (run.solver in _WARM or run.solver == "ipopt"):  # Ipopt starts from the variables' values
            return False
        for vd, v in zip(run.model.x_cols, start.tolist(), strict=True):
            if math.isfinite(v):
                vd.set_value(v, skip_validation=True)
        return True

    def run(self, run: Run) -> None:
        o = replace(run.options, extra=run.data["extra"], log_callback=run.emit)
        warm = run.options.warm_start is not None and run.start_loaded is True
        if run.solver == "cbc":
            run.data["out"] = self._solve_cbc(run.model, run.sf, o, warm)
        else:
            run.data["out"] = self._solve_contrib(run.model, run.sf, run.solver, o, warm)

    def read_solution(self, run: Run) -> Outcome:
        sf = run.sf
        status, has_x, obj_bound, message = run.data["out"]
        x = None
        if has_x:
            vals = solution_vector(run.model, sf)
            x = vals if np.all(np.isfinite(vals)) else None
            if x is not None and status is not Status.OPTIMAL and not _feasible(sf, x):
                x = None  # at a limit CBC may hand back the LP relaxation's point: not an incumbent
        if status is Status.OPTIMAL and x is None:
            status = Status.ERROR
        if status in (Status.TIME_LIMIT, Status.TIME_LIMIT_NO_SOLUTION):
            status = None  # the template settles it from the point
        bound = None if run.solver == "ipopt" else obj_bound
        outcome = "limit" if status is None else "optimal"
        return Outcome(outcome, x, None, bound, message, status=status)

    @classmethod
    def start_pattern_for(cls, solver: str) -> re.Pattern[str] | None:
        return _START_SEEN.get(solver)

    def translate_error(self, run: Run, exc: Exception) -> Exception | None:
        if "size-limited" in str(exc) or "Model too large" in str(exc):
            return ModelTooLarge(f"gurobi's pip licence is size-limited: {exc}")
        return None

    # -------------------------------------------------------------------- the new interface
    @staticmethod
    def _solve_contrib(m: Any, sf: StandardForm, solver: str, o: SolveOptions,
                       warm: bool) -> tuple[Status, bool, float | None, str]:
        from pyomo.contrib.solver.common.factory import SolverFactory
        from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

        kw: dict[str, Any] = {"load_solutions": False, "raise_exception_on_nonoptimal_result": False,
                              "tee": _tee(o)}
        if o.time_limit is not None:
            kw["time_limit"] = float(o.time_limit)
        if o.gap is not None and solver != "ipopt":
            kw["rel_gap"] = float(o.gap)
        if o.threads is not None:
            kw["threads"] = int(o.threads)
        # the solver's own parameters (its dialect, as on every route) but those pyomo takes as keywords above
        sopts: dict[str, Any] = dialect(solver).native(sf, o, skip=("time_limit", "gap", "threads"))
        sopts.update(o.extra)
        if sopts:
            kw["solver_options"] = sopts
        if warm and solver != "ipopt":
            kw["warmstart_discrete_vars"] = True
        if solver == "ipopt":
            kw["executable"] = find_executable("ipopt")
        opt = SolverFactory(_CONTRIB[solver])
        res = opt.solve(m, **kw)
        tc, ss = res.termination_condition, res.solution_status
        has_sol = ss in (SolutionStatus.feasible, SolutionStatus.optimal)
        if has_sol:
            res.solution_loader.load_vars()
        T = TerminationCondition
        limits = (T.maxTimeLimit, T.iterationLimit, T.objectiveLimit, T.interrupted, T.minStepLength)
        outcome = ("optimal" if tc in (T.convergenceCriteriaSatisfied, T.emptyModel) else
                   "limit" if tc in limits else
                   "infeasible" if tc in (T.provenInfeasible, T.locallyInfeasible) else
                   "unbounded" if tc == T.unbounded else
                   "infeasible_or_unbounded" if tc == T.infeasibleOrUnbounded else "error")
        status = status_of(outcome, has_sol, sf)
        bound = None
        with contextlib.suppress(Exception):
            bound = float(res.objective_bound) if res.objective_bound is not None else None
        return status, has_sol, bound, f"pyomo/{_CONTRIB[solver]}: {tc.name}"

    # -------------------------------------------------------------------- CBC (shell interface)
    @staticmethod
    def _solve_cbc(m: Any, sf: StandardForm, o: SolveOptions, warm: bool) -> tuple[Status, bool, float | None, str]:
        import pyomo.environ as pe
        from pyomo.opt import SolverFactory, SolverStatus, TerminationCondition

        if next(m.component_data_objects(pe.Constraint, active=True), None) is None:
            # without a row pyomo's LP file holds only its ONE_VAR_CONSTANT row, which CBC leaves out
            # of its solution file, and pyomo then reads the column values as row values (none load):
            # give CBC one harmless row on an extra column
            m.treeopt_anchor_col = pe.Var(bounds=(0, 1))
            m.treeopt_anchor_row = pe.Constraint(expr=m.treeopt_anchor_col <= 1)
        opt = SolverFactory("cbc", executable=find_executable("cbc"))
        for k, v in dialect("cbc").native(sf, o).items():  # CBC's command-line names, as on every route
            opt.options[k] = v
        for k, v in o.extra.items():
            opt.options[k] = v
        if o.log_callback is not None:  # the shell interface tees to sys.stdout: point it at the log
            stream = _LogStream(o.log_callback, bool(o.verbose))
            with contextlib.redirect_stdout(stream):
                res = opt.solve(m, tee=True, load_solutions=False, warmstart=warm)
            stream.flush()
        else:
            res = opt.solve(m, tee=bool(o.verbose), load_solutions=False, warmstart=warm)
        tc = res.solver.termination_condition
        T = TerminationCondition
        n_sol = len(res.solution)
        if n_sol:
            m.solutions.load_from(res)
        if tc == T.optimal:
            status = Status.OPTIMAL
        elif tc in (T.maxTimeLimit, T.maxIterations, T.maxEvaluations, T.intermediateNonInteger, T.userInterrupt):
            status = Status.TIME_LIMIT if n_sol else Status.TIME_LIMIT_NO_SOLUTION
        elif tc in (T.infeasible, T.noSolution) and res.solver.status != SolverStatus.aborted:
            status = Status.INFEASIBLE
        elif tc == T.unbounded:
            status = Status.UNBOUNDED
        elif tc == T.infeasibleOrUnbounded:
            status = settle_infeasible_or_unbounded(sf)
        else:
            status = Status.ERROR
        bound = None
        with contextlib.suppress(Exception):
            lb = res.problem.lower_bound
            bound = float(lb) if lb is not None else None
        return status, bool(n_sol), bound, f"pyomo/cbc: {tc}"


BACKENDS = [PyomoBackend]
