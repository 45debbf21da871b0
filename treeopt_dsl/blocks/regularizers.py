"""Regularizer blocks that attach to a variable family by role name (``w`` by default)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..formulation import Block, BuildContext


class L1(Block):
    """Lasso by the positive/negative split (3.16), thesis seed 000 lines 512-535:

    (3.16a) ``w = w⁺ - w⁻``; (3.16c) ``w⁺, w⁻ >= 0``; objective ``weight * 1ᵀ(w⁺ + w⁻)``,
    which equals ``weight * ||w||_1`` at every optimum (the paper's argument, lines 530-531).

    ``weight`` is a number or a ``DataArray`` over any of the family's dimensions (e.g. ``lambda_h``
    per node). ``of`` names the role of the family to regularize.
    """

    provides = ("l1",)

    def __init__(self, of: str = "w", weight: Any = 1.0) -> None:
        self.of, self.weight = of, weight
        self.requires = (of,)

    def build(self, ctx: BuildContext) -> None:
        w, m = ctx[self.of], ctx.model
        up = np.maximum(w.upper, 0.0)
        lo_neg = np.maximum(-w.lower, 0.0)
        wp = m.add_variables(f"{w.name}_pos", w.dims, w.coords, lower=0.0, upper=up)
        wn = m.add_variables(f"{w.name}_neg", w.dims, w.coords, lower=0.0, upper=lo_neg)
        m.add_constraints(f"{w.name}_l1_split", w == wp - wn)  # (3.16a)
        m.add_objective((wp + wn) * self.weight, "l1")
        ctx.provide("l1", (wp, wn), "L1")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        w = ctx[self.of].values(x)
        wp, wn = ctx["l1"]
        x[wp.ids] = np.maximum(w, 0.0)
        x[wn.ids] = np.maximum(-w, 0.0)
