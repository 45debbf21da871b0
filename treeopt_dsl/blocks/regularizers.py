"""Regularizer blocks that attach to a variable family by role name (``w`` by default).

Each follows the canonicalizer pattern (cvxpy's l1/linf): a norm becomes auxiliary variables, a few
linear rows and an objective term, and ``complete`` fills the auxiliaries from the family's values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Block, BuildContext
from treeopt_dsl.ir import Kind
from treeopt_dsl.ir.variables import VarFamily

#: weights at most this large count as zero in l0 completion (the decoder zeroes them too)
ZERO_TOL = 1e-9


class L1(Block):
    """Lasso by the positive/negative split (3.16), thesis [aldinucci-thesis-2024] lines 512-535:

    (3.16a) ``w = w⁺ - w⁻``; (3.16c) ``w⁺, w⁻ >= 0``; objective ``weight * 1ᵀ(w⁺ + w⁻)``,
    which equals ``weight * ||w||_1`` at every optimum (the paper's argument, lines 530-531).

    ``weight`` is a number or a ``DataArray`` over any of the family's dimensions (e.g. ``lambda_h``
    per node). ``of`` names the role of the family to regularize.
    """

    provides = ("l1",)

    def __init__(self, of: str = "w", weight: Any = 1.0, bound: float | None = None, over: str = "feature") -> None:
        self.of, self.weight, self.bound, self.over = of, weight, bound, over
        self.requires = (of,)

    def build(self, ctx: BuildContext) -> None:
        w, m = ctx[self.of], ctx.model
        up = np.maximum(w.upper, 0.0)
        lo_neg = np.maximum(-w.lower, 0.0)
        wp = m.add_variables(f"{w.name}_pos", w.dims, w.coords, lower=0.0, upper=up)
        wn = m.add_variables(f"{w.name}_neg", w.dims, w.coords, lower=0.0, upper=lo_neg)
        m.add_constraints(f"{w.name}_l1_split", w == wp - wn)  # (3.16a)
        if self.bound is not None:  # ||w_t||_1 <= bound over ``over`` (OCT-H's unit l1 ball)
            m.add_constraints(f"{w.name}_l1_ball", (wp + wn).sum(self.over) <= float(self.bound))
        if np.any(np.asarray(self.weight) != 0):
            m.add_objective((wp + wn) * self.weight, "l1")
        ctx.provide("l1", (wp, wn), "L1")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        w = ctx[self.of].values(x)
        wp, wn = ctx["l1"]
        x[wp.ids] = np.maximum(w, 0.0)
        x[wn.ids] = np.maximum(-w, 0.0)


class L0(Block):
    """Exact l0 by binary indicators (3.14), [aldinucci-thesis-2024] lines 456-462:

    ``delta[t, j]`` binary, ``-M delta <= w <= M delta``, ``||w_t||_0 = 1ᵀ delta_t``, then either

    * bounded (HFS): ``1ᵀ delta_t <= budget`` (``budget=1`` gives axis-aligned splits, Remark 2,
      lines 557-559), or ``= budget`` with ``exact=True`` (the risk scores' ``sum_j a_j = T``, (4.2)
      with (4.3) as the linking rows), and/or
    * penalized (SFS): ``alpha_t max(||w_t||_0, B_t)`` in the objective (lines 531-535), modelled
      by ``s_t >= 1ᵀ delta_t``, ``s_t >= B_t`` and the term ``alpha_t s_t`` (``B_t = 0``: plain
      ``alpha ||w_t||_0``, the OCT-H feature-count penalty).

    ``M`` defaults to the family's own bound ``max(|lower|, |upper|)`` per entry (valid and the
    tightest possible); a constant may be given for reproduction. With a budget ``k`` the block
    also tightens the split bound ``U`` (``|v[i, t]| <= w_bound * (sum of the k largest |x_ij|) +
    b_bound``), so blocks placed after it derive smaller big-M values.

    ``branch_priority`` (default 0: the solver's choice) is the indicators' branching priority: with a positive
    value the solvers with the backend feature ``"priority"`` (Gurobi, SCIP) branch on the support ``delta`` before
    the weights. ``ors loss="true"`` sets it: measured in docs/blocks.md, "The designs measured".
    """

    provides = ("l0",)

    def __init__(self, of: str = "w", budget: Any = None, penalty: Any = 0.0, penalty_floor: Any = 0.0,
                 M: float | None = None, over: str = "feature", exact: bool = False, branch_priority: int = 0) -> None:
        if budget is None and not np.any(np.asarray(penalty) > 0):
            raise FormulationError("L0 needs a budget (HFS) or a positive penalty (SFS)")
        if exact and budget is None:
            raise FormulationError("L0(exact=True) needs a budget")
        if isinstance(branch_priority, bool) or not isinstance(branch_priority, (int, np.integer)) \
                or branch_priority < 0:
            raise FormulationError(f"branch_priority of L0 must be an integer >= 0 (0: the solver's choice), got "
                                   f"{branch_priority!r}")
        self.exact, self.branch_priority = exact, int(branch_priority)
        self.of, self.budget, self.penalty, self.penalty_floor, self.M, self.over = (
            of, budget, penalty, penalty_floor, M, over)
        self.requires = (of,)

    def build(self, ctx: BuildContext) -> None:
        w, m = ctx[self.of], ctx.model
        bound = np.maximum(np.abs(w.lower), np.abs(w.upper)) if self.M is None else np.full(w.shape, float(self.M))
        if not np.all(np.isfinite(bound)):
            raise FormulationError("L0 needs a bounded family (give w_bound) or a constant M")
        if _is_indicator(w):  # a 0/1 family (e.g. FlowOCT's splits) is its own indicator: ||w||_0 = 1ᵀw, no rows
            delta = w
        else:
            delta = m.add_variables(f"{w.name}_used", w.dims, w.coords, kind=Kind.BINARY,
                                    priority=self.branch_priority)
            m.add_constraints(f"{w.name}_l0_up", w <= delta * bound)  # (3.14)
            m.add_constraints(f"{w.name}_l0_lo", w >= delta * (-bound))
        count = delta.sum(self.over)
        if self.budget is not None:
            if self.exact:  # "= budget", or every entry when the group is smaller than the budget
                size = w.shape[w.dims.index(self.over)]
                m.add_constraints(f"{w.name}_l0_budget", count == np.minimum(self.budget, size))
            else:
                m.add_constraints(f"{w.name}_l0_budget", count <= self.budget)
            self._tighten_split_bound(ctx, bound)
        s = None
        if np.any(np.asarray(self.penalty) > 0):
            rest = tuple(d for d in w.dims if d != self.over)
            s = m.add_variables(f"{w.name}_l0_excess", rest, {d: w.coords[d] for d in rest},
                                lower=self.penalty_floor)
            m.add_constraints(f"{w.name}_l0_count", s >= count)
            m.add_objective(s * self.penalty, "l0")
        ctx.provide("l0", (delta, s), "L0")

    def _tighten_split_bound(self, ctx: BuildContext, bound: np.ndarray) -> None:
        if self.of != "w" or "split_bound" not in ctx or np.ndim(self.budget) != 0 or bound.size == 0:
            return  # (no features: e.g. every cut column of constant data dropped)
        k = int(self.budget)
        X = np.abs(ctx.data.X)
        top = -np.sort(-X, axis=1)[:, :k].sum(1) if k < X.shape[1] else X.sum(1)
        b = ctx["b"]
        W = float(np.max(bound))
        B = float(np.max(np.abs(np.concatenate([b.lower, b.upper]))))
        if np.isfinite(B):  # a refinement of the split block's role, valid only while the budget holds
            old = ctx.roles["split_bound"]
            ctx.roles["split_bound"] = old.copy(data=np.minimum(old.values, (top * W + B)[:, None]))

    def polish(self, ctx: BuildContext, x: np.ndarray) -> None:
        """A weight whose indicator is (rounded) 0 is 0: (3.14) ``|w| <= M delta`` at delta = 0."""
        fam = ctx[self.of]
        delta, _ = ctx["l0"]
        off = delta.values(x) < 0.5
        if off.any():
            x[fam.ids[off]] = 0.0

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        w = ctx[self.of].values(x)
        delta, s = ctx["l0"]
        used = (np.abs(w) > ZERO_TOL).astype(float)  # solver noise such as 1e-17 is not a used feature
        if self.exact:  # "= budget": switch on unused indicators (s_j = 0 with a_j = 1 is feasible) to fill it
            ax = ctx[self.of].dims.index(self.over)
            missing = np.expand_dims(np.minimum(self.budget, used.shape[ax]) - used.sum(ax), ax)
            rank = np.cumsum(1.0 - used, axis=ax)
            used = np.where((used == 0) & (rank <= missing), 1.0, used)
        if delta is not ctx[self.of]:  # a family that is its own indicator is not written here
            x[delta.ids] = used
        if s is not None:
            x[s.ids] = np.maximum(used.sum(ctx[self.of].dims.index(self.over)),
                                  np.broadcast_to(self.penalty_floor, s.shape))


def _is_indicator(w: Any) -> bool:
    """Whether ``w`` is a binary variable family (bounds within [0, 1])."""
    return isinstance(w, VarFamily) and w.kind is Kind.BINARY and bool(np.all(w.lower >= 0))


class LInf(Block):
    """Group l_inf: ``beta[g] >= |w[g, over]|`` for every group ``g``, objective ``weight * sum_g beta``.

    With ``over="node"`` this is S-ORCT's global sparsity ``sum_j ||a_j.||_inf`` ([blanquero-2020-sorct] lines
    165-199) in its linear form: ``beta_j >= a_jt`` and ``beta_j >= -a_jt``.
    """

    def __init__(self, of: str = "w", over: str = "node", weight: Any = 1.0) -> None:
        self.of, self.over, self.weight = of, over, weight
        self.requires = (of,)
        self.provides = (f"linf_{of}",)

    def build(self, ctx: BuildContext) -> None:
        w, m = ctx[self.of], ctx.model
        rest = tuple(d for d in w.dims if d != self.over)
        cap = np.max(np.maximum(np.abs(w.lower), np.abs(w.upper)), axis=w.dims.index(self.over))
        beta = m.add_variables(f"{w.name}_linf", rest, {d: w.coords[d] for d in rest}, lower=0.0, upper=cap)
        m.add_constraints(f"{w.name}_linf_up", beta >= w)
        m.add_constraints(f"{w.name}_linf_lo", beta >= -w)
        m.add_objective(beta * self.weight, "linf")
        ctx.provide(f"linf_{self.of}", beta, "LInf")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        w = ctx[self.of]
        x[ctx[f"linf_{self.of}"].ids] = np.abs(w.values(x)).max(axis=w.dims.index(self.over))


class SquaredL2(Block):
    """``weight * ||w||_2^2`` as a quadratic objective term (MARGOT's regularizer, (3.12)-(3.13) with
    ``Omega = ||.||_2^2``, [aldinucci-thesis-2024] lines 441-454). Makes the model a (MI)QP."""

    def __init__(self, of: str = "w", weight: Any = 1.0) -> None:
        self.of, self.weight = of, weight
        self.requires = (of,)
        self.provides = (f"l2_{of}",)

    def build(self, ctx: BuildContext) -> None:
        w = ctx[self.of]
        ctx.model.add_objective((w * w) * float(self.weight), "l2")
        ctx.provide(f"l2_{self.of}", w, "SquaredL2")
