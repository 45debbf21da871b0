"""Brute force over every axis-aligned tree (shared by the exact-route tests)."""

from __future__ import annotations

import numpy as np


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
