"""Nonlinear expression nodes: a small tree over linear expressions, evaluated with numpy.

They carry the smooth pieces of the NLP formulations (the logistic CDF routing of randomized trees,
products of probabilities along a path, the exact logistic loss) without touching the linear path:
a model with nonlinear terms still compiles its linear rows to CSR; the nonlinear terms travel
beside the standard form for the NLP backends to translate (an AD library derives them).

>>> import numpy as np
>>> from treeopt_dsl.ir import Model
>>> m = Model()
>>> a = m.add_variables("a", ("t",), {"t": 2})
>>> e = prod(logistic(a * 2.0), "t")
>>> float(e.evaluate(np.zeros(2)))
0.25
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treeopt_dsl.errors import ModelError
from treeopt_dsl.ir.expr import ExprOps, QuadExpr
from treeopt_dsl.ir.labels import Coords, expand, labeled, shape_of, union

UNARY = {
    "exp": np.exp,
    "log": np.log,
    "log1p": np.log1p,
    "logistic": lambda v: 0.5 * (1.0 + np.tanh(0.5 * v)),
    "softplus": lambda v: np.logaddexp(0.0, v),
    "neg": np.negative,
}
BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}
REDUCE = {"sum": np.sum, "prod": np.prod}


class NLExpr:
    """A node: ``op`` with ``args`` (NLExpr, LinExpr or labeled constant), over ``dims``."""

    __slots__ = ("args", "coords", "dims", "op", "reduce_dim")
    __array_priority__ = 1000
    is_nonlinear = True

    def __init__(self, op: str, args: tuple[Any, ...], dims: tuple[str, ...], coords: Coords,
                 reduce_dim: str | None = None) -> None:
        self.op, self.args, self.dims, self.coords, self.reduce_dim = op, args, dims, coords, reduce_dim

    # -------------------------------------------------------------- construction
    @staticmethod
    def wrap(x: Any, like: NLExpr | None = None) -> NLExpr:
        if isinstance(x, NLExpr):
            return x
        if isinstance(x, ExprOps):
            e = x.to_expr()
            return NLExpr("linear", (e,), e.dims, e.coords)
        if isinstance(x, QuadExpr):
            return NLExpr("quadratic", (x,), x.dims, x.coords)
        dims, coords = (like.dims, like.coords) if like is not None else ((), {})
        arr, d_dims, d_coords = labeled(x, dims, coords)
        return NLExpr("const", (arr,), d_dims, d_coords)

    def _binary(self, op: str, other: Any, reflected: bool = False) -> NLExpr:
        b = NLExpr.wrap(other, self)
        a, b = (b, self) if reflected else (self, b)
        dims, coords = union(a.dims, a.coords, b.dims, b.coords)
        return NLExpr(op, (a, b), dims, coords)

    def __add__(self, o: Any) -> NLExpr:
        return self._binary("+", o)

    def __radd__(self, o: Any) -> NLExpr:
        return self._binary("+", o, True)

    def __sub__(self, o: Any) -> NLExpr:
        return self._binary("-", o)

    def __rsub__(self, o: Any) -> NLExpr:
        return self._binary("-", o, True)

    def __mul__(self, o: Any) -> NLExpr:
        return self._binary("*", o)

    def __rmul__(self, o: Any) -> NLExpr:
        return self._binary("*", o, True)

    def __truediv__(self, o: Any) -> NLExpr:
        return self._binary("/", o)

    def __rtruediv__(self, o: Any) -> NLExpr:
        return self._binary("/", o, True)

    def __neg__(self) -> NLExpr:
        return NLExpr("neg", (self,), self.dims, self.coords)

    # comparisons make nonlinear constraint families (``==`` stays identity: NLExpr is hashable)
    def __le__(self, o: Any) -> NLConstraint:
        return NLConstraint.from_sides(self, o, "<=")

    def __ge__(self, o: Any) -> NLConstraint:
        return NLConstraint.from_sides(self, o, ">=")

    def equals(self, o: Any) -> NLConstraint:
        return NLConstraint.from_sides(self, o, "==")

    def sum(self, dim: str | None = None) -> NLExpr:
        return _reduce("sum", self, dim)

    def prod(self, dim: str) -> NLExpr:
        return _reduce("prod", self, dim)

    # -------------------------------------------------------------- evaluation
    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Value at the point ``x`` (one entry per model column), shaped over ``dims``."""
        shape = shape_of(self.dims, self.coords)
        if self.op in ("linear", "quadratic"):
            return self.args[0].evaluate(x)
        if self.op == "const":
            return np.asarray(self.args[0], dtype=float)
        if self.op in UNARY:
            return UNARY[self.op](self.args[0].evaluate(x))
        if self.op in BINARY:
            a, b = self.args
            return BINARY[self.op](expand(a.evaluate(x), a.dims, self.dims, shape),
                                   expand(b.evaluate(x), b.dims, self.dims, shape))
        if self.op in REDUCE:
            (child,) = self.args
            if self.reduce_dim is None:
                return np.asarray(REDUCE[self.op](child.evaluate(x)))
            return REDUCE[self.op](child.evaluate(x), axis=child.dims.index(self.reduce_dim))
        raise ModelError(f"unknown nonlinear operation {self.op!r}")  # pragma: no cover

    def fold(self, visit: Any) -> Any:
        """Translate the tree bottom-up: ``visit(node, args)`` gets every node with its translated
        arguments (``linear``/``quadratic``/``const`` nodes get ``()`` and read ``node.args[0]``).
        The NLP backends use this to build their own expression graph (CasADi, Pyomo)."""
        if self.op in ("linear", "quadratic", "const"):
            return visit(self, ())
        return visit(self, tuple(a.fold(visit) for a in self.args))

    def variables(self) -> np.ndarray:
        """Ids of the columns this expression depends on."""
        if self.op == "linear":
            v = self.args[0].vars
            return np.unique(v[v >= 0])
        if self.op == "const":
            return np.zeros(0, dtype=np.int64)
        if self.op == "quadratic":
            q = self.args[0]
            v = np.concatenate([q.qi.ravel(), q.qj.ravel(), q.lin.vars.ravel()])
            return np.unique(v[v >= 0])
        parts = [a.variables() for a in self.args]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

    def __repr__(self) -> str:
        return f"NLExpr({self.op}, dims={self.dims})"


def _unary(op: str, e: Any) -> NLExpr:
    n = NLExpr.wrap(e)
    return NLExpr(op, (n,), n.dims, n.coords)


def _reduce(op: str, e: Any, dim: str | None) -> NLExpr:
    n = NLExpr.wrap(e)
    if dim is None:
        return NLExpr(op, (n,), (), {}, None)
    if dim not in n.dims:
        raise ModelError(f"cannot reduce over {dim!r}: the expression has dimensions {n.dims}")
    keep = tuple(d for d in n.dims if d != dim)
    return NLExpr(op, (n,), keep, {d: n.coords[d] for d in keep}, dim)


def exp(e: Any) -> NLExpr:
    return _unary("exp", e)


def log(e: Any) -> NLExpr:
    return _unary("log", e)


def log1p(e: Any) -> NLExpr:
    return _unary("log1p", e)


def logistic(e: Any) -> NLExpr:
    """The logistic CDF ``1 / (1 + exp(-v))`` (computed as ``(1 + tanh(v/2)) / 2``, no overflow)."""
    return _unary("logistic", e)


def softplus(e: Any) -> NLExpr:
    """``log(1 + exp(v))``; the logistic loss of a margin ``m`` is ``softplus(-m)``."""
    return _unary("softplus", e)


def prod(e: Any, dim: str) -> NLExpr:
    """Product along ``dim`` (e.g. probabilities along a tree path)."""
    return _reduce("prod", e, dim)


def nlsum(e: Any, dim: str | None = None) -> NLExpr:
    return _reduce("sum", e, dim)


class NLConstraint:
    """A family of nonlinear rows ``lower <= expr <= upper`` over ``expr.dims`` (e.g. the class
    performance constraints (8) of S-ORCT). Added with :meth:`Model.add_constraints`; they travel
    beside the standard form (``StandardForm.nl_constraints``) for the NLP backends."""

    def __init__(self, expr: NLExpr, lower: np.ndarray, upper: np.ndarray) -> None:
        shape = shape_of(expr.dims, expr.coords)
        self.expr = expr
        self.lower = np.broadcast_to(np.asarray(lower, dtype=float), shape)
        self.upper = np.broadcast_to(np.asarray(upper, dtype=float), shape)
        self.name: str | None = None

    @classmethod
    def from_sides(cls, lhs: NLExpr, rhs: Any, sense: str) -> NLConstraint:
        if isinstance(rhs, (NLExpr,)) or getattr(rhs, "to_expr", None) is not None:
            return cls.from_sides(lhs - rhs, 0.0, sense)
        arr, d_dims, _ = labeled(rhs, lhs.dims, lhs.coords)
        shape = shape_of(lhs.dims, lhs.coords)
        bound = expand(np.asarray(arr, dtype=float), d_dims, lhs.dims, shape)
        if not np.all(np.isfinite(bound)):
            raise ModelError("a constraint's right-hand side contains NaN or inf")
        inf = np.full(shape, np.inf)
        if sense == "<=":
            return cls(lhs, -inf, bound)
        if sense == ">=":
            return cls(lhs, bound, inf)
        return cls(lhs, bound, bound)

    @property
    def dims(self) -> tuple[str, ...]:
        return self.expr.dims

    @property
    def size(self) -> int:
        return int(self.lower.size)

    def violation(self, x: np.ndarray) -> np.ndarray:
        v = self.expr.evaluate(x)
        return np.maximum(self.lower - v, 0.0) + np.maximum(v - self.upper, 0.0)

    def __repr__(self) -> str:
        return f"NLConstraint({self.name!r}, dims={self.dims}, size={self.size})"
