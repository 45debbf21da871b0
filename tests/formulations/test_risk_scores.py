"""Optimal risk scores (4.5): the MILP optimum equals brute force; the normal form is equivalent."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import best_beta_loss, brute_force_ors, linprog_relaxation
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treeopt_dsl import Dataset
from treeopt_dsl.blocks import TangentLogisticLoss
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.risk import RiskScoreModel
from treeopt_dsl.starts import resolve


@settings(max_examples=12, deadline=None)
@given(X=arrays(np.int64, (10, 4), elements=st.integers(0, 1)),
       y=st.lists(st.sampled_from([-1, 1]), min_size=10, max_size=10),
       tangents=st.sampled_from(["V1", "V3"]), epigraph=st.sampled_from(["pieces", "breakpoints"]))
def test_ors_equals_brute_force(X, y, tangents, epigraph):
    X = X.astype(float)
    X[0], X[1] = 0.0, 1.0  # every column takes both values: minmax scaling leaves binary data as it is
    y = np.array(y)
    if np.unique(y).size < 2:
        y[0] = -y[0]
    res = get_formulation("ors", T=2, A="-2..2", tangents=tangents, epigraph=epigraph, loss="tangent").solve(
        Dataset.from_arrays(X, y), gap=0.0, time_limit=60)  # the thesis' model (4.5): optimal in the tangents
    assert res.status.value == "optimal"
    assert res.objective == pytest.approx(brute_force_ors(X, y, 2, range(-2, 3), tangents), rel=1e-6, abs=1e-6)
    assert res.certificate.ok
    assert np.count_nonzero(res.model.s) <= 2


def test_at_most_and_sparse_score_sets():
    rng = np.random.default_rng(0)
    X = (rng.random((30, 5)) > 0.5).astype(float)
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] + 0.3 * rng.normal(size=30) > 0.5, 1, -1)
    d = Dataset.from_arrays(X, y)
    exact = get_formulation("ors", T=3, loss="tangent").solve(d, time_limit=60)  # (4.2) of the thesis' (4.5)
    at_most = get_formulation("ors", T=3, cardinality="at_most", loss="tangent").solve(d, time_limit=60)
    assert exact.objective == pytest.approx(at_most.objective, rel=1e-6)  # s_j = 0 is allowed either way
    odd = get_formulation("ors", T=3, A="-3,-1,0,1,3", loss="tangent").solve(d, time_limit=60)
    assert set(odd.model.s.tolist()) <= {-3, -1, 0, 1, 3}
    assert odd.objective >= exact.objective - 1e-6 or odd.certificate.ok
    with pytest.raises(FormulationError, match="contain 0"):
        get_formulation("ors", A="1..3").formulation()


@settings(max_examples=50, deadline=None)
@given(s=arrays(np.int64, 5, elements=st.integers(-5, 5)), beta=st.floats(-5, 5),
       X=arrays(float, (7, 5), elements=st.floats(0, 1)))
def test_normal_form_scores_identically(s, beta, X):
    from treeopt_dsl.data import Scaler

    m = RiskScoreModel(s.astype(float), beta, tuple(f"f{j}" for j in range(5)), (-1, 1), Scaler("none").fit(X))
    n = m.normal_form()
    assert np.all(n.s >= 0)
    np.testing.assert_allclose(n.decision_function(X), m.decision_function(X), atol=1e-9)
    np.testing.assert_allclose(n.predict_proba(X), m.predict_proba(X), atol=1e-12)


def test_score_card_and_risk_table_read_like_figure_4_1():
    rng = np.random.default_rng(1)
    X = (rng.random((40, 4)) > 0.5).astype(float)
    y = np.where(X[:, 0] - X[:, 3] + 0.2 * rng.normal(size=40) > 0, 1, -1)
    res = get_formulation("ors", T=2).solve(Dataset.from_arrays(X, y, feature_names=["a", "b", "c", "d"]),
                                            time_limit=60)
    card = dict(res.model.score_card())
    assert len(card) <= 2 and all(isinstance(v, int) for v in card.values())
    table = res.model.risk_table()
    risks = [r for _, r in table]
    assert risks == sorted(risks)  # risk grows with the total score
    text = res.model.text()
    assert "points" in text and "risk" in text
    # predict_proba is the logistic of total score + beta
    p = res.model.predict_proba(X)[:, 1]
    np.testing.assert_allclose(p, 1 / (1 + np.exp(-(X @ res.model.s + res.model.beta))), atol=1e-12)


# ------------------------------------------------------------------------------- generalized risk scores
def brute_force_ogrs_one_rule(X: np.ndarray, y: np.ndarray, A: range, tangents: str) -> float:
    """T = 1: every feature, every threshold between distinct values (discriminative rules), every s in A."""
    a, c = TangentLogisticLoss(tangents).pieces()
    Xs = (X - X.min(0)) / np.where(np.ptp(X, 0) > 0, np.ptp(X, 0), 1.0)
    best = np.inf
    for j in range(X.shape[1]):
        vals = np.unique(Xs[:, j])
        for theta in (vals[:-1] + vals[1:]) / 2:
            r = (Xs[:, j] > theta).astype(float)
            for s in A:
                best = min(best, best_beta_loss(s * r, y.astype(float), a, c))
    return best


@settings(max_examples=8, deadline=None)
@given(X=arrays(np.int64, (9, 2), elements=st.integers(0, 3)),
       y=st.lists(st.sampled_from([-1, 1]), min_size=9, max_size=9),
       epigraph=st.sampled_from(["pieces", "breakpoints"]))
def test_ogrs_one_rule_equals_brute_force(X, y, epigraph):
    X = X.astype(float)
    X[0], X[1] = 0.0, 3.0
    y = np.array(y)
    if np.unique(y).size < 2:
        y[0] = -y[0]
    res = get_formulation("ogrs", T=1, A="-2..2", tangents="V1", epigraph=epigraph).solve(
        Dataset.from_arrays(X, y), gap=0.0, time_limit=60)
    assert res.status.value == "optimal"
    assert res.objective == pytest.approx(brute_force_ogrs_one_rule(X, y, range(-2, 3), "V1"), rel=1e-6, abs=1e-6)
    assert res.certificate.ok


def test_ogrs_rules_reproduce_z_and_normal_forms_agree():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(50, 10, 40), (rng.random(40) > 0.5).astype(float), rng.random(40)])
    y = np.where((X[:, 0] > 55) | (X[:, 1] == 1) & (rng.random(40) > 0.3), 1, -1)
    res = get_formulation("ogrs", T=2, tangents="V1").solve(Dataset.from_arrays(X, y), time_limit=30)
    assert res.status.has_solution and res.certificate.ok
    z = np.rint(res.built.ctx["z_rule"].values(res.x))
    model = res.model
    np.testing.assert_array_equal(model.rules_hold(X), z)  # decoded thresholds, in original units, give z
    assert len(set(model.features.tolist())) == 2  # (4.9): no feature twice
    if 1 in model.features.tolist():  # (4.15): a binary feature is split at 0.5
        assert model.original_thresholds()[model.features.tolist().index(1)] == pytest.approx(0.5, abs=1e-3)
    for kind in ("non_negative", "one_direction"):
        n = model.normal_form(kind)
        np.testing.assert_allclose(n.decision_function(X), model.decision_function(X), atol=1e-9)
    assert np.all(model.normal_form("non_negative").s >= 0)
    assert not model.normal_form("one_direction").negated.any()


def test_rule_by_rule_warm_start_is_feasible_and_accepted():
    from treeopt_dsl.starts.resolver import start_point

    rng = np.random.default_rng(5)
    X = rng.random((40, 4))
    y = np.where(X[:, 0] + X[:, 2] + 0.2 * rng.normal(size=40) > 1.0, 1, -1)
    built = get_formulation("ogrs", T=2, tangents="V1").build(Dataset.from_arrays(X, y))
    x0 = start_point(built, "greedy")
    assert built.model.max_violation(x0) <= 1e-6
    res = built.solve(time_limit=60, gap=0.0, warm_start=resolve(built, "greedy"))
    assert res.warm_start_accepted is True
    assert res.status.value == "optimal"
    assert built.model.objective_value(x0) >= res.objective - 1e-6
    # ORS takes its decisions as a dict
    ors = get_formulation("ors", T=2, tangents="V1").build(Dataset.from_arrays((X > 0.5).astype(float), y))
    r = ors.solve(time_limit=60, warm_start=resolve(ors, {"s": [1, 0, 1, 0], "beta": -1.0}))
    assert r.warm_start_accepted is True and r.certificate.ok


@settings(max_examples=50, deadline=None)
@given(s=arrays(np.int64, 3, elements=st.integers(-5, 5)), beta=st.floats(-5, 5),
       thr=arrays(float, 3, elements=st.floats(0.05, 0.95)), neg=arrays(bool, 3),
       X=arrays(float, (9, 4), elements=st.floats(0, 1)))
def test_generalized_normal_forms_score_identically(s, beta, thr, neg, X):
    from treeopt_dsl.data import Scaler
    from treeopt_dsl.models.risk import GeneralizedRiskScoreModel

    m = GeneralizedRiskScoreModel(np.array([0, 2, 3]), thr, s.astype(float), beta, ("a", "b", "c", "d"), (-1, 1),
                                  Scaler("none").fit(X), negated=neg)
    for kind in ("non_negative", "one_direction"):
        n = m.normal_form(kind)
        np.testing.assert_allclose(n.decision_function(X), m.decision_function(X), atol=1e-9)
    assert np.all(m.normal_form("non_negative").s >= 0)
    assert not m.normal_form("one_direction").negated.any()
    totals = [t for t, _ in m.risk_table()]
    assert set(np.rint(m.rules_hold(X) @ m.s).astype(int).tolist()) <= set(totals)


# ------------------------------------------------------------------------------ the breakpoint epigraph
@settings(max_examples=200, deadline=None)
@given(slopes=st.lists(st.floats(-3, 3, allow_nan=False).map(lambda v: round(v, 3)), min_size=1, max_size=6),
       inters=st.lists(st.floats(-3, 3, allow_nan=False), min_size=6, max_size=6),
       margins=arrays(np.float64, 25, elements=st.floats(-20, 20, allow_nan=False)))
def test_breakpoints_value_the_max_of_the_pieces(slopes, inters, margins):
    """``envelope`` + ``interpolation`` represent ``max_k (a_k m + c_k)`` exactly: the interpolated point is
    in the breakpoint polyhedron (lam >= 0 summing to 1, ``m = lam @ b + r - l``) and its value is the max of the
    pieces computed densely; no point of the polyhedron with the same ``m`` is lower (LP against numpy)."""
    from treeopt_dsl.blocks.losses import envelope, interpolation

    a = np.array(slopes + [slopes[0]])  # a repeated slope: only the higher piece may count
    c = np.array((inters + [0.5])[:a.size])
    if np.unique(a).size < 2:
        a = np.r_[a, a[0] + 1.0]
        c = np.r_[c, 0.0]
    b, g, lo, hi = envelope(a, c)
    assert np.all(np.diff(b) > 0)
    lam, r, left = interpolation(b, margins)
    assert np.all(lam >= -1e-12) and np.allclose(lam.sum(1), 1.0)
    assert np.all(r >= 0) and np.all(left >= 0)
    np.testing.assert_allclose(lam @ b + r - left, margins, atol=1e-9)
    dense = np.max(np.multiply.outer(margins, a) + c, axis=1)
    np.testing.assert_allclose(lam @ g + hi * r - lo * left, dense, rtol=1e-9, atol=1e-9)
    from scipy.optimize import linprog

    m0 = float(margins[0])  # the lowest value the polyhedron gives at m0 is f(m0): the epigraph is exact
    cost = np.r_[g, hi, -lo]
    eq = np.vstack([np.r_[b, 1.0, -1.0], np.r_[np.ones(b.size), 0.0, 0.0]])
    lp = linprog(cost, A_eq=eq, b_eq=[m0, 1.0], bounds=[(0, None)] * (b.size + 2), method="highs")
    assert lp.status == 0 and lp.fun == pytest.approx(dense[0], rel=1e-7, abs=1e-7)


def test_breakpoint_epigraph_has_three_rows_per_sample_and_completes_a_start():
    """V3 on a score: 16 piece rows per sample become 3 (convexity, margin, value); a start given as
    ``(s, beta)`` is completed to a feasible point with the same objective in both forms."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(40, 6)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 0.5, 40) > 0.5, 1, -1)
    d = Dataset.from_arrays(X, y)
    built = {e: get_formulation("ors", T=3, epigraph=e, proof="outer", compress=False).build(d)
             for e in ("pieces", "breakpoints")}
    rows = {e: b.compile().n_rows for e, b in built.items()}
    assert rows["pieces"] - rows["breakpoints"] == 40 * (16 - 3)
    from treeopt_dsl.starts.resolver import start_point

    start = {"s": np.array([2.0, 1.0, -3.0, 0.0, 0.0, 0.0]), "beta": np.array(-1.0)}
    values = []
    for b in built.values():
        x = start_point(b, start)
        assert b.model.max_violation(x) <= 1e-9
        values.append(b.model.objective_value(x))
    assert values[1] == pytest.approx(values[0], rel=1e-12)


def test_breakpoints_on_a_tree_are_refused():
    with pytest.raises(FormulationError, match="on='score'"):
        TangentLogisticLoss("V1", epigraph="breakpoints")
    with pytest.raises(FormulationError, match="epigraph"):
        get_formulation("ors", epigraph="lambda")


@pytest.mark.parametrize("epigraph", ["pieces", "breakpoints"])
def test_one_formulation_built_twice_completes_each_model(epigraph):
    """Blocks keep what they built on the model's context, not on themselves: a formulation built into a
    second model (as the rule-by-rule start builds one-rule models from the full model's loss block) leaves
    the first model's completion intact. It did not: the second build overwrote the breakpoint columns."""
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(30, 3)).astype(float)
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(0, 1, 30) > 0, 1, -1)
    f = get_formulation("ogrs", T=2, A="-2..2", epigraph=epigraph).formulation()
    first = f.build(Dataset.from_arrays(X / 3.0, y))
    f.build(Dataset.from_arrays(X[:12] / 3.0, y[:12]))  # the same block instances, a second model
    start = {"a_rule": np.eye(3)[:, :2], "b_rule": np.array([0.5, 0.5]), "s_rule": np.array([2.0, -1.0]),
             "beta": 0.5}
    from treeopt_dsl.starts.resolver import start_point

    x = start_point(first, start)
    assert first.model.max_violation(x) <= 1e-9


def test_the_rule_by_rule_start_is_certified_with_breakpoints():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 5, size=(40, 3)).astype(float)
    y = np.where(X[:, 0] + X[:, 2] + rng.normal(0, 1.5, 40) > 4, 1, -1)
    res = get_formulation("ogrs", T=2, A="-2..2", tangents="V1", epigraph="breakpoints").solve(
        Dataset.from_arrays(X, y), time_limit=30, warm_start="greedy")
    assert res.certificate.ok
    assert np.isfinite(res.start["objective"]) and res.objective <= res.start["objective"] + 1e-9


@pytest.mark.parametrize(("name", "kw"), [("ors", {"T": 2, "A": "-3..3", "loss": "tangent"}),
                                          ("ogrs", {"T": 1, "A": "-2..2"})])
def test_compressed_rows_give_the_same_optimum(name, kw):
    """``compress`` (the default) builds identical samples as one weighted row: fewer rows, the same proven
    optimum and card as the model with a row per sample, certified on each."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(60, 4)).astype(float)
    X[0], X[1] = 0.0, 1.0
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * X[:, 2] + rng.normal(0, 0.6, 60) > 0.2, 1, -1)
    d = Dataset.from_arrays(X, y)
    res = {c: get_formulation(name, compress=c, **kw).solve(d, gap=0.0, time_limit=60) for c in (True, False)}
    assert all(r.status.value == "optimal" and r.certificate.ok for r in res.values())
    assert res[True].objective == pytest.approx(res[False].objective, rel=1e-7, abs=1e-7)
    assert res[True].built.ctx.data.n_samples < 60 == res[False].built.ctx.data.n_samples
    assert res[True].size["n_constraints"] < res[False].size["n_constraints"]
    if name == "ors":
        assert res[True].objective == pytest.approx(brute_force_ors(X, y, 2, range(-3, 4), "V3"), rel=1e-6)


@settings(max_examples=25, deadline=None)
@given(cost=arrays(np.float64, 5, elements=st.floats(-3, 3).map(lambda v: round(v, 2))),
       T=st.integers(1, 4), cardinality=st.sampled_from(["exact", "at_most"]),
       epigraph=st.sampled_from(["pieces", "breakpoints"]))
def test_the_lp_relaxation_of_the_card_is_its_convex_hull(cost, T, cardinality, epigraph):
    """(4.2)-(4.3) with ``M = max |A|`` are the convex hull of the admissible cards: the LP relaxation of ``ors``
    minimizes any linear objective on ``s`` where the best T-sparse integer card does (``-max|A|`` times the T
    largest ``|c_j|``). So no reformulation on ``(s, a, beta, xi)`` raises ``ors``' root bound: its gap is the
    convex loss' over the hull, which only branching closes (docs/benchmarks.md, "Why ors' proof takes nodes").
    A looser ``M`` than ``max |A|`` fails this."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(12, 5)).astype(float)
    X[0], X[1] = 0.0, 1.0
    y = np.where(rng.random(12) < 0.5, 1, -1)
    y[:2] = (-1, 1)
    built = get_formulation("ors", T=T, A="-4..4", cardinality=cardinality, epigraph=epigraph).build(
        Dataset.from_arrays(X, y))
    sf = built.model.compile()
    s = next(b for b in sf.columns if b.name == "s")
    c = np.zeros(sf.n_cols)
    c[s.offset:s.offset + s.size] = cost
    assert linprog_relaxation(sf, c) == pytest.approx(-4.0 * np.sort(np.abs(cost))[::-1][:T].sum(), abs=1e-7)


# ------------------------------------------------------------------------------- binarize="quantile" (issue 34)
def test_quantile_binarized_ors_equals_brute_force_on_its_conditions():
    """``binarize="quantile"`` fits (4.5) on the 0/1 conditions ``x_j >= t``: its optimum is brute force's over
    cards on those columns, and the model scores raw inputs through the same conditions."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(20, 80, 24), rng.normal(size=24).round(2), rng.random(24) < 0.5]).astype(float)
    y = np.where(X[:, 0] / 30 + X[:, 1] + rng.normal(0, 0.7, 24) > 2.2, 1, -1)
    res = get_formulation("ors", T=2, A="-2..2", tangents="V1", binarize="quantile", max_cuts=2, loss="tangent").solve(
        Dataset.from_arrays(X, y, feature_names=["age", "z", "flag"]), gap=0.0, time_limit=60)
    sc = res.model.scaler
    Z = sc.transform(X)
    assert Z.shape[1] == 5 and sc.names[-1] == "flag >= 1"  # 2 + 2 quantile cuts, the binary feature as it is
    assert res.status.value == "optimal" and res.certificate.ok
    assert res.objective == pytest.approx(brute_force_ors(Z, y, 2, range(-2, 3), "V1"), rel=1e-6, abs=1e-6)
    np.testing.assert_allclose(res.model.decision_function(X), Z @ res.model.s + res.model.beta)


@pytest.mark.parametrize(("kw", "match"), [
    ({"binarize": "deciles"}, "binarize must be one of"),
    ({"binarize": None}, "binarize must be one of"),
    ({"binarize": "quantile", "max_cuts": 0}, "max_cuts must be an integer >= 1"),
    ({"binarize": "quantile", "max_cuts": 2.5}, "max_cuts must be an integer >= 1"),
    ({"binarize": "quantile", "max_cuts": "two"}, "max_cuts must be an integer >= 1"),
])
def test_bad_binarize_options_are_refused_at_once(kw, match):
    with pytest.raises(FormulationError, match=match):
        get_formulation("ors", **kw)


def test_T_is_checked_against_the_conditions_before_the_build():
    X = np.column_stack([np.arange(12.0), np.arange(12.0) % 2])
    data = Dataset.from_arrays(X, np.where(np.arange(12) > 5, 1, -1))
    spec = get_formulation("ors", T=4, binarize="quantile", max_cuts=2)
    with pytest.raises(FormulationError, match=r"T=4 exceeds the 3 threshold columns.*max_cuts=2"):
        spec.build(data)
    assert get_formulation("ors", T=3, binarize="quantile", max_cuts=2).build(data).ctx.data.n_features == 3
