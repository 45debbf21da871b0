"""Variable families: a block of model columns with named dimensions, a kind and bounds."""

from __future__ import annotations

from enum import Enum
from typing import Any

import numpy as np

from treeopt_dsl.errors import ModelError
from treeopt_dsl.ir.expr import ExprOps, LinExpr
from treeopt_dsl.ir.labels import Coords, expand, labeled, shape_of


class Kind(str, Enum):
    """Column kinds. Binary is integer with bounds [0, 1]."""

    CONTINUOUS = "continuous"
    INTEGER = "integer"
    BINARY = "binary"


class VarFamily(ExprOps):
    """Columns ``offset .. offset + size`` of a model, laid out in C order over ``dims``.

    Arithmetic on a family acts on the linear expression ``1 * x`` of its columns. ``priority`` is the branching
    priority of its columns (higher: branched on first; 0: the solver's own choice), a hint that the backends with
    the feature ``"priority"`` pass on and the others ignore.
    """

    def __init__(self, name: str, dims: tuple[str, ...], coords: Coords, kind: Kind,
                 lower: Any, upper: Any, offset: int, priority: int = 0) -> None:
        if not name.isidentifier():
            raise ModelError(f"variable family name {name!r} must be an identifier (letters, digits, _)")
        self.name, self.dims, self.coords, self.kind = name, dims, coords, Kind(kind)
        self.offset = offset
        shape = shape_of(dims, coords)
        lo = _bound(lower, dims, coords, shape, "lower")
        up = _bound(upper, dims, coords, shape, "upper")
        if self.kind is Kind.BINARY:
            lo, up = np.maximum(lo, 0.0), np.minimum(up, 1.0)
        if np.any(np.isnan(lo)) or np.any(np.isnan(up)):
            raise ModelError(f"bounds of {name!r} contain NaN")
        if np.any(lo > up):
            raise ModelError(f"variable family {name!r} has a lower bound above its upper bound")
        self.lower, self.upper = lo, up
        if isinstance(priority, bool) or not isinstance(priority, (int, np.integer)) or priority < 0:
            raise ModelError(f"priority of {name!r} (its branching priority) must be an integer >= 0, got {priority!r}")
        self.priority = int(priority)

    @property
    def shape(self) -> tuple[int, ...]:
        return shape_of(self.dims, self.coords)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ids(self) -> np.ndarray:
        # int32 ids (the compiler refuses models with 2**31 columns): half the memory traffic of int64
        dtype = np.int32 if self.offset + self.size < np.iinfo(np.int32).max else np.int64
        return (self.offset + np.arange(self.size, dtype=dtype)).reshape(self.shape)

    def to_expr(self) -> LinExpr:
        shape = self.shape
        return LinExpr(self.dims, self.coords, np.ones(shape + (1,)), self.ids[..., None], np.zeros(shape),
                       distinct=True, rep=frozenset(), fams=frozenset({self.offset}))

    def values(self, x: np.ndarray) -> np.ndarray:
        """This family's slice of a full solution vector, shaped over its dimensions."""
        return np.asarray(x[self.offset:self.offset + self.size]).reshape(self.shape)

    def __repr__(self) -> str:
        return f"VarFamily({self.name!r}, dims={self.dims}, shape={self.shape}, kind={self.kind.value})"


def _bound(value: Any, dims: tuple[str, ...], coords: Coords, shape: tuple[int, ...], which: str) -> np.ndarray:
    if value is None:
        value = -np.inf if which == "lower" else np.inf
    arr, d_dims, _ = labeled(value, dims, coords)

    return np.array(expand(arr, d_dims, dims, shape), dtype=float)
