"""A labeled array on the LEFT of an expression: ``D * x`` as ``x * D``.

Python asks the left operand first, and ``xarray.DataArray``'s operators accept anything: ``D * x`` would
multiply the array's raw numpy data by the expression (positionally, its labels lost) and fail while wrapping the
result (a bare ``ValueError`` from xarray). xarray has no hook for a foreign operand, so, as linopy does for its own
expressions, the DataArray operators that meet ours are wrapped to return ``NotImplemented`` for one of our
expressions, and Python then calls the expression's reflected operator (``x.__rmul__(D)``, or for a comparison the
mirrored one: ``D <= x`` is ``x >= D``), which matches dimensions by name. Any other operand reaches xarray's own
operator unchanged (one ``isinstance`` more per operation).

>>> import numpy as np, xarray as xr
>>> from treeopt_dsl.ir import Model
>>> m = Model()
>>> x = m.add_variables("x", ("i",), {"i": 2})
>>> D = xr.DataArray([2.0, 3.0], dims="i")
>>> (D * x).evaluate(np.ones(2)).tolist() == (x * D).evaluate(np.ones(2)).tolist()
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import xarray as xr

from treeopt_dsl.ir.expr import ExprOps, QuadExpr
from treeopt_dsl.ir.nonlinear import NLExpr

#: the expressions a DataArray on the left defers to
OURS = (ExprOps, QuadExpr, NLExpr)
#: the DataArray operators wrapped: arithmetic, and the comparisons that build constraints
OPERATORS = ("__add__", "__sub__", "__mul__", "__truediv__", "__le__", "__ge__", "__eq__")


def _deferring(plain: Callable[[xr.DataArray, Any], Any]) -> Callable[[xr.DataArray, Any], Any]:
    @functools.wraps(plain)
    def operator(self: xr.DataArray, other: Any) -> Any:
        if isinstance(other, OURS):
            return NotImplemented
        return plain(self, other)

    operator.defers_to_treeopt = True  # type: ignore[attr-defined]
    return operator


def defer_left_dataarrays() -> None:
    """Wrap :data:`OPERATORS` of ``xarray.DataArray`` to defer to our expressions (idempotent: a wrapped
    operator is not wrapped again; another library's wrapper, linopy's, stays in the chain)."""
    for name in OPERATORS:
        plain = getattr(xr.DataArray, name)
        if not getattr(plain, "defers_to_treeopt", False):
            setattr(xr.DataArray, name, _deferring(plain))
