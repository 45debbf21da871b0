"""Routing (3.6) and big-M forwarding (3.7): thesis §3.2, [aldinucci-thesis-2024] lines 386-412."""

from __future__ import annotations

import numpy as np
import xarray as xr

from treeopt_dsl.blocks.splits import SAMPLE, derived_bound
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Block, BuildContext
from treeopt_dsl.ir import Kind
from treeopt_dsl.topology import LAST


class Routing(Block):
    """Binary ``z[i, t]`` for ``t in T_d``: sample ``i`` reaches last-layer node ``t``.

    (3.6a) ``sum_{t in T_d} z[i, t] = 1``; (3.6b) ``z`` binary. Also provides
    ``reach[i, t] = sum_{s in T_d(t)} z[i, s]`` for every branch node ``t`` (1 iff the sample
    passes through ``t``), the quantity (3.13a) and (3.15) multiply their big-M by.
    """

    provides = ("z", "reach")

    def build(self, ctx: BuildContext) -> None:
        topo, m = ctx.topo, ctx.model
        z = m.add_variables("z", (SAMPLE, LAST), {SAMPLE: ctx.data.n_samples, LAST: topo.last}, kind=Kind.BINARY)
        m.add_constraints("route", z.sum(LAST) == 1)  # (3.6a)
        ctx.provide("z", z, "Routing")
        ctx.provide("reach", z.dot(topo.mask("desc"), LAST), "Routing")


class BigMForwarding(Block):
    """Forwarding constraints (3.7) at every node of ``T \\ T_d``:

    (3.7a) ``w_t·x_i + b_t <= M (1 - sum_{s in T_d^l(t)} z[i, s])``
    (3.7b) ``w_t·x_i + b_t >= eps - M (1 - sum_{s in T_d^r(t)} z[i, s])``

    ``M`` is the paper's constant (``100``, [aldinucci-thesis-2024] line 610) or ``"derived"``: per row,
    ``M[i, t] = U[i, t]`` for (3.7a) and ``U[i, t] + eps`` for (3.7b), where ``U`` is the split
    block's bound on ``|w_t·x_i + b_t|``. *Why it is valid*: when the sample is not sent left at
    ``t``, (3.7a) reads ``v <= U`` and (3.7b) ``v >= eps - U - eps = -U``; both hold for every
    feasible ``(w, b)``, so the derived rows cut off no point the constant-M model with bounded
    ``w, b`` would keep, while being as tight as the bounds allow (a smaller LP relaxation).

    Decoding rule: a sample goes right at ``t`` iff ``v > eps / 2``. The model keeps the band
    ``(0, eps)`` free of training samples, so any threshold in it reproduces the solver's routing;
    the midpoint is the one robust to the solver's feasibility tolerance on both sides.
    """

    requires = ("split", "z", "split_bound")

    def __init__(self, M: float | str = 100.0, eps: float | None = None) -> None:
        if not (M == "derived" or (isinstance(M, (int, float)) and np.isfinite(M) and M > 0)):
            raise FormulationError(f"big-M must be a positive number or 'derived', got {M!r}")
        if eps is not None and not eps > 0:
            raise FormulationError(f"eps must be positive, got {eps!r}")
        self.M, self.eps = M, eps

    def _eps(self, ctx: BuildContext) -> float:
        if self.eps is not None:
            ctx.numerics.eps = float(self.eps)
        return ctx.numerics.eps

    def build(self, ctx: BuildContext) -> None:
        topo, m = ctx.topo, ctx.model
        eps = self._eps(ctx)
        inner = topo.inner
        if inner.size == 0:
            return  # depth 1: the root is the classifier, nothing to forward
        z = ctx["z"]
        for h, at in topo.by_level(inner):  # level by level: rows of one length (no padding terms)
            v = ctx["split"].sel(node=at)
            go_left = z.dot(topo.mask("left", at), LAST)
            go_right = z.dot(topo.mask("right", at), LAST)
            if self.M == "derived":
                U = derived_bound(ctx, at)
                M_left, M_right = U, U + eps
            else:
                M_left = M_right = xr.DataArray(float(self.M))
            m.add_constraints(f"forward_left_level{h}", v <= (1 - go_left) * M_left)  # (3.7a)
            m.add_constraints(f"forward_right_level{h}", v >= eps - (1 - go_right) * M_right)  # (3.7b)
            ctx.numerics.max_big_m = max(ctx.numerics.max_big_m, float(np.max(M_right.values)))

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        """Route every sample by the hyperplanes (right iff ``v > eps/2``) and set ``z`` one-hot."""
        topo = ctx.topo
        eps = self._eps(ctx)
        v = ctx["split"].evaluate(x)
        last = topo.route(v > eps / 2)
        z = ctx["z"]
        onehot = np.zeros(z.shape)
        onehot[np.arange(last.size), last] = 1.0
        x[z.ids] = onehot


def reached_last(ctx: BuildContext, x: np.ndarray) -> np.ndarray:
    """Index into ``T_d`` of the node each sample reaches, read from the (rounded) ``z`` columns."""
    return np.argmax(ctx["z"].values(x), axis=1)
