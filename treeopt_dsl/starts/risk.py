"""A sparse beam-search start for optimal risk scores (``ors``, thesis (4.5)), in the spirit of FasterRisk.

Liu, J., Zhong, C., Li, B., Seltzer, M. and Rudin, C. (2022). *FasterRisk: Fast and Accurate Interpretable
Risk Scores.* Advances in Neural Information Processing Systems 35 (NeurIPS 2022). FasterRisk grows sparse
supports by beam search on the logistic loss, keeps a diverse pool of near-optimal ones, and turns each into
integer points by a "star ray" search over a multiplier ``m`` (model ``P(y|x) = sigmoid((s·x + beta)/m)``).

:func:`risk_score_start` does the same for the MILP's own objective, without a solver:

1. **Beam search over supports** (``||s||_0 = T``, (4.1b)/(4.2)): from the intercept-only model, every
   support in the beam is extended by one feature; the features of the largest loss gradient are screened by a
   1-D Newton fit of the new coefficient alone (batched over the candidates), the ``beam`` best extensions of each
   support are refitted jointly (damped Newton steps of an l2-lightly-regularized logistic regression, batched),
   and the ``beam`` best supports by the logistic loss are kept, until they have ``T`` features.
2. **One-feature swaps** (FasterRisk's diverse pool, as a local search, :func:`swap_supports`): from the best
   supports, every feature exchanged for every other, screened and refitted the same way, the best swap taken
   while it lowers the loss. A greedy beam misses a feature that pays only beside one it chose later (adult,
   T = 5: the beam's best support has a logistic loss of 756.8, its best swap 744.3).
3. **Rounding by a multiplier grid** (FasterRisk's star-ray search): the continuous coefficients, in units
   of the formulation's logit ``(s·x + beta)/m`` (``m`` its ``multiplier``), are scaled so that the largest
   ``|coef|`` maps to each integer ``1..max|A|`` (and left unscaled when they already fit) and rounded to the
   nearest point of ``A`` (4.1a).
4. **The intercept exactly**: for fixed points the loss is convex in ``beta``; samples with the same total and
   label are grouped (a card on 0/1 columns has a few dozen totals), and the minimizer is found on the groups: a
   breakpoint of the tangent loss (4.4) by one sort, or the true logistic loss' root by safeguarded Newton steps
   (:func:`~treeopt_dsl.blocks.lattice.best_intercept`).
5. **Discrete coordinate descent** (FasterRisk's local search) on the best few roundings: one feature's
   points at a time, over every value of ``A``, ``beta`` re-optimized, until no move lowers the loss; then every
   pair of features moved one step of ``A`` each (a move no single one makes).

The candidates are scored in the loss the formulation proves: the true logistic loss when the loss block proves it
(``ors loss="true"``, :class:`~treeopt_dsl.blocks.lattice.LatticeLogisticLoss`), else the loss block's own pieces
(the multiplier and the tangent set respected); the best few are completed with
:func:`~treeopt_dsl.starts.resolver.from_decisions` and compared in ``built.compile().objective``. The result is
a dict of the decisions ``{"s": points, "beta": intercept}``; the blocks complete the indicators (the L0
``complete`` switches on unused indicators when ``cardinality="exact"`` asks for ``T``).

:func:`search_multiplier` chooses the multiplier itself (``ors multiplier="auto"``): the same pool, each rounded
card at its own best ``(m, beta)`` (:func:`~treeopt_dsl.models.scale.fit_scale`), the best few polished at their
``m``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from treeopt_dsl.blocks import L0, IntegerScores
from treeopt_dsl.blocks.lattice import LatticeLogisticLoss, best_intercepts
from treeopt_dsl.blocks.losses import logistic_loss
from treeopt_dsl.defaults import RISK_DESCENT_SWEEPS
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Built
from treeopt_dsl.models.embed import from_decisions
from treeopt_dsl.models.scale import fit_scale

#: how many of the best roundings get the discrete coordinate descent
POLISHED = 5
#: Newton steps of the joint refits and of the 1-D screening
NEWTON_STEPS = 12
SCREEN_STEPS = 5
#: a batch of joint refits stops when no coefficient moved more than this in a step
NEWTON_TOL = 1e-7
#: largest Newton step per coordinate (the logistic loss is far from quadratic on separable data)
MAX_STEP = 5.0
#: how many of the beam's best supports start a swap search (FasterRisk's diverse pool), and its rounds at most
SWAPPED = 3
SWAP_ROUNDS = 10
#: the multiplier search's rounds of descent and scale refit per card
SCALE_ROUNDS = 3
#: features fitted in a screen, per support of the beam: those of the largest loss gradient
SCREENED_PER_BEAM = 4


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
        if float(big.max()) < NEWTON_TOL:  # every fit converged (Newton's last step is quadratically small)
            break
    m = np.einsum("bnk,bk->bn", Zy, w)
    return w, (np.logaddexp(0.0, -m) * sw).sum(1)


def _screen(X: np.ndarray, y: np.ndarray, margin: np.ndarray, sw: np.ndarray,
            keep: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The 1-D logistic fit (sample weights ``sw``) of a new coefficient ``c_j`` with the current margins
    ``y_i (w·x_i + b)`` fixed, for the ``keep`` features of the largest loss gradient at ``c_j = 0`` (one product
    ``X^T``; every feature when ``keep`` is ``None``), all at once; returns ``c`` and the losses, both ``(p,)``,
    the loss ``inf`` for a feature not screened."""
    p = X.shape[1]
    cols = np.arange(p)
    if keep is not None and keep < p:
        grad = X.T @ (y * sw * _sigmoid(-margin))
        cols = np.sort(np.argpartition(-np.abs(grad), keep)[:keep])
    Xc = X[:, cols]
    Xy = Xc * y[:, None]
    X2 = Xc * Xc
    c = np.zeros(cols.size)
    w = sw[:, None]
    for _ in range(SCREEN_STEPS):
        q = _sigmoid(-(margin[:, None] + Xy * c)) * w
        g = -np.einsum("ij,ij->j", Xy, q)
        h = np.einsum("ij,ij->j", X2, q * (1.0 - q / np.maximum(w, 1e-300))) + 1e-9
        c -= np.clip(g / h, -MAX_STEP, MAX_STEP)
    cc, loss = np.zeros(p), np.full(p, np.inf)
    cc[cols] = c
    loss[cols] = (np.logaddexp(0.0, -(margin[:, None] + Xy * c)) * w).sum(0)
    return cc, loss


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
            c, loss = _screen(X, y, margin, sw, SCREENED_PER_BEAM * beam)
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


def swap_supports(X: np.ndarray, y: np.ndarray, pool: list[tuple[np.ndarray, np.ndarray, float]], beam: int = 10,
                  l2: float = 1e-3, sw: np.ndarray | None = None, starts: int = SWAPPED,
                  rounds: int = SWAP_ROUNDS) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """One-feature swaps from the ``starts`` best supports of ``pool`` (FasterRisk's diverse pool, as a local
    search): for every position of a support, every feature outside it is screened by the 1-D fit of its
    coefficient with the other coefficients fixed and the outgoing feature removed; the ``beam`` best per position
    are refitted jointly, and the best swap is taken while it lowers the logistic loss (at most ``rounds`` times).
    The beam grows supports one feature at a time, so a feature that pays only beside others it chose later is
    missed; a swap finds it (adult, T = 5: the beam's best support 756.8, after swaps 744.3). Returns every
    refitted support with ``pool``'s, best first, distinct."""
    n, p = X.shape
    sw = np.ones(n) if sw is None else np.asarray(sw, dtype=float)
    lam = l2 * float(sw.sum())
    seen: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, float]] = {
        tuple(sorted(f.tolist())): (f, w, loss) for f, w, loss in pool}
    for feats, w, loss in pool[:starts]:
        k = feats.size
        if k == 0 or k >= p:
            continue
        for _ in range(rounds):
            ext: dict[tuple[int, ...], np.ndarray] = {}
            for i in range(k):
                rest = np.delete(np.arange(k), i)
                margin = y * (X[:, feats[rest]] @ w[rest] + w[-1])
                c, scr = _screen(X, y, margin, sw, SCREENED_PER_BEAM * beam)
                scr[feats] = np.inf
                for j in np.argsort(scr)[:beam]:
                    key = tuple(sorted((*feats[rest].tolist(), int(j))))
                    if np.isfinite(scr[j]) and key not in seen and key not in ext:
                        coef = dict(zip(feats[rest].tolist(), w[rest].tolist(), strict=True)) | {int(j): float(c[j])}
                        ext[key] = np.array([coef[f] for f in key] + [w[-1]])
            if not ext:
                break
            supports = np.array(list(ext), dtype=np.int64)
            W, losses = _refit(X, y, supports, np.array(list(ext.values())), lam, sw)
            for b in range(supports.shape[0]):
                seen[tuple(supports[b].tolist())] = (supports[b], W[b], float(losses[b]))
            b = int(np.argmin(losses))
            if losses[b] >= loss - 1e-9 * max(1.0, abs(loss)):
                break
            feats, w, loss = supports[b], W[b], float(losses[b])
    return sorted(seen.values(), key=lambda e: e[2])


# --------------------------------------------------------------------------- the losses of a card's totals
def _grouped(t: np.ndarray, y: np.ndarray, sw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct totals ``u`` of one row of totals and the weights of the positives and negatives at each: an
    integer card on 0/1 columns has a few dozen distinct totals for thousands of samples."""
    u, inv = np.unique(t, return_inverse=True)
    pos = y > 0
    wp = np.bincount(inv[pos], weights=sw[pos], minlength=u.size)
    wn = np.bincount(inv[~pos], weights=sw[~pos], minlength=u.size)
    return u, wp, wn


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

    def best(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The exact minimizer over ``beta`` and the loss there, for each row of ``t`` (``(B, n)``): the
        minimizer is the breakpoint where the running slope ``d0 + sum of the increments`` first becomes
        non-negative; samples with the same total and label share their breakpoints, so each row sorts
        ``2 K x (distinct totals)`` breakpoints, not ``K n``."""
        t = np.atleast_2d(t)
        finite = np.isfinite([self.lo, self.hi])
        lo = self.lo if finite[0] else -1e3
        hi = self.hi if finite[1] else 1e3
        betas, values = np.empty(t.shape[0]), np.empty(t.shape[0])
        for r in range(t.shape[0]):
            u, wp, wn = _grouped(t[r], self.y, self.sw)
            if self.cross.size == 0:
                beta = 0.0
            elif self.d0 >= 0:  # no positives: the loss increases with beta from the start
                beta = -np.inf
            else:
                bp = np.concatenate([(self.cross[None, :] - u[:, None]).ravel(),
                                     (-self.cross[None, :] - u[:, None]).ravel()])
                inc = np.concatenate([(wp[:, None] * self.jump).ravel(), (wn[:, None] * self.jump).ravel()])
                order = np.argsort(bp, kind="stable")
                crossed = self.d0 + np.cumsum(inc[order]) >= 0
                beta = float(bp[order[np.argmax(crossed)]]) if crossed[-1] else np.inf  # no negatives: for ever
            beta = float(np.clip(beta, lo, hi))
            fp = np.max((u + beta)[:, None] * self.a + self.c, axis=1)
            fn = np.max(-(u + beta)[:, None] * self.a + self.c, axis=1)
            betas[r], values[r] = beta, self.C * float(wp @ fp + wn @ fn)
        return betas, values

    def best_beta(self, t: np.ndarray) -> np.ndarray:
        """The exact minimizer over ``beta`` for each row of ``t`` (``(B, n)``); see :meth:`best`."""
        return self.best(t)[0]


class _TrueLoss:
    """The logistic loss itself, ``C sum_i sw_i log(1 + exp(-y_i (t_i + beta) / m))``, for a loss block that proves
    the true loss (:class:`~treeopt_dsl.blocks.lattice.LatticeLogisticLoss`) and for the multiplier search: the
    start searches the objective the proof certifies, not its tangents (a card better in the tangents can be worse
    in the loss: fico-heloc, T = 5). The best intercept of each row is
    :func:`~treeopt_dsl.blocks.lattice.best_intercept` on the distinct totals, weighted."""

    def __init__(self, multiplier: float, C: float, y: np.ndarray, lo: float, hi: float,
                 sw: np.ndarray | None = None) -> None:
        self.m, self.C, self.y, self.lo, self.hi = float(multiplier), float(C), y, lo, hi
        self.sw = np.ones(y.shape[0]) if sw is None else np.asarray(sw, dtype=float)

    def best(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The best intercept within ``[lo, hi]`` and the loss there, for each row of ``t`` (``(B, n)``): every row's
        groups padded to one array (zero weights) and the intercepts found together
        (:func:`~treeopt_dsl.blocks.lattice.best_intercepts`)."""
        t = np.atleast_2d(t)
        groups = [_grouped(row, self.y, self.sw) for row in t]
        U = max(g[0].size for g in groups)
        tg, wg = np.zeros((t.shape[0], 2 * U)), np.zeros((t.shape[0], 2 * U))
        for r, (u, wp, wn) in enumerate(groups):
            tg[r, :u.size], tg[r, U:U + u.size] = u, u
            wg[r, :u.size], wg[r, U:U + u.size] = wp, wn
        yg = np.r_[np.ones(U), -np.ones(U)][None, :]
        betas = np.clip(best_intercepts(tg, yg, wg, self.m), self.lo, self.hi)
        values = self.C * (wg * logistic_loss(yg * (tg + betas[:, None]) / self.m)).sum(1)
        return betas, values


def _round_to(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The nearest point of ``A`` (sorted) to each entry of ``v``."""
    i = np.clip(np.searchsorted(A, v), 1, A.size - 1)
    left, right = A[i - 1], A[i]
    return np.where(np.abs(v - left) <= np.abs(right - v), left, right)


def _pair_moves(s: np.ndarray, feats: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every move of two features of ``feats`` by one step of ``A`` each (up or down, within ``A``): the features
    ``(P, 2)`` and their new points ``(P, 2)``, and the changes of points ``(P, 2)``."""
    idx = np.searchsorted(A, s[feats])
    pairs, vals = [], []
    for a in range(feats.size):
        for b in range(a + 1, feats.size):
            for da in (-1, 1):
                for db in (-1, 1):
                    ia, ib = idx[a] + da, idx[b] + db
                    if 0 <= ia < A.size and 0 <= ib < A.size:
                        pairs.append((feats[a], feats[b]))
                        vals.append((A[ia], A[ib]))
    P = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    V = np.array(vals, dtype=float).reshape(-1, 2)
    return P, V, V - s[P]


def _descend(X: np.ndarray, feats: np.ndarray, s: np.ndarray, A: np.ndarray, pw: _PiecewiseLoss,
             max_sweeps: int = RISK_DESCENT_SWEEPS) -> tuple[np.ndarray, float, float]:
    """Discrete coordinate descent on the points of ``feats`` (FasterRisk's local search): for one feature at
    a time every value of ``A`` with ``beta`` re-optimized; the best move is taken while it lowers the loss; when no
    single feature's move does, every pair of features moved by one step of ``A`` each (the card ``(-3, -4)`` where
    ``(-4, -3)`` is better is a pair move, not two single ones). At most ``max_sweeps`` sweeps (work, not seconds:
    the same answer on any machine)."""
    t = X @ s
    b0, v0 = pw.best(t)
    beta, best = float(b0[0]), float(v0[0])
    improved, sweeps = True, 0
    while improved and sweeps < max_sweeps:
        improved, sweeps = False, sweeps + 1
        for j in feats:
            T_ = t[None, :] + np.outer(A - s[j], X[:, j])  # every value of A for feature j
            betas, vals = pw.best(T_)
            k = int(np.argmin(vals))
            if vals[k] < best - 1e-9 * max(1.0, abs(best)):
                t, s[j], beta, best = T_[k], A[k], float(betas[k]), float(vals[k])
                improved = True
        if improved or feats.size < 2:
            continue
        P, V, D = _pair_moves(s, feats, A)
        if P.shape[0] == 0:
            continue
        T_ = t[None, :] + D[:, :1] * X[:, P[:, 0]].T + D[:, 1:] * X[:, P[:, 1]].T
        betas, vals = pw.best(T_)
        k = int(np.argmin(vals))
        if vals[k] < best - 1e-9 * max(1.0, abs(best)):
            t, beta, best = T_[k], float(betas[k]), float(vals[k])
            s[P[k]] = V[k]
            improved = True
    return s, beta, best


def _roundings(pool: list[tuple[np.ndarray, np.ndarray, float]], p: int, A: np.ndarray,
               m: float) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """FasterRisk's star-ray rounding of each continuous fit of ``pool`` (coefficients in logit units, the
    intercept last): the coefficients in units of ``(s·x + beta)/m`` are scaled so that the largest ``|coef|`` maps
    to each integer ``1..max|A|`` (and left unscaled when they already fit) and rounded to the nearest point of
    ``A``. Returns the distinct cards ``(C, p)``, their supports and each card's scale ``lambda`` (its points are
    about ``lambda m`` times the fit's coefficients)."""
    amax = float(np.max(np.abs(A)))
    cands: dict[bytes, tuple[np.ndarray, np.ndarray, float]] = {}
    for feats, w, _ in pool:
        coef = m * w[:-1]  # the logit (s·x + beta)/m wants s = m w
        big = float(np.max(np.abs(coef))) if coef.size else 0.0
        scales = [k / big for k in range(1, int(amax) + 1)] if big > 0 else []
        if 0 < big <= amax:
            scales.append(1.0)
        for lam in scales or [0.0]:
            s = np.zeros(p)
            s[feats] = _round_to(A, lam * coef)
            cands.setdefault(s.tobytes(), (s, feats, lam))
    S = np.array([c[0] for c in cands.values()]).reshape(-1, p)
    return S, [c[1] for c in cands.values()], np.array([c[2] for c in cands.values()])


def _pool(X: np.ndarray, y: np.ndarray, T: int, beam: int, l2: float,
          sw: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """The continuous fits the cards are rounded from: the beam's supports and their one-feature swaps."""
    if T <= 0:
        return [(np.zeros(0, dtype=np.int64), np.zeros(1), 0.0)]
    return swap_supports(X, y, beam_supports(X, y, T, beam=beam, l2=l2, sw=sw), beam=beam, l2=l2, sw=sw)[:2 * beam]


@dataclass(frozen=True)
class MultiplierSearch:
    """The multiplier search's answer (:func:`search_multiplier`): the card ``s`` with its intercept ``beta`` at the
    multiplier ``m``, its summed true log-loss, and the seconds it took."""

    multiplier: float
    s: np.ndarray
    beta: float
    loss: float
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {"multiplier": self.multiplier, "loss": self.loss, "seconds": self.seconds,
                "nonzeros": int(np.count_nonzero(self.s))}


def search_multiplier(X: np.ndarray, y: np.ndarray, T: int, A: Any, sw: np.ndarray | None = None,
                      beta_bound: float | None = None, C: float = 1.0, max_sweeps: int = RISK_DESCENT_SWEEPS,
                      beam: int = 10, l2: float = 1e-3, rounds: int = SCALE_ROUNDS) -> MultiplierSearch:
    """FasterRisk's multiplier chosen with its card: the multiplier ``m`` of ``P(y|x) = sigmoid((s·x + beta)/m)``
    that, with the integer card found for it, gives the smallest true log-loss (Liu et al., NeurIPS 2022, the star
    ray search).

    Every continuous fit of the pool (:func:`beam_supports`, :func:`swap_supports`; they do not depend on ``m``)
    is rounded at each scale (:func:`_roundings` at ``m = 1``), and each card gets its own best ``(m, beta)``
    (:func:`~treeopt_dsl.models.scale.fit_scale`, a logistic regression on the card's total); the ``POLISHED``
    best cards then alternate discrete coordinate descent at their ``m`` (:func:`_descend` in the true loss) with
    the scale refitted, at most ``rounds`` times. ``X`` are the 0/1 (or scaled) columns, ``y`` in {-1, +1}.

    >>> rng = np.random.default_rng(0); X = (rng.random((300, 6)) > 0.5).astype(float)
    >>> y = np.where(2 * X[:, 0] - 2 * X[:, 1] + rng.normal(size=300) > 0, 1.0, -1.0)
    >>> found = search_multiplier(X, y, T=2, A=range(-5, 6))
    >>> sorted(np.flatnonzero(found.s).tolist()), found.multiplier > 0
    ([0, 1], True)
    """
    t0 = time.perf_counter()
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    sw = np.ones(y.shape[0]) if sw is None else np.asarray(sw, dtype=float)
    A = np.sort(np.asarray(list(A), dtype=float))
    p = X.shape[1]
    T = max(0, min(int(T), p))
    lo, hi = (-np.inf, np.inf) if beta_bound is None else (-float(beta_bound), float(beta_bound))
    pool = _pool(X, y, T, beam, l2, sw)
    S, feats_of, lams = _roundings(pool, p, A, 1.0)
    scored = []
    for i in range(S.shape[0]):
        fit = _card_scale(X @ S[i], y, sw, lams[i] if lams[i] > 0 else 1.0, C, lo, hi)
        scored.append((fit[2], i, fit))
    scored.sort(key=lambda e: e[0])
    best: tuple[float, float, np.ndarray, float] | None = None  # (loss, m, s, beta)
    for _, i, (m, beta, loss) in scored[:POLISHED]:
        s = S[i].copy()
        for _ in range(rounds):
            s, _, _ = _descend(X, feats_of[i], s, A, _TrueLoss(m, C, y, lo, hi, sw), max_sweeps)
            m_new, beta, loss_new = _card_scale(X @ s, y, sw, m, C, lo, hi)
            moved = loss_new < loss - 1e-9 * max(1.0, abs(loss))
            m, loss = m_new, loss_new  # the loss of (s, m, beta) as they are now (never above the last round's)
            if not moved:
                break
        if best is None or loss < best[0]:
            best = (loss, m, s, beta)
    if best is None:  # no feature at all: the intercept-only card at m = 1
        beta = float(_TrueLoss(1.0, C, y, lo, hi, sw).best(np.zeros((1, X.shape[0])))[0][0])
        return MultiplierSearch(1.0, np.zeros(p), beta, float(C * np.sum(sw * logistic_loss(y * beta))),
                                time.perf_counter() - t0)
    loss, m, s, beta = best
    return MultiplierSearch(float(m), s, float(beta), float(loss), time.perf_counter() - t0)


def _card_scale(total: np.ndarray, y: np.ndarray, sw: np.ndarray, m0: float, C: float, lo: float,
                hi: float) -> tuple[float, float, float]:
    """The card's best multiplier and intercept (:func:`~treeopt_dsl.models.scale.fit_scale` from ``m0`` and its best
    intercept there), the intercept kept within ``[lo, hi]``; returns ``(m, beta, C * loss)``."""
    beta0, _ = _TrueLoss(m0, 1.0, y, lo, hi, sw).best(total[None, :])
    fit = fit_scale(total, y, m0, float(beta0[0]), sw)
    m, beta = fit.multiplier, fit.intercept
    if not lo <= beta <= hi:  # the bound binds: the multiplier found, the intercept re-fitted within the bound
        b, v = _TrueLoss(m, C, y, lo, hi, sw).best(total[None, :])
        return m, float(b[0]), float(v[0])
    return m, beta, C * fit.loss_after


def risk_score_start(built: Built, max_sweeps: int = RISK_DESCENT_SWEEPS, beam: int = 10,
                     l2: float = 1e-3) -> dict[str, Any]:
    """The decisions ``{"s": points, "beta": intercept}`` of an ``ors`` start (thesis (4.5)) by sparse beam
    search, one-feature swaps, multiplier-grid rounding and discrete coordinate descent (module doc; FasterRisk,
    NeurIPS 2022).

    ``max_sweeps`` bounds the coordinate descent's sweeps (the beam search itself is a few batched Newton fits):
    the start's work is bounded, not its seconds, so a seed gives the same card on any machine;
    ``beam`` is the number of supports kept per size; ``l2`` the ridge weight per sample of the continuous fits.
    Works for ``cardinality="exact"`` (``T`` indicators; features whose points round to 0 keep theirs, the
    L0 block completes the rest) and ``"at_most"``. Feasible by construction: points in ``A``, at most ``T``
    of them nonzero, ``beta`` within its bounds. The card the multiplier search found
    (``ors multiplier="auto"``: :func:`search_multiplier`, kept in the data's ``meta["multiplier_search"]``) is a
    candidate beside the rounded ones, at its own multiplier only.
    """
    scores, l0, loss = _blocks(built)
    data = built.ctx.data
    X, y, sw = np.asarray(data.X, dtype=float), np.asarray(data.y, dtype=float), data.weights
    p = X.shape[1]
    T = int(l0.budget) if l0 is not None and np.ndim(l0.budget) == 0 else p
    T = max(0, min(T, p))
    A = np.array(scores.A, dtype=float)
    beta_fam = built.ctx["beta"]
    lo, hi = float(np.min(beta_fam.lower)), float(np.max(beta_fam.upper))
    pw: _PiecewiseLoss | _TrueLoss = (_TrueLoss(loss.multiplier, loss.C, y, lo, hi, sw)
                                      if isinstance(loss, LatticeLogisticLoss) else _PiecewiseLoss(loss, y, lo, hi, sw))
    m = float(getattr(loss, "multiplier", 1.0))
    finals: list[tuple[np.ndarray, float]] = []
    searched = data.meta.get("multiplier_search")
    if isinstance(searched, MultiplierSearch) and searched.multiplier == m and searched.s.shape == (p,):
        finals.append((searched.s.copy(), searched.beta))
    else:
        S, feats_of, _ = _roundings(_pool(X, y, T, beam, l2, sw), p, A, m)
        _, losses = pw.best(S @ X.T)
        for i in np.argsort(losses)[:POLISHED]:
            s, beta, _ = _descend(X, feats_of[i], S[i].copy(), A, pw, max_sweeps)
            finals.append((s, beta))
    if not finals:
        finals = [(np.zeros(p), float(pw.best(np.zeros((1, X.shape[0])))[0][0]))]
    sf = built.compile()
    best: tuple[float, dict[str, Any]] | None = None
    for s, beta in finals:
        dec = {"s": s, "beta": beta}
        obj = float(sf.objective(from_decisions(built, dec)))
        if best is None or obj < best[0]:
            best = (obj, dec)
    assert best is not None
    return best[1]
