"""Slack-loss plug-ins: convex piecewise-linear losses of the margin ``y_i (w_t·x_i + b_t)``.

Every loss here shares one interface (thesis §3.2 "The Generalized Framework", [aldinucci-thesis-2024] lines
414-454): a slack ``xi[i, h]`` per sample and level, bounded below at every node ``t`` of the level
by the loss pieces, switched off by big-M where the sample does not pass through ``t``:

    xi[i, h] >= a_k * y_i (w_t·x_i + b_t) + c_k - M (1 - reach[i, t])   for t in T_h, k = 1..K

and the objective term ``sum_h C_h sum_i xi[i, h]``. A piece with slope 0 becomes a plain lower
bound on ``xi`` (it holds whatever the routing). The same pieces apply to a plain linear score
(``on="score"``): a slack ``xi[i]`` per sample with ``xi[i] >= a_k * y_i * score_i + c_k``, which is the
risk-score loss (4.4) on the margin ``y_i (s·x_i + beta)``. A loss is therefore just its list of pieces:

* :class:`HingeLoss`: ``max(0, 1 - m)`` -- (3.10) at the last level, (3.12)-(3.13) at every level;
* :class:`TangentLogisticLoss`: tangents of ``f(m) = log(1 + exp(-m))`` at the points of a
  tangent set (3.15), Sato et al.'s V0..V3 ([aldinucci-thesis-2024] lines 497-505) or custom points.

**Sample weights.** Every loss here weighs sample ``i`` by ``w_i`` (``Dataset.sample_weight``, 1 when absent):
the objective term is ``sum_h C_h sum_i w_i xi[i, h]`` (:func:`sample_weights`); the rows are unchanged, so an
integer weight is the same as repeating the row (docs/weights.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
import xarray as xr

from treeopt_dsl.blocks.routing import reached_last
from treeopt_dsl.blocks.splits import SAMPLE, derived_bound
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Block, BuildContext, Cuts
from treeopt_dsl.ir import linsum
from treeopt_dsl.topology import LEVEL, NODE

PIECE = "piece"
BREAK = "breakpoint"
LEAF, CLASS = "leaf", "class"
EPIGRAPHS = ("pieces", "breakpoints")
#: what an ``optimal`` answer of a tangent loss is proven in: its tangents, or the logistic loss they under-estimate
OBJECTIVES = ("tangent", "true")
#: the default relative gap ``(UB - LB) / max(1, |UB|)`` to which ``objective="true"`` proves the true loss
OUTER_TOL = 1e-4


def envelope(a: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The convex function ``max_k (a_k m + c_k)`` by its breakpoints: ``(b, g, a_lo, a_hi)`` with ``b``
    increasing, ``g = f(b)``, and the slopes ``a_lo`` left of ``b[0]`` and ``a_hi`` right of ``b[-1]``.

    Pieces that are never the maximum (a duplicate slope with a lower intercept, or a piece under the
    crossing of its neighbours) are dropped. Between consecutive breakpoints ``f`` is linear, so
    ``f(m) = sum_k lam_k g_k + a_hi r - a_lo l`` for ``m = sum_k lam_k b_k + r - l`` with ``lam`` on the two
    breakpoints around ``m`` (or ``lam`` on an end and ``r`` or ``l`` the distance beyond it).

    >>> b, g, lo, hi = envelope(np.array([0.0, -1.0]), np.array([0.0, 1.0]))  # the hinge max(0, 1 - m)
    >>> b.tolist(), g.tolist(), lo, hi
    ([1.0], [0.0], -1.0, 0.0)
    """
    order = np.lexsort((-np.asarray(c, float), np.asarray(a, float)))  # slope up, highest intercept first
    a, c = np.asarray(a, float)[order], np.asarray(c, float)[order]
    keep = np.r_[True, a[1:] != a[:-1]]  # one piece per slope: the highest
    a, c = a[keep], c[keep]
    hull: list[int] = []
    for k in range(a.size):  # upper envelope of lines by increasing slope (a handful of pieces: a plain loop)
        while len(hull) >= 2:
            i, j = hull[-2], hull[-1]
            # j is never the maximum if k overtakes i no later than j does
            if (c[k] - c[i]) * (a[j] - a[i]) >= (c[j] - c[i]) * (a[k] - a[i]):
                hull.pop()
            else:
                break
        hull.append(k)
    a, c = a[hull], c[hull]
    b = (c[:-1] - c[1:]) / (a[1:] - a[:-1])
    return b, a[:-1] * b + c[:-1], float(a[0]), float(a[-1])

#: Tangent sets of Sato et al. as printed in the thesis ([aldinucci-thesis-2024] lines 503-505).
TANGENT_SETS: dict[str, tuple[float, ...]] = {
    "V0": (0.0, -np.inf, np.inf),
    "V1": (0.0, -np.inf, np.inf, -1.9, 1.9),
    "V2": (0.0, -np.inf, np.inf, -1.9, 1.9, -0.89, 0.89, -3.55, 3.55),
    "V3": (0.0, -np.inf, np.inf, -1.9, 1.9, -0.89, 0.89, -3.55, 3.55,
           -0.44, 0.44, -1.37, 1.37, -2.63, 2.63, -5.16, 5.16),
}


def sample_weights(ctx: BuildContext) -> xr.DataArray | float:
    """``w_i`` over the ``sample`` dimension, to multiply a loss' objective term by; ``1.0`` when the data carry
    no weights (the unweighted model is then built exactly as before)."""
    sw = ctx.data.sample_weight
    if sw is None or bool(np.all(sw == 1.0)):
        return 1.0
    return xr.DataArray(np.asarray(sw, dtype=float), dims=(SAMPLE,))


def logistic_loss(m: np.ndarray) -> np.ndarray:
    """``f(m) = log(1 + exp(-m))``, computed without overflow."""
    return np.logaddexp(0.0, -np.asarray(m, dtype=float))


def logistic_tangents(points: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Slopes and intercepts of the tangents of ``f`` at ``points``; at ``±inf`` the asymptotes
    ``0`` (at +inf) and ``-m`` (at -inf), as the thesis defines them ([aldinucci-thesis-2024] line 503)."""
    a, c = [], []
    for v in sorted(set(float(p) for p in points)):
        if v == np.inf:
            a.append(0.0)
            c.append(0.0)
        elif v == -np.inf:
            a.append(-1.0)
            c.append(0.0)
        else:
            slope = -1.0 / (1.0 + np.exp(v))  # f'(v)
            a.append(slope)
            c.append(float(logistic_loss(v)) - slope * v)
    return np.array(a), np.array(c)


def interpolation(b: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lam, r, l)`` with ``m = lam @ b + r - l``: ``lam`` on the two breakpoints around each ``m`` (sample x
    breakpoint), or on an end with ``r`` / ``l`` the distance beyond it (the point :func:`envelope` values)."""
    m = np.asarray(m, dtype=float)
    lam = np.zeros((m.size, b.size))
    rows = np.arange(m.size)
    right, left = np.maximum(m - b[-1], 0.0), np.maximum(b[0] - m, 0.0)
    inside = (m > b[0]) & (m < b[-1])
    k = np.clip(np.searchsorted(b, m, side="right") - 1, 0, max(b.size - 2, 0))  # b[k] <= m < b[k + 1]
    t = np.zeros(m.size)
    if b.size > 1:
        t[inside] = (m[inside] - b[k[inside]]) / (b[k[inside] + 1] - b[k[inside]])
        lam[rows[inside], k[inside]] = 1.0 - t[inside]
        lam[rows[inside], k[inside] + 1] = t[inside]
    lam[rows[m <= b[0]], 0] = 1.0
    lam[rows[(m >= b[-1]) & (m > b[0])], -1] = 1.0
    return lam, right, left


class SlackLoss(Block):
    """Base class: a convex piecewise-linear loss ``max_k (a_k m + c_k)`` as slack rows.

    Parameters
    ----------
    C:
        Weight of the loss, a number or one per level ``h = 1..d`` (``C_h``, [aldinucci-thesis-2024] lines 612-616).
    levels:
        ``"all"``: a slack per level (3.12) (every branch node is a classifier, as OLCT and MARGOT);
        ``"last"``: only the last level (3.10).
    on:
        ``"tree"`` (default): the margin of the split at the node each sample reaches, as above;
        ``"score"``: the margin ``y_i * score_i`` of a linear score provided by an earlier block under the
        role ``"score"`` (risk scores, (4.4)); no routing, no big-M, one slack per sample.
    epigraph:
        On a score, how ``xi_i >= max_k (a_k m_i + c_k)`` is written. ``"pieces"`` (default): a row per
        piece, each holding the whole score (the thesis' (4.4): with V3, 16 rows of ``p + 2`` entries per
        sample). ``"breakpoints"``: the same epigraph by the loss' breakpoints ``b_k`` (:func:`envelope`),
        ``m_i = sum_k lam[i, k] b_k + r_i - l_i``, ``sum_k lam[i, k] = 1``, ``lam, r, l >= 0``,
        ``xi_i >= sum_k lam[i, k] f(b_k) + a_hi r_i - a_lo l_i``: three rows per sample, one of them holding the
        score. Exact for a convex loss (the minimum over ``lam`` is the interpolation between the breakpoints
        around ``m``, which is ``f``), and the same LP relaxation; fewer rows make each node's LP cheaper
        (ors: docs/benchmarks.md, "Risk scores").
    M:
        The big-M of the slack rows: a constant, or ``"derived"`` from the split bound ``U``:
        ``M[i, t, k] = |a_k| U[i, t] + c_k - floor``, where ``floor`` is the loss's minimum piece
        (a zero-slope piece): when the sample does not reach ``t`` the row then reads
        ``xi >= a_k m + c_k - M >= floor``, implied by the bound ``xi >= floor`` for every ``|m| <= U``.
    """

    requires = ("split", "reach", "split_bound")
    provides = ("xi", "loss")
    name = "loss"

    def __init__(self, C: float | Sequence[float] = 1.0, levels: str = "all", M: float | str = 100.0,
                 on: str = "tree", epigraph: str = "pieces") -> None:
        if on not in ("tree", "score"):
            raise FormulationError(f"on must be 'tree' or 'score', got {on!r}")
        if epigraph not in EPIGRAPHS:
            raise FormulationError(f"epigraph must be one of {EPIGRAPHS}, got {epigraph!r}")
        if epigraph == "breakpoints" and on != "score":
            raise FormulationError("epigraph='breakpoints' is for a loss on a score (on='score'); a tree's slack "
                                   "rows are switched by big-M and keep epigraph='pieces'")
        self.on, self.epigraph = on, epigraph
        if on == "score":
            self.requires = ("score",)
        if levels not in ("all", "last"):
            raise FormulationError(f"levels must be 'all' or 'last', got {levels!r}")
        Cs = np.atleast_1d(np.asarray(C, dtype=float))
        if Cs.ndim != 1 or not np.all(np.isfinite(Cs)) or np.any(Cs < 0):
            raise FormulationError(f"C must be a non-negative number or one per level, got {C!r}")
        if not (M == "derived" or (isinstance(M, (int, float)) and M > 0)):
            raise FormulationError(f"big-M must be a positive number or 'derived', got {M!r}")
        self.C, self.levels, self.M = C, levels, M

    def pieces(self) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    def surrogate(self, margin: np.ndarray) -> np.ndarray:
        """The loss the rows model, ``max_k (a_k m + c_k)``, evaluated with numpy."""
        a, c = self.pieces()
        return np.max(np.multiply.outer(np.asarray(margin, dtype=float), a) + c, axis=-1)

    def weights(self, ctx: BuildContext) -> np.ndarray:
        """``C_h`` for the modelled levels."""
        lv = self._levels(ctx)
        Cs = np.atleast_1d(np.asarray(self.C, dtype=float))
        if Cs.size == 1:
            return np.full(lv.size, float(Cs[0]))
        if Cs.size != ctx.topo.depth:
            raise FormulationError(f"C has {Cs.size} entries but the tree has {ctx.topo.depth} levels")
        return Cs[lv - 1]

    def _levels(self, ctx: BuildContext) -> np.ndarray:
        return ctx.topo.levels if self.levels == "all" else ctx.topo.levels[-1:]

    def _floor(self) -> float:
        a, c = self.pieces()
        flat = a == 0.0
        return float(c[flat].max()) if flat.any() else -np.inf

    def build_on_score(self, ctx: BuildContext) -> None:
        """(4.4): ``xi[i] >= f(v_k) + f'(v_k) (y_i score_i - v_k)`` for every piece, objective ``C sum_i xi[i]``."""
        m, data = ctx.model, ctx.data
        a, c = self.pieces()
        flat = a == 0.0
        xi = m.add_variables("xi", (SAMPLE,), {SAMPLE: data.n_samples}, lower=self._floor())
        y = xr.DataArray(data.y.astype(float), dims=(SAMPLE,))
        env = envelope(a, c) if self.epigraph == "breakpoints" else None
        if env is not None and env[0].size:  # (a single piece has no breakpoint: its row)
            ctx.state(self)["breaks"] = self._build_breakpoints(ctx, xi, ctx["score"] * y, env)
        elif (~flat).any():
            margin = ctx["score"] * y
            slope = xr.DataArray(a[~flat], dims=(PIECE,))
            inter = xr.DataArray(c[~flat], dims=(PIECE,))
            m.add_constraints(f"{self.name}_pieces", xi >= margin * slope + inter)
        Cs = np.atleast_1d(np.asarray(self.C, dtype=float))
        if Cs.size != 1:
            raise FormulationError("a loss on a score takes one weight C, not one per level")
        m.add_objective(xi * (sample_weights(ctx) * float(Cs[0])), self.name)  # C sum_i w_i xi_i
        ctx.provide("xi", xi, type(self).__name__)
        ctx.provide("loss", self, type(self).__name__)

    def _build_breakpoints(self, ctx: BuildContext, xi: Any, margin: Any,
                           env: tuple[np.ndarray, np.ndarray, float, float]) -> tuple[Any, Any, Any, np.ndarray]:
        """The breakpoint form of the epigraph (``epigraph`` above) of the loss' :func:`envelope` ``env``; returns
        the new columns ``(lam, r, l)`` and the breakpoints (what :meth:`complete` needs)."""
        m, n = ctx.model, ctx.data.n_samples
        b, g, a_lo, a_hi = env
        coords = {SAMPLE: n, BREAK: np.arange(b.size)}
        lam = m.add_variables("lam", (SAMPLE, BREAK), coords, lower=0.0, upper=1.0)
        right = m.add_variables("beyond_right", (SAMPLE,), {SAMPLE: n}, lower=0.0)
        left = m.add_variables("beyond_left", (SAMPLE,), {SAMPLE: n}, lower=0.0)
        bk, gk = xr.DataArray(b, dims=(BREAK,)), xr.DataArray(g, dims=(BREAK,))
        m.add_constraints(f"{self.name}_convex", lam.sum(BREAK) == 1)
        m.add_constraints(f"{self.name}_margin", linsum((margin, 1.0), ((lam * bk).sum(BREAK), -1.0),
                                                        (right, -1.0), (left, 1.0)) == 0)
        value = [((lam * gk).sum(BREAK), 1.0), (left, -a_lo)] + ([(right, a_hi)] if a_hi != 0.0 else [])
        m.add_constraints(f"{self.name}_value", linsum((xi, 1.0), *((e, -k) for e, k in value)) >= 0)
        return lam, right, left, b

    def build(self, ctx: BuildContext) -> None:
        if self.on == "score":
            self.build_on_score(ctx)
            return
        topo, m, data = ctx.topo, ctx.model, ctx.data
        a, c = self.pieces()
        flat = a == 0.0
        floor = self._floor()
        lv = self._levels(ctx)
        nodes = topo.nodes[np.isin(topo.level, lv)]
        xi = m.add_variables("xi", (SAMPLE, LEVEL), {SAMPLE: data.n_samples, LEVEL: lv}, lower=floor)
        y = xr.DataArray(data.y.astype(float), dims=(SAMPLE,))
        slope = xr.DataArray(a[~flat], dims=(PIECE,))
        inter = xr.DataArray(c[~flat], dims=(PIECE,))
        if (~flat).any():
            if self.M == "derived" and not np.isfinite(floor):
                raise FormulationError("M='derived' needs a loss with a zero-slope piece (a finite minimum)")
            y_slope = y * slope  # the data factors y_i a_k, multiplying the split once per row
            # one row family per level h: its nodes reach equally many last-layer nodes, so its rows
            # have one length (no padding terms for the compiler to drop)
            for h, at in topo.by_level(nodes):
                v = ctx["split"].sel(node=at)  # w_t·x_i + b_t, sample x node
                off = 1 - ctx["reach"].sel(node=at).drop_zero_terms()
                if self.M == "derived":
                    Mk = np.abs(slope) * derived_bound(ctx, at) + inter - floor
                else:
                    Mk = xr.DataArray(float(self.M))
                # xi[i, h] >= a_k y_i v + c_k - M (1 - reach), written as "... - xi <= 0"
                m.add_constraints(f"{self.name}_pieces_level{h}",
                                  linsum((v, y_slope), (off, -Mk), (xi.sel(level=h), -1.0)) + inter <= 0)
                ctx.numerics.max_big_m = max(ctx.numerics.max_big_m, float(np.max(np.asarray(Mk))))
        C = xr.DataArray(self.weights(ctx), dims=(LEVEL,))  # matched to xi's levels by name, in order
        m.add_objective(xi * (C * sample_weights(ctx)), self.name)  # sum_h C_h sum_i w_i xi[i, h]
        ctx.provide("xi", xi, type(self).__name__)
        ctx.provide("loss", self, type(self).__name__)

    def leaf_threshold(self, ctx: BuildContext) -> float:
        """Score above which the last layer predicts +1: 0, i.e. ``s(v) >= 0.5`` ([aldinucci-thesis-2024] line 589)."""
        return 0.0

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        """``xi[i, h]`` = the loss at the node the sample reaches on level ``h`` (the tree's own loss);
        on a score, ``xi[i]`` = the loss of the margin ``y_i score_i``."""
        if self.on == "score":
            margin = ctx.data.y * ctx["score"].evaluate(x)
            x[ctx["xi"].ids] = self.surrogate(margin)
            if "breaks" in ctx.state(self):
                lam, right, left, b = ctx.state(self)["breaks"]
                lv, rv, llv = interpolation(b, margin)
                x[lam.ids], x[right.ids], x[left.ids] = lv, rv, llv
            return
        topo = ctx.topo
        path = topo.path_nodes(reached_last(ctx, x))  # sample x level (all levels)
        v = ctx["split"].evaluate(x)  # sample x node
        lv = self._levels(ctx)
        at = np.take_along_axis(v, path[:, lv - 1], axis=1)
        x[ctx["xi"].ids] = self.surrogate(ctx.data.y[:, None] * at)


class HingeLoss(SlackLoss):
    """Hinge ``max(0, 1 - m)``: (3.10) with ``levels="last"``, MARGOT's (3.13) with ``levels="all"``."""

    def pieces(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([0.0, -1.0]), np.array([0.0, 1.0])


class TangentLogisticLoss(SlackLoss):
    """Piecewise-linear under-estimator of the logistic loss by tangents (3.15).

    ``tangents`` is ``"V0"``..``"V3"`` (Sato et al., [aldinucci-thesis-2024] lines 503-505) or a sequence of
    points; custom sets always include ``±inf`` (the asymptotes ``0`` and ``-m``, which every
    V-set contains, giving the loss a floor of 0 and a finite slope at -inf).

    ``objective`` says which loss an ``optimal`` answer is proven in. ``"tangent"`` (default): the rows' own
    under-estimator, the thesis' model. ``"true"`` (on a score only): the logistic loss itself, by outer
    approximation (:func:`treeopt_dsl.lazy.outer_approximation`): the tangents are a relaxation, so the MILP's bound
    is a lower bound of the true optimum; the true loss of its card is an upper bound; until the two meet within
    ``tol`` (relative, :func:`~treeopt_dsl.lazy.outer_gap`), a tangent row per sample at the card's margin
    (:meth:`refine`, the lattice cut of RiskSLIM) is added and the MILP solved again. The rows added are kept
    (:meth:`cuts`) and the completion reads them, so a completed point satisfies every row the loop solved with.

    >>> loss = TangentLogisticLoss("V0", on="score", objective="true")
    >>> float(loss.exact(np.array([0.0]))[0]) == float(np.log(2.0)), float(loss.surrogate(np.array([0.0]))[0])
    (True, 0.6931471805599453)
    """

    #: the scale of the margin the logistic loss reads, ``f(u / m)`` (FasterRisk's multiplier; 1 here)
    multiplier: float = 1.0
    #: what the outer approximation's messages call the two losses
    true_name, surrogate_name = "the true logistic loss", "the tangent surrogate of the logistic loss"

    def __init__(self, tangents: str | Sequence[float] = "V0", C: float | Sequence[float] = 1.0,
                 levels: str = "all", M: float | str = 100.0, on: str = "tree", epigraph: str = "pieces",
                 objective: str = "tangent", tol: float = OUTER_TOL) -> None:
        super().__init__(C=C, levels=levels, M=M, on=on, epigraph=epigraph)
        if objective not in OBJECTIVES:
            raise FormulationError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not (0 < tol < 1):
            raise FormulationError(f"tol (the relative gap to prove the true loss to) must be a number in (0, 1), "
                                   f"got {tol!r}")
        self.tol = float(tol)
        if objective == "true" and on != "score":
            raise FormulationError("objective='true' (the logistic loss proven by outer approximation) is for a "
                                   "loss on a score (on='score'); a tree's loss keeps objective='tangent'")
        self.objective = objective
        if isinstance(tangents, str):
            if tangents not in TANGENT_SETS:
                raise FormulationError(f"unknown tangent set {tangents!r}; choose one of {sorted(TANGENT_SETS)}")
            pts = TANGENT_SETS[tangents]
        else:
            pts = tuple(float(p) for p in tangents) + (-np.inf, np.inf)
            if any(np.isnan(p) for p in pts):
                raise FormulationError("tangent points must be numbers")
        self.tangents = tangents
        self._points = pts

    def pieces(self) -> tuple[np.ndarray, np.ndarray]:
        return logistic_tangents(self._points)

    @property
    def outer(self) -> bool:
        """Whether a solve must prove this loss in the true logistic loss (``objective="true"``)."""
        return self.objective == "true"

    def exact(self, margin: np.ndarray) -> np.ndarray:
        """The loss the tangents under-estimate at the margins ``u = y_i score_i``: ``log(1 + exp(-u / m))``."""
        return logistic_loss(np.asarray(margin, dtype=float) / self.multiplier)

    def tangent(self, margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Slopes and intercepts (in ``u``) of the tangents of :meth:`exact` at the margins ``u``:
        ``f(u0/m) + f'(u0/m)/m (u - u0)``."""
        u = np.asarray(margin, dtype=float)
        slope = -1.0 / (1.0 + np.exp(np.minimum(u / self.multiplier, 700.0))) / self.multiplier  # f'(u/m) / m
        return slope, self.exact(u) - slope * u

    def margins(self, ctx: BuildContext, x: np.ndarray, model: Any = None) -> np.ndarray:
        """``y_i score_i``: from the point ``x``, or recomputed from a decoded ``model`` (its
        ``decision_function`` on the training data as the model was fitted on them, ``scaled=True``)."""
        score = ctx["score"].evaluate(x) if model is None else model.decision_function(ctx.data.X, scaled=True)
        return ctx.data.y * np.asarray(score, dtype=float)

    def exact_objective(self, ctx: BuildContext, x: np.ndarray, model: Any = None) -> float:
        """This block's objective term in the true loss, ``C sum_i w_i f(y_i score_i / m)``, at ``x`` (or of the
        decoded ``model``, :meth:`margins`): what the outer approximation's upper bound and certificate read."""
        w = np.asarray(sample_weights(ctx), dtype=float)
        return float(np.sum(w * self.exact(self.margins(ctx, x, model))) * float(np.ravel(self.C)[0]))

    def _added(self, ctx: BuildContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        st = ctx.state(self)
        if "added" not in st:
            st["added"] = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
        return st["added"]

    def cuts(self, ctx: BuildContext) -> Cuts | None:
        """Every tangent row :meth:`refine` added to this built model so far (``None``: none)."""
        rows, a, c = self._added(ctx)
        return self._rows(ctx, rows, a, c) if rows.size else None

    def _rows(self, ctx: BuildContext, rows: np.ndarray, a: np.ndarray, c: np.ndarray) -> Cuts:
        """``xi_i - a y_i score_i >= c + a y_i const_i`` for each ``(i, a, c)``: a tangent on sample ``i``'s margin."""
        score, y = ctx["score"], ctx.data.y.astype(float)
        coef, ids = score.coef[rows], score.vars[rows]  # sample x term; id -1 pads a shorter row
        k = rows.size
        keep = ids >= 0
        r = np.concatenate([np.arange(k), np.repeat(np.arange(k), keep.sum(1))])
        col = np.concatenate([ctx["xi"].ids[rows], ids[keep]])
        val = np.concatenate([np.ones(k), (-(a * y[rows])[:, None] * coef)[keep]])
        A = sp.csr_matrix((val, (r, col)), shape=(k, int(ctx.model.n_vars)))
        A.sum_duplicates()
        const = np.broadcast_to(score.const, (ctx.data.n_samples,))[rows]
        return Cuts(A, c + a * y[rows] * const, np.full(k, np.inf))

    def refine(self, ctx: BuildContext, x: np.ndarray, slack: float) -> Cuts | None:
        """Tangent rows at the margins of ``x`` for every sample whose loss the rows under-estimate there by more
        than ``slack`` (in units of the weighted objective: a sample is cut when ``f(u_i) - xi_i > slack /
        (C sum_j w_j)``, so the samples left uncut add up to at most ``slack``). The rows are kept on the built
        model (:meth:`cuts`, and :meth:`complete` reads them). ``None``: no sample is under-estimated by more."""
        u = self.margins(ctx, x)
        w = np.asarray(sample_weights(ctx), dtype=float) * np.ones(u.size)
        scale = float(np.ravel(self.C)[0]) * float(w.sum())
        under = self.exact(u) - self._lifted(ctx, u, self.surrogate(u))
        rows = np.flatnonzero(under > slack / max(scale, 1e-300))
        if rows.size == 0:
            return None
        a, c = self.tangent(u[rows])
        old_rows, old_a, old_c = self._added(ctx)
        ctx.state(self)["added"] = (np.r_[old_rows, rows], np.r_[old_a, a], np.r_[old_c, c])
        return self._rows(ctx, rows, a, c)

    def _lifted(self, ctx: BuildContext, u: np.ndarray, xi: np.ndarray) -> np.ndarray:
        """``xi`` raised to every added tangent row at the margins ``u``."""
        rows, a, c = self._added(ctx)
        if rows.size:
            xi = np.array(xi, dtype=float)
            np.maximum.at(xi, rows, a * u[rows] + c)
        return xi

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        super().complete(ctx, x)
        if self.on == "score" and self._added(ctx)[0].size:
            ids = ctx["xi"].ids
            x[ids] = self._lifted(ctx, ctx.data.y * ctx["score"].evaluate(x), x[ids])

    def notes(self, ctx: BuildContext, blocks: Sequence[Block]) -> dict[str, Any]:
        """``objective="tangent"``: an ``optimal`` answer is proven in the tangent surrogate, said in its message."""
        return {} if self.outer else {"proven_in": self.surrogate_name}


class ZeroOneLoss(Block):
    """Misclassification loss with predicted-class binaries (3.9), [aldinucci-thesis-2024] lines 417-427.

    ``yhat[i, h] = 2 u[i, h] - 1`` with ``u`` binary, at the nodes ``t in T_h`` of the modelled levels:

    (3.9a) ``w_t·x_i + b_t <= M (2 + yhat - reach[i, t])``   (yhat = -1 forces v <= 0 where the sample is)
    (3.9b) ``w_t·x_i + b_t >= eps - M (2 - yhat - reach[i, t])`` (yhat = +1 forces v >= eps)
    (3.9c) ``xi = (1 - y yhat) / 2``, i.e. ``1 - u`` for positives and ``u`` for negatives (substituted).

    Reading: (3.9b) in the thesis has no ``eps``; without it a sample with ``v = 0`` could be counted as
    correctly classified for either class, which no deterministic predictor reproduces. We add the
    forwarding rows' ``eps`` so that the decoded rule "+1 iff v > eps/2" is exactly what the MILP counts.
    ``M`` is a constant or ``"derived"`` (``U[i, t]`` and ``U[i, t] + eps``: the largest ``|v|``, as in
    :class:`~treeopt_dsl.blocks.BigMForwarding`, with the factor 2 of (3.9) absorbed so that one
    switched-off term already makes the row redundant).

    **More than two classes** (data with ``K > 2`` classes, ``levels="last"``): the leaf class variables of
    Bertsimas and Dunn's OCT. Each last-level node ``t`` (index ``j`` in ``T_d``) has two leaves, ``2j`` (left,
    ``v <= 0``) and ``2j + 1`` (right, ``v >= eps``); ``r[i, l]`` binary says that sample ``i`` ends in leaf ``l``:

    * ``r[i, 2j] + r[i, 2j+1] = z[i, j]`` (the sample reaches ``t`` and takes one side);
    * ``v[i, t] <= M (1 - r[i, 2j])`` and ``v[i, t] >= eps - M (1 - r[i, 2j+1])`` ((3.7) one level down);
    * ``c[l, k]`` binary, ``sum_k c[l, k] = 1`` (one class per leaf, B&D's ``c_kt``);
    * ``q[i, l] <= r[i, l]``, ``q[i, l] <= c[l, y_i]``, ``0 <= q <= 1`` and ``xi_i = 1 - sum_l q[i, l]``: a
      sample counts as correct only in its own leaf and only if that leaf's class is its own, so it is
      misclassified iff its leaf's class is not its own (B&D count ``N_t - N_kt`` per leaf with a big-M of
      ``n``; these per-sample rows, FlowOCT's sink arcs (4g), have the same integer optima and a much tighter
      LP relaxation: on wine, depth 1, the root bound rises from 24 to 48 of the optimum 54).

    The objective is ``C_d sum_i w_i xi_i`` in both cases (``w_i``: :func:`sample_weights`). Provides ``yhat``
    (``u``, sample x level; ``r``, sample x leaf, for ``K > 2``) and, for ``K > 2``, ``leaf_class`` (``c``).
    """

    requires = ("split", "reach", "split_bound")
    provides = ("xi", "loss", "yhat")

    def __init__(self, C: float | Sequence[float] = 1.0, levels: str = "last", M: float | str = 100.0) -> None:
        self._weights = SlackLoss(C=C, levels=levels, M=M)  # reuse the validation and C_h handling
        self.C, self.levels, self.M = C, levels, M

    def leaf_threshold(self, ctx: BuildContext) -> float:
        return ctx.numerics.eps / 2

    def surrogate(self, margin: np.ndarray) -> np.ndarray:
        """The 0-1 loss as the model counts it (margin here is ``y * (v - eps/2)``)."""
        return (np.asarray(margin) <= 0).astype(float)

    @staticmethod
    def multiclass(ctx: BuildContext) -> bool:
        """Whether the data have more than two classes (the leaf-class model)."""
        return ctx.data.n_classes > 2

    def _bounds(self, ctx: BuildContext, at: np.ndarray) -> tuple[xr.DataArray, xr.DataArray]:
        eps = ctx.numerics.eps
        if self.M == "derived":
            U = derived_bound(ctx, at)
            return U, U + eps
        M = xr.DataArray(float(self.M))
        return M, M

    def build(self, ctx: BuildContext) -> None:
        if self.multiclass(ctx):
            self.build_multiclass(ctx)
            return
        topo, m, data = ctx.topo, ctx.model, ctx.data
        eps = ctx.numerics.eps
        lv = self._weights._levels(ctx)
        nodes = topo.nodes[np.isin(topo.level, lv)]
        u = m.add_variables("yhat", (SAMPLE, LEVEL), {SAMPLE: data.n_samples, LEVEL: lv}, kind="binary")
        for h, at in topo.by_level(nodes):  # level by level: rows of one length (see SlackLoss)
            v = ctx["split"].sel(node=at)
            off = 1 - ctx["reach"].sel(node=at).drop_zero_terms()
            u_h = u.sel(level=h)
            M_lo, M_hi = self._bounds(ctx, at)
            # yhat = 2u - 1: (3.9a) v <= M (1 + u - z) -> v <= M (off + u); (3.9b) v >= eps - M (off + 1 - u)
            m.add_constraints(f"zero_one_neg_level{h}", v <= (off + u_h) * M_lo)
            m.add_constraints(f"zero_one_pos_level{h}", v >= eps - (off + (1 - u_h)) * M_hi)
            ctx.numerics.max_big_m = max(ctx.numerics.max_big_m, float(np.max(np.asarray(M_hi))))
        pos = xr.DataArray((data.y > 0).astype(float), dims=(SAMPLE,))
        xi = u * (1 - 2 * pos) + pos  # (3.9c): 1 - u for y = +1, u for y = -1
        C = xr.DataArray(self._weights.weights(ctx), dims=(LEVEL,), coords={LEVEL: lv})
        m.add_objective(xi * (C * sample_weights(ctx)), "loss")  # sum_h C_h sum_i w_i xi[i, h]
        ctx.provide("xi", xi, "ZeroOneLoss")
        ctx.provide("loss", self, "ZeroOneLoss")
        ctx.provide("yhat", u, "ZeroOneLoss")

    def build_multiclass(self, ctx: BuildContext) -> None:
        """The leaf-class model for ``K > 2`` classes (class docstring)."""
        topo, m, data = ctx.topo, ctx.model, ctx.data
        if self.levels != "last":
            raise FormulationError("the 0-1 loss of more than two classes counts errors at the leaves only "
                                   "(levels='last')")
        eps, K, n = ctx.numerics.eps, data.n_classes, data.n_samples
        last = topo.last
        nl_ = 2 * last.size
        r = m.add_variables("yhat", (SAMPLE, LEAF), {SAMPLE: n, LEAF: np.arange(nl_)}, kind="binary")
        left = r.take(LEAF, 2 * np.arange(last.size), NODE, last)  # sample x last-level node: r[i, 2j]
        right = r.take(LEAF, 2 * np.arange(last.size) + 1, NODE, last)  # r[i, 2j + 1]
        reach = ctx["reach"].sel(node=last).drop_zero_terms()  # z[i, j] at the last level
        m.add_constraints("leaf_side", left + right - reach == 0)
        v = ctx["split"].sel(node=last)
        M_lo, M_hi = self._bounds(ctx, last)
        m.add_constraints("zero_one_leaf_left", v <= (1 - left) * M_lo)
        m.add_constraints("zero_one_leaf_right", v >= eps - (1 - right) * M_hi)
        ctx.numerics.max_big_m = max(ctx.numerics.max_big_m, float(np.max(np.asarray(M_hi))))
        c = m.add_variables("leaf_class", (LEAF, CLASS), {LEAF: np.arange(nl_), CLASS: np.arange(K)}, kind="binary")
        m.add_constraints("leaf_class_one", c.sum(CLASS) == 1)
        onehot = xr.DataArray((data.class_index[:, None] == np.arange(K)[None]).astype(float), dims=(SAMPLE, CLASS),
                              coords={CLASS: np.arange(K)})
        own = c.dot(onehot, CLASS).transpose(SAMPLE, LEAF)  # c[l, y_i]
        q = m.add_variables("leaf_correct", (SAMPLE, LEAF), {SAMPLE: n, LEAF: np.arange(nl_)}, lower=0.0, upper=1.0)
        m.add_constraints("zero_one_leaf_reached", q - r <= 0)  # q[i, l] <= r[i, l]
        m.add_constraints("zero_one_leaf_class", q - own <= 0)  # q[i, l] <= c[l, y_i]
        xi = 1 - q.sum(LEAF)  # 1 iff sample i is misclassified
        Cd = float(self._weights.weights(ctx)[-1])
        m.add_objective(xi * (sample_weights(ctx) * Cd), "loss")  # C_d sum_i w_i xi_i
        ctx.provide("xi", xi, "ZeroOneLoss")
        ctx.provide("loss", self, "ZeroOneLoss")
        ctx.provide("yhat", r, "ZeroOneLoss")
        ctx.provide("leaf_class", c, "ZeroOneLoss")

    def leaves(self, ctx: BuildContext, x: np.ndarray) -> np.ndarray:
        """The leaf ``2j + side`` each training sample reaches in the tree of ``x`` (``K > 2``)."""
        topo = ctx.topo
        j = reached_last(ctx, x)
        v = ctx["split"].evaluate(x)
        side = v[np.arange(j.size), topo.last[j]] > ctx.numerics.eps / 2
        return 2 * j + side.astype(np.int64)

    def best_classes(self, ctx: BuildContext, leaf: np.ndarray) -> np.ndarray:
        """The class of every leaf that minimizes the weighted errors: the weighted majority of its samples
        (ties: the smaller class code; an empty leaf takes the weighted majority of all samples)."""
        data = ctx.data
        K, nl_ = data.n_classes, 2 * ctx.topo.last.size
        mass = np.zeros((nl_, K))
        np.add.at(mass, (leaf, data.class_index), data.weights)
        overall = int(np.argmax(np.bincount(data.class_index, weights=data.weights, minlength=K)))
        return np.where(mass.sum(1) > 0, np.argmax(mass, axis=1), overall)

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        topo = ctx.topo
        if self.multiclass(ctx):
            self._complete_multiclass(ctx, x, self.best_classes(ctx, self.leaves(ctx, x)))
            return
        path = topo.path_nodes(reached_last(ctx, x))
        v = ctx["split"].evaluate(x)
        lv = self._weights._levels(ctx)
        at = np.take_along_axis(v, path[:, lv - 1], axis=1)
        x[ctx["yhat"].ids] = (at > ctx.numerics.eps / 2).astype(float)

    def _complete_multiclass(self, ctx: BuildContext, x: np.ndarray, cls: np.ndarray) -> None:
        """``r``, ``c`` (one class per leaf: ``cls``) and ``q`` of the tree of ``x``."""
        leaf = self.leaves(ctx, x)
        n, nl_, K = leaf.size, cls.size, ctx.data.n_classes
        r = np.zeros((n, nl_))
        r[np.arange(n), leaf] = 1.0
        x[ctx["yhat"].ids] = r
        x[ctx["leaf_class"].ids] = (cls[:, None] == np.arange(K)[None]).astype(float)
        q = np.zeros((n, nl_))
        ok = cls[leaf] == ctx.data.class_index
        q[np.arange(n)[ok], leaf[ok]] = 1.0
        x[ctx.model.variables["leaf_correct"].ids] = q

    def polish(self, ctx: BuildContext, x: np.ndarray) -> None:
        """``K > 2``: the leaf classes that minimize the loss of the solver's tree (a solver's incumbent may
        label a leaf by a class that is not its weighted majority; the decoded tree is the best of its splits)."""
        if self.multiclass(ctx):
            self._complete_multiclass(ctx, x, self.best_classes(ctx, self.leaves(ctx, x)))
