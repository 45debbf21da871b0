"""A sparse beam-search start for optimal risk scores (``ors``, thesis (4.5)), in the spirit of FasterRisk.

Liu, J., Zhong, C., Li, B., Seltzer, M. and Rudin, C. (2022). *FasterRisk: Fast and Accurate Interpretable
Risk Scores.* Advances in Neural Information Processing Systems 35 (NeurIPS 2022). FasterRisk grows sparse
supports by beam search on the logistic loss, keeps a diverse pool of near-optimal ones, and turns each into
integer points by a "star ray" search over a multiplier ``m`` (model ``P(y|x) = sigmoid((s·x + beta)/m)``).

:func:`risk_score_start` does the same for the MILP's own objective, without a solver:

1. **Beam search over supports** (``||s||_0 = T``, (4.1b)/(4.2)): from the intercept-only model, every
   support in the beam is extended by one feature; each extension is first screened by a 1-D Newton fit of
   the new coefficient alone (all candidate features at once), the ``beam`` best extensions of each support
   are refitted jointly (a few Newton steps of an l2-lightly-regularized logistic regression, batched over
   the candidates), and the ``beam`` best supports by the logistic loss are kept, until they have ``T``
   features.
2. **Rounding by a multiplier grid** (FasterRisk's star-ray search): the continuous coefficients, in units
   of the formulation's logit ``(s·x + beta)/m`` (``m`` its ``multiplier``), are scaled so that the largest
   ``|coef|`` maps to each integer ``1..max|A|`` (and left unscaled when they already fit) and rounded to the
   nearest point of ``A`` (4.1a).
3. **The intercept in closed form**: for fixed points the loss (4.4) is convex and piecewise linear in
   ``beta``; its minimizer is a breakpoint, found by one sort of the breakpoints and a running sum of the
   slope increments (exact, no grid).
4. **Discrete coordinate descent** (FasterRisk's local search) on the best few roundings: one feature's
   points at a time, over every value of ``A``, ``beta`` re-optimized, until no move lowers the loss.

The candidates are ranked by the formulation's piecewise-linear loss (the loss block's own pieces, so the
multiplier and the tangent set are respected), and the best few are completed with
:func:`~treeopt_dsl.starts.resolver.from_decisions` and compared in ``built.compile().objective``. The result is
a dict of the decisions ``{"s": points, "beta": intercept}``; the blocks complete the indicators (the L0
``complete`` switches on unused indicators when ``cardinality="exact"`` asks for ``T``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treeopt_dsl.blocks import L0, IntegerScores
from treeopt_dsl.defaults import RISK_DESCENT_SWEEPS
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Built
from treeopt_dsl.models.embed import from_decisions

#: how many of the best roundings get the discrete coordinate descent
POLISHED = 3
#: Newton steps of the joint refits and of the 1-D screening
NEWTON_STEPS = 12
SCREEN_STEPS = 5
#: largest Newton step per coordinate (the logistic loss is far from quadratic on separable data)
MAX_STEP = 5.0


def _blocks(built: Built) -> tuple[Any, Any, Any]:
    """The IntegerScores, L0 (on ``s``) and loss blocks of a risk-score formulation."""
    scores = next((b for b in built.formulation.blocks if isinstance(b, IntegerScores)), None)
    if scores is None:
        raise FormulationError(f"{built.formulation.name} has no IntegerScores block: the beam start is for risk "
                               "scores (ors)")
    l0 = next((b for b in built.formulation.blocks if isinstance(b, L0) and b.of == "s"), None)
    loss = built.ctx.roles.get("loss")
    if loss is None or not hasattr(loss, "pieces"):
        raise FormulationError(f"{built.formulation.name}: the beam start needs a piecewise-linear loss on the score")
    return scores, l0, loss


# --------------------------------------------------------------------------- continuous logistic fits
def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _refit(X: np.ndarray, y: np.ndarray, supports: np.ndarray, w0: np.ndarray, lam: float, sw: np.ndarray,
           steps: int = NEWTON_STEPS) -> tuple[np.ndarray, np.ndarray]:
    """Joint logistic fits on several supports of one size, batched: ``supports`` is ``(B, k)`` feature
    indices, ``w0`` ``(B, k + 1)`` starting coefficients (the last one the intercept). Minimizes
    ``sum_i sw_i log(1 + exp(-y_i (w·x_i + b))) + lam/2 ||w||^2`` by damped Newton steps; returns the
    coefficients ``(B, k + 1)`` and the unpenalized losses ``(B,)``."""
    B, k = supports.shape
    Z = np.concatenate([X[:, supports].transpose(1, 0, 2), np.ones((B, X.shape[0], 1))], axis=2)  # B x n x k+1
    Zy = Z * y[None, :, None]
    reg = np.full(k + 1, lam)
    reg[-1] = 1e-8 * lam  # the intercept is not penalized (a tiny ridge keeps the Hessian invertible)
    w = w0.copy()
    for _ in range(steps):
        m = np.einsum("bnk,bk->bn", Zy, w)
        p = _sigmoid(-m)  # d/dm log(1 + e^-m) = -p
        g = -np.einsum("bnk,bn->bk", Zy, p * sw) + reg * w
        h = p * (1.0 - p) * sw
        H = np.einsum("bnk,bnl->bkl", Z * h[..., None], Z) + np.diag(reg)[None]
        step = np.linalg.solve(H, g[..., None])[..., 0]
        big = np.abs(step).max(1, keepdims=True)
        w -= step * np.minimum(1.0, MAX_STEP / np.maximum(big, 1e-300))
    m = np.einsum("bnk,bk->bn", Zy, w)
    return w, (np.logaddexp(0.0, -m) * sw).sum(1)


def _screen(X: np.ndarray, y: np.ndarray, margin: np.ndarray, sw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every feature ``j`` at once: the 1-D logistic fit (sample weights ``sw``) of a new coefficient ``c_j``
    with the current margins ``y_i (w·x_i + b)`` fixed; returns ``c`` and the losses, both ``(p,)``."""
    Xy = X * y[:, None]
    c = np.zeros(X.shape[1])
    w = sw[:, None]
    for _ in range(SCREEN_STEPS):
        m = margin[:, None] + Xy * c
        p = _sigmoid(-m)
        g = -(Xy * p * w).sum(0)
        h = (X * X * p * (1.0 - p) * w).sum(0) + 1e-9
        c -= np.clip(g / h, -MAX_STEP, MAX_STEP)
    return c, (np.logaddexp(0.0, -(margin[:, None] + Xy * c)) * w).sum(0)


def beam_supports(X: np.ndarray, y: np.ndarray, T: int, beam: int = 10, l2: float = 1e-3,
                  sw: np.ndarray | None = None) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Sparse beam search (FasterRisk's first stage): the ``beam`` best supports of ``T`` features by the
    logistic loss (each sample weighing ``sw_i``, 1 when ``None``: an integer weight is a repeated row), each
    as ``(features, coefficients with the intercept last, loss)``, best first."""
    n, p = X.shape
    sw = np.ones(n) if sw is None else np.asarray(sw, dtype=float)
    lam = l2 * float(sw.sum())
    T = min(T, p)
    pos = float(np.clip(sw[y > 0].sum() / max(float(sw.sum()), 1e-300), 1e-6, 1 - 1e-6))
    b0 = np.log(pos / (1 - pos))
    pool: list[tuple[np.ndarray, np.ndarray, float]] = [
        (np.zeros(0, dtype=np.int64), np.array([b0]), float((np.logaddexp(0.0, -y * b0) * sw).sum()))]
    for _ in range(T):
        ext: dict[tuple[int, ...], np.ndarray] = {}
        for feats, w, _loss in pool:
            margin = y * (X[:, feats] @ w[:-1] + w[-1])
            c, loss = _screen(X, y, margin, sw)
            loss[feats] = np.inf
            for j in np.argsort(loss)[:beam]:
                if not np.isfinite(loss[j]):
                    continue
                key = tuple(sorted((*feats.tolist(), int(j))))
                if key not in ext:
                    coef = dict(zip(feats.tolist(), w[:-1].tolist(), strict=True))
                    coef[int(j)] = float(c[j])
                    ext[key] = np.array([coef[f] for f in key] + [w[-1]])
        if not ext:
            break
        supports = np.array(list(ext), dtype=np.int64)
        W, losses = _refit(X, y, supports, np.array(list(ext.values())), lam, sw)
        order = np.argsort(losses)[:beam]
        pool = [(supports[i], W[i], float(losses[i])) for i in order]
    return pool


# --------------------------------------------------------------------------- the piecewise-linear loss
class _PiecewiseLoss:
    """``C sum_i sw_i max_k (a_k y_i (t_i + beta) + c_k)``, the loss block's pieces (the multiplier included),
    with the exact minimizer over ``beta`` in ``[lo, hi]``."""

    def __init__(self, loss: Any, y: np.ndarray, lo: float, hi: float, sw: np.ndarray | None = None) -> None:
        a, c = loss.pieces()
        order = np.lexsort((-c, a))
        a, c = a[order], c[order]
        keep = np.r_[True, np.diff(a) > 0]  # one piece per slope (the largest intercept)
        self.a, self.c = a[keep], c[keep]
        self.cross = (self.c[1:] - self.c[:-1]) / (self.a[:-1] - self.a[1:])  # margins where slopes change
        if np.any(np.diff(self.cross) < 0):
            raise FormulationError("the loss pieces are not the tangents of a convex function")
        self.jump = np.diff(self.a)
        Cs = np.atleast_1d(np.asarray(getattr(loss, "C", 1.0), dtype=float))
        self.C = float(Cs[0])
        self.y = y
        self.sw = np.ones(y.shape[0]) if sw is None else np.asarray(sw, dtype=float)
        self.lo, self.hi = lo, hi
        # slope of the loss in beta at beta -> -inf: positives on their first piece, negatives on their last
        self.d0 = float(self.sw[y > 0].sum() * self.a[0] - self.sw[y < 0].sum() * self.a[-1])

    def value(self, t: np.ndarray, beta: np.ndarray) -> np.ndarray:
        """Loss of totals ``t`` (``(..., n)``) at intercepts ``beta`` (``(...)``)."""
        m = self.y * (t + np.asarray(beta)[..., None])
        return self.C * (np.max(m[..., None] * self.a + self.c, axis=-1) * self.sw).sum(-1)

    def best_beta(self, t: np.ndarray) -> np.ndarray:
        """The exact minimizer over ``beta`` for each row of ``t`` (``(B, n)``): at the breakpoint where the
        running slope ``d0 + sum of the increments`` first becomes non-negative."""
        t = np.atleast_2d(t)
        if self.cross.size == 0:
            return np.clip(np.zeros(t.shape[0]), self.lo, self.hi)
        bp = (self.y[None, :, None] * self.cross[None, None, :] - t[..., None]).reshape(t.shape[0], -1)
        inc = (self.sw[:, None] * self.jump[None, :]).ravel()  # sample-major, as bp
        order = np.argsort(bp, axis=1)
        slope = self.d0 + np.cumsum(inc[order], axis=1)
        crossed = slope >= 0
        beta = np.take_along_axis(bp, order, axis=1)[np.arange(t.shape[0]), np.argmax(crossed, axis=1)]
        beta = np.where(crossed[:, -1], beta, np.inf)  # no negatives: the loss decreases for ever
        if self.d0 >= 0:  # no positives: it increases with beta from the start
            beta = np.full(t.shape[0], -np.inf)
        finite = np.isfinite([self.lo, self.hi])
        lo = self.lo if finite[0] else -1e3
        hi = self.hi if finite[1] else 1e3
        return np.clip(beta, lo, hi)


def _round_to(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The nearest point of ``A`` (sorted) to each entry of ``v``."""
    i = np.clip(np.searchsorted(A, v), 1, A.size - 1)
    left, right = A[i - 1], A[i]
    return np.where(np.abs(v - left) <= np.abs(right - v), left, right)


def _descend(X: np.ndarray, feats: np.ndarray, s: np.ndarray, A: np.ndarray, pw: _PiecewiseLoss,
             max_sweeps: int = RISK_DESCENT_SWEEPS) -> tuple[np.ndarray, float, float]:
    """Discrete coordinate descent on the points of ``feats`` (FasterRisk's local search): for one feature at
    a time every value of ``A`` with ``beta`` re-optimized; the best move is taken while it lowers the loss, for at
    most ``max_sweeps`` sweeps over ``feats`` (work, not seconds: the same answer on any machine)."""
    t = X @ s
    beta = float(pw.best_beta(t)[0])
    best = float(pw.value(t, beta))
    improved, sweeps = True, 0
    while improved and sweeps < max_sweeps:
        improved, sweeps = False, sweeps + 1
        for j in feats:
            T_ = t[None, :] + np.outer(A - s[j], X[:, j])  # every value of A for feature j
            betas = pw.best_beta(T_)
            vals = pw.value(T_, betas)
            k = int(np.argmin(vals))
            if vals[k] < best - 1e-9 * max(1.0, abs(best)):
                t, s[j], beta, best = T_[k], A[k], float(betas[k]), float(vals[k])
                improved = True
    return s, beta, best


def risk_score_start(built: Built, max_sweeps: int = RISK_DESCENT_SWEEPS, beam: int = 10,
                     l2: float = 1e-3) -> dict[str, Any]:
    """The decisions ``{"s": points, "beta": intercept}`` of an ``ors`` start (thesis (4.5)) by sparse beam
    search, multiplier-grid rounding and discrete coordinate descent (module doc; FasterRisk, NeurIPS 2022).

    ``max_sweeps`` bounds the coordinate descent's sweeps (the beam search itself is a few batched Newton fits):
    the start's work is bounded, not its seconds, so a seed gives the same card on any machine;
    ``beam`` is the number of supports kept per size; ``l2`` the ridge weight per sample of the continuous fits.
    Works for ``cardinality="exact"`` (``T`` indicators; features whose points round to 0 keep theirs, the
    L0 block completes the rest) and ``"at_most"``. Feasible by construction: points in ``A``, at most ``T``
    of them nonzero, ``beta`` within its bounds.
    """
    scores, l0, loss = _blocks(built)
    data = built.ctx.data
    X, y, sw = np.asarray(data.X, dtype=float), np.asarray(data.y, dtype=float), data.weights
    p = X.shape[1]
    T = int(l0.budget) if l0 is not None and np.ndim(l0.budget) == 0 else p
    T = max(0, min(T, p))
    A = np.array(scores.A, dtype=float)
    beta_fam = built.ctx["beta"]
    pw = _PiecewiseLoss(loss, y, float(np.min(beta_fam.lower)), float(np.max(beta_fam.upper)), sw)
    m = float(getattr(loss, "multiplier", 1.0))
    amax = float(np.max(np.abs(A)))

    empty = [(np.zeros(0, dtype=np.int64), np.zeros(1), 0.0)]
    pool = beam_supports(X, y, T, beam=beam, l2=l2, sw=sw) if T > 0 else empty
    cands: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}  # distinct integer vectors: (s, support)
    for feats, w, _ in pool:
        coef = m * w[:-1]  # the logit (s·x + beta)/m wants s = m w
        big = float(np.max(np.abs(coef))) if coef.size else 0.0
        scales = [k / big for k in range(1, int(amax) + 1)] if big > 0 else []
        if 0 < big <= amax:
            scales.append(1.0)
        for lam in scales or [0.0]:
            s = np.zeros(p)
            s[feats] = _round_to(A, lam * coef)
            cands.setdefault(s.tobytes(), (s, feats))
    S = np.array([s for s, _ in cands.values()])
    totals = S @ X.T
    betas = pw.best_beta(totals)
    losses = pw.value(totals, betas)
    order = np.argsort(losses)
    feats_of = [f for _, f in cands.values()]
    finals: list[tuple[np.ndarray, float]] = []
    for i in order[:POLISHED]:
        s, beta, _ = _descend(X, feats_of[i], S[i].copy(), A, pw, max_sweeps)
        finals.append((s, beta))
    if not finals:
        finals = [(np.zeros(p), float(pw.best_beta(np.zeros((1, X.shape[0])))[0]))]
    sf = built.compile()
    best: tuple[float, dict[str, Any]] | None = None
    for s, beta in finals:
        dec = {"s": s, "beta": beta}
        obj = float(sf.objective(from_decisions(built, dec)))
        if best is None or obj < best[0]:
            best = (obj, dec)
    assert best is not None
    return best[1]
