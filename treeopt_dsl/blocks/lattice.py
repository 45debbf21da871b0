"""The whole logistic loss of a risk score as ONE epigraph column, cut lazily: RiskSLIM's lattice cutting planes.

Ustun & Rudin, "Learning Optimized Risk Scores" (JMLR 2019), solve ``min_lambda L(lambda)`` over integer points by a
master MILP whose loss is a single column ``theta`` and whose rows are cuts of the convex function

    L(s, beta) = C sum_i w_i log(1 + exp(-y_i (s·x_i + beta) / m))

at points ``(s_k, beta_k)``: ``theta >= L(s_k, beta_k) + grad L(s_k, beta_k) · ((s, beta) - (s_k, beta_k))`` (a
tangent plane lies below a convex function, so the master is a relaxation: its bound bounds the true optimum). A
cut costs one product of the data matrix with a vector (``X^T d``): no row per sample, whatever the data's size.

:class:`LatticeLogisticLoss` is that master's loss block. It declares ``theta >= 0`` with the objective
``theta``, the cuts given at build (:meth:`cut_rows`: by default the cut at ``s = 0`` with its best intercept),
and separates (:meth:`separate`) at an integer point the solver finds: when ``theta`` is below the card's loss
at its *best intercept* ``beta*(s)`` (:func:`best_intercept`, a 1-D convex problem) by more than ``slack``, it
returns the cut at ``(s, beta*(s))``, whose slope in ``beta`` is 0, so that once it is in the master no
intercept gives the card ``s`` a ``theta`` below its true loss (each integer card needs one cut, so the lazy loop
is finite) and the cut at the solver's own ``(s, beta)``. The route that drives the cuts (a lazy-constraint
callback, or re-solving: :mod:`treeopt_dsl.lazy`) is the solver's; the block only says which rows are violated.

:meth:`polish` sets the intercept to ``beta*(s)`` and :meth:`complete` sets ``theta`` to the true loss, so every
answer is the card's true loss at its best intercept, the objective the certificate recomputes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
import xarray as xr

from treeopt_dsl.blocks.losses import OUTER_TOL, TANGENT_SETS, logistic_loss, logistic_tangents
from treeopt_dsl.blocks.splits import FEATURE, SAMPLE
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Block, BuildContext, Cuts

#: the dimension of the cuts given at build
CUT = "cut"
#: the slack of :meth:`LatticeLogisticLoss.slack`: absolute and relative to the card's loss
SLACK_ABS, SLACK_REL = 1e-6, 1e-8
#: steps of :func:`best_intercepts` (safeguarded Newton; a bisection step halves the bracket)
MAX_STEPS = 200


def _weighted(w: np.ndarray | float, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(w, dtype=float), (n,))


def best_intercept(t: np.ndarray, y: np.ndarray, w: np.ndarray, multiplier: float = 1.0,
                   bound: float | None = None, tol: float = 1e-12) -> float:
    """The intercept ``beta`` minimizing ``sum_i w_i log(1 + exp(-y_i (t_i + beta) / m))`` for the scores ``t``
    (the card's points summed), within ``|beta| <= bound`` when given (:func:`best_intercepts` for one card).

    Convex in ``beta``: the root of its increasing derivative, bracketed and found by safeguarded Newton steps.
    With one class only the loss decreases without end: the bound's end (or ``±60 m`` beyond the scores without a
    bound) is returned.

        >>> t = np.array([0.0, 0.0, 0.0, 0.0]); y = np.array([1.0, 1.0, 1.0, -1.0])
        >>> round(best_intercept(t, y, np.ones(4)), 6) == round(float(np.log(3.0)), 6)  # logit of the rate 3/4
        True
    """
    t = np.asarray(t, dtype=float)
    w = _weighted(w, np.size(t))
    return float(best_intercepts(t[None, :], np.asarray(y, dtype=float)[None, :], w[None, :], multiplier, bound,
                                 tol)[0])


def best_intercepts(t: np.ndarray, y: np.ndarray, w: np.ndarray, multiplier: float = 1.0,
                    bound: float | None = None, tol: float = 1e-12) -> np.ndarray:
    """:func:`best_intercept` for ``B`` cards at once: ``t``, ``y``, ``w`` are ``(B, k)`` (a card's samples or its
    groups of equal total and label, weighted; a zero weight pads a row); returns ``(B,)``. The same safeguarded
    Newton steps, on every row until each bracket has shrunk to ``tol`` (relative)."""
    m = float(multiplier)
    t, y = np.atleast_2d(np.asarray(t, dtype=float)), np.atleast_2d(np.asarray(y, dtype=float))
    w = np.broadcast_to(np.asarray(w, dtype=float), t.shape)

    def grad(beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = y * (t + beta[:, None]) / m
        p = np.exp(-np.logaddexp(0.0, z))  # 1 / (1 + exp(z)) = -f'(z)
        return (-w * y * p).sum(1) / m, (w * p * (1.0 - p)).sum(1) / m ** 2

    B = t.shape[0]
    reach = 60.0 * m + (np.max(np.abs(t), axis=1) if t.shape[1] else np.zeros(B))
    lo, hi = (-reach, reach.copy()) if bound is None else (np.full(B, -float(bound)), np.full(B, float(bound)))
    g_lo, g_hi = grad(lo)[0], grad(hi)[0]
    out = np.where(g_lo >= 0, lo, np.where(g_hi <= 0, hi, np.nan))
    todo = np.isnan(out)
    beta = np.where((lo < 0.0) & (0.0 < hi), 0.0, 0.5 * (lo + hi))
    for _ in range(MAX_STEPS):
        if not todo.any():
            break
        g, h = grad(beta)
        hi = np.where(todo & (g > 0), beta, hi)
        lo = np.where(todo & (g <= 0), beta, lo)
        done = todo & ((hi - lo <= tol * np.maximum(1.0, np.abs(beta))) | (g == 0.0))
        out = np.where(done, beta, out)
        todo &= ~done
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(h > 0, beta - g / h, np.nan)
        beta = np.where((lo < step) & (step < hi), step, 0.5 * (lo + hi))  # Newton inside the bracket, else bisection
    return np.where(np.isnan(out), beta, out)


class LatticeLogisticLoss(Block):
    """The true logistic loss of a score as one column ``theta`` with lazy cutting planes (module docstring).

    ``multiplier``: FasterRisk's ``m`` (the loss of ``(s·x + beta) / m``); ``C``: the loss' weight; ``tol``: the
    relative gap ``(UB - LB) / max(1, |UB|)`` a solve proves (:meth:`slack` is the share a cut may leave);
    ``points``: the cards whose cuts are rows of the master from the start (``None``: the card ``s = 0``).

    >>> import numpy as np
    >>> from treeopt_dsl import Dataset, blocks as B
    >>> from treeopt_dsl.formulation import Formulation
    >>> data = Dataset.from_arrays([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]], [1, -1, 1, -1])
    >>> built = Formulation("lcpa", [B.IntegerScores(A="-3..3"), B.L0(of="s", budget=1),
    ...                              B.LatticeLogisticLoss()]).build(data)
    >>> x = built.complete(np.r_[np.full(built.model.n_vars, np.nan)])  # every column from s = 0, beta = 0
    >>> built.model.variables["theta"].values(built.polish(x)).item() > 0, built.lazy
    (True, True)
    """

    requires = ("s", "beta", "score")
    provides = ("theta", "loss")
    #: what messages call the loss this block proves
    true_name = "the true logistic loss"
    name = "loss"

    def __init__(self, multiplier: float = 1.0, C: float = 1.0, tol: float = OUTER_TOL,
                 points: Sequence[Sequence[float]] | None = None) -> None:
        if not (np.isfinite(multiplier) and multiplier > 0):
            raise FormulationError(f"multiplier must be a positive finite number, got {multiplier!r}")
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not (0 < tol < 1):
            raise FormulationError(f"tol (the relative gap to prove the true loss to) must be a number in (0, 1), "
                                   f"got {tol!r}")
        if not (np.isfinite(C) and C > 0):
            raise FormulationError(f"C (the weight of the loss) must be a positive finite number, got {C!r}")
        self.multiplier, self.C, self.tol = float(multiplier), float(C), float(tol)
        self.points = None if points is None else [list(map(float, p)) for p in points]

    # ------------------------------------------------------------------ the loss and its cuts
    def _data(self, ctx: BuildContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d = ctx.data
        return np.asarray(d.X, dtype=float), d.y.astype(float), _weighted(
            1.0 if d.sample_weight is None else d.sample_weight, d.n_samples) * self.C

    def value(self, ctx: BuildContext, s: np.ndarray, beta: float) -> float:
        """``L(s, beta)``, the loss the block proves (its objective term at the card)."""
        X, y, w = self._data(ctx)
        return float(np.sum(w * logistic_loss(y * (X @ s + beta) / self.multiplier)))

    def intercept(self, ctx: BuildContext, s: np.ndarray) -> float:
        """``beta*(s)``: the card's best intercept (:func:`best_intercept`, within the model's bounds on beta)."""
        X, y, w = self._data(ctx)
        lo, hi = float(ctx["beta"].lower.ravel()[0]), float(ctx["beta"].upper.ravel()[0])
        bound = None if np.isinf(lo) and np.isinf(hi) else max(abs(lo), abs(hi))
        return best_intercept(X @ s, y, w, self.multiplier, bound)

    def cut(self, ctx: BuildContext, s: np.ndarray, beta: float) -> tuple[float, np.ndarray, float]:
        """The tangent plane at ``(s, beta)``: ``(L, dL/ds, dL/dbeta)`` (one product ``X^T d``)."""
        X, y, w = self._data(ctx)
        z = y * (X @ s + beta) / self.multiplier
        d = -w * y * np.exp(-np.logaddexp(0.0, z)) / self.multiplier  # w_i f'(z_i) y_i / m
        return float(np.sum(w * logistic_loss(z))), X.T @ d, float(np.sum(d))

    def _card(self, ctx: BuildContext, x: np.ndarray) -> tuple[np.ndarray, float]:
        return np.asarray(ctx["s"].values(x), dtype=float).ravel(), float(ctx["beta"].values(x))

    def _rows(self, ctx: BuildContext, planes: list[tuple[float, np.ndarray, float, np.ndarray, float]]) -> Cuts:
        """``theta - g_s·s - g_b beta >= L - g_s·s_k - g_b beta_k`` for each plane ``(L, g_s, g_b, s_k, beta_k)``."""
        theta, s, beta = ctx["theta"].ids.ravel(), ctx["s"].ids.ravel(), ctx["beta"].ids.ravel()
        k, p = len(planes), s.size
        cols = np.tile(np.r_[theta, s, beta], k)
        vals = np.concatenate([np.r_[1.0, -gs, -gb] for _, gs, gb, _, _ in planes])
        rows = np.repeat(np.arange(k), p + 2)
        A = sp.csr_matrix((vals, (rows, cols)), shape=(k, int(ctx.model.n_vars)))
        lower = np.array([L - gs @ sk - gb * bk for L, gs, gb, sk, bk in planes])
        return Cuts(A, lower, np.full(k, np.inf))

    def slack(self, loss: float) -> float:
        """How far below the card's true loss ``theta`` may be before the card is cut: ``max(1e-6, 1e-8 |L|)``,
        about a MIP solver's feasibility tolerance. Small on purpose: a card once cut at its best intercept has
        ``theta`` exactly at its loss, so the slack buys no fewer cuts, and the solver's objective then agrees
        with the card's true loss to the certificate's tolerance."""
        return max(SLACK_ABS, SLACK_REL * abs(loss))

    def pieces(self) -> tuple[np.ndarray, np.ndarray]:
        """Tangents of the loss of ``u / m`` at Sato et al.'s V3 points (slopes and intercepts in ``u``): the
        piecewise-linear loss the beam start (:mod:`treeopt_dsl.starts.risk`) searches with; the start is then
        scored in the true loss (this block's completion)."""
        a, c = logistic_tangents(TANGENT_SETS["V3"])
        return a / self.multiplier, c

    # ------------------------------------------------------------------ the block
    def build(self, ctx: BuildContext) -> None:
        m = ctx.model
        theta = m.add_variables("theta", (), {}, lower=0.0, upper=np.inf)
        ctx.provide("theta", theta, type(self).__name__)
        ctx.provide("loss", self, type(self).__name__)
        m.add_objective(theta * 1.0, self.name)
        p = ctx.data.n_features
        points = [np.zeros(p)] + [np.asarray(q, dtype=float) for q in (self.points or [])]
        for q in points:
            if q.shape != (p,):
                raise FormulationError(f"every initial point of LatticeLogisticLoss needs {p} entries (one per "
                                       f"feature), got {q.size}")
        planes = []
        for q in points:
            b = self.intercept(ctx, q)
            L, gs, gb = self.cut(ctx, q, b)
            planes.append((L, gs, gb, q, b))
        G = np.array([pl[1] for pl in planes])
        gb = np.array([pl[2] for pl in planes])
        rhs = np.array([L - g @ q - b_ * bb for (L, g, b_, q, bb) in planes])
        coords = {CUT: np.arange(len(planes))}
        grad_s = ctx["s"].dot(xr.DataArray(G, dims=(CUT, FEATURE), coords=coords), FEATURE)
        expr = theta - grad_s - ctx["beta"] * xr.DataArray(gb, dims=(CUT,), coords=coords)
        m.add_constraints(f"{self.name}_cuts", expr >= xr.DataArray(rhs, dims=(CUT,), coords=coords))
        ctx.state(self).update(cuts=0, calls=0)

    def separate(self, ctx: BuildContext, x: np.ndarray) -> Cuts | None:
        """The cuts at the integer card of ``x`` when ``theta`` lies below its true loss at its best intercept by
        more than :meth:`slack`; ``None`` when it does not (the card's loss is proven to that slack)."""
        st = ctx.state(self)
        st["calls"] = st.get("calls", 0) + 1
        s, beta = self._card(ctx, x)
        theta = float(ctx["theta"].values(x))
        best = self.intercept(ctx, s)
        L, gs, _ = self.cut(ctx, s, best)
        if theta >= L - self.slack(L):
            return None
        planes = [(L, gs, 0.0, s, best)]  # at beta*: the slope in beta is 0 up to round-off (dropped)
        if abs(beta - best) > 1e-9 * max(1.0, abs(best)):
            Lk, gk, gbk = self.cut(ctx, s, beta)
            planes.append((Lk, gk, gbk, s, beta))
        st["cuts"] = st.get("cuts", 0) + len(planes)
        return self._rows(ctx, planes)

    def tangents(self, ctx: BuildContext, x: np.ndarray, every: bool = False) -> Cuts | None:
        """The cut at the (fractional) point ``(s, beta)`` of ``x`` when ``theta`` lies below ``L(s, beta)`` by more
        than :meth:`slack` (``every``: whatever ``theta`` is): valid everywhere, ``L`` being convex (RiskSLIM's
        initial phase on the relaxation)."""
        s, beta = self._card(ctx, x)
        theta = float(ctx["theta"].values(x))
        L, gs, gb = self.cut(ctx, s, beta)
        if not every and theta >= L - self.slack(L):
            return None
        st = ctx.state(self)
        st["relaxation_cuts"] = st.get("relaxation_cuts", 0) + 1
        return self._rows(ctx, [(L, gs, gb, s, beta)])

    def polish(self, ctx: BuildContext, x: np.ndarray) -> None:
        """The intercept set to the card's best one, ``beta*(s)`` (the integers decide it), and ``theta`` to the
        card's true loss there."""
        s, _ = self._card(ctx, x)
        best = self.intercept(ctx, s)
        x[ctx["beta"].ids] = best
        x[ctx["theta"].ids] = self.value(ctx, s, best)

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        """``theta`` = the true loss of the card ``(s, beta)`` of ``x``."""
        s, beta = self._card(ctx, x)
        if np.all(np.isfinite(s)) and np.isfinite(beta):
            x[ctx["theta"].ids] = self.value(ctx, s, beta)

    def notes(self, ctx: BuildContext, blocks: Sequence[Block]) -> dict[str, Any]:
        """The cuts so far (``lattice``) and what an ``optimal`` answer is proven in (with its gap: the route
        writes it)."""
        st = ctx.state(self)
        return {"proven_in": self.true_name, "proven_to_gap": self.tol,
                "lattice": {"cuts": int(st.get("cuts", 0)), "separations": int(st.get("calls", 0)),
                            "relaxation_cuts": int(st.get("relaxation_cuts", 0))}}


#: the margins ``z = y (s·x + beta) / m`` at which every sample's loss gets a tangent row at build
#: (:class:`SampleLatticeLoss`): a floor of the per-sample losses before any cut
SAMPLE_MARGINS = (-1.5, 0.0, 1.5)


class SampleLatticeLoss(LatticeLogisticLoss):
    """The lattice cutting planes with the loss *disaggregated*: a column ``theta_i`` per sample (per distinct row
    of compressed data), the objective ``C sum_i w_i theta_i``, and each cut a tangent of sample ``i``'s loss
    ``f(y_i (s·x_i + beta) / m)`` at a card: ``theta_i >= f(z_i) + f'(z_i) (y_i (s·x_i + beta) / m - z_i)``. The rows
    at one card are the rows of one sparse matrix ``diag(f'(z) y / m) X`` (numpy and scipy, no loop per sample).

    A tangent of a one-dimensional convex function holds far from where it was made; a cut of the summed loss
    does not, so the master's relaxation at a node of the search is much tighter here, for ``n`` columns
    (:class:`LatticeLogisticLoss` keeps one). At build: the tangents at the margins :data:`SAMPLE_MARGINS`. An
    integer card is cut when ``sum_i w_i theta_i`` lies below its true loss at its best intercept by more than
    :meth:`slack`: then every sample gets its tangent at ``(s, beta*(s))`` (together they hold the card at its true
    loss whatever the intercept: the slopes in ``beta`` sum to 0 there) and the samples the solver's own
    ``(s, beta)`` under-estimates get theirs.
    """

    def _margins(self, ctx: BuildContext, s: np.ndarray, beta: float) -> np.ndarray:
        X, y, _ = self._data(ctx)
        return y * (X @ s + beta) / self.multiplier

    def _sample_rows(self, ctx: BuildContext, rows: np.ndarray, z: np.ndarray) -> Cuts:
        """``theta_i - a_i y_i (x_i·s + beta) / m >= f(z_i) - a_i z_i`` with ``a_i = f'(z_i)``, for ``i`` in ``rows``
        at the margins ``z`` (one per row)."""
        X, y, _ = self._data(ctx)
        theta, s, beta = ctx["theta"].ids.ravel(), ctx["s"].ids.ravel(), int(ctx["beta"].ids.ravel()[0])
        a = -np.exp(-np.logaddexp(0.0, z))  # f'(z) = -1 / (1 + exp(z))
        k = rows.size
        coef = -(a * y[rows] / self.multiplier)
        Xr = sp.csr_matrix(X[rows])
        Xr = sp.csr_matrix(Xr.multiply(coef[:, None]))
        r = np.concatenate([np.arange(k), np.repeat(np.arange(k), np.diff(Xr.indptr)), np.arange(k)])
        c = np.concatenate([theta[rows], s[Xr.indices], np.full(k, beta)])
        v = np.concatenate([np.ones(k), Xr.data, coef])
        A = sp.csr_matrix((v, (r, c)), shape=(k, int(ctx.model.n_vars)))
        return Cuts(A, logistic_loss(z) - a * z, np.full(k, np.inf))

    def build(self, ctx: BuildContext) -> None:
        m, n = ctx.model, ctx.data.n_samples
        theta = m.add_variables("theta", (SAMPLE,), {SAMPLE: np.arange(n)}, lower=0.0, upper=np.inf)
        ctx.provide("theta", theta, type(self).__name__)
        ctx.provide("loss", self, type(self).__name__)
        _, _, w = self._data(ctx)
        m.add_objective(theta * xr.DataArray(w, dims=(SAMPLE,)), self.name)
        score, y = ctx["score"], ctx.data.y.astype(float)
        for k, v in enumerate(SAMPLE_MARGINS):  # theta_i >= f(v) + f'(v) (y_i score_i / m - v)
            a = float(-np.exp(-np.logaddexp(0.0, v)))
            slope = xr.DataArray(a * y / self.multiplier, dims=(SAMPLE,))
            m.add_constraints(f"{self.name}_margin{k}", theta - score * slope >= float(logistic_loss(v) - a * v))
        ctx.state(self).update(cuts=0, calls=0)

    def _theta(self, ctx: BuildContext, x: np.ndarray) -> np.ndarray:
        return np.asarray(ctx["theta"].values(x), dtype=float).ravel()

    def separate(self, ctx: BuildContext, x: np.ndarray) -> Cuts | None:
        st = ctx.state(self)
        st["calls"] = st.get("calls", 0) + 1
        s, beta = self._card(ctx, x)
        _, _, w = self._data(ctx)
        theta = self._theta(ctx, x)
        best = self.intercept(ctx, s)
        z = self._margins(ctx, s, best)
        L = float(np.sum(w * logistic_loss(z)))
        if float(w @ theta) >= L - self.slack(L):
            return None
        n = z.size
        parts = [self._sample_rows(ctx, np.arange(n), z)]
        zk = self._margins(ctx, s, beta)
        under = np.flatnonzero(theta < logistic_loss(zk) - 1e-9)
        if abs(beta - best) > 1e-9 * max(1.0, abs(best)) and under.size:
            parts.append(self._sample_rows(ctx, under, zk[under]))
        cuts = Cuts.stack(parts)
        st["cuts"] = st.get("cuts", 0) + (0 if cuts is None else cuts.n_rows)
        return cuts

    def tangents(self, ctx: BuildContext, x: np.ndarray, every: bool = False) -> Cuts | None:
        """Tangents at the (fractional) margins of ``x`` for the samples whose ``theta_i`` lies below their loss by
        more than their share of :meth:`slack` (``every``: all samples)."""
        s, beta = self._card(ctx, x)
        _, _, w = self._data(ctx)
        z = self._margins(ctx, s, beta)
        f = logistic_loss(z)
        L = float(np.sum(w * f))
        gap = w * (f - self._theta(ctx, x))
        rows = np.arange(z.size) if every else np.flatnonzero(gap > self.slack(L) / max(1, z.size))
        if not every and float(gap.sum()) <= self.slack(L):
            return None
        if rows.size == 0:
            return None
        st = ctx.state(self)
        st["relaxation_cuts"] = st.get("relaxation_cuts", 0) + int(rows.size)
        return self._sample_rows(ctx, rows, z[rows])

    def polish(self, ctx: BuildContext, x: np.ndarray) -> None:
        s, _ = self._card(ctx, x)
        best = self.intercept(ctx, s)
        x[ctx["beta"].ids] = best
        x[ctx["theta"].ids] = logistic_loss(self._margins(ctx, s, best))

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        s, beta = self._card(ctx, x)
        if np.all(np.isfinite(s)) and np.isfinite(beta):
            x[ctx["theta"].ids] = logistic_loss(self._margins(ctx, s, beta))
