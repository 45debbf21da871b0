"""Rule-by-rule warm start of generalized risk scores (thesis lines 1473-1490).

Rule ``t`` is chosen with the rules ``1..t-1`` fixed: the one-rule OGRS whose total score carries the points of
the fixed rules as a per-sample offset and whose feature choice excludes the features already used (4.9). The
thesis solves it as a MILP "to a short time limit"; that made the start depend on the machine's load (breast-cancer,
T = 3, 150 rows: objective 24.98 at load 6.7, 6.47 at load 4.1) and cost 10 s a rule. It is solved here by
enumeration instead (:func:`best_rule`), the same on any machine: for a fixed intercept ``beta`` every (feature,
threshold, points) triple is valued at once from suffix sums of the loss change over each feature's sorted values
(``O(|A| n p log n)``), then ``beta`` is re-optimized for the best triple (a convex function of one variable), until
the rule repeats. The ``T`` rules are then put in feature order, as (4.10) requires, and completed to a full start
by the blocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from treeopt_dsl.formulation import Built

#: alternations of (rule | beta) and (beta | rule) at most per rule
ROUNDS = 10


def best_rule(X: np.ndarray, y: np.ndarray, w: np.ndarray, offset: np.ndarray, beta: float, A: np.ndarray,
              loss: Any, eps: float, exclude: list[int]) -> tuple[int, float, float, float] | None:
    """The (feature ``j``, threshold ``b``, points ``s``) minimizing ``sum_i w_i loss(y_i (offset_i + s [x_ij >= b]
    + beta))`` over every feature not in ``exclude``, every threshold that splits the data into two non-empty sides
    (4.12) with the next lower value at most ``b - eps`` below (4.11b) and ``b = 0.5`` on binary features (4.15),
    and every ``s`` in ``A``; returns ``(j, b, s, value)`` or ``None`` when no such rule exists.

    >>> X = np.array([[0.0], [0.2], [0.6], [1.0]]); y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> class Hinge:
    ...     def surrogate(self, m): return np.maximum(0.0, 1.0 - m)
    >>> j, b, s, v = best_rule(X, y, np.ones(4), np.zeros(4), -1.0, np.arange(-2, 3), Hinge(), 1e-4, [])
    >>> (j, b, s, v)
    (0, 0.6, 2.0, 0.0)
    """
    p = X.shape[1]
    order = np.argsort(-X, axis=0, kind="stable")       # each feature's values, largest first
    Xs = np.take_along_axis(X, order, axis=0)
    below = np.vstack([Xs[1:], np.full((1, p), -np.inf)])  # the next lower value after each position
    valid = (Xs != below) & (below <= Xs - eps) & np.isfinite(below)  # the end of a run of equal values; both sides
    binary = np.all((X == 0) | (X == 1), axis=0)
    thresholds = np.where(binary[None, :], 0.5, Xs)
    valid[:, list(exclude)] = False
    base = w * loss.surrogate(y * (offset + beta))
    best: tuple[int, float, float, float] | None = None
    for s in A[A != 0]:  # a rule of 0 points changes nothing
        delta = w * loss.surrogate(y * (offset + s + beta)) - base
        gain = np.cumsum(delta[order], axis=0)          # the loss change when the rule holds on the k largest
        gain = np.where(valid, gain, np.inf)
        k, j = np.unravel_index(int(np.argmin(gain)), gain.shape)
        value = float(base.sum() + gain[k, j])
        if np.isfinite(gain[k, j]) and (best is None or value < best[3] - 1e-12):
            best = (int(j), float(thresholds[k, j]), float(s), value)
    return best


def rule_by_rule(built: Built) -> dict[str, Any]:
    """The start's rules, intercept and points (module docstring), as the values of ``a_rule``, ``b_rule``,
    ``s_rule`` and ``beta``."""
    blocks = {type(b).__name__: b for b in built.formulation.blocks}
    T = blocks["RuleSelection"].T
    eps = blocks["ThresholdRules"].eps
    loss = blocks["TangentLogisticLoss"]
    A = np.asarray(blocks["RulePoints"].A, dtype=float)
    data = built.ctx.data
    X, y, w = data.X, np.where(np.asarray(data.y) > 0, 1.0, -1.0), np.asarray(data.weights, dtype=float)
    p = data.n_features
    offset = np.zeros(data.n_samples)
    chosen: list[tuple[int, float, float]] = []  # feature, threshold b, points s

    def fit_beta(score: np.ndarray) -> float:  # the intercept minimizing the loss of the scores (convex in beta)
        return float(minimize_scalar(lambda t: float(np.sum(w * loss.surrogate(y * (score + t)))),
                                     bracket=(-1.0, 1.0)).x)

    beta = fit_beta(offset)
    for _ in range(T):
        used = [j for j, _, _ in chosen]
        rule = None
        for _ in range(ROUNDS):
            found = best_rule(X, y, w, offset, beta, A, loss, eps, used)
            if found is None or (rule is not None and found[:3] == rule):
                break
            rule = found[:3]
            j, b, s = rule
            beta = fit_beta(offset + s * (X[:, j] >= b - eps / 2))
        if rule is None:
            break
        j, b, s = rule
        chosen.append((j, b, s))
        offset = offset + s * (X[:, j] >= b - eps / 2)
        beta = fit_beta(offset)
    while len(chosen) < T:  # a rule with 0 points on an unused feature (a feasible filler)
        j = next(k for k in range(p) if k not in [c[0] for c in chosen])
        vals = np.unique(X[:, j])
        b = float((vals[0] + vals[1]) / 2) if vals.size > 1 else 0.5
        chosen.append((j, b, 0.0))
    chosen.sort()  # (4.10): rules in feature order
    a = np.zeros((p, T))
    a[[c[0] for c in chosen], np.arange(T)] = 1.0
    return {"a_rule": a, "b_rule": np.array([c[1] for c in chosen]), "s_rule": np.array([c[2] for c in chosen]),
            "beta": beta}
