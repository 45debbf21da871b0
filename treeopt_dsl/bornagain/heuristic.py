"""The born-again heuristic for ensembles too large for the exact dynamic program (Vidal & Schiffer 2020, §4.5).

Seed 003 lines 353-361: "instead of opening all recursions, it uses a greedy split criterion (information
gain) considering n_c = 100 random cells within the region. If the n_c cells belong to the same class, [...]
a MIP is used to prove uniformity or detect a violating cell." The tree is built top-down:

1. sample ``n_cells`` random cells of the region (per feature a uniform cell index among the split values the
   region spans; the cell's point is its middle), plus the violating points found so far in it;
2. if they all have one class ``c``, the integer program of :mod:`.homogeneity` either proves the region
   homogeneous (a leaf of class ``c``) or returns a point of another class, which joins the sample;
3. otherwise split on the (feature, split value) strictly inside the region with the largest information gain
   on the sample (entropy of the classes), and recurse on both sides.

Every split value lies strictly inside its region, so the regions shrink and the recursion ends; every leaf is
proved homogeneous, so the tree is faithful by construction (the paper's guarantee: "faithfulness, but relaxes
optimality"). Reading chosen: the paper's first test, a resource-constrained shortest-path bound tried before
the MIP, is not implemented: every proof is the integer program's (slower, never weaker).

Example::

    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from treeopt_dsl.bornagain import Ensemble, check_faithful
    >>> rng = np.random.default_rng(0); X = rng.random((200, 3)); y = (X[:, 0] + X[:, 1] > 1).astype(int)
    >>> forest = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    >>> ens = Ensemble.from_sklearn(forest)
    >>> tree, stats = born_again_heuristic(ens, seed=0)
    >>> check_faithful(tree, ens).ok
    True
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from treeopt_dsl.bornagain.ensemble import Ensemble
from treeopt_dsl.bornagain.homogeneity import middle, violating_cell
from treeopt_dsl.errors import OptionError
from treeopt_dsl.models.decision_tree import DecisionTree

__all__ = ["born_again_heuristic"]


def _sample(levels: list[np.ndarray], lo: np.ndarray, hi: np.ndarray, n: int,
            rng: np.random.Generator) -> np.ndarray:
    """``n`` points of random cells of the region ``lo < x <= hi``: per feature a cell drawn uniformly among
    those the region spans, and its middle (:func:`~.homogeneity.middle`)."""
    out = np.empty((n, len(levels)))
    for j, t in enumerate(levels):
        inside = t[(t > lo[j]) & (t < hi[j])]
        edges = np.r_[lo[j], inside, hi[j]]  # the region's cells are (edges[c], edges[c + 1]]
        mids = middle(edges[:-1], edges[1:])
        out[:, j] = mids[rng.integers(len(mids), size=n)]
    return out


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Entropy (bits) of class counts along the last axis, times their total (0 for empty rows)."""
    total = counts.sum(-1, keepdims=True)
    p = np.divide(counts, total, out=np.zeros(counts.shape), where=total > 0)
    logp = np.log2(p, out=np.zeros(p.shape), where=p > 0)
    return -(counts * logp).sum(-1)


def _best_split(X: np.ndarray, k: np.ndarray, n_classes: int, levels: list[np.ndarray], lo: np.ndarray,
                hi: np.ndarray) -> tuple[int, float]:
    """The (feature, split value) strictly inside the region with the largest information gain on ``X``
    (ties: the most balanced split, then the first); the whole search is vectorized per feature."""
    onehot = np.eye(n_classes)[k]
    parent = _entropy(onehot.sum(0))
    best: tuple[float, float, int, float] | None = None
    for j, t in enumerate(levels):
        cand = t[(t > lo[j]) & (t < hi[j])]
        if cand.size == 0:
            continue
        goes_left = X[:, j][None, :] <= cand[:, None]  # candidate x sample
        left = goes_left.astype(float) @ onehot  # candidate x class
        right = onehot.sum(0)[None, :] - left
        gain = parent - _entropy(left) - _entropy(right)
        balance = -np.abs(left.sum(1) - right.sum(1))
        i = int(np.lexsort((balance, gain))[-1])  # max gain, then max balance
        score = (float(gain[i]), float(balance[i]))
        if best is None or score > best[:2]:
            best = (score[0], score[1], j, float(cand[i]))
    if best is None:
        raise RuntimeError("a non-homogeneous region spans no split value")  # cannot happen: cells differ
    return best[2], best[3]


def born_again_heuristic(ensemble: Ensemble, *, n_cells: int = 100, seed: int | None = 0, solver: str = "highs",
                         backend: str | None = None, time_limit: float | None = None,
                         deadline: float | None = None) -> tuple[DecisionTree, dict[str, Any]]:
    """A faithful tree for ``ensemble`` by the greedy construction of the module docstring.

    ``n_cells`` random cells per region (the paper: 100), drawn with ``seed``; the homogeneity proofs run on
    ``solver`` (any MILP solver of the registry) with ``time_limit`` seconds each. ``deadline`` (a
    ``time.perf_counter()`` value): once passed, every region not yet proven becomes a leaf of its sample's
    majority class, and the tree is no longer faithful (``stats["complete"]`` is False; the estimator warns).
    Returns the tree and stats (``time_s``, ``proofs``: integer programs solved, ``counterexamples``: points they
    found, ``complete``, ``unproven_leaves``).
    """
    if n_cells < 1:
        raise OptionError(f"n_cells must be at least 1, got {n_cells}")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    levels = ensemble.thresholds()
    p = ensemble.n_features
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[int] = []
    stats = {"proofs": 0, "counterexamples": 0, "complete": True, "unproven_leaves": 0}

    def node() -> int:
        feature.append(-1), threshold.append(0.0), left.append(-1), right.append(-1), value.append(-1)
        return len(feature) - 1

    root = node()
    stack: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = [
        (root, np.full(p, -np.inf), np.full(p, np.inf), np.zeros((0, p)))]
    while stack:
        i, lo, hi, known = stack.pop()
        X = np.vstack([_sample(levels, lo, hi, n_cells, rng), known])
        k = ensemble.predict_index(X)
        if deadline is not None and time.perf_counter() > deadline:  # out of time: the sample's majority, unproven
            value[i] = int(np.bincount(k, minlength=ensemble.n_classes).argmax())
            stats["complete"], stats["unproven_leaves"] = False, stats["unproven_leaves"] + 1
            continue
        while np.all(k == k[0]):
            stats["proofs"] += 1
            x = violating_cell(ensemble, lo, hi, int(k[0]), solver=solver, backend=backend, time_limit=time_limit)
            if x is None:
                break
            stats["counterexamples"] += 1
            X, k = np.vstack([X, x]), np.r_[k, ensemble.predict_index(x[None, :])]
        if np.all(k == k[0]):
            value[i] = int(k[0])
            continue
        j, t = _best_split(X, k, ensemble.n_classes, levels, lo, hi)
        feature[i], threshold[i] = j, t
        left[i], right[i] = node(), node()
        go = X[:, j] <= t
        hi_left, lo_right = hi.copy(), lo.copy()
        hi_left[j], lo_right[j] = t, t
        # the counterexamples (beyond the random sample) are kept for the side they fall on
        extra = X[n_cells:]
        stack.append((right[i], lo_right, hi, extra[~go[n_cells:]]))
        stack.append((left[i], lo, hi_left, extra[go[n_cells:]]))
    tree = DecisionTree(feature, threshold, left, right, value, classes=ensemble.classes, n_features=p,
                        feature_names=ensemble.feature_names, dtype=ensemble.dtype)
    return tree, {**stats, "time_s": time.perf_counter() - t0, "depth": tree.depth, "leaves": tree.n_leaves}
