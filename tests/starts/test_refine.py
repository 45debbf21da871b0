"""Refinement of a logistic tree's last layer (thesis Remark 1, seed 000 lines 551-555; treeopt_dsl/refine.py).

Each last-layer node is refitted as an l1-regularized logistic regression on the samples that reach it.
The last layer does not route, so the exact objective
``sum_h C_h sum_i log(1 + exp(-y_i v_{i, t_h(i)})) + sum_t ||w_t||_1`` (lines 612-616 with the exact loss)
can only decrease, and every sample keeps its path.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import minimize

from treeopt_dsl import Dataset
from treeopt_dsl.cli import main
from treeopt_dsl.datasets import load
from treeopt_dsl.errors import FormulationError, OptionError
from treeopt_dsl.estimator import OptimalTreeClassifier
from treeopt_dsl.experiments.grid import GridError, parse_grid
from treeopt_dsl.experiments.tasks import expand
from treeopt_dsl.experiments.worker import run_task
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.metrics import metrics
from treeopt_dsl.starts.greedy import greedy_tree
from treeopt_dsl.starts.refine import exact_objective, refine, refine_last_layer, refine_result, result_exact_objective


def _data(seed: int, n: int = 20) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return Dataset.from_arrays(X, np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, -1))


def exact_by_hand(tree, X: np.ndarray, y: np.ndarray, C: object, l1: float = 1.0) -> float:
    """The exact objective through the tree's public API on raw X: the nodes on each path (decision_path) and
    their scores (scores), log-loss weighted by the node's level, plus the l1 norm of every hyperplane."""
    on = tree.decision_path(X)
    v = tree.scores(X)
    level = tree.topology.level
    Cs = np.broadcast_to(np.atleast_1d(np.asarray(C, dtype=float)), (tree.topology.depth,))
    loss = np.logaddexp(0.0, -y[:, None] * v) * Cs[level - 1][None, :]
    return float(loss[on].sum() + l1 * np.abs(tree.W).sum())


def l1_logistic_optimum(X: np.ndarray, y: np.ndarray, C: float, l1: float = 1.0) -> float:
    """min_{w, b} C sum_i log(1 + exp(-y_i (w.x_i + b))) + l1 ||w||_1 by L-BFGS-B on w = w+ - w-, w+-, >= 0."""
    p = X.shape[1]

    def f(z: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = z[:p] - z[p:2 * p], z[-1]
        m = y * (X @ w + b)
        g = -C * y * np.exp(-np.logaddexp(0.0, m))  # d/d(w.x+b) of C log(1 + exp(-m))
        gw = X.T @ g
        return float(C * np.logaddexp(0.0, -m).sum() + l1 * z[:2 * p].sum()), np.concatenate([gw + l1, l1 - gw,
                                                                                              [g.sum()]])

    r = minimize(f, np.zeros(2 * p + 1), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * p) + [(None, None)],
                 options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 20000})
    return float(r.fun)


CASES = [(0, 1.0), (1, 1.0), (2, (0.5, 3.0)), (3, (2.0, 0.5))]


@pytest.fixture(scope="module")
def refined() -> dict:
    out = {}
    for seed, C in CASES:
        d = _data(seed)
        res = get_formulation("olct", depth=2, C=C).solve(d, time_limit=2)  # any incumbent will do
        assert res.status.has_solution
        out[seed] = (d, C, res, refine(res))
    return out


@pytest.mark.parametrize("seed,C", CASES)
def test_refinement_never_increases_the_exact_objective(seed, C, refined):
    d, C, res, tree = refined[seed]
    Xs = res.built.ctx.data.X
    before = exact_objective(res.model, Xs, d.y, C)
    after = exact_objective(tree, Xs, d.y, C)
    assert after <= before + 1e-9
    # exact_objective is the thesis' objective: checked against an evaluation through the public API
    assert before == pytest.approx(exact_by_hand(res.model, d.X, d.y, C), rel=1e-9)
    assert after == pytest.approx(exact_by_hand(tree, d.X, d.y, C), rel=1e-9)


def test_refinement_does_improve_the_surrogate_fit(refined):
    """V0 is a crude under-estimator: on these instances refitting with the exact loss lowers the objective."""
    gains = [exact_objective(res.model, res.built.ctx.data.X, d.y, C) - exact_objective(t, res.built.ctx.data.X, d.y, C)
             for d, C, res, t in refined.values()]
    assert sum(gains) > 1e-3


@pytest.mark.parametrize("seed,C", CASES)
def test_routing_and_upper_levels_are_unchanged(seed, C, refined):
    """Only the last layer changes; every sample reaches the same last-layer node and predictions come from
    the refitted classifier at that node."""
    d, _C, res, tree = refined[seed]
    topo = tree.topology
    assert np.array_equal(tree.apply(d.X), res.model.apply(d.X))
    assert np.array_equal(tree.W[topo.inner], res.model.W[topo.inner])
    assert np.array_equal(tree.b[topo.inner], res.model.b[topo.inner])
    last = topo.last[tree.apply(d.X)]
    score = tree.scores(d.X)[np.arange(d.y.size), last]
    assert np.array_equal(tree.predict(d.X), np.where(score >= 0, d.classes[1], d.classes[0]))


def _nodes(d, res, tree):
    """(node, samples reaching it, C_d, old (w, b), new (w, b)) for every last-layer node."""
    Xs, y = res.built.ctx.data.X, d.y
    C_last = float(np.atleast_1d(res.built.ctx.roles["loss"].C)[-1])
    reach = tree.topology.last[tree.apply(Xs, scaled=True)]
    for t in tree.topology.last:
        rows = reach == t
        yield t, Xs[rows], y[rows], C_last, (res.model.W[t], res.model.b[t]), (tree.W[t], tree.b[t])


def _node_objective(X: np.ndarray, y: np.ndarray, C: float, wb: tuple) -> float:
    w, b = wb
    return float(C * np.logaddexp(0.0, -y * (X @ w + b)).sum() + np.abs(w).sum())


@pytest.mark.parametrize("seed,C", CASES)
def test_each_last_layer_node_is_no_worse_than_before(seed, C, refined):
    """Node by node (weight C_d): the refitted classifier's exact l1-logistic objective on the samples reaching
    it is at most the MILP's; a one-class node (infimum not attained) keeps its hyperplane."""
    d, _C, res, tree = refined[seed]
    for _t, X, y, C_last, old, new in _nodes(d, res, tree):
        if np.unique(y).size < 2:
            assert np.array_equal(new[0], old[0]) and new[1] == old[1]
        assert _node_objective(X, y, C_last, new) <= _node_objective(X, y, C_last, old) + 1e-9


def test_each_refitted_node_is_the_l1_logistic_optimum(refined):
    """Remark 1: "exactly fit an l1-regularized logistic regression model at each node of the last layer" with
    weight C_d; compared with an independent L-BFGS-B solution on the samples reaching the node."""
    gaps = []
    for seed, (d, _C, res, tree) in refined.items():
        for t, X, y, C_last, _old, new in _nodes(d, res, tree):
            if np.unique(y).size == 2:
                node = _node_objective(X, y, C_last, new)
                ref = l1_logistic_optimum(X, y, C_last)
                if node > ref + 1e-6 * max(1.0, node):
                    gaps.append((seed, int(t), node, ref))
    assert gaps == [], gaps


def test_refinement_is_for_logistic_trees_only():
    d = _data(0, n=12)
    res = get_formulation("oct", depth=1).solve(d, time_limit=5)
    with pytest.raises(FormulationError, match="logistic"):
        refine(res)
    olct = get_formulation("olct", depth=1).solve(d, time_limit=5)
    with pytest.raises(FormulationError, match="positive"):
        refine_last_layer(olct.model, olct.built.ctx.data.X, d.y, C_last=0.0)


def test_sample_weights_count_as_repeated_rows():
    """An integer weight is the same as a repeated row: the MILP minimizes sum_i w_i loss_i, so does the refit."""
    d = _data(1, n=24)
    res = get_formulation("olct", depth=2).solve(d, time_limit=2)
    Xs, y = res.built.ctx.data.X, d.y
    w = np.where(np.arange(y.size) % 3 == 0, 3.0, 1.0)
    rep = np.repeat(np.arange(y.size), w.astype(int))
    weighted = refine_last_layer(res.model, Xs, y, 1.0, sample_weight=w)
    repeated = refine_last_layer(res.model, Xs[rep], y[rep], 1.0)
    np.testing.assert_allclose(weighted.W, repeated.W, atol=1e-5)
    np.testing.assert_allclose(weighted.b, repeated.b, atol=1e-5)
    assert exact_objective(weighted, Xs, y, 1.0, w) == pytest.approx(exact_objective(repeated, Xs[rep], y[rep], 1.0))
    assert not np.allclose(weighted.W, refine_last_layer(res.model, Xs, y, 1.0).W, atol=1e-5)  # the weights count


# ------------------------------------------------ l1 = 0: the thesis' Figures 3.7-3.8 drop the l1 term (lines 661, 685)
def _plain_logistic_optimum(X: np.ndarray, y: np.ndarray, C: float) -> float:
    """min_{w, b} C sum_i log(1 + exp(-y_i (w.x_i + b))) by scipy's BFGS on (w, b) directly (no split)."""
    p = X.shape[1]

    def f(z: np.ndarray) -> tuple[float, np.ndarray]:
        m = y * (X @ z[:p] + z[-1])
        g = -C * y * np.exp(-np.logaddexp(0.0, m))
        return float(C * np.logaddexp(0.0, -m).sum()), np.r_[X.T @ g, g.sum()]

    return float(minimize(f, np.zeros(p + 1), jac=True, method="BFGS", options={"gtol": 1e-10}).fun)


def test_without_the_l1_term_the_refit_is_plain_logistic_regression():
    """OLCT with ``l1 = 0``: the refinement minimizes the exact objective without the l1 term, node by node the
    plain logistic loss (an independent BFGS on the nodes whose classes overlap), and the tree's exact objective
    (the API's, without ``||w||_1``) can only fall. With the l1 weight of 1 the refit would keep the weights
    small and stop above the plain optimum: the nodes' values differ."""
    checked = 0
    for seed, depth, n in ((0, 1, 30), (1, 1, 40), (2, 2, 80)):
        d = _data(seed, n=n)
        res = get_formulation("olct", depth=depth, l1=0.0).solve(d, time_limit=2)
        assert "l1" not in res.built.model.objective and "w_pos" not in res.built.model.variables  # no l1 term
        r = refine_result(res)
        C = res.built.ctx.roles["loss"].C
        assert r.refinement["exact_objective"] <= r.refinement["exact_objective_before"] + 1e-9
        assert r.refinement["exact_objective"] == pytest.approx(exact_by_hand(r.model, d.X, d.y, C, l1=0.0),
                                                                rel=1e-9)
        assert result_exact_objective(res) == pytest.approx(exact_by_hand(res.model, d.X, d.y, C, l1=0.0), rel=1e-9)
        for _t, X, y, C_last, _old, new in _nodes(d, res, r.model):
            if np.unique(y).size == 2 and l1_logistic_optimum(X, y, C_last, l1=1e-9) > 1e-3:  # not separable
                node = float(C_last * np.logaddexp(0.0, -y * (X @ new[0] + new[1])).sum())
                assert node == pytest.approx(_plain_logistic_optimum(X, y, C_last), rel=1e-5, abs=1e-6)
                assert node < l1_logistic_optimum(X, y, C_last, l1=1.0) - 1e-6  # the l1 weight 1 is another fit
                checked += 1
    assert checked >= 2


def test_without_the_l1_term_the_greedy_start_fits_plain_logistic_nodes():
    """The greedy start (lines 657-663) fits each node with the formulation's node objective: with ``l1 = 0`` the
    root is the plain logistic optimum (independent BFGS), with ``l1 = 1`` an l1-logistic one; greedy_lp accepts a
    tree without the l1 block; a negative weight is refused naming the parameter."""
    d = _data(3, n=40)
    for l1 in (0.0, 1.0):
        built = get_formulation("olct", depth=1, l1=l1).build(d)
        W, b = greedy_tree(built)
        Xs, y = built.ctx.data.X, d.y.astype(float)
        root = float(np.logaddexp(0.0, -y * (Xs @ W[0] + b[0])).sum() + l1 * np.abs(W[0]).sum())
        want = _plain_logistic_optimum(Xs, y, 1.0) if l1 == 0 else l1_logistic_optimum(Xs, y, 1.0)
        assert root == pytest.approx(want, rel=1e-4 if l1 == 0 else 5e-3)  # liblinear also penalizes the intercept
    res = get_formulation("olct", depth=2, l1=0.0).solve(d, time_limit=2, warm_start="greedy_lp")
    assert res.status.has_solution
    with pytest.raises(FormulationError, match=r"'l1'.*>= 0"):
        get_formulation("olct", depth=1, l1=-1.0).build(d)


# ------------------------------------------------------------------------ the faces: CLI, estimator, experiment grid
def _haberman() -> Dataset:
    return load("haberman").subsample(60, seed=0)


def test_fit_refine_on_the_command_line_gives_the_python_apis_refined_tree(capsys):
    """Issue 33: ``treeopt fit olct --refine`` applies Remark 1 (before, only ``refine(result)`` in Python did)."""
    code = main(["fit", "olct", "--data", "haberman", "--sample", "60", "--depth", "1", "--solver", "highs",
                 "--time-limit", "20", "--refine", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    train, test = _haberman().split(0.2, seed=0)
    res = get_formulation("olct", depth=1).solve(train, solver="highs", time_limit=20, seed=0, warm_start="auto")
    tree = refine(res)
    C = res.built.ctx.roles["loss"].C
    want = exact_objective(tree, res.built.ctx.data.X, train.y, C)
    assert out["refinement"]["exact_objective"] == pytest.approx(want, rel=1e-7)
    assert out["refinement"]["exact_objective"] < out["refinement"]["exact_objective_before"]  # it did refit
    assert out["objective"] == pytest.approx(res.objective, rel=1e-7)  # the MILP's, as the certificate's
    for part, d in (("train", train), ("test", test)):
        assert out["metrics"][part]["accuracy"] == pytest.approx(float(np.mean(tree.predict(d.X) ==
                                                                                d.labels_of(d.y))))
        assert out["metrics"][part]["auc"] == pytest.approx(metrics(tree, d)["auc"])
    assert main(["fit", "oct", "--data", "haberman", "--depth", "1", "--refine"]) == 2  # refused before the solve
    assert "no logistic loss" in capsys.readouterr().err


def test_estimator_refine_keeps_the_refined_tree():
    d = _haberman()
    X, y = d.X, d.labels_of(d.y)
    kw = {"formulation": "olct", "depth": 1, "solver": "highs", "time_limit": 20, "random_state": 0}
    plain = OptimalTreeClassifier(**kw).fit(X, y)
    refined = OptimalTreeClassifier(**kw, refine=True).fit(X, y)
    tree = refine(plain.result_)
    np.testing.assert_allclose(refined.tree_.W, tree.W, atol=1e-9)
    np.testing.assert_allclose(refined.tree_.b, tree.b, atol=1e-9)
    assert not np.allclose(refined.tree_.W, plain.tree_.W)
    assert refined.result_.refinement["nodes_refitted"] == 1
    np.testing.assert_array_equal(refined.predict(X), tree.predict(X))
    with pytest.raises(FormulationError, match="no logistic loss"):
        OptimalTreeClassifier(formulation="oct", depth=1, refine=True).fit(X, y)
    with pytest.raises(OptionError, match="refine must be True or False"):
        OptimalTreeClassifier(depth=1, refine="yes").fit(X, y)


def test_grid_refine_key_refines_every_solve():
    text = ('[experiment]\ntime_limit = 20.0\n[data]\ndatasets = [{ name = "haberman", sample = 60 }]\nseeds = [0]\n'
            '[[method]]\nformulation = "olct"\nparams = { depth = 1 }\nsolver = "highs"\nrefine = true\n')
    task = expand(parse_grid(text))[0]
    row = run_task(task)
    assert row["ok"], row.get("reason")
    no_refine = expand(parse_grid(text.replace("refine = true\n", "")))[0]
    assert "refine" not in no_refine and no_refine["id"] != task["id"]
    assert row["refinement"]["exact_objective"] < row["refinement"]["exact_objective_before"]
    with pytest.raises(GridError, match="no logistic loss"):
        parse_grid(text.replace('formulation = "olct"', 'formulation = "oct"'))
