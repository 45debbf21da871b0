"""Independent references shared by tests: brute force over every axis-aligned tree (the exact-route tests), over
every integer score card (the risk-score tests, in the tangent surrogate and in the true logistic loss), and the LP
relaxation of a standard form by scipy's ``linprog`` (the relaxation-bound tests); and whether a solver is
installed (:func:`installed`, for the tests parametrized over solvers)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import strategies as st
from scipy.optimize import linprog, minimize_scalar
from scipy.sparse import vstack

from treeopt_dsl.backends import get_backend
from treeopt_dsl.errors import SolverNotAvailable


def linprog_relaxation(sf, c: np.ndarray | None = None) -> float:
    """``min c x + c0`` over the standard form's rows and bounds with integrality dropped (``c``: its objective),
    solved by scipy's ``linprog`` from the matrix alone (rows split into ``<=``, ``>=`` and ``=``)."""
    eq = sf.row_lower == sf.row_upper
    lo, hi = np.isfinite(sf.row_lower) & ~eq, np.isfinite(sf.row_upper) & ~eq
    A = sf.A.tocsr()
    c = sf.c if c is None else c
    res = linprog(c, A_ub=vstack([-A[lo], A[hi]]), b_ub=np.r_[-sf.row_lower[lo], sf.row_upper[hi]],
                  A_eq=A[eq], b_eq=sf.row_lower[eq], bounds=np.column_stack([sf.col_lower, sf.col_upper]),
                  method="highs")
    assert res.status == 0, res.message
    return float(res.fun) + (float(sf.c0) if c is sf.c else 0.0)


def brute_force(X: np.ndarray, y: np.ndarray, depth: int, alpha: float, weights: np.ndarray | None = None) -> float:
    """``min errors + alpha * splits`` over every axis-aligned tree of depth <= ``depth``: at each node a constant
    leaf or every (feature, midpoint cut) with the best subtrees below (independent of the DP's binarization). Any
    labels (two classes or more); ``weights``: an error costs its sample's weight."""
    cuts = [(j, t) for j in range(X.shape[1]) for t in np.convolve(np.unique(X[:, j]), [0.5, 0.5], "valid")]
    w = np.ones(y.size) if weights is None else np.asarray(weights, dtype=float)
    classes = np.unique(y)

    def best(rows: np.ndarray, h: int) -> float:
        yy, ww = y[rows], w[rows]
        leaf = float(ww.sum() - max((ww[yy == k].sum() for k in classes), default=0.0))
        if h == 0 or leaf == 0:
            return leaf
        out = leaf
        for j, t in cuts:
            right = X[rows, j] > t
            out = min(out, alpha + best(rows[~right], h - 1) + best(rows[right], h - 1))
        return out

    return best(np.arange(y.size), depth)


@st.composite
def small_data(draw: st.DrawFn, values: int = 4, max_n: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """8..max_n samples, 2-3 integer features in ``0 .. values - 1``, both classes present."""
    n = draw(st.integers(8, max_n))
    p = draw(st.integers(2, 3))
    X = np.array(draw(st.lists(st.lists(st.integers(0, values - 1), min_size=p, max_size=p), min_size=n,
                               max_size=n)), dtype=float)
    y = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    if np.unique(y).size < 2:
        y[0] = -y[0]
    return X, y


def best_beta_loss(t: np.ndarray, y: np.ndarray, a: np.ndarray, c: np.ndarray) -> float:
    """min over beta of sum_i max_k (a_k y_i (t_i + beta) + c_k): convex piecewise linear in beta,
    so the minimum is at a breakpoint (where two pieces of one sample's loss cross)."""
    order = np.argsort(a)
    a, c = a[order], c[order]
    cross = (c[1:] - c[:-1]) / (a[:-1] - a[1:])          # margins where consecutive pieces meet
    betas = (cross[None, :] / y[:, None] - t[:, None]).ravel()

    def f(beta: float) -> float:
        m = y * (t + beta)
        return float(np.max(np.multiply.outer(m, a) + c, axis=1).sum())

    return min(f(b) for b in betas)


def brute_force_ors(X: np.ndarray, y: np.ndarray, T: int, A: range, tangents: str) -> float:
    """``min`` of the tangent-logistic loss (4.4) over every card of at most ``T`` nonzero points in ``A`` (and the
    best intercept of each): the optimum of ``ors`` on scaled binary data."""
    from treeopt_dsl.blocks import TangentLogisticLoss

    a, c = TangentLogisticLoss(tangents).pieces()
    best = np.inf
    for s in itertools.product(A, repeat=X.shape[1]):
        s = np.array(s, dtype=float)
        if np.count_nonzero(s) > T:  # (4.2)-(4.3): T indicators, an indicator may carry s_j = 0
            continue
        best = min(best, best_beta_loss(X @ s, y.astype(float), a, c))
    return best


def brute_force_ors_true(X: np.ndarray, y: np.ndarray, T: int, A: range, multiplier: float = 1.0
                         ) -> tuple[float, np.ndarray, float]:
    """``min`` of the true logistic loss ``sum_i log(1 + exp(-y_i (s·x_i + beta) / m))`` over every card of at most
    ``T`` nonzero points in ``A``, each with its best intercept (a 1-D convex minimization by scipy's bounded Brent
    search; both classes present, so the minimum is finite): ``(loss, s, beta)`` of the best card."""
    yf = y.astype(float)

    def loss(t: np.ndarray, beta: float) -> float:
        return float(np.logaddexp(0.0, -yf * (t + beta) / multiplier).sum())

    best = (np.inf, np.zeros(X.shape[1]), 0.0)
    for s in itertools.product(A, repeat=X.shape[1]):
        s = np.array(s, dtype=float)
        if np.count_nonzero(s) > T:
            continue
        t = X @ s
        r = minimize_scalar(lambda b, t=t: loss(t, b), bounds=(-60.0, 60.0), method="bounded",
                            options={"xatol": 1e-10})
        if r.fun < best[0]:
            best = (float(r.fun), s, float(r.x))
    return best


def risk_data(seed: int, n: int = 25) -> tuple[np.ndarray, np.ndarray]:
    """Small binary risk-score data (4 features), the same for every true-loss test."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 4)).astype(float)
    X[0], X[1] = 0.0, 1.0  # every column takes both values: minmax scaling leaves binary data as it is
    y = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0]) + rng.normal(0, 0.7, n) > 0.2, 1, -1)
    y[:2] = (-1, 1)
    return X, y


def true_loss(model, X, y) -> float:
    """The log-loss of a fitted card on the raw data, from its predicted probabilities."""
    p = model.predict_proba(X)[:, 1]
    return float(-np.sum(np.log(np.where(y > 0, p, 1.0 - p))))


def installed(solver: str) -> bool:
    """Whether ``solver``'s backend can be had here (its package importable, its licence found)."""
    try:
        get_backend(solver)
    except SolverNotAvailable:
        return False
    return True
