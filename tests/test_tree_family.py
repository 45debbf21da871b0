"""The tree family: OCT against brute force, derived big-M, loss plug-ins, warm starts, refinement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treeopt_dsl import Dataset, Formulation, Topology
from treeopt_dsl import blocks as B
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.tree import decode_tree
from treeopt_dsl.refine import exact_objective, refine
from treeopt_dsl.warmstart import start_point


# ------------------------------------------------------------------------------------------ brute force
def stump_errors(X: np.ndarray, y: np.ndarray) -> int:
    """Fewest errors of one axis-aligned classifier "+1 iff x_j > theta" or "+1 iff x_j < theta"."""
    if y.size == 0:
        return 0
    best = min(int((y == 1).sum()), int((y == -1).sum()))  # constant predictions
    for j in range(X.shape[1]):
        vals = np.unique(X[:, j])
        for theta in (vals[:-1] + vals[1:]) / 2:
            right = X[:, j] > theta
            err = int(np.sum((right & (y == -1)) | (~right & (y == 1))))
            best = min(best, err, y.size - err)
    return best


def brute_force_oct(X: np.ndarray, y: np.ndarray, depth: int) -> int:
    """Fewest training errors of an axis-aligned depth-``depth`` tree whose last layer are stumps."""
    if depth == 1:
        return stump_errors(X, y)
    best = brute_force_oct(X, y, depth - 1)  # a root sending everyone one way
    for j in range(X.shape[1]):
        vals = np.unique(X[:, j])
        for theta in (vals[:-1] + vals[1:]) / 2:
            r = X[:, j] > theta
            best = min(best, brute_force_oct(X[~r], y[~r], depth - 1) + brute_force_oct(X[r], y[r], depth - 1))
    return best


@st.composite
def tiny_data(draw, n_min: int = 6, n_max: int = 10):
    n = draw(st.integers(n_min, n_max))
    X = draw(arrays(np.int64, (n, 2), elements=st.integers(0, 4))).astype(float)
    y = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    if np.unique(y).size < 2:
        y[0] = -y[0]
    return X, y


@settings(max_examples=25, deadline=None)
@given(data=tiny_data())
def test_oct_depth1_equals_brute_force(data):
    X, y = data
    res = get_formulation("oct", depth=1).solve(Dataset.from_arrays(X, y), gap=0.0, time_limit=60)
    assert res.status.value == "optimal"
    assert res.objective == pytest.approx(brute_force_oct(X, y, 1), abs=1e-6)
    # the decoded tree makes exactly that many errors on the raw data
    assert np.sum(res.model.predict(X) != y) == round(res.objective)
    assert res.model.is_axis_aligned()


@settings(max_examples=8, deadline=None)
@given(data=tiny_data(8, 10))
def test_oct_depth2_equals_brute_force(data):
    X, y = data
    res = get_formulation("oct", depth=2).solve(Dataset.from_arrays(X, y), gap=0.0, time_limit=120)
    assert res.status.value == "optimal"
    assert res.objective == pytest.approx(brute_force_oct(X, y, 2), abs=1e-6)
    assert np.sum(res.model.predict(X) != y) == round(res.objective)


# ------------------------------------------------------------------------------------------ big-M
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_derived_big_m_gives_the_same_optimum_as_m100(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(14, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=14) > 0, 1, -1)
    d = Dataset.from_arrays(X, y)
    kw = dict(depth=2, w_bound=1.0, b_bound="auto")  # bounded w: both M are valid
    derived = get_formulation("olct", big_m="derived", **kw).build(d)
    const = get_formulation("olct", big_m=100.0, **kw).build(d)
    a = derived.solve(gap=0.0, time_limit=120)
    b = const.solve(gap=0.0, time_limit=120)
    assert a.status.value == b.status.value == "optimal"
    assert a.objective == pytest.approx(b.objective, rel=1e-6, abs=1e-7)
    assert a.certificate.ok and b.certificate.ok
    assert derived.ctx.numerics.max_big_m <= 100.0  # the derived values are tighter


# ------------------------------------------------------------------------------------------ plug-ins
@pytest.mark.parametrize("loss", [B.HingeLoss(levels="last"), B.HingeLoss(levels="all"),
                                  B.TangentLogisticLoss("V2"), B.ZeroOneLoss(M="derived")])
def test_one_line_swaps_the_loss(loss):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(16, 2))
    d = Dataset.from_arrays(X, np.where(X[:, 0] > 0.1, 1, -1))
    from treeopt_dsl.data import Scaler

    s = Scaler("standard").fit(d.X)
    data = s.apply(d)
    data.meta["scaler"] = s
    f = Formulation("custom", [B.ObliqueSplit(w_bound=1.0, b_bound="auto"), B.Routing(),
                               B.BigMForwarding(M="derived"), loss, B.L1()], decoder=decode_tree,
                    decisions=("w", "b"))
    res = f.build(data, Topology(2)).solve(time_limit=60)
    assert res.status.value == "optimal" and res.certificate.ok
    assert np.mean(res.model.predict(X) == d.y) >= 0.9  # separable on x0


def test_hinge_depth1_is_the_l1_svm_lp():
    """Depth 1, hinge at the last level + l1: min sum_i max(0, 1 - y_i (w.x_i + b)) + ||w||_1 (an LP)."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 3))
    y = np.where(X[:, 0] - X[:, 2] + 0.5 * rng.normal(size=20) > 0, 1, -1)
    d = Dataset.from_arrays(X, y)
    res = get_formulation("margot", depth=1).build(d)  # only to reuse the spec's scaling
    Xs = res.ctx.data.X
    n, p = Xs.shape
    # variables: w+ (p), w- (p), b+ , b-, xi (n)
    c = np.concatenate([np.ones(2 * p), [0.0, 0.0], np.ones(n)])
    A = np.hstack([-(y[:, None] * Xs), y[:, None] * Xs, -y[:, None], y[:, None], -np.eye(n)])
    lp = linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=[(0, None)] * (2 * p + 2 + n), method="highs")
    f = Formulation("svm", [B.ObliqueSplit(), B.Routing(), B.BigMForwarding(M=100),
                            B.HingeLoss(levels="last"), B.L1()], decoder=decode_tree, decisions=("w", "b"))
    out = f.build(res.ctx.data, Topology(1)).solve(gap=0.0, time_limit=60)
    assert out.objective == pytest.approx(lp.fun, rel=1e-7)


# ------------------------------------------------------------------------------------------ warm starts
@pytest.mark.parametrize("name", ["olct", "oct", "octh", "olct_univariate"])
@pytest.mark.parametrize("how", ["greedy", "cart"])
def test_warm_starts_are_feasible_and_accepted(name, how):
    d = Dataset.from_arrays(*_data(20, seed=3))
    built = get_formulation(name, depth=2).build(d)
    x0 = start_point(built, how)
    assert built.model.max_violation(x0) <= 1e-6
    res = built.solve(time_limit=60, gap=0.0, warm_start=how)
    assert res.status.value == "optimal"
    assert res.warm_start_accepted is True
    assert built.model.objective_value(x0) >= res.objective - 1e-6


def test_warm_start_from_a_shallower_tree_and_from_values():
    d = Dataset.from_arrays(*_data(20, seed=4))
    shallow = get_formulation("olct", depth=1).solve(d, time_limit=60)
    built = get_formulation("olct", depth=2).build(d)
    x0 = start_point(built, shallow.model)
    assert built.model.max_violation(x0) <= 1e-6
    # the depth-1 tree embedded at depth 2 predicts as before
    assert built.model.objective_value(x0) >= 0
    res = built.solve(time_limit=60, warm_start=shallow.model)
    assert res.warm_start_accepted is True
    again = built.solve(time_limit=60, warm_start={"w": res.values["w"].values, "b": res.values["b"].values})
    assert again.warm_start_accepted is True
    assert again.objective == pytest.approx(res.objective, rel=1e-6)


# ------------------------------------------------------------------------------------------ refinement
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_refinement_never_increases_the_exact_log_loss(seed):
    d = Dataset.from_arrays(*_data(30, seed=seed))
    res = get_formulation("olct", depth=2).solve(d, time_limit=5)  # any incumbent will do
    Xs = res.built.ctx.data.X
    before = exact_objective(res.model, Xs, d.y)
    tree = refine(res)
    after = exact_objective(tree, Xs, d.y)
    assert after <= before + 1e-9
    # routing is unchanged: the same last-layer node for every sample
    assert np.array_equal(tree.apply(Xs, scaled=True), res.model.apply(Xs, scaled=True))


def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, -1)


# ------------------------------------------------------------------------------------------ references
@pytest.mark.solver("gurobi")
def test_margot_depth1_equals_an_independent_svm_qp():
    """Depth-1 MARGOT (3.12)-(3.13) is the soft-margin SVM  min C sum_i zeta_i + ||w||^2 (the thesis' Omega,
    without the 1/2), zeta_i >= 1 - y_i (w.x_i + b), zeta >= 0: written by hand with gurobipy."""
    import gurobipy as gp

    rng = np.random.default_rng(7)
    X = rng.normal(size=(25, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.6 * rng.normal(size=25) > 0, 1, -1)
    built = get_formulation("margot", depth=1, C=2.0).build(Dataset.from_arrays(X, y))
    Xs = built.ctx.data.X  # the spec's standardization
    with gp.Env(empty=True) as env:
        env.setParam("OutputFlag", 0)
        env.start()
        m = gp.Model(env=env)
        w = m.addMVar(3, lb=-gp.GRB.INFINITY)
        b = m.addMVar(1, lb=-gp.GRB.INFINITY)
        z = m.addMVar(25, lb=0.0)
        m.addConstr(z + (y[:, None] * Xs) @ w + y[:, None] @ b >= 1)
        m.setObjective(2.0 * z.sum() + w @ w)
        m.optimize()
        ref = m.ObjVal
    res = built.solve(solver="gurobi", gap=0.0, time_limit=60)
    assert res.objective == pytest.approx(ref, rel=1e-6)


def test_axis_aligned_text_prints_thresholds_in_original_units():
    import re

    rng = np.random.default_rng(8)
    X = rng.normal(loc=[50.0, -3.0], scale=[10.0, 0.5], size=(30, 2))
    y = np.where(X[:, 0] > 52.0, 1, -1)
    res = get_formulation("oct", depth=1).solve(Dataset.from_arrays(X, y, feature_names=["age", "dose"]),
                                                time_limit=60)
    text = res.model.text()
    m = re.search(r"(age|dose) (>|<=|>=|<) (-?[\d.]+)", text)
    assert m, text
    j, op, theta = ["age", "dose"].index(m[1]), m[2], float(m[3])
    rule = X[:, j] > theta if op in (">", ">=") else X[:, j] <= theta
    pred = res.model.predict(X) == 1
    assert np.mean(rule == pred) == 1.0 or np.mean(rule != pred) == 1.0  # the printed rule is the model's
    assert 30 < theta < 70  # original units, not standardized ones


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_greedy_oct_start_is_no_worse_than_a_constant(seed):
    """A stump whose two sides have the same majority is a constant classifier, not an inverted one."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + rng.normal(size=60) > 1.0, 1, -1)  # imbalanced: most samples negative
    built = get_formulation("oct", depth=2).build(Dataset.from_arrays(X, y))
    x0 = start_point(built, "greedy")
    errors = built.model.objective_value(x0)
    assert errors <= min((y == 1).sum(), (y == -1).sum())
