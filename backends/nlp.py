"""Ipopt with pip alone: the NLP backend through CasADi.

Why CasADi (``pip install treeopt-dsl[nlp]``): its wheels bundle Ipopt 3.14 with MUMPS *and* an
automatic-differentiation engine, so the exact gradient, Jacobian and Hessian of the Lagrangian
come from the expression graph -- nothing hand-written per formulation, no finite differences.
``cyipopt-wheels`` also bundles Ipopt but expects the derivatives as Python callbacks: we would
need a second AD library (JAX) and pay a Python call per Ipopt iteration. CasADi evaluates the
derivatives in C.

The translation is vectorized: every node of a :class:`~treeopt_dsl.ir.nonlinear.NLExpr` becomes
one CasADi column vector (its entries in C order over the node's dimensions). A linear leaf is a
sparse matrix times ``x``; broadcasting and reductions are index gathers and sparse sums computed
with numpy; only ``prod`` along a dimension loops, over that dimension's length (the tree depth).
The linear rows of the standard form go in as one sparse product ``A x``; nonlinear constraint
families (:class:`~treeopt_dsl.ir.nonlinear.NLConstraint`) follow them in ``g``.

The compiled solver is cached per model *structure* (a fingerprint of everything but the linear
objective ``c``, which is a parameter): a multistart or a grid over regularization weights builds
the derivatives once and re-solves.

Options: ``time_limit`` (Ipopt's ``max_wall_time``), ``verbose``/``log_callback`` (Ipopt's log, via
its output file), ``feasibility_tol`` (``constr_viol_tol``), and through ``extra``: ``max_iter``
[3000], ``tol`` [1e-8], ``print_level`` [5 when logging], ``linear_solver`` [mumps; ``ma27`` etc.
when an HSL library is installed], or any ``ipopt.<name>`` option. The status is ``local_optimum`` for a
point satisfying Ipopt's KKT conditions on a nonlinear model (nothing proves it global) and ``optimal``
on a linear or quadratic one.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import time
from collections import OrderedDict
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp

from treeopt_dsl.backends.base import Backend, Outcome, Run
from treeopt_dsl.backends.dialects import UnknownOption, dialect
from treeopt_dsl.backends.linopy import row_activity
from treeopt_dsl.backends.native import importable
from treeopt_dsl.errors import CapabilityError, OptionError, SolveError
from treeopt_dsl.ir import StandardForm
from treeopt_dsl.ir.labels import expand, shape_of
from treeopt_dsl.result import Status

_LIMITS = {"Maximum_Iterations_Exceeded", "Maximum_CpuTime_Exceeded", "Maximum_WallTime_Exceeded"}
_OPTIMAL = {"Solve_Succeeded", "Solved_To_Acceptable_Level"}
_INFEASIBLE = {"Infeasible_Problem_Detected"}
_UNBOUNDED = {"Diverging_Iterates"}  # Ipopt's sign of an objective unbounded below on the feasible set


def _sparse_dm(M: sp.spmatrix) -> Any:
    """A scipy sparse matrix as a CasADi ``DM`` with the same sparsity (CSC)."""
    import casadi as ca

    M = sp.csc_matrix(M)
    M.sort_indices()
    sparsity = ca.Sparsity(M.shape[0], M.shape[1], M.indptr.astype(np.int64).tolist(),
                           M.indices.astype(np.int64).tolist())
    return ca.DM(sparsity, M.data.astype(float).tolist())


def _linear_matrix(coef: np.ndarray, vars_: np.ndarray, n: int) -> sp.csr_matrix:
    """Rows = entries of a linear expression (C order), columns = model columns."""
    size = int(np.prod(coef.shape[:-1], dtype=np.int64)) if coef.ndim else 1
    T = coef.shape[-1] if coef.ndim else 1
    c, v = coef.reshape(size, T), vars_.reshape(size, T)
    rows = np.repeat(np.arange(size), T).reshape(size, T)
    keep = (v >= 0) & (c != 0)
    return sp.csr_matrix((c[keep], (rows[keep], v[keep])), shape=(size, n))


class CasadiTranslator:
    """``NLExpr`` -> CasADi ``SX`` column vectors over the symbol ``x`` (see the module doc)."""

    def __init__(self, x: Any, n: int) -> None:
        self.x, self.n = x, n

    def __call__(self, expr: Any) -> Any:
        return expr.fold(self.visit)

    @staticmethod
    def _shape(node: Any) -> tuple[int, ...]:
        return shape_of(node.dims, node.coords)

    def _to(self, child: Any, value: Any, node: Any) -> Any:
        """``value`` (over ``child.dims``) broadcast to ``node.dims`` by an index gather."""
        if tuple(child.dims) == tuple(node.dims):
            return value
        cshape = self._shape(child)
        idx = expand(np.arange(int(np.prod(cshape, dtype=np.int64))).reshape(cshape), child.dims, node.dims,
                     self._shape(node))
        return value[np.ascontiguousarray(idx).ravel().tolist(), 0]  # (list, 0): a column even from 1 x 1

    def visit(self, node: Any, args: tuple) -> Any:
        import casadi as ca

        op = node.op
        if op == "linear":
            e = node.args[0]
            M = _linear_matrix(np.asarray(e.coef, dtype=float), np.asarray(e.vars), self.n)
            const = np.broadcast_to(e.const, e.shape).ravel()
            return ca.mtimes(_sparse_dm(M), self.x) + ca.DM(const.astype(float))
        if op == "quadratic":
            q = node.args[0]
            size = int(np.prod(q.qcoef.shape[:-1], dtype=np.int64)) if q.qcoef.ndim else 1
            qc, qi, qj = (np.asarray(a).reshape(size, -1) for a in (q.qcoef, q.qi, q.qj))
            keep = (qi >= 0) & (qj >= 0) & (qc != 0)
            rows = np.broadcast_to(np.arange(size)[:, None], qc.shape)[keep]
            prods = ca.DM(qc[keep].astype(float)) * self.x[qi[keep].tolist(), 0] * self.x[qj[keep].tolist(), 0]
            S = sp.csr_matrix((np.ones(rows.size), (rows, np.arange(rows.size))), shape=(size, rows.size))
            lin = self.visit(type(node)("linear", (q.lin,), q.lin.dims, q.lin.coords), ())
            return ca.mtimes(_sparse_dm(S), prods) + lin
        if op == "const":
            arr = np.asarray(node.args[0], dtype=float)
            return ca.DM(np.broadcast_to(arr, self._shape(node)).ravel())
        if op == "neg":
            return -args[0]
        if op == "exp":
            return ca.exp(args[0])
        if op == "log":
            return ca.log(args[0])
        if op == "log1p":
            return ca.log1p(args[0])
        if op == "logistic":  # (1 + tanh(v/2)) / 2: no overflow in the value or its derivatives
            return 0.5 * (1.0 + ca.tanh(0.5 * args[0]))
        if op == "softplus":
            return ca.log1p(ca.exp(args[0]))
        if op in ("+", "-", "*", "/"):
            a, b = (self._to(c, v, node) for c, v in zip(node.args, args, strict=True))
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op]
        if op in ("sum", "prod"):
            (child,) = node.args
            v = args[0]
            if node.reduce_dim is None:
                if op == "prod":
                    raise CapabilityError("a product over every entry is not supported; give a dimension")
                return ca.sum1(v)
            cshape = self._shape(child)
            ax = child.dims.index(node.reduce_dim)
            pos = np.arange(int(np.prod(cshape, dtype=np.int64))).reshape(cshape)
            if op == "sum":
                out_shape = tuple(int(k) for k in np.delete(np.asarray(cshape), ax))
                n_out = int(np.prod(out_shape, dtype=np.int64))
                out = np.broadcast_to(np.expand_dims(np.arange(n_out).reshape(out_shape), ax), cshape)
                S = sp.csr_matrix((np.ones(pos.size), (out.ravel(), pos.ravel())), shape=(n_out, pos.size))
                return ca.mtimes(_sparse_dm(S), v)
            result = None
            for j in range(cshape[ax]):
                part = v[np.take(pos, j, axis=ax).ravel().tolist(), 0]
                result = part if result is None else result * part
            return result
        raise CapabilityError(f"the NLP backend cannot translate the operation {op!r}")


def fingerprint(sf: StandardForm) -> str:
    """A hash of the model's structure: everything but the linear objective ``c``."""
    h = hashlib.sha1()

    def arr(a: Any) -> None:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())

    A = sf.A.tocsr()
    for a in (A.indptr, A.indices, A.data, sf.row_lower, sf.row_upper, sf.col_lower, sf.col_upper, sf.integrality):
        arr(a)
    if sf.Q is not None:
        Q = sf.Q.tocsr()
        for a in (Q.indptr, Q.indices, Q.data):
            arr(a)

    def visit(node: Any, args: tuple) -> None:
        h.update(f"{node.op}|{node.dims}|{node.reduce_dim}|{tuple(len(node.coords[d]) for d in node.dims)}".encode())
        if node.op == "linear":
            e = node.args[0]
            arr(e.coef)
            arr(e.vars)
            arr(np.broadcast_to(e.const, e.shape))
        elif node.op == "const":
            arr(np.asarray(node.args[0], dtype=float))
        elif node.op == "quadratic":
            q = node.args[0]
            for a in (q.qi, q.qj, q.qcoef, q.lin.coef, q.lin.vars, np.broadcast_to(q.lin.const, q.lin.shape)):
                arr(a)

    for name in sorted(sf.nonlinear):
        h.update(name.encode())
        sf.nonlinear[name].fold(visit)
    for name in sorted(sf.nl_constraints):
        c = sf.nl_constraints[name]
        h.update(name.encode())
        c.expr.fold(visit)
        arr(c.lower)
        arr(c.upper)
    return h.hexdigest()


class CompiledNLP:
    """The CasADi/Ipopt problem of a standard form, built once, solved from any start and any ``c``."""

    def __init__(self, sf: StandardForm) -> None:
        import casadi as ca

        t0 = time.perf_counter()
        n = sf.n_cols
        self.n = n
        x = ca.SX.sym("x", n)
        c = ca.SX.sym("c", n)
        tr = CasadiTranslator(x, n)
        f = ca.dot(c, x)
        if sf.is_quadratic:
            f = f + 0.5 * ca.dot(x, ca.mtimes(_sparse_dm(sf.Q), x))
        for term in sf.nonlinear.values():
            f = f + ca.sum1(tr(term))
        keep, _ = row_activity(sf)  # rows with terms and a finite side (term-less rows are settled before)
        parts, lbg, ubg = [], [], []
        if keep.any():
            parts.append(ca.mtimes(_sparse_dm(sf.A.tocsr()[keep]), x))
            lbg.append(sf.row_lower[keep])
            ubg.append(sf.row_upper[keep])
        for con in sf.nl_constraints.values():
            parts.append(tr(con.expr))
            lbg.append(con.lower.ravel())
            ubg.append(con.upper.ravel())
        g = ca.vertcat(*parts) if parts else ca.SX(0, 1)
        self.lbg = np.concatenate(lbg) if lbg else np.zeros(0)
        self.ubg = np.concatenate(ubg) if ubg else np.zeros(0)
        self.lbx, self.ubx = sf.col_lower.astype(float), sf.col_upper.astype(float)
        self.c0 = float(sf.c0)
        self.problem = {"x": x, "p": c, "f": f, "g": g}
        self.build_s = time.perf_counter() - t0
        self._solvers: dict[tuple, tuple[dict[str, Any], Any]] = {}

    # functions for tests and diagnostics, built on first use (Ipopt derives its own from ``problem``)
    @cached_property
    def f_fun(self) -> Any:
        """``(x, c) -> (f, grad f)``."""
        import casadi as ca

        x, c, f = self.problem["x"], self.problem["p"], self.problem["f"]
        return ca.Function("f", [x, c], [f, ca.gradient(f, x)])

    @cached_property
    def hess_fun(self) -> Any:
        """``(x, c) -> Hessian of f``."""
        import casadi as ca

        x, c, f = self.problem["x"], self.problem["p"], self.problem["f"]
        return ca.Function("h", [x, c], [ca.hessian(f, x)[0]])

    @cached_property
    def g_fun(self) -> Any:
        """``x -> (g, Jacobian of g)``."""
        import casadi as ca

        x, g = self.problem["x"], self.problem["g"]
        return ca.Function("g", [x], [g, ca.jacobian(g, x)])

    def solver(self, opts: dict[str, Any]) -> Any:
        """The Ipopt solver of ``opts``: one per set of options, the per-solve ones (:data:`PER_SOLVE`: the time
        left, a log file) aside. A cached solver is reused while its time limits are at most the ones asked and
        at least 90 % of them (the limit is never exceeded), else rebuilt in its place: a multistart whose every
        start has a little less time left builds one solver, not one per start (each kept its derivatives: 100 MB
        per start on a 600-row S-ORCT of depth 2, until a path ran out of memory)."""
        import casadi as ca

        key = tuple(sorted((k, str(v)) for k, v in opts.items() if k not in PER_SOLVE))
        per = {k: opts[k] for k in PER_SOLVE if k in opts}
        hit = self._solvers.get(key)
        if hit is not None and _reusable(hit[0], per):
            return hit[1]
        s = ca.nlpsol("treeopt", "ipopt", self.problem, opts)
        self._solvers[key] = (per, s)
        return s

    def evaluate(self, x: np.ndarray, c: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """Objective (with ``c0``), its gradient, the constraint values and their Jacobian at ``x``."""
        f, grad = self.f_fun(x, c)
        g, J = self.g_fun(x)
        return float(f) + self.c0, np.asarray(grad).ravel(), np.asarray(g).ravel(), np.asarray(J.full())


#: Ipopt options that change from solve to solve: not part of a cached solver's key (see :meth:`CompiledNLP.solver`)
PER_SOLVE = ("ipopt.max_wall_time", "ipopt.max_cpu_time", "ipopt.output_file")


def _reusable(cached: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether a solver built with the per-solve options ``cached`` serves ``wanted``: the same log file, and
    time limits at most the ones wanted and at least 90 % of them."""
    if set(cached) != set(wanted):
        return False
    for k, v in wanted.items():
        if k == "ipopt.output_file":
            if cached[k] != v:
                return False
        elif not 0.9 * float(v) <= float(cached[k]) <= float(v):
            return False
    return True


#: compiled NLPs by structure fingerprint (a few, least recently used dropped first)
_CACHE: OrderedDict[str, CompiledNLP] = OrderedDict()
_CACHE_SIZE = 4


def compiled(sf: StandardForm) -> CompiledNLP:
    """The cached :class:`CompiledNLP` of ``sf``'s structure (built on first use)."""
    key = getattr(sf, "_nlp_key", None) or fingerprint(sf)
    sf._nlp_key = key  # type: ignore[attr-defined]
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    nlp = CompiledNLP(sf)
    _CACHE[key] = nlp
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return nlp


def _start(sf: StandardForm, warm: np.ndarray | None) -> np.ndarray:
    """The initial point: the warm start where known, else the middle of the bounds (0 if free)."""
    lo, up = sf.col_lower, sf.col_upper
    mid = np.where(np.isfinite(lo) & np.isfinite(up), 0.5 * (lo + up),
                   np.where(np.isfinite(lo), lo, np.where(np.isfinite(up), up, 0.0)))
    if warm is None:
        return mid
    w = np.asarray(warm, dtype=float)
    return np.clip(np.where(np.isfinite(w), w, mid), lo, up)


class CasadiBackend(Backend):
    """Ipopt through CasADi. Interrupts: the solve runs in the calling thread; CasADi checks for Python
    signals between Ipopt iterations, where the handler raises ``KeyboardInterrupt``: CasADi turns it
    into Ipopt's "user requested stop" and the result is ``INTERRUPTED_NO_SOLUTION`` (or
    ``INTERRUPTED`` when the last iterate CasADi hands back is feasible)."""

    name = "casadi"
    solvers = ("ipopt",)
    problem_classes = frozenset({"LP", "QP", "NLP"})
    extra = "nlp"
    features = frozenset({"time_limit", "log", "warm_start", "interrupt"})
    threaded = False

    @classmethod
    def available(cls) -> bool:
        return importable("casadi")

    def settle(self, run: Run) -> Outcome | None:
        if row_activity(run.sf)[1].any():  # a row without terms that excludes 0, e.g. "0 >= 1"
            return Outcome("infeasible", message="ipopt: a row without terms excludes 0", accepted=None)
        return None

    def load_model(self, run: Run) -> None:
        run.model = compiled(run.sf)
        run.data["opts"] = {"print_time": False, "ipopt.sb": "yes", "ipopt.max_iter": 3000, "ipopt.tol": 1e-8,
                            "ipopt.print_level": 5 if run.options.verbose else 0}

    def native_options(self, run: Run) -> dict[str, Any]:
        """Ipopt's dialect under CasADi's spelling (``ipopt.`` before Ipopt's own names)."""
        return {f"ipopt.{k}": v for k, v in dialect("ipopt").native(run.sf, run.options).items()}

    def set_option(self, run: Run, name: str, value: Any) -> None:
        key = name if name.startswith("ipopt.") else f"ipopt.{name}"
        if key not in run.data["opts"]:  # the defaults above are known to be valid
            kind = type(value).__name__
            problem = _probe_option(key, str(value), kind if kind in ("int", "float", "bool") else "str")
            if problem is not None and "No such IPOPT option" in problem:
                raise UnknownOption(name)
            if problem is not None:
                raise OptionError(f"Ipopt refused {name}={value!r}: {problem}")
        run.data["opts"][key] = value

    def known_options(self, run: Run) -> tuple[str, ...]:
        return IPOPT_COMMON

    def set_start(self, run: Run, start: np.ndarray) -> bool:
        return True  # the initial point (see ``run``)

    def run(self, run: Run) -> None:
        nlp, o = run.model, run.options
        opts = dict(run.data["opts"])
        logfile = None
        if o.log_callback is not None:
            fd, logfile = tempfile.mkstemp(suffix=".ipopt.log")
            os.close(fd)
            opts["ipopt.output_file"] = logfile
            opts["ipopt.file_print_level"] = 5
        x0 = _start(run.sf, o.warm_start)
        try:
            s = nlp.solver(opts)
            out = s(x0=x0, p=run.sf.c.astype(float), lbx=nlp.lbx, ubx=nlp.ubx, lbg=nlp.lbg, ubg=nlp.ubg)
            run.data["out"], run.data["stats"] = out, s.stats()
        except (RuntimeError, KeyboardInterrupt) as exc:
            if run.stop_signal is None:
                raise SolveError(f"Ipopt (CasADi) failed: {exc}") from None
            run.data["stats"] = {"return_status": "User_Requested_Stop"}
        finally:
            if logfile is not None:
                with open(logfile, encoding="utf-8", errors="replace") as fh:
                    run.emit_text(fh.read())
                os.unlink(logfile)

    def request_stop(self, run: Run) -> None:
        raise KeyboardInterrupt(run.stop_signal)  # CasADi stops Ipopt at its next signal check

    def read_solution(self, run: Run) -> Outcome:
        nlp, sf, stats = run.model, run.sf, run.data["stats"]
        ret = str(stats.get("return_status", ""))
        msg = f"ipopt: {ret}, {stats.get('iter_count', '?')} iterations (derivatives built in {nlp.build_s:.2f} s)"
        out = run.data.get("out")
        if out is None:
            return Outcome("interrupted", message=msg, accepted=True)
        x = np.asarray(out["x"]).ravel()
        obj = float(out["f"]) + nlp.c0
        viol = _violation(nlp, sf, x, np.asarray(out["g"]).ravel())
        feasible = viol <= max(1e-6, 10 * float(run.options.feasibility_tol or 1e-6))
        if ret in _OPTIMAL:
            outcome = "optimal" if feasible else "error"
        elif ret in _LIMITS:
            outcome = "limit"
        elif ret in _INFEASIBLE:
            outcome = "infeasible"
        elif ret in _UNBOUNDED:
            outcome = "unbounded"
        elif ret == "User_Requested_Stop":
            outcome = "interrupted"
        else:
            outcome = "error"
        x = x if feasible else None
        # KKT on a nonconvex model proves a local optimum only; on a convex one (LP, QP) it is the optimum
        status = None
        if outcome == "optimal":
            status = Status.LOCAL_OPTIMUM if sf.problem_class == "NLP" else Status.OPTIMAL
        iterations = stats.get("iter_count")
        return Outcome(outcome, x, obj if x is not None else None, None, msg, accepted=True, status=status,
                       iterations=None if iterations is None else int(iterations))


#: Ipopt options often meant (suggestions for a misspelled name; CasADi cannot list Ipopt's options)
IPOPT_COMMON = ("max_iter", "tol", "print_level", "linear_solver", "max_wall_time", "max_cpu_time", "acceptable_tol",
                "constr_viol_tol", "mu_strategy", "hessian_approximation", "bound_relax_factor", "nlp_scaling_method",
                "acceptable_iter", "dual_inf_tol", "compl_inf_tol", "mu_init", "warm_start_init_point")


@functools.lru_cache(maxsize=256)
def _probe_option(key: str, value: str, kind: str) -> str | None:
    """``None`` if CasADi's Ipopt takes ``key`` with a value of this type, else its complaint (CasADi checks
    Ipopt's option names when it builds a solver: a tiny one is built to ask)."""
    import casadi as ca

    x = ca.SX.sym("x")
    typed: Any = {"int": int, "float": float, "bool": lambda v: v == "True"}.get(kind, str)(value)
    try:
        ca.nlpsol("probe", "ipopt", {"x": x, "f": x * x}, {"print_time": False, key: typed})
    except RuntimeError as exc:
        return str(exc).strip().splitlines()[-1]
    return None


def _violation(nlp: CompiledNLP, sf: StandardForm, x: np.ndarray, g: np.ndarray) -> float:
    worst = float(np.max(np.maximum(sf.col_lower - x, 0), initial=0.0))
    worst = max(worst, float(np.max(np.maximum(x - sf.col_upper, 0), initial=0.0)))
    if g.size:
        worst = max(worst, float(np.max(np.maximum(nlp.lbg - g, 0), initial=0.0)),
                    float(np.max(np.maximum(g - nlp.ubg, 0), initial=0.0)))
    return worst


BACKENDS = [CasadiBackend]
