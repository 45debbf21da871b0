"""An independent, hand-written pyomo model of OLCT (thesis (3.17)) agrees with the DSL's optimum.

The reference below is written from the paper (seed 000 lines 379-560 and the experiments'
objective, lines 612-616), with plain pyomo indexed components and nothing from the library but
the data: standardized features (scikit-learn's StandardScaler), depth ``d`` balanced tree,
``z[i, t]`` over the last level ``T_d`` (3.6), big-M forwarding with ``M`` and ``eps`` (3.7),
tangent-logistic slacks ``xi[i, h]`` at every level (3.15) and the l1 split (3.16).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from treeopt_dsl import Dataset
from treeopt_dsl.formulations import get_formulation

pyo = pytest.importorskip("pyomo.environ", reason="pyomo is installed by the [pyomo] extra")

TANGENTS = {"V0": [0.0], "V1": [0.0, -1.9, 1.9], "V3": [0.0, -1.9, 1.9, -0.89, 0.89, -3.55, 3.55, -0.44, 0.44,
                                                          -1.37, 1.37, -2.63, 2.63, -5.16, 5.16]}


def reference_olct(X: np.ndarray, y: np.ndarray, depth: int, tangents: str, C: float = 1.0, M: float = 100.0,
                   eps: float = 1e-5, l1: float = 1.0) -> float:
    Xs = StandardScaler().fit_transform(X)
    n, p = Xs.shape
    nodes = list(range(2**depth - 1))              # heap order: children of t are 2t+1 and 2t+2
    level = {t: int(np.floor(np.log2(t + 1))) + 1 for t in nodes}
    last = [t for t in nodes if level[t] == depth]

    def leaves_under(t: int) -> list[int]:
        if level[t] == depth:
            return [t]
        return leaves_under(2 * t + 1) + leaves_under(2 * t + 2)

    m = pyo.ConcreteModel()
    m.I, m.J, m.T, m.L = range(n), range(p), nodes, last
    m.H = range(1, depth + 1)
    m.w = pyo.Var(m.T, m.J)
    m.wp = pyo.Var(m.T, m.J, within=pyo.NonNegativeReals)
    m.wm = pyo.Var(m.T, m.J, within=pyo.NonNegativeReals)
    m.b = pyo.Var(m.T)
    m.z = pyo.Var(m.I, m.L, within=pyo.Binary)
    m.xi = pyo.Var(m.I, m.H)

    def v(i: int, t: int):
        return sum(m.w[t, j] * float(Xs[i, j]) for j in m.J) + m.b[t]

    m.route = pyo.Constraint(m.I, rule=lambda m, i: sum(m.z[i, t] for t in m.L) == 1)              # (3.6a)
    inner = [t for t in nodes if level[t] < depth]
    m.left = pyo.Constraint(m.I, inner, rule=lambda m, i, t:                                         # (3.7a)
                            v(i, t) <= M * (1 - sum(m.z[i, s] for s in leaves_under(2 * t + 1))))
    m.right = pyo.Constraint(m.I, inner, rule=lambda m, i, t:                                        # (3.7b)
                             v(i, t) >= eps - M * (1 - sum(m.z[i, s] for s in leaves_under(2 * t + 2))))
    m.split = pyo.Constraint(m.T, m.J, rule=lambda m, t, j: m.w[t, j] == m.wp[t, j] - m.wm[t, j])  # (3.16a)
    m.tangent = pyo.ConstraintList()                                                                 # (3.15)
    for i in range(n):
        for t in nodes:
            reach = sum(m.z[i, s] for s in leaves_under(t))
            margin = float(y[i]) * v(i, t)
            m.tangent.add(m.xi[i, level[t]] >= -margin - M * (1 - reach))   # tangent at -inf: f ~ -v
            m.tangent.add(m.xi[i, level[t]] >= 0)                           # tangent at +inf: f ~ 0
            for vk in TANGENTS[tangents]:
                f = np.log1p(np.exp(-vk))
                df = -1.0 / (1.0 + np.exp(vk))
                m.tangent.add(m.xi[i, level[t]] >= f + df * (margin - vk) - M * (1 - reach))
    m.obj = pyo.Objective(expr=sum(C * m.xi[i, h] for i in m.I for h in m.H)                         # (3.17a)
                          + l1 * sum(m.wp[t, j] + m.wm[t, j] for t in m.T for j in m.J))
    solver = pyo.SolverFactory("appsi_highs")
    solver.highs_options = {"mip_rel_gap": 0.0, "primal_feasibility_tolerance": 1e-9,
                            "mip_feasibility_tolerance": 1e-9}
    res = solver.solve(m)
    assert str(res.solver.termination_condition) == "optimal"
    return float(pyo.value(m.obj))


@pytest.mark.parametrize("seed,n,p,depth,tangents", [
    (0, 14, 2, 1, "V1"),
    (1, 16, 3, 1, "V3"),
    (2, 12, 2, 2, "V0"),
    (3, 14, 2, 2, "V1"),
    (4, 12, 3, 2, "V3"),
])
def test_dsl_olct_equals_the_independent_model(seed, n, p, depth, tangents):
    _agree(seed, n, p, depth, tangents, 1.0)


@pytest.mark.parametrize("seed,n,p,depth,tangents,l1", [
    (5, 14, 2, 2, "V0", 0.0),    # the thesis' Figures 3.7-3.8 drop the l1 term (lines 661, 685)
    (6, 12, 3, 2, "V1", 0.0),
    (7, 14, 2, 2, "V0", 0.25),
])
def test_dsl_olct_with_another_l1_weight_equals_the_independent_model(seed, n, p, depth, tangents, l1):
    _agree(seed, n, p, depth, tangents, l1)


def _agree(seed: int, n: int, p: int, depth: int, tangents: str, l1: float) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] * X[:, 1 % p] + 0.4 * rng.normal(size=n) > 0, 1, -1)  # not linearly separable
    ref = reference_olct(X, y, depth, tangents, l1=l1)
    res = get_formulation("olct", depth=depth, tangents=tangents, l1=l1).solve(Dataset.from_arrays(X, y), gap=0.0,
                                                                                 time_limit=120)
    assert res.status.value == "optimal"
    assert res.objective == pytest.approx(ref, rel=1e-6, abs=1e-6)
    assert res.certificate.ok
