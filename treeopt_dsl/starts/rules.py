"""Rule-by-rule warm start of generalized risk scores (thesis lines 1473-1490).

Rule ``t`` is chosen with the rules ``1..t-1`` fixed: a one-rule OGRS whose total score carries the
points of the fixed rules as a per-sample offset and whose feature choice excludes the features
already used (4.9), solved to a short time limit by the same solver path. The ``T`` rules are then
put in feature order, as (4.10) requires, and completed to a full start by the blocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treeopt_dsl import blocks as B
from treeopt_dsl.defaults import RULE_START_TIME
from treeopt_dsl.formulation import Built, Formulation

#: seconds allowed to each one-rule problem
RULE_TIME_LIMIT = RULE_START_TIME


def rule_by_rule(built: Built, time_limit: float = RULE_TIME_LIMIT) -> dict[str, Any]:
    blocks = {type(b).__name__: b for b in built.formulation.blocks}
    T = blocks["RuleSelection"].T
    data = built.ctx.data
    p = data.n_features
    offset = np.zeros(data.n_samples)
    chosen: list[tuple[int, float, float]] = []  # feature, threshold b, points s
    beta = 0.0
    for _ in range(T):
        used = [j for j, _, _ in chosen]
        one = Formulation("ogrs-one-rule", [
            B.RuleSelection(T=1, ordered=False, exclude=used),
            blocks["ThresholdRules"],  # stateless blocks are shared with the full formulation
            B.RulePoints(A=blocks["RulePoints"].A),
            B.BinaryTimesInteger("z_rule", "s_rule", "s_hat"),
            B.TotalScore(offset=offset),
            blocks["TangentLogisticLoss"],
        ], decisions=("a_rule", "b_rule", "s_rule", "beta"))
        res = one.build(data).solve(time_limit=time_limit)
        if not res.status.has_solution:
            break
        ctx = res.built.ctx
        j = int(np.argmax(ctx["a_rule"].values(res.x)[:, 0]))
        b = float(ctx["b_rule"].values(res.x)[0])
        s = float(np.rint(ctx["s_rule"].values(res.x)[0]))
        beta = float(ctx["beta"].values(res.x))
        chosen.append((j, b, s))
        offset = offset + s * (data.X[:, j] >= b - blocks["ThresholdRules"].eps / 2)
    while len(chosen) < T:  # a rule with 0 points on an unused feature (a feasible filler)
        j = next(k for k in range(p) if k not in [c[0] for c in chosen])
        vals = np.unique(data.X[:, j])
        b = float((vals[0] + vals[1]) / 2) if vals.size > 1 else 0.5
        chosen.append((j, b, 0.0))
    chosen.sort()  # (4.10): rules in feature order
    a = np.zeros((p, T))
    a[[c[0] for c in chosen], np.arange(T)] = 1.0
    return {"a_rule": a, "b_rule": np.array([c[1] for c in chosen]), "s_rule": np.array([c[2] for c in chosen]),
            "beta": beta}

