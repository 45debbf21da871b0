"""Risk-score blocks (thesis §4.1, [aldinucci-thesis-2024] lines 1085-1157).

A risk score is a very sparse logistic regression with small integer weights: ``s_j in A`` (4.1a),
``||s||_0 = T`` (4.1b), logit ``R(x) = s·x + beta``. :class:`IntegerScores` provides the score
``score_i = s·x_i + beta`` under the role ``"score"``; the cardinality (4.2)-(4.3) is the shared
:class:`~treeopt_dsl.blocks.L0` block on ``s`` (``budget=T, exact=True``), and the loss (4.4) is the
shared :class:`~treeopt_dsl.blocks.TangentLogisticLoss` with ``on="score"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import xarray as xr

from treeopt_dsl.blocks.splits import FEATURE, SAMPLE
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Block, BuildContext
from treeopt_dsl.ir import Kind

VALUE = "value"


def score_set(values: Iterable[int] | str) -> tuple[int, ...]:
    """The admissible scores ``A`` as a sorted tuple of integers containing 0.

    Accepts an iterable of integers or text: ``"-5..5"`` (a range) or ``"-3,-1,0,1,3"``.

    >>> score_set("-2..2"), score_set("0,1,3")
    ((-2, -1, 0, 1, 2), (0, 1, 3))
    """
    if isinstance(values, str):
        text = values.strip()
        if ".." in text:
            lo, hi = (int(v) for v in text.split(".."))
            vals = list(range(lo, hi + 1))
        else:
            vals = [int(v) for v in text.split(",") if v.strip()]
    else:
        vals = [int(v) for v in values]
    A = tuple(sorted(set(vals)))
    if not A or 0 not in A:
        raise FormulationError(f"the score set A must be non-empty and contain 0 (an unused feature), got {A}")
    return A


class OneHotChoice:
    """``s = sum_v v u[., v]``, ``sum_v u[., v] <= 1`` over the nonzero values of a non-contiguous ``A``."""

    def __init__(self, s: Any, u: Any, values: np.ndarray) -> None:
        self.s, self.u, self.values = s, u, values

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        sv = np.rint(self.s.values(x))
        x[self.u.ids] = (sv[..., None] == self.values).astype(float)


def integer_in_set(m: Any, name: str, dims: tuple[str, ...], coords: dict, A: tuple[int, ...]
                   ) -> tuple[Any, OneHotChoice | None]:
    """An integer family ``name`` with values in ``A`` (a contiguous range: bounds only; otherwise a
    one-hot choice among the nonzero values). Returns the family and the choice (or ``None``)."""
    s = m.add_variables(name, dims, coords, kind=Kind.INTEGER, lower=A[0], upper=A[-1])
    if A == tuple(range(A[0], A[-1] + 1)):
        return s, None
    nz = np.array([v for v in A if v != 0], dtype=float)
    u = m.add_variables(f"{name}_value", (*dims, VALUE), {**coords, VALUE: nz}, kind=Kind.BINARY)
    m.add_constraints(f"{name}_choice", u.sum(VALUE) <= 1)
    m.add_constraints(f"{name}_of_choice", s == (u * xr.DataArray(nz, dims=(VALUE,), coords={VALUE: nz})).sum(VALUE))
    return s, OneHotChoice(s, u, nz)


class IntegerScores(Block):
    """Integer scores ``s_j in A`` (4.1a, 4.5f), free intercept ``beta`` (4.5d), ``score_i = s·x_i + beta``.

    A contiguous ``A = {lo..hi}`` is an integer column with bounds ``[lo, hi]``; any other finite set
    is a one-hot choice ``s_j = sum_v v u[j, v]``, ``sum_v u[j, v] <= 1`` over the nonzero values
    (``u = 0`` is the score 0). ``beta_bound`` optionally bounds ``|beta|``.
    """

    provides = ("s", "beta", "score")

    def __init__(self, A: Iterable[int] | str = range(-5, 6), beta_bound: float | None = None) -> None:
        self.A = score_set(A)
        self.beta_bound = beta_bound

    def build(self, ctx: BuildContext) -> None:
        m, data = ctx.model, ctx.data
        s, ctx.state(self)["choice"] = integer_in_set(m, "s", (FEATURE,), {FEATURE: np.arange(data.n_features)},
                                                      self.A)
        B = np.inf if self.beta_bound is None else float(self.beta_bound)
        beta = m.add_variables("beta", (), {}, lower=-B, upper=B)
        X = xr.DataArray(data.X, dims=(SAMPLE, FEATURE))
        ctx.provide("s", s, "IntegerScores")
        ctx.provide("beta", beta, "IntegerScores")
        ctx.provide("score", s.dot(X, FEATURE) + beta, "IntegerScores")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        choice = ctx.state(self).get("choice")
        if choice is not None:
            choice.complete(ctx, x)
