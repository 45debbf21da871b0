"""Independent references shared by tests: brute force over every axis-aligned tree (the exact-route tests) and
the LP relaxation of a standard form by scipy's ``linprog`` (the relaxation-bound tests)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.sparse import vstack


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


def brute_force(X: np.ndarray, y: np.ndarray, depth: int, alpha: float) -> float:
    """``min errors + alpha * splits`` over every axis-aligned tree of depth <= ``depth``: at each node a constant
    leaf or every (feature, midpoint cut) with the best subtrees below (independent of the DP's binarization)."""
    cuts = [(j, t) for j in range(X.shape[1]) for t in np.convolve(np.unique(X[:, j]), [0.5, 0.5], "valid")]

    def best(rows: np.ndarray, h: int) -> float:
        yy = y[rows]
        leaf = float(min(np.sum(yy > 0), np.sum(yy < 0)))
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
