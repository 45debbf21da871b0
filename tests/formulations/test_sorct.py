"""S-ORCT (seed 001): the NLP compiled to Ipopt through CasADi, its derivatives, the Pyomo route,
Theorems 1 and 3, the class performance constraints, multistart, the path and the command."""

from __future__ import annotations

import functools
import json
from dataclasses import replace

import numpy as np
import pytest
import scipy.optimize as so
from hypothesis import given, settings
from hypothesis import strategies as st

from treeopt_dsl.blocks.randomized import cost_matrix
from treeopt_dsl.cli import main
from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import DataError, OptionError, SolveError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.formulations.sorct import lambda_l_threshold
from treeopt_dsl.models.randomized import COARSE_ZERO_TOL, RandomizedTreeModel
from treeopt_dsl.numeric import leaf_probabilities, logistic_cdf
from treeopt_dsl.starts import resolve
from treeopt_dsl.starts.multistart import (
    decisions_of,
    lambda_l_column,
    model_metrics,
    named_grid,
    plot_path,
    regularization_path,
    solve_from,
)

casadi = pytest.importorskip("casadi", reason="the NLP route needs `pip install treeopt-dsl[nlp]`")
from treeopt_dsl.backends.nlp import compiled  # noqa: E402

pytestmark = pytest.mark.solver("ipopt")


def _data(n: int = 40, p: int = 3, K: int = 2, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    score = X @ rng.normal(size=(p, K)) + 0.3 * rng.normal(size=(n, K))
    y = np.argmax(score, axis=1)
    y[:K] = np.arange(K)  # every class present
    return Dataset.from_arrays(X, y, multiclass=True)


def _built(depth: int = 1, K: int = 2, n: int = 40, p: int = 3, seed: int = 0, **params):
    return get_formulation("sorct", depth=depth, **params).build(_data(n, p, K, seed))


def _g_numpy(built, x: np.ndarray) -> float:
    """The expected misclassification cost (1) written directly with numpy from a, mu, C."""
    d, m = built.ctx.data, built.model
    A, mu, C = m["a"].values(x), m["mu"].values(x), m["C"].values(x)
    gamma = built.ctx["gamma"]
    left, right = built.ctx.topo.leaf_paths
    P = leaf_probabilities(logistic_cdf(d.X @ A.T / d.n_features - mu, gamma), left, right)
    W = cost_matrix(d.n_classes, 0.5)
    return float(np.sum(P * (W[d.class_index] @ C)) / d.n_samples)


# ------------------------------------------------------------------ the compiled NLP
@settings(max_examples=15, deadline=None)
@given(st.integers(1, 2), st.integers(2, 3), st.integers(0, 10_000), st.floats(1.0, 20.0))
def test_objective_matches_the_formula_written_with_numpy(depth: int, K: int, seed: int, gamma: float) -> None:
    if 2**depth < K:
        K = 2
    b = _built(depth, K, n=25, seed=seed, gamma=gamma)
    sf = b.compile()
    x = np.random.default_rng(seed).uniform(sf.col_lower, sf.col_upper)
    expected = _g_numpy(b, x)
    assert sf.objective(x) == pytest.approx(expected, rel=1e-12)
    assert compiled(sf).evaluate(x, sf.c)[0] == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize(("depth", "K", "params"), [(1, 2, {"lambda_l": 0.1}), (2, 3, {"lambda_g": 0.2, "rho": 0.2}),
                                                      (2, 2, {"lambda_l": 0.05, "lambda_g": 0.05, "rho": 0.1})])
def test_derivatives_match_finite_differences(depth: int, K: int, params: dict) -> None:
    """Gradient, Hessian and constraint Jacobian from CasADi's AD against central differences of the
    numpy evaluation of the IR (never the AD graph itself)."""
    b = _built(depth, K, n=30, gamma=6.0, **params)
    sf = b.compile()
    nlp = compiled(sf)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.uniform(sf.col_lower, sf.col_upper)
        _, grad, _, J = nlp.evaluate(x, sf.c)
        h = 1e-6
        E = np.eye(sf.n_cols) * h
        fd = np.array([(sf.objective(x + e) - sf.objective(x - e)) / (2 * h) for e in E])
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)
        H = np.asarray(nlp.hess_fun(x, sf.c))
        fdH = np.array([(nlp.evaluate(x + e, sf.c)[1] - nlp.evaluate(x - e, sf.c)[1]) / (2 * h) for e in E])
        np.testing.assert_allclose(H, fdH, rtol=1e-4, atol=1e-6)

        def g_ir(z: np.ndarray) -> np.ndarray:
            lin = sf.A @ z
            nl = [c.expr.evaluate(z).ravel() for c in sf.nl_constraints.values()]
            return np.concatenate([lin, *nl])

        fdJ = np.array([(g_ir(x + e) - g_ir(x - e)) / (2 * h) for e in E]).T
        np.testing.assert_allclose(J, fdJ, rtol=1e-5, atol=1e-7)


def test_pyomo_model_evaluates_like_the_ir_and_casadi() -> None:
    """The same formulation compiled to Pyomo: objective and every constraint (linear and (8)) agree
    with the IR and with the CasADi graph at random points (no solve needed)."""
    pe = pytest.importorskip("pyomo.environ", reason="the Pyomo route needs `pip install treeopt-dsl[pyomo]`")
    from treeopt_dsl.backends.pyomo import to_pyomo

    b = _built(2, 3, n=25, gamma=8.0, lambda_l=0.1, lambda_g=0.05, rho=0.2)
    sf = b.compile()
    m = to_pyomo(sf)
    nlp = compiled(sf)
    obj = next(iter(m.component_objects(pe.Objective)))
    perf = m.component("class_performance")
    rng = np.random.default_rng(2)
    for _ in range(4):
        x = rng.uniform(sf.col_lower, sf.col_upper)
        for vd, v in zip(m.x_cols, x.tolist(), strict=True):
            vd.set_value(v, skip_validation=True)
        assert pe.value(obj.expr) == pytest.approx(sf.objective(x), rel=1e-12)
        assert pe.value(obj.expr) == pytest.approx(nlp.evaluate(x, sf.c)[0], rel=1e-10)
        ir_rows = sf.nl_constraints["class_performance"].expr.evaluate(x)
        np.testing.assert_allclose([pe.value(perf[k].body) for k in perf], ir_rows, rtol=1e-12)
        np.testing.assert_allclose(nlp.evaluate(x, sf.c)[2][-3:], ir_rows, rtol=1e-10)


def test_pyomo_ipopt_route_agrees_with_casadi() -> None:
    """Both NLP routes from the same start reach the same point (needs an `ipopt` executable)."""
    from treeopt_dsl.backends import get_backend
    from treeopt_dsl.backends.pyomo import PyomoBackend

    if not PyomoBackend.solver_available("ipopt"):
        pytest.skip("no `ipopt` executable on PATH (not pip-installable here); the evaluation test above covers "
                    "the Pyomo model")
    b = _built(1, 2, n=30, gamma=8.0, lambda_l=0.01)
    a = b.solve("ipopt", backend="casadi", warm_start=np.zeros(b.compile().n_cols))
    c = b.solve("ipopt", backend="pyomo", warm_start=np.zeros(b.compile().n_cols))
    assert get_backend("ipopt", "pyomo").name == "pyomo"
    assert a.objective == pytest.approx(c.objective, rel=1e-5, abs=1e-7)


# ------------------------------------------------------------------ the paper's theorems
@pytest.mark.parametrize(("depth", "K", "seed"), [(1, 2, 0), (2, 2, 1), (2, 3, 2), (2, 4, 3)])
def test_theorem_1_an_integral_C_is_optimal_for_the_solved_cuts(depth: int, K: int, seed: int) -> None:
    """With a, mu fixed at Ipopt's answer, the problem in C is a transportation LP (proof of Theorem 1):
    HiGHS finds an integral optimum, no worse than Ipopt's C; the decoded deterministic leaves use it."""
    spec = get_formulation("sorct", depth=depth, gamma=16.0, n_starts=3)
    data = _data(40, 3, K, seed)
    res = spec.solve(data, seed=seed)
    assert res.status.value == "local_optimum" and res.certificate.ok
    b = res.built
    d = b.ctx.data
    P = res.model.leaf_probabilities(data.X)
    W = cost_matrix(K, 0.5)
    cost = (W[d.class_index].T @ P) / d.n_samples  # cost[k, t] of labelling leaf t with class k
    L = P.shape[1]
    eq = np.kron(np.ones((1, K)), np.eye(L))  # (2): sum_k C_kt = 1   (C flattened class-major)
    cover = -np.kron(np.eye(K), np.ones((1, L)))  # (3): sum_t C_kt >= 1
    lp = so.linprog(cost.ravel(), A_ub=cover, b_ub=-np.ones(K), A_eq=eq, b_eq=np.ones(L), bounds=(0, 1),
                    method="highs")
    assert lp.status == 0
    np.testing.assert_allclose(lp.x, np.round(lp.x), atol=1e-9)
    assert lp.fun <= float(np.sum(cost * res.model.C)) + 1e-7
    det = res.model.deterministic()
    assert set(np.unique(det.C)) <= {0.0, 1.0} and np.all(det.C.sum(0) == 1)


@pytest.mark.parametrize("gamma", [2.0, 6.0])
def test_theorem_3_bound_equals_the_largest_gradient_at_zero(gamma: float) -> None:
    """(21) as derived: max over mu in {-1, 1} and the two feasible C of ||grad_a g(0, mu, C)||_inf,
    computed by CasADi's AD on the compiled model, equals lambda_l_threshold."""
    b = _built(1, 2, n=50, p=4, gamma=gamma)
    sf = b.compile()
    nlp = compiled(sf)
    m = b.model
    worst = 0.0
    for mu in (-1.0, 1.0):
        for C in (np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])):
            x = np.zeros(sf.n_cols)
            x[m["mu"].ids] = mu
            x[m["C"].ids] = C
            grad = nlp.evaluate(x, sf.c)[1]
            worst = max(worst, float(np.abs(grad[m["a"].ids]).max()))
    assert lambda_l_threshold(b.ctx.data, 0.5, gamma) == pytest.approx(worst, rel=1e-9)


def test_theorem_3_above_the_bound_a_zero_stays_below_it_leaves() -> None:
    """Depth 1: from a = 0 with mu in {-1, 1} and either C, Ipopt told to keep its start (no push into
    the interior: bound_push = bound_frac = mu_init = 1e-9) stays at a = 0 when lambda_L is just above
    (21); with lambda_L at half that point's own gradient norm, a = 0 is no longer stationary and it
    leaves. The bound is thus sufficient, and tight for the worst (mu, C)."""
    data = _data(60, 4, 2, 5)
    gamma = 4.0
    keep = {"bound_push": 1e-9, "bound_frac": 1e-9, "mu_init": 1e-9}
    base = get_formulation("sorct", depth=1, gamma=gamma).build(data)
    bound = lambda_l_threshold(base.ctx.data, 0.5, gamma)
    sf0, nlp0 = base.compile(), compiled(base.compile())
    for mu in (-1.0, 1.0):
        for C in (np.eye(2), np.eye(2)[::-1]):
            start = {"a": np.zeros((1, 4)), "mu": np.array([mu]), "C": C}
            x0 = np.zeros(sf0.n_cols)
            x0[base.model["mu"].ids], x0[base.model["C"].ids] = mu, C
            G = float(np.abs(nlp0.evaluate(x0, sf0.c)[1][base.model["a"].ids]).max())
            assert G <= bound * (1 + 1e-12)
            above = get_formulation("sorct", depth=1, gamma=gamma, lambda_l=1.01 * bound).build(data)
            r = above.solve("ipopt", warm_start=resolve(above, start), **keep)
            assert r.status.value == "local_optimum"
            assert np.abs(above.model["a"].values(r.x)).max() < 1e-6
            below = get_formulation("sorct", depth=1, gamma=gamma, lambda_l=0.5 * G).build(data)
            r = below.solve("ipopt", warm_start=resolve(below, start), **keep)
            assert np.abs(below.model["a"].values(r.x)).max() > 1e-4


def test_class_performance_constraints_hold() -> None:
    """(8) with rho = 0.6 on imbalanced data: the expected correct rate of every class reaches rho."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(60, 3))
    y = (X[:, 0] + 0.4 * rng.normal(size=60) > 0.9).astype(int)
    data = Dataset.from_arrays(X, y)
    rho = 0.6
    res = get_formulation("sorct", depth=1, gamma=16.0, rho=rho, n_starts=4).solve(data, seed=1)
    assert res.status.value == "local_optimum" and res.certificate.ok
    P = res.model.leaf_probabilities(X)
    k = data.class_index
    correct = np.array([np.sum(P[k == c] * res.model.C[c]) for c in range(2)])
    assert np.all(correct >= rho * np.bincount(k) - 1e-6)
    free = get_formulation("sorct", depth=1, gamma=16.0, n_starts=4).solve(data, seed=1)
    assert free.objective <= res.objective + 1e-7  # the constraint can only cost


# ------------------------------------------------------------------ model, multistart, path
def test_model_probabilities_and_sparsity() -> None:
    res = get_formulation("sorct", depth=2, gamma=32.0, n_starts=3, lambda_l=0.02).solve(_data(50, 4, 3, 7), seed=0)
    m = res.model
    X = _data(50, 4, 3, 7).X
    proba = m.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-9)
    np.testing.assert_allclose(proba, np.clip(m.leaf_probabilities(X) @ m.C.T, 0.0, 1.0))  # Ipopt's -1e-9 clipped
    used = np.abs(m.A) > 1e-6
    assert m.local_sparsity() == pytest.approx(100 * (1 - used.mean()))
    assert m.global_sparsity() == pytest.approx(100 * np.mean(~used.any(0)))
    det = m.deterministic()
    Xs = m.scaler.transform(X)
    goes_left = Xs @ m.A.T / X.shape[1] - m.mu >= 0
    leaf = np.where(goes_left[:, 0], np.where(goes_left[:, 1], 0, 1), np.where(goes_left[:, 2], 2, 3))
    np.testing.assert_array_equal(det.predict(X), np.asarray(m.classes)[np.argmax(m.C, 0)][leaf])
    assert "leaf 3" in m.text()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1e-9, 5e-7, 2e-6, 5e-4, 2e-3, 0.3, -0.004, -1e-4]), min_size=12, max_size=12))
def test_sparsity_at_both_thresholds_against_dense_numpy(values: list[float]) -> None:
    """delta_L / delta_G at the model's 1e-6 and at the coarse 1e-3 (the threshold the paper's delta_L at
    lambda = 0 reads as) are the dense definitions (lines 375-385); the path rows record both."""
    m = _fitted_small()
    A = np.array(values).reshape(3, 4)
    m = replace(m, A=A)
    for tol in (1e-6, COARSE_ZERO_TOL):
        unused = np.abs(A) <= tol
        assert m.local_sparsity(tol) == pytest.approx(100 * unused.mean())
        assert m.global_sparsity(tol) == pytest.approx(100 * unused.all(0).mean())
    assert m.local_sparsity() == m.local_sparsity(1e-6)
    metrics = model_metrics(m, _data(50, 4, 3, 7), "test")
    assert metrics["delta_l_1e3"] == m.local_sparsity(1e-3) >= metrics["delta_l"] == m.local_sparsity(1e-6)
    assert metrics["delta_g_1e3"] == m.global_sparsity(1e-3) >= metrics["delta_g"]


@pytest.mark.parametrize("tol", [-1e-3, float("nan"), float("inf"), "1e-3", True])
def test_a_sparsity_threshold_that_is_not_a_finite_nonnegative_number_is_refused(tol: object) -> None:
    """At a negative threshold every coefficient, 0 included, would count as used: refused, naming ``tol``."""
    m = _fitted_small()
    for measure in (m.used, m.local_sparsity, m.global_sparsity):
        with pytest.raises(OptionError, match="tol must be a finite number >= 0"):
            measure(tol)  # type: ignore[arg-type]


@functools.cache
def _fitted_small() -> RandomizedTreeModel:
    """One small depth-2 S-ORCT, fitted once for the hypothesis examples."""
    return get_formulation("sorct", depth=2, gamma=32.0, n_starts=1).solve(_data(50, 4, 3, 7), seed=0).model


def test_multistart_keeps_the_best_and_is_reproducible() -> None:
    spec = get_formulation("sorct", depth=2, gamma=64.0, n_starts=5)
    data = _data(40, 3, 3, 4)
    a = spec.solve(data, seed=11)
    b = spec.solve(data, seed=11)
    objs = [s["objective"] for s in a.starts if s["objective"] is not None]
    assert len(a.starts) == 5 and a.objective == pytest.approx(min(objs))
    assert [s["objective"] for s in a.starts] == pytest.approx([s["objective"] for s in b.starts])
    assert a.warm_start_accepted is None  # random points are not a user's start


def test_path_chains_each_pair_from_the_previous_solutions() -> None:
    data = _data(40, 3, 2, 6)
    seen = []

    def make(lo: float, gl: float):
        return get_formulation("sorct", depth=1, gamma=16.0, lambda_l=lo, lambda_g=gl)

    path = regularization_path(make, data, [0.0, 0.01, 10.0], n_starts=3, seed=0, on_point=seen.append)
    assert [p.lambda_l for p in path] == [0.0, 0.01, 10.0] and len(seen) == 3
    # 3 random at the first pair; then the pair before's 3 best solutions and 3 fresh random points
    origins = [[s["origin"] for s in p.result.starts] for p in path]
    assert origins == [["random"] * 3] + [["given"] * 3 + ["random"] * 3] * 2
    assert path[-1].metrics["delta_l"] == 100.0  # a huge lambda_L zeroes every cut
    # the paper's chain alone (fresh=0): the second pair starts from the first pair's solutions, best first,
    # warm-started: reproduce its first start by hand
    chain = regularization_path(make, data, [0.0, 0.01], n_starts=3, seed=0, fresh=0)
    assert [len(p.result.starts) for p in chain] == [3, 3]
    b0 = make(0.0, 0.0).build(data)
    _, sols = solve_from(b0, n_starts=3, seed=0)
    b1 = make(0.01, 0.0).build(data)
    first, _ = solve_from(b1, starts=[{n: b0.model[n].values(sols[0]) for n in ("a", "mu", "C")}])
    assert chain[1].result.starts[0]["objective"] == pytest.approx(first.objective, rel=1e-8)
    assert chain[0].result.objective == pytest.approx(min(s["objective"] for s in chain[0].result.starts))


def test_the_papers_pair_order_starts_each_lambda_l_point_from_the_end_of_the_row_before() -> None:
    """Tables 3-4 are the lambda_G = 0 column of the paper's grid, solved row by row (seed 001 lines 404-406): with
    ``lambda_g = "paper-ends"`` (each row cut to 0 and 8 / p) the point (0.01, 0) starts from the solutions of
    (0, 8 / p), not of (0, 0). Reproduced by hand: the chain (0, 0) -> (0, 8 / p) -> (0.01, 0)."""
    data = _data(40, 3, 2, 6)
    ends = named_grid("paper-ends", "g", data.n_features)
    assert ends == [0.0, 8.0 / data.n_features] and named_grid("paper", "g", 3)[-1] == ends[1]

    def make(lo: float, gl: float):
        return get_formulation("sorct", depth=1, gamma=16.0, lambda_l=lo, lambda_g=gl)

    path = regularization_path(make, data, [0.0, 0.01], ends, n_starts=3, seed=0, fresh=0)
    assert [(p.lambda_l, p.lambda_g) for p in path] == [(0.0, 0.0), (0.0, ends[1]), (0.01, 0.0), (0.01, ends[1])]
    built, sols = make(0.0, 0.0).build(data), None
    _, sols = solve_from(built, n_starts=3, seed=0)
    for lo, gl in ((0.0, ends[1]), (0.01, 0.0)):
        nxt = make(lo, gl).build(data)
        best, sols = solve_from(nxt, starts=[decisions_of(built, x) for x in sols[:3]])
        built = nxt
    assert path[2].result.objective == pytest.approx(best.objective, rel=1e-8)
    # the stored path read as Table 3: its lambda_G = 0 column, in order
    column = lambda_l_column([p.to_dict() for p in path])
    assert [(q["lambda_l"], q["lambda_g"]) for q in column] == [(0.0, 0.0), (0.01, 0.0)]
    with pytest.raises(SolveError, match="paper-ends, got 'paper-end'"):
        named_grid("paper-end", "g", 3)


# ------------------------------------------------------------------ data and command line
def test_multiclass_data_and_binary_formulations() -> None:
    d = _data(30, 2, 3, 0)
    assert d.n_classes == 3 and set(d.y.tolist()) == {0, 1, 2}
    np.testing.assert_array_equal(d.labels_of(d.y), d.y)
    with pytest.raises(DataError, match="binary classifier"):
        get_formulation("olct", depth=1).build(d)
    with pytest.raises(DataError, match="positive= makes the task binary"):
        Dataset.from_arrays(d.X, d.y, multiclass=True, positive=1)


def test_cli_fit_path_and_compile(tmp_path, capsys) -> None:
    from treeopt_dsl.datasets import find_data_dir

    data = "iris" if find_data_dir() is not None else None
    if data is None:
        pytest.skip("the shared data directory (iris) is not present")
    assert main(["fit", "sorct", "--data", "iris", "--depth", "2", "--param", "n_starts=2", "--param", "gamma=32",
                 "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "local_optimum" and out["certificate"]["ok"] and len(out["starts"]) == 2
    assert out["data"]["classes"] == ["Iris-setosa", "Iris-versicolor", "Iris-virginica"]
    assert 0 <= out["metrics"]["test"]["accuracy"] <= 1 and "auc" in out["metrics"]["test"]
    png = tmp_path / "path.png"
    assert main(["path", "sorct", "--data", "iris", "--depth", "2", "--lambda-l", "0,0.01", "--n-starts", "2",
                 "--param", "gamma=32", "--plot", str(png), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["lambda_l"] for p in out["path"]] == [0.0, 0.01] and png.stat().st_size > 1000
    assert main(["compile", "sorct", "--data", "iris", "--depth", "2", "-o", str(tmp_path / "x.lp")]) == 2
    assert "nonlinear" in capsys.readouterr().err


def test_a_mip_solver_refuses_the_nlp_and_names_ipopt() -> None:
    from treeopt_dsl.backends import get_backend
    from treeopt_dsl.errors import CapabilityError

    sf = _built(1, 2, n=10).compile()
    assert sf.problem_class == "NLP"
    with pytest.raises(CapabilityError, match="--solver ipopt"):
        get_backend("highs", sf=sf)
    assert get_backend("ipopt", sf=sf).name == "casadi"


def test_multiclass_loading_keeps_a_binary_rule_binary() -> None:
    """``multiclass=True`` keeps every class of a multiclass set, but a binary task defined by a rule
    (``G3 >= 10``) or a positive list stays binary however many raw labels it has."""
    import pandas as pd

    from treeopt_dsl.datasets.frames import ALL_CLASSES, labels_to_pm1

    raw = pd.Series([3, 8, 10, 12, 15, 9])
    by_rule = labels_to_pm1(raw, {"name": "g", "label": "G3", "positive_rule": ">= 10"}, ALL_CLASSES)
    assert by_rule.y.tolist() == [-1, -1, 1, 1, 1, -1] and len(by_rule.classes) == 2
    by_list = labels_to_pm1(raw, {"name": "g", "positive": [10, 12, 15], "negative": [3, 8, 9]}, ALL_CLASSES)
    assert by_list.y.tolist() == [-1, -1, 1, 1, 1, -1]
    multi = labels_to_pm1(pd.Series(["b", "a", "c", "a"]), {"name": "m", "task": "multiclass"}, ALL_CLASSES)
    assert multi.classes == ("a", "b", "c") and multi.y.tolist() == [1, 0, 2, 0]


def test_cli_path_and_fit_on_a_csv_without_the_shared_data(tmp_path, capsys) -> None:
    """The command on a three-class CSV: fit keeps every class, path walks the grid, bad grids fail."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(45, 2))
    label = np.array(["a", "b", "c"])[np.digitize(X[:, 0] + 0.1 * rng.normal(size=45), [0.33, 0.66])]
    csv = tmp_path / "three.csv"
    lines = ["x1,x2,kind"] + [f"{a:.4f},{b:.4f},{k}" for (a, b), k in zip(X, label, strict=True)]
    csv.write_text("\n".join(lines) + "\n")
    common = ["--data", str(csv), "--label", "kind", "--depth", "2", "--param", "gamma=32"]
    assert main(["fit", "sorct", *common, "--param", "n_starts=2", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["data"]["classes"] == ["a", "b", "c"] and out["certificate"]["ok"]
    assert main(["path", "sorct", *common, "--lambda-l", "0,0.01,1", "--n-starts", "2", "--json"]) == 0
    path = json.loads(capsys.readouterr().out)["path"]
    assert [p["lambda_l"] for p in path] == [0.0, 0.01, 1.0] and path[-1]["delta_l"] == 100.0
    assert all(0 <= p["test_expected_accuracy"] <= 1 for p in path)
    assert main(["path", "sorct", *common, "--lambda-l", "0,1", "--n-starts", "2"]) == 0
    printed = capsys.readouterr().out.splitlines()  # each point's line prints the expected accuracy the JSON holds
    assert main(["path", "sorct", *common, "--lambda-l", "0,1", "--n-starts", "2", "--json"]) == 0
    path = json.loads(capsys.readouterr().out)["path"]
    assert len(printed) == 2 and all(f"(expected {p['test_expected_accuracy']:.3f})" in line
                                     for p, line in zip(path, printed, strict=True))
    assert main(["path", "sorct", *common, "--lambda-l", "0,abc"]) == 2
    assert "lambda-l" in capsys.readouterr().err
    assert main(["path", "olct", *common]) == 2
    # the paper's pair order from the command line: each lambda_L point, then the end of its lambda_G row (8 / p)
    assert main(["path", "sorct", *common, "--lambda-l", "0,0.01", "--lambda-g", "paper-ends", "--n-starts", "2",
                 "--json"]) == 0
    path = json.loads(capsys.readouterr().out)["path"]
    assert [(p["lambda_l"], p["lambda_g"]) for p in path] == [(0.0, 0.0), (0.0, 4.0), (0.01, 0.0), (0.01, 4.0)]
    assert main(["path", "sorct", *common, "--lambda-g", "paper-end"]) == 2
    assert "'paper' or 'paper-ends', got 'paper-end'" in capsys.readouterr().err


def test_a_multistart_builds_one_ipopt_solver_not_one_per_start() -> None:
    """Issue 33: each start asked for the time it had left (a new ``max_wall_time``), so each built and kept its
    own Ipopt solver with its derivatives (100 MB per start on a 600-row S-ORCT of depth 2; a Thyroid path failed
    with ``std::bad_alloc`` after 10 minutes). A cached solver is reused while its limit is 90-100 % of the one
    asked: never more time than asked."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(40, 3))
    data = Dataset.from_arrays(X, np.where(X[:, 0] + X[:, 1] > 1, 1, -1))
    built = get_formulation("sorct", depth=1, gamma=32).build(data)
    best, _ = solve_from(built, n_starts=4, seed=0, time_limit=30)
    assert len(best.starts) == 4 and all(s["status"] == "local_optimum" for s in best.starts)
    nlp = compiled(built.compile())
    assert len(nlp._solvers) == 1  # was 4: one per start
    (per, _), = nlp._solvers.values()
    assert 27 <= float(per["ipopt.max_wall_time"]) <= 30
    from treeopt_dsl.backends.nlp import _reusable

    wall = "ipopt.max_wall_time"
    assert _reusable({wall: 29.5}, {wall: 30.0}) and _reusable({wall: 27.0}, {wall: 30.0})
    assert not _reusable({wall: 30.5}, {wall: 30.0})  # would allow more time than asked
    assert not _reusable({wall: 20.0}, {wall: 30.0}) and not _reusable({}, {wall: 30.0})
    assert not _reusable({"ipopt.output_file": "a"}, {"ipopt.output_file": "b"})


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([1.0, 8.0, 64.0]))
def test_expected_accuracy_is_the_true_class_probability_written_out_by_hand(seed: int, gamma: float) -> None:
    """``expected_accuracy`` = mean_i sum_t P_it C_{y_i t} (line 112 with the 0-1 cost), the leaf probabilities of
    depth 2 written out node by node (root 0, children 1 and 2), against the model's vectorized route; and the
    path's metrics record it next to the accuracy of the most probable class."""
    rng = np.random.default_rng(seed)
    m = replace(_fitted_small(), A=rng.uniform(-1, 1, (3, 4)), mu=rng.uniform(-1, 1, 3), gamma=gamma,
                C=rng.dirichlet(np.ones(3), size=4).T)
    data = _data(50, 4, 3, 7)
    Xs = m.scaler.transform(data.X)
    q = 1 / (1 + np.exp(-gamma * (Xs @ m.A.T / 4 - m.mu)))  # probability of going left at each node
    P = np.column_stack([q[:, 0] * q[:, 1], q[:, 0] * (1 - q[:, 1]), (1 - q[:, 0]) * q[:, 2],
                         (1 - q[:, 0]) * (1 - q[:, 2])])
    y = data.labels_of(data.y)
    k = np.searchsorted(np.asarray(m.classes), y)
    want = float(np.mean([P[i] @ m.C[k[i]] for i in range(len(y))]))
    assert m.expected_accuracy(data.X, y) == pytest.approx(want, rel=1e-9)
    metrics = model_metrics(m, data, "test")
    assert metrics["test_expected_accuracy"] == pytest.approx(want, rel=1e-9)
    assert metrics["test_accuracy"] == np.mean(m.predict(data.X) == y)
    hard = m.deterministic()  # gamma = inf, C rounded: the expected accuracy is the accuracy
    assert hard.expected_accuracy(data.X, y) == pytest.approx(np.mean(hard.predict(data.X) == y))


def test_expected_accuracy_refuses_labels_of_another_length() -> None:
    m = _fitted_small()
    with pytest.raises(DataError, match="y must hold one label per row of X"):
        m.expected_accuracy(np.zeros((3, 4)), [0, 1])


def test_the_path_picture_draws_the_expected_accuracy_beside_the_accuracy() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    class Point:  # what plot_path reads of a PathPoint
        def __init__(self, lam: float) -> None:
            self.row = {"lambda_l": lam, "delta_l": 50.0 * lam, "delta_g": 30.0, "train_accuracy": 0.9,
                        "test_accuracy": 0.8, "test_expected_accuracy": 0.7 - 0.1 * lam}

        def to_dict(self) -> dict:
            return self.row

    fig = plot_path([Point(0.1), Point(1.0)])
    try:
        lines = {ln.get_label(): ln for ln in fig.axes[1].get_lines()}
        assert list(lines) == ["train accuracy (%)", "test accuracy (%)", "test expected accuracy (%)"]
        assert lines["test expected accuracy (%)"].get_ydata().tolist() == pytest.approx([69.0, 60.0])
    finally:
        plt.close(fig)
