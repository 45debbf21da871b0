"""Split blocks: the hyperplane ``(w_t, b_t)`` at every branch node (thesis §3.2, [aldinucci-thesis-2024] lines
379-383)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from treeopt_dsl.blocks.regularizers import L0
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Block, BuildContext
from treeopt_dsl.ir import affine
from treeopt_dsl.numeric import unseparable_pairs
from treeopt_dsl.topology import NODE

SAMPLE, FEATURE = "sample", "feature"


class ObliqueSplit(Block):
    """Oblique split ``v[i, t] = w_t·x_i + b_t`` at every branch node.

    Provides ``w`` (node x feature), ``b`` (node), ``split`` (the expression ``v`` over
    sample x node) and ``split_bound``: for every sample and node, a number ``U[i, t]`` with
    ``|v[i, t]| <= U[i, t]`` for every feasible ``(w, b)``, namely
    ``U[i, t] = sum_j |x_ij| * w_bound + b_bound`` (infinite when ``w`` or ``b`` is unbounded, as in
    (3.16b) and (3.17d), where the paper leaves them free).

    Parameters
    ----------
    columns:
        ``False`` (default): ``split`` is the expression ``w_t·x_i + b_t`` itself, so every row that uses it
        (forwarding (3.7), the slack rows (3.10)-(3.15): two to four per sample and node) repeats its
        ``p + 1`` entries. ``True``: a column ``v[i, t]`` per sample and node, bounded by ``U[i, t]``, tied
        to the hyperplane by one equality row ``v[i, t] = w_t·x_i + b_t``; the other rows then hold one
        entry for it. The same model projected on ``(w, b, z, xi)`` (the LP relaxation is unchanged), with a
        constraint matrix several times sparser, so each node LP is cheaper (OLCT depth 2 on Table 3.1:
        docs/benchmarks.md, "Split values as columns").
    w_bound, b_bound:
        ``|w_jt| <= w_bound`` and ``|b_t| <= b_bound``; ``None`` leaves them free (the paper's model).
        Finite bounds are what makes a per-row big-M derivable. ``b_bound="auto"`` is
        ``w_bound * max_i ||x_i||_1 + 1``: a hyperplane with a larger ``|b|`` sends every training
        sample to the same side, which this bound can also express, so it loses no routing.
    """

    provides = ("w", "b", "split", "split_bound")

    def __init__(self, w_bound: float | None = None, b_bound: float | str | None = None,
                 columns: bool = False) -> None:
        if b_bound == "auto" and w_bound is None:
            raise FormulationError("b_bound='auto' needs a finite w_bound")
        for name, v in (("w_bound", w_bound), ("b_bound", None if b_bound == "auto" else b_bound)):
            if v is not None and not (np.isfinite(v) and v > 0):
                raise FormulationError(f"{name} must be a positive number or None, got {v!r}")
        self.w_bound, self.b_bound, self.columns = w_bound, b_bound, bool(columns)

    def bounds(self, X: np.ndarray) -> tuple[float, float]:
        """``(W, B)``: the bounds ``|w_jt| <= W`` and ``|b_t| <= B`` on data ``X`` (``inf`` when free)."""
        W = np.inf if self.w_bound is None else float(self.w_bound)
        if self.b_bound == "auto":
            return W, W * float(np.abs(X).sum(1).max(initial=0.0)) + 1.0
        return W, np.inf if self.b_bound is None else float(self.b_bound)

    def build(self, ctx: BuildContext) -> None:
        topo, data, m = ctx.topo, ctx.data, ctx.model
        W, B = self.bounds(data.X)
        coords = {NODE: topo.nodes, FEATURE: np.arange(data.n_features)}
        w = m.add_variables("w", (NODE, FEATURE), coords, lower=-W, upper=W)
        b = m.add_variables("b", (NODE,), coords, lower=-B, upper=B)
        v = affine(w, xr.DataArray(data.X, dims=(SAMPLE, FEATURE)), FEATURE, b)  # sample x node
        finite = np.isfinite(W) and np.isfinite(B)
        row = np.abs(data.X).sum(1) * W + B if finite else np.full(data.n_samples, np.inf)
        bound = xr.DataArray(np.repeat(row[:, None], topo.n_nodes, 1), dims=(SAMPLE, NODE),
                             coords={NODE: topo.nodes})
        if self.columns:
            U = bound.values  # inf when w or b is free
            col = m.add_variables("split_v", (SAMPLE, NODE), {SAMPLE: np.arange(data.n_samples), NODE: topo.nodes},
                                  lower=-U, upper=U)
            m.add_constraints("split_value", col - v == 0)
            ctx.state(self)["value"] = (col, w, b)
            v = col.to_expr()
        for role, val in (("w", w), ("b", b), ("split", v), ("split_bound", bound)):
            ctx.provide(role, val, "ObliqueSplit")

    def notes(self, ctx: BuildContext, blocks: Sequence[Block]) -> dict[str, Any]:
        """``{"resolution": ...}`` (:func:`resolution_of`) when the splits are axis-aligned (an l0 budget of one
        feature per split, (3.14)) with ``|w| <= w_bound``: the pairs of consecutive distinct (scaled) training
        values of a feature closer than ``eps / w_bound``, between which no split of this model can put a cut
        (an oblique split may separate them by another feature, so it has none). ``oct`` with ``cuts="all"``
        splits threshold columns instead and can express every cut."""
        gap = smallest_cut_gap(blocks, float(ctx.numerics.eps))
        if gap is None or not any(isinstance(b, L0) and b.budget is not None and np.ndim(b.budget) == 0
                                  and int(b.budget) == 1 for b in blocks):
            return {}
        note = resolution_of(gap, unseparable_pairs(ctx.data.X, gap), ctx.data.feature_names)
        return {} if note is None else {"resolution": note}

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        """With ``columns``: ``v[i, t] = w_t·x_i + b_t`` from the point's ``(w, b)``, as one product ``X W^T + b``
        (the row ``split_value``'s expression evaluated term by term gathers ``n T (p + 1)`` values: 2.6 s on
        adult at depth 3, against milliseconds)."""
        if "value" in ctx.state(self):
            col, w, b = ctx.state(self)["value"]
            x[col.ids] = ctx.data.X @ x[w.ids].T + x[b.ids]


def derived_bound(ctx: BuildContext, nodes: np.ndarray) -> xr.DataArray:
    """``U[i, t]`` of the split block at ``nodes``, for a big-M derived per row (``M = "derived"``):
    an error saying what to give when a split is unbounded (no finite M can be derived then)."""
    U = ctx["split_bound"].sel({NODE: nodes})
    if not np.all(np.isfinite(U.values)):
        raise FormulationError("a big-M 'derived' per row needs bounded splits: give w_bound and b_bound "
                               "(or use a constant M)")
    return U


def smallest_cut_gap(blocks: Sequence[Block], eps: float) -> float | None:
    """``eps / w_bound`` of the composition's split block: the closest two values an axis-aligned split with margin
    ``eps`` can put a cut between (``None`` without a split block or with unbounded ``w``)."""
    split = next((b for b in blocks if isinstance(b, ObliqueSplit)), None)
    return None if split is None or split.w_bound is None else eps / float(split.w_bound)


def resolution_of(gap: float, counts: np.ndarray, names: Sequence[str]) -> dict[str, Any] | None:
    """The resolution note of ``counts`` (unseparable pairs per feature) at the smallest cut ``gap``
    (``None`` when there are none): ``{"smallest_cut_gap", "unseparable_pairs", "features": {name: pairs}}``."""
    if not counts.any():
        return None
    return {"smallest_cut_gap": gap, "unseparable_pairs": int(counts.sum()),
            "features": {names[j]: int(c) for j, c in enumerate(counts) if c}}
