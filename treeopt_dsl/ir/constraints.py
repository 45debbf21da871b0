"""Constraint families: ``lower <= sum_k coef[..., k] x[vars[..., k]] <= upper`` over named dimensions."""

from __future__ import annotations

from typing import Any

import numpy as np

from treeopt_dsl.errors import ModelError
from treeopt_dsl.ir.expr import LinExpr, as_operand
from treeopt_dsl.ir.labels import Coords, expand, labeled, shape_of


class Constraint:
    """A family of rows. Made by comparing expressions (``a <= b``) or by :meth:`ranged`."""

    def __init__(self, expr: LinExpr, lower: np.ndarray, upper: np.ndarray) -> None:
        self.expr = expr  # constant part is zero: it has been moved into the bounds
        self.lower = np.broadcast_to(lower, expr.shape)
        self.upper = np.broadcast_to(upper, expr.shape)
        self.name: str | None = None
        self.offset = -1

    @property
    def dims(self) -> tuple[str, ...]:
        return self.expr.dims

    @property
    def coords(self) -> Coords:
        return self.expr.coords

    @property
    def shape(self) -> tuple[int, ...]:
        return self.expr.shape

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @classmethod
    def from_sides(cls, lhs: LinExpr, rhs: Any, sense: str) -> Constraint:
        diff = lhs - as_operand(rhs)
        body = LinExpr(diff.dims, diff.coords, diff.coef, diff.vars, 0.0, distinct=diff.distinct, rep=diff.rep,
                       fams=diff.fams)
        bound = -np.asarray(diff.const, dtype=float)
        if not np.all(np.isfinite(bound)):
            raise ModelError("a constraint's right-hand side contains NaN or inf")
        inf = np.full(diff.shape, np.inf)
        if sense == "<=":
            return cls(body, -inf, bound)
        if sense == ">=":
            return cls(body, bound, inf)
        if sense == "==":
            return cls(body, bound, bound)
        raise ModelError(f"unknown constraint sense {sense!r}")

    @classmethod
    def ranged(cls, lower: Any, expr: LinExpr, upper: Any) -> Constraint:
        """``lower <= expr <= upper`` in one row per entry."""
        body = LinExpr(expr.dims, expr.coords, expr.coef, expr.vars, 0.0, distinct=expr.distinct, rep=expr.rep,
                       fams=expr.fams)
        shape = shape_of(expr.dims, expr.coords)
        lo = np.broadcast_to(np.asarray(lower, dtype=float), shape) - expr.const
        up = np.broadcast_to(np.asarray(upper, dtype=float), shape) - expr.const
        return cls(body, lo, up)

    def where(self, mask: Any) -> Constraint:
        """Keep only the rows where ``mask`` (broadcast by name) is true; the others are dropped at compile."""
        e = self.expr.where(mask)
        arr, d_dims, _ = labeled(mask, e.dims, e.coords)
        keep = expand(arr.astype(bool), d_dims, e.dims, e.shape)
        lo = np.where(keep, expand(self.lower, self.dims, e.dims, e.shape), -np.inf)
        up = np.where(keep, expand(self.upper, self.dims, e.dims, e.shape), np.inf)
        return Constraint(e, lo, up)

    def violation(self, x: np.ndarray) -> np.ndarray:
        """Row-wise violation at ``x`` (0 where satisfied)."""
        v = self.expr.evaluate(x)
        return np.maximum(self.lower - v, 0.0) + np.maximum(v - self.upper, 0.0)

    def __repr__(self) -> str:
        return f"Constraint({self.name!r}, dims={self.dims}, shape={self.shape}, terms={self.expr.n_terms})"
