"""Warm starts for every tree formulation (treeopt_dsl/warmstart.py; thesis seed 000 lines 657-663, 713-715).

Every accepted form -- ``"greedy"``, ``"cart"``, a fitted TreeModel of depth d-1, a dict of decisions,
a column vector -- is completed to a point that satisfies every row and bound of the model, is integral,
has an objective no better than the certified optimum, and is reported as accepted by the solver.
"""

from __future__ import annotations

import numpy as np
import pytest

from treeopt_dsl import Dataset
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.embed import feasible_start
from treeopt_dsl.starts import resolve
from treeopt_dsl.starts.resolver import start_point

LINEAR = ["olct", "olct_univariate", "oct", "octh"]  # MILPs: HiGHS
QUADRATIC = ["margot", "margot_hfs", "margot_sfs"]  # MIQPs: HiGHS cannot; Gurobi reports acceptance
ALL = LINEAR + [pytest.param(n, marks=pytest.mark.solver("gurobi")) for n in QUADRATIC]
STARTS = ["greedy", "cart", "shallower", "values", "random"]


def _solver(name: str) -> str:
    return "gurobi" if name in QUADRATIC else "highs"


def _data(seed: int = 3, n: int = 14) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return Dataset.from_arrays(X, y)


def _random_decisions(built, seed: int) -> dict[str, np.ndarray]:
    """Arbitrary hyperplanes with at most one feature per node (respects every l0 budget here)."""
    rng = np.random.default_rng(seed)
    T, p = built.ctx["w"].shape
    W = np.zeros((T, p))
    W[np.arange(T), rng.integers(0, p, T)] = rng.normal(size=T) * 5
    return {"w": W, "b": rng.normal(size=T)}


def _check_point(built, x0: np.ndarray) -> None:
    """Every row and bound holds (to 1e-6) and the integer columns are integral."""
    sf = built.compile()
    assert x0.shape == (sf.n_cols,) and np.all(np.isfinite(x0))
    assert built.model.max_violation(x0) <= 1e-6
    ints = x0[sf.integrality == 1]
    assert np.all(np.abs(ints - np.round(ints)) <= 1e-9)


@pytest.fixture(scope="module")
def solved() -> dict[str, tuple]:
    """Per formulation: the depth-2 model, its certified optimum and the depth-1 optimum (shared by the tests)."""
    return {}


def _solved(cache: dict, name: str) -> tuple:
    if name not in cache:
        d = _data()
        built = get_formulation(name, depth=2).build(d)
        opt = built.solve(solver=_solver(name), gap=0.0, time_limit=20)
        assert opt.status.value == "optimal" and opt.certificate.ok
        shallow = get_formulation(name, depth=1).solve(d, solver=_solver(name), gap=0.0, time_limit=20)
        assert shallow.status.value == "optimal"
        cache[name] = (d, built, opt, shallow)
    return cache[name]


def _start(how: str, built, opt, shallow):
    if how == "shallower":
        return shallow.model
    if how == "values":
        return {"w": opt.values["w"].values, "b": opt.values["b"].values}
    if how == "random":
        return _random_decisions(built, 11)
    return how


@pytest.mark.parametrize("how", STARTS)
@pytest.mark.parametrize("name", ALL)
def test_start_is_feasible_no_better_than_the_optimum_and_accepted(name, how, solved):
    _d, built, opt, shallow = _solved(solved, name)
    start = _start(how, built, opt, shallow)
    x0 = start_point(built, start)
    _check_point(built, x0)
    f0 = built.model.objective_value(x0)
    assert f0 >= opt.objective - 1e-6 * max(1.0, abs(opt.objective))
    if how == "values":  # the optimum's own decisions complete to the optimum
        assert f0 == pytest.approx(opt.objective, rel=1e-6, abs=1e-6)
    res = built.solve(solver=_solver(name), gap=0.0, time_limit=20, warm_start=resolve(built, start))
    assert res.warm_start_accepted is True
    assert res.status.value == "optimal" and res.certificate.ok
    assert res.objective == pytest.approx(opt.objective, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("name", ["oct", "olct", "olct_univariate"])
def test_a_shallower_tree_keeps_its_predictions(name, solved):
    """embed_tree: a depth-(d-1) tree's last-layer classifiers become splits whose children repeat them, so the
    completed depth-d point decodes to a tree with the same predictions; for the 0-1 loss at the last level
    (OCT, alpha = 0) the objective is the shallower optimum's error count."""
    d, built, opt, shallow = _solved(solved, name)
    x0 = start_point(built, shallow.model)
    deeper = built.decode(x0)
    assert np.array_equal(deeper.predict(d.X), shallow.model.predict(d.X))
    if name == "oct":
        assert built.model.objective_value(x0) == pytest.approx(shallow.objective, abs=1e-9)
        assert opt.objective <= shallow.objective + 1e-9  # depth 2 is at least as good


@pytest.mark.parametrize("name", LINEAR)
def test_a_column_vector_start_is_completed(name, solved):
    """A full column vector with only w and b set (NaN elsewhere) is completed by the blocks."""
    _d, built, opt, _shallow = _solved(solved, name)
    x = np.full(built.model.n_vars, np.nan)
    for fam in ("w", "b"):
        x[built.ctx[fam].ids] = built.ctx[fam].values(opt.x)
    x0 = start_point(built, x)
    _check_point(built, x0)
    assert built.model.objective_value(x0) == pytest.approx(opt.objective, rel=1e-6, abs=1e-6)
    res = built.solve(time_limit=20, gap=0.0, warm_start=x0)
    assert res.warm_start_accepted is True and res.objective == pytest.approx(opt.objective, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("name", ["olct", "oct"])
def test_greedy_start_is_no_worse_than_a_constant_tree(name):
    """The greedy tree (seed 000 lines 657-663) fits each node on the samples reaching it; a stump whose sides
    share the majority is a constant classifier, so the greedy 0-1 loss never exceeds the minority count."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(40, 3))
        y = np.where(X[:, 0] + rng.normal(size=40) > 1.0, 1, -1)  # imbalanced
        built = get_formulation(name, depth=2).build(Dataset.from_arrays(X, y))
        x0 = start_point(built, "greedy")
        _check_point(built, x0)
        errors = np.sum(built.decode(x0).predict(X) != y)
        assert errors <= min((y == 1).sum(), (y == -1).sum())


def test_bad_starts_are_refused_with_actionable_errors(solved):
    d, built, _opt, _shallow = _solved(solved, "oct")
    with pytest.raises(FormulationError, match="unknown warm start"):
        start_point(built, "lasso")
    with pytest.raises(FormulationError, match="'b'"):
        start_point(built, {"w": np.zeros((3, 3))})
    with pytest.raises(FormulationError, match="shapes"):
        start_point(built, {"w": np.zeros((2, 3)), "b": np.zeros(2)})
    deep = get_formulation("oct", depth=3).solve(d, time_limit=5).model
    with pytest.raises(FormulationError, match="depth"):
        start_point(built, deep)


def test_a_start_breaking_the_l0_budget_is_refused_not_shrunk(solved):
    """OCT has ||w_t||_0 <= 1 (3.14); hyperplanes using three features are not a start for it. Scaling them down
    (the module's remedy for bounds and big-M rows) cannot help: the start must be refused, or its routing kept."""
    d, built, _opt, _shallow = _solved(solved, "oct")
    W, b = np.ones((3, 3)), np.array([-0.5, 0.0, 0.0])
    try:
        x0 = start_point(built, {"w": W, "b": b})
    except FormulationError:
        return
    kept = built.decode(x0)
    assert np.array_equal(kept.apply(d.X), kept.topology.route(
        (built.ctx.data.X @ W.T + b) > built.ctx.numerics.eps / 2))


@pytest.mark.solver("scip")
def test_scip_accepts_a_feasible_margot_start(solved):
    _d, built, opt, _shallow = _solved(solved, "margot")
    x0 = start_point(built, "greedy")
    _check_point(built, x0)
    res = built.solve(solver="scip", gap=0.0, time_limit=20, warm_start=x0)
    assert res.objective == pytest.approx(opt.objective, rel=1e-5)
    assert res.warm_start_accepted is True


@pytest.mark.solver("scip")
def test_scip_accepts_a_milp_start(solved):
    _d, built, opt, _shallow = _solved(solved, "olct")
    res = built.solve(solver="scip", gap=0.0, time_limit=20, warm_start=resolve(built, "greedy"))
    assert res.warm_start_accepted is True
    assert res.objective == pytest.approx(opt.objective, rel=1e-5)


# ------------------------------------------------------------------------------ greedy_lp (OLCT's exact node LPs)
@pytest.mark.parametrize(("seed", "tangents", "C"), [(0, "V0", 1.0), (1, "V1", 3.0), (2, "V2", 0.5)])
def test_greedy_lp_at_depth_one_is_the_olct_optimum(seed, tangents, C):
    """At depth 1 the root's LP is the whole OLCT objective (one level, no routing cost): the greedy_lp tree's
    objective equals the MILP's proven optimum (an independent solve of the built model, its rows and eps)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 4))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + rng.normal(0, 0.7, 40) > 0, 1, -1)
    spec = get_formulation("olct", depth=1, tangents=tangents, C=C, big_m="derived", w_bound=5.0, b_bound="auto")
    data = Dataset.from_arrays(X, y)
    res = spec.solve(data, warm_start=None, gap=0.0, time_limit=60)
    assert res.status.value == "optimal"
    x = start_point(res.built, "greedy_lp")
    assert res.built.model.max_violation(x) <= 1e-6
    assert res.built.model.objective_value(x) == pytest.approx(res.objective, rel=1e-6, abs=1e-6)
    from treeopt_dsl.solve import relaxation_bound
    from treeopt_dsl.starts.node_lp import NodeProblems

    nodes, rows = NodeProblems(res.built), np.arange(40)  # the root's term, valued outside the model: the same
    w, b = nodes.solve(1, 0, rows)
    assert nodes.value(1, rows, w, b) == pytest.approx(res.objective, rel=1e-6, abs=1e-6)
    # at depth 1 nothing is routed below the root, so the LP relaxation is already the optimum
    assert relaxation_bound(res.built).bound == pytest.approx(res.objective, rel=1e-6, abs=1e-6)


def test_node_lp_weighs_samples_as_repeated_rows():
    """``node_lp`` with integer sample weights has the objective of the rows repeated (the LP is over sum_i w_i)."""
    from treeopt_dsl.blocks import TangentLogisticLoss
    from treeopt_dsl.starts.node_lp import node_lp

    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] + rng.normal(0, 1, 30) > 0, 1.0, -1.0)
    w = rng.integers(1, 4, 30).astype(float)
    a, c = TangentLogisticLoss("V1").pieces()
    box = (np.full(3, -10.0), np.full(3, 10.0)), (-50.0, 50.0)

    def value(X_, y_, sw, wb):
        m = y_ * (X_ @ wb[0] + wb[1])
        return 2.0 * np.sum(sw * np.max(np.multiply.outer(m, a) + c, axis=1)) + np.abs(wb[0]).sum()

    rep = np.repeat(np.arange(30), w.astype(int))
    weighted = node_lp(X, y, w, a, c, 2.0, 1.0, *box)
    repeated = node_lp(X[rep], y[rep], np.ones(rep.size), a, c, 2.0, 1.0, *box)
    assert value(X, y, w, weighted) == pytest.approx(value(X[rep], y[rep], np.ones(rep.size), repeated), rel=1e-7)


def test_auto_start_tries_greedy_lp_where_it_applies():
    """OLCT's automatic start scores the greedy_lp candidate; MARGOT (squared l2) says why it does not apply."""
    from treeopt_dsl.starts.resolver import auto_start

    data = _data(5, n=30)
    _, olct = auto_start(get_formulation("olct", depth=2).build(data))
    _, margot = auto_start(get_formulation("margot", depth=2).build(data))
    assert isinstance(olct["candidates"]["greedy_lp"], float)
    assert margot["candidates"]["greedy_lp"].startswith("not used: greedy_lp needs ||w||_1")


def test_greedy_lp_by_name_on_a_tree_it_does_not_fit_is_a_clear_error():
    """``warm_start="greedy_lp"`` on OCT (0-1 loss) says what the start needs instead of building something else."""
    with pytest.raises(FormulationError, match="greedy_lp needs a slack loss"):
        start_point(get_formulation("oct", depth=2).build(_data(5, n=30)), "greedy_lp")


@pytest.mark.parametrize("name", ["cart", "greedy"])
def test_start_on_data_with_one_class_present_is_that_class(name):
    """Issue 36: a training part holding one class (the other held out) gave an IndexError in the CART start."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    one_class = Dataset.from_arrays(X, [0] * 19 + [1]).take(np.arange(19))
    built = get_formulation("olct", depth=2).build(one_class)
    x0 = start_point(built, name)
    assert (built.decode(x0).predict(X[:19]) == 0).all()


def test_node_lp_on_a_large_node_is_solved_on_a_stratified_sample(monkeypatch):
    """Issue 36: adult's root LP (45,222 rows) ran for minutes inside the start; a node with more than NODE_ROWS
    rows is solved on a stratified sample of that many, weighted to the node's weight, the same for a seed."""
    from treeopt_dsl.starts import node_lp as mod

    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] + rng.normal(0, 0.5, 400) > 0.8, 1, -1)  # about 1 in 4 positive
    idx, w = mod.node_sample(np.ones(400, bool), y, np.full(400, 2.0), 50, seed=0)
    assert idx.size == 50 and np.unique(idx).size == 50
    assert w.sum() == pytest.approx(800.0)
    assert abs((y[idx] > 0).mean() - (y > 0).mean()) < 0.03  # each class in its share
    again, _ = mod.node_sample(np.ones(400, bool), y, np.full(400, 2.0), 50, seed=0)
    np.testing.assert_array_equal(idx, again)
    spec = get_formulation("olct", depth=1)
    built = spec.build(Dataset.from_arrays(X, y))
    monkeypatch.setattr(mod, "NODE_ROWS", 50)
    nodes = mod.NodeProblems(built)
    w_t, b_t = nodes.solve(1, 0, np.ones(400, bool))
    pick, weights = mod.node_sample(np.ones(400, bool), nodes.y, nodes.sw, 50, seed=0)
    w_s, b_s = mod.node_lp(nodes.X[pick], nodes.y[pick], weights, nodes.a, nodes.c, nodes.weight(1), nodes.l1,
                           (nodes.w_lo[0], nodes.w_hi[0]), (float(nodes.b_lo[0]), float(nodes.b_hi[0])))
    assert nodes.value(1, pick, w_t, b_t) == pytest.approx(nodes.value(1, pick, w_s, b_s), rel=1e-6)


def test_greedy_fits_a_large_node_on_a_sample_with_its_weight(monkeypatch):
    """The greedy start's linear classifiers see at most NODE_ROWS rows of a node, C scaled by rows / sample (MARGOT
    on adult: 62 s of linear SVMs in a 60 s call); the root is then the classifier of that sample."""
    from treeopt_dsl.starts import greedy as mod

    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(0, 0.5, 300) > 0, 1, -1)
    built = get_formulation("margot", depth=1).build(Dataset.from_arrays(X, y))
    monkeypatch.setattr(mod, "NODE_ROWS", 60)
    W, b = mod.greedy_tree(built)
    Xs, ys = built.ctx.data.X, built.ctx.data.y
    idx, w = mod.node_sample(np.ones(300, bool), ys, np.ones(300), 60, seed=0)
    assert w[0] == pytest.approx(5.0)
    w_ref, b_ref = mod.fit_node(Xs[idx], ys[idx], "hinge", 5.0 * mod.level_weight(built, 1), None)
    np.testing.assert_allclose(W[0], w_ref, atol=1e-9)
    assert b[0] == pytest.approx(b_ref)
    w_all, _ = mod.fit_node(Xs, ys, "hinge", mod.level_weight(built, 1), None)
    assert not np.allclose(w_all, w_ref)  # the sample is what was fitted, not the whole node


def test_a_greedy_split_a_hair_above_zero_is_shifted_out_of_the_gap_not_refused() -> None:
    """A start whose root leaves a sample inside the band ``(0, eps)`` of the forwarding rows on its left and the
    nearest sample on its right only 1.6 eps up (more than eps apart: room to clear the band): the intercept is
    shifted, the routing unchanged, and the start feasible. Before, halving ``(w, b)`` moved the right sample below
    eps/2 before the left one's violation fell under the tolerance, and the start was refused (adult: greedy and
    greedy_lp, OLCT, the warm start 30,738 where the repaired greedy_lp gives 17,645)."""
    rng = np.random.default_rng(5)
    X = np.sort(rng.normal(size=40))[:, None] * np.ones((1, 2))
    X[:, 1] = rng.normal(size=40)
    y = np.where(np.arange(40) >= 20, 1, -1)
    first = get_formulation("olct", depth=2).build(Dataset.from_arrays(X, y))
    eps = float(first.ctx.numerics.eps)
    factor = (first.ctx.data.X[39, 0] - first.ctx.data.X[0, 0]) / (X[39, 0] - X[0, 0])  # scaled per raw unit
    X[20:, 0] += (X[19, 0] + 1.2 * eps / factor) - X[20, 0]  # rows 19 and 20: 1.2 eps apart once scaled
    built = get_formulation("olct", depth=2).build(Dataset.from_arrays(X, y))
    Xs = built.ctx.data.X
    W = np.zeros((3, Xs.shape[1]))
    W[:, 0] = 1.0
    b = np.full(3, -Xs[19, 0] - 0.6 * eps)
    b[0] = 0.4 * eps - Xs[19, 0]  # row 19 scores 0.4 eps (left, inside the band), row 20 1.6 eps (right)
    x = feasible_start(built, W, b)
    assert built.model.max_violation(x) <= 1e-6
    decoded = built.decode(x)
    v = Xs @ decoded.W[0] + decoded.b[0]
    assert np.array_equal(v > eps / 2, Xs @ W[0] + b[0] > eps / 2)  # the root routes every sample as given


@pytest.mark.parametrize("name", ["oct", "olct", "margot", "octh"])
def test_the_compiled_violation_is_the_models(name):
    """``Built.max_violation`` (one sparse product over the compiled rows, what starts are checked with) equals the
    model's row-by-row evaluation, at random points with and without NaN (not completed) columns."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    built = get_formulation(name, depth=2).build(Dataset.from_arrays(X, np.where(X[:, 0] > 0, 1, -1)))
    built.compile()  # as a solve that will hand the matrix to a solver does before its starts
    for _ in range(6):
        x = rng.normal(scale=2.0, size=built.model.n_vars)
        assert built.max_violation(x) == pytest.approx(built.model.max_violation(x), rel=1e-9, abs=1e-12)
    x = start_point(built, "cart")
    assert built.max_violation(x) == pytest.approx(built.model.max_violation(x), abs=1e-12)
    assert built.max_violation(x) <= 1e-6
