"""``ors loss="true" proof="outer"``: the card proven optimal in the true logistic loss by outer approximation (a
tangent row per sample, the MILP re-solved), against brute force over every card with its best intercept
(tests/brute_force.py). The lattice cutting planes (``proof="lcpa"``, the default): test_lattice.py."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import brute_force_ors_true
from brute_force import risk_data as _data
from brute_force import true_loss as _true_loss
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from treeopt_dsl import Dataset, lazy
from treeopt_dsl.blocks import TangentLogisticLoss
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.exact.binarize import stump_cuts
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.result import Status


@pytest.mark.parametrize(("seed", "multiplier", "epigraph"), [(0, 1.0, "breakpoints"), (1, 1.0, "pieces"),
                                                              (2, 1.5, "breakpoints")])
def test_true_loss_optimum_equals_brute_force(seed, multiplier, epigraph):
    X, y = _data(seed)
    tol = 1e-4
    best, _, _ = brute_force_ors_true(X, y, 2, range(-3, 4), multiplier)
    d = Dataset.from_arrays(X, y)
    kw = dict(T=2, A="-3..3", multiplier=multiplier, epigraph=epigraph)
    res = get_formulation("ors", loss="true", proof="outer", loss_tol=tol, **kw).solve(d, solver="highs",
                                                                                      time_limit=120)
    assert res.status is Status.OPTIMAL and res.certificate.ok
    assert "optimal in the true logistic loss to relative gap" in res.message
    info = res.outer_approximation
    assert info["iterations"] >= 1 and info["gap"] <= tol
    assert best - 1e-7 <= res.objective <= best + tol * max(1.0, best)  # no card beats brute force; within tol
    assert res.bound <= best + 1e-7  # the MILPs' bound is a lower bound of the true optimum
    assert _true_loss(res.model, X, y) == pytest.approx(res.objective, rel=1e-9)  # what the user reads
    # the surrogate's optimal card is no better in the true loss
    tangent = get_formulation("ors", loss="tangent", **kw).solve(d, solver="highs", time_limit=120)
    assert tangent.status is Status.OPTIMAL and "optimal in the tangent surrogate" in tangent.message
    assert tangent.outer_approximation is None
    assert res.objective <= _true_loss(tangent.model, X, y) + 1e-9
    assert tangent.objective <= res.bound + 1e-6  # the tangent optimum is the first MILP's bound


def test_certificate_recomputes_the_true_loss_from_the_decoded_model():
    X, y = _data(3)
    res = get_formulation("ors", T=2, A="-3..3", proof="outer").solve(Dataset.from_arrays(X, y), solver="highs",
                                                                        time_limit=120)
    cert = res.certificate
    assert res.status is Status.OPTIMAL and cert.ok  # loss="true" is the default
    assert cert.objective_decoded == pytest.approx(_true_loss(res.model, X, y), rel=1e-9)
    assert cert.terms["loss"] == pytest.approx(cert.objective_decoded)
    # the decoded card's true loss, not the surrogate the MILP's slack columns hold at the returned point
    assert cert.objective_decoded > res.built.model.objective_value(res.x) + 1e-6


def test_stopped_loop_returns_the_best_card_with_its_certified_gap(monkeypatch):
    """One MILP with the coarse V0 tangents cannot close a 1e-6 gap: no proof, the gap and bound are reported."""
    monkeypatch.setattr(lazy, "MAX_ITERATIONS", 1)
    X, y = _data(4)
    res = get_formulation("ors", T=2, A="-3..3", tangents="V0", loss_tol=1e-6, proof="outer").solve(
        Dataset.from_arrays(X, y), solver="highs", time_limit=120)
    info = res.outer_approximation
    assert res.status is Status.FEASIBLE and res.certificate.ok
    assert info["iterations"] == 1 and info["gap"] > 1e-6
    assert res.bound <= res.objective and "not proven" in res.message
    best, _, _ = brute_force_ors_true(X, y, 2, range(-3, 4))
    assert res.bound <= best + 1e-7 <= res.objective + 1e-7


def test_refine_adds_rows_only_where_the_tangents_under_estimate():
    X, y = _data(5)
    built = get_formulation("ors", T=2, A="-3..3", tangents="V1", proof="outer").build(Dataset.from_arrays(X, y))
    loss = built.outer[0]
    x = np.full(built.model.n_vars, np.nan)
    x[built.model.variables["s"].ids] = 0.0
    x[built.model.variables["beta"].ids] = 0.0
    x = built.complete(x)  # s = 0, beta = 0: every margin is 0
    assert built.refine(x, 1e-9) is None  # V1 holds the tangent at 0: tight at every sample
    x[built.model.variables["beta"].ids] = 0.7  # margins +-0.7, where V1 is loose
    x = built.completed(x)
    cuts = built.refine(x, 1e-9)
    n = built.ctx.data.n_samples
    assert cuts is not None and cuts.n_rows == n
    assert np.all(cuts.violation(x) > 0)  # each row cuts the point it was made at off ...
    lifted = built.completed(x)  # ... and the completion lifts the slacks onto it
    assert np.all(cuts.violation(lifted) <= 1e-12)
    u = loss.margins(built.ctx, lifted)
    np.testing.assert_allclose(built.ctx["xi"].values(lifted), loss.exact(u), rtol=1e-12)
    assert built.refine(lifted, 1e-9) is None and built.outer_cuts().n_rows == n


def test_bad_loss_options_are_refused_before_any_work():
    with pytest.raises(FormulationError, match="loss must be one of"):
        get_formulation("ors", loss="exact")
    with pytest.raises(FormulationError, match="loss_tol must be a number in"):
        get_formulation("ors", loss_tol=0)
    with pytest.raises(FormulationError, match="on a score"):
        TangentLogisticLoss(objective="true", on="tree")


# ----------------------------------------------------------- binarize="stump": the thesis' LCPA baseline (Fig. 4.5)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_levels=st.sampled_from([2, 4, 50]))
def test_stump_cuts_are_scikit_learns_log_loss_stumps(seed, n_levels):
    """Per feature, the cut's entropy impurity is that of scikit-learn's ``max_depth=1, criterion="log_loss"`` stump
    fitted on the feature alone (the same cut, up to ties), and the cut lies between the training values given."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_levels, size=(40, 3)).astype(float)
    y = np.where(X[:, 0] + rng.normal(0, n_levels / 3, 40) > n_levels / 2, 1, -1)
    f, lo, up = stump_cuts(X, y)

    def impurity(j, t):
        out = 0.0
        for side in (X[:, j] <= t, X[:, j] > t):
            _, n = np.unique(y[side], return_counts=True)
            out -= float((n * np.log(n / n.sum())).sum())
        return out

    assert f.tolist() == [j for j in range(3) if np.ptp(X[:, j]) > 0]
    for j, a, b in zip(f, lo, up, strict=True):
        stump = DecisionTreeClassifier(max_depth=1, criterion="log_loss").fit(X[:, [j]], y).tree_
        assert a < b and a in X[:, j] and b in X[:, j] and not ((X[:, j] > a) & (X[:, j] < b)).any()
        if stump.node_count == 3:  # scikit-learn splits only where the impurity falls
            assert impurity(j, a) == pytest.approx(impurity(j, stump.threshold[0]), rel=1e-9, abs=1e-9)


def test_lcpa_on_stump_columns_equals_brute_force_over_their_cards():
    """``ors binarize="stump" loss="true"`` (the thesis' LCPA on binarized features): one condition per feature
    at its stump's cut, and the card proven optimal in the true log-loss is brute force's over those columns."""
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.integers(20, 80, 30), rng.normal(size=30).round(2), rng.random(30) < 0.5]).astype(float)
    y = np.where(X[:, 0] / 30 + X[:, 1] + rng.normal(0, 0.7, 30) > 2.2, 1, -1)
    res = get_formulation("ors", T=2, A="-3..3", binarize="stump", loss="true", loss_tol=1e-6).solve(
        Dataset.from_arrays(X, y, feature_names=["age", "z", "flag"]), time_limit=120)
    sc = res.model.scaler
    f, lo, up = stump_cuts(X, y)
    assert sc.feature.tolist() == f.tolist() == [0, 1, 2] and sc.names[-1] == "flag >= 1"
    assert np.all((lo < sc.threshold) & (sc.threshold <= up))
    Z = sc.transform(X)
    np.testing.assert_array_equal(Z, (X[:, f] >= up).astype(float))  # the same rows on each side as the stump
    assert res.status is Status.OPTIMAL and res.certificate.ok
    best, _, _ = brute_force_ors_true(Z, y, 2, range(-3, 4))
    assert res.objective == pytest.approx(best, rel=1e-5)
    assert _true_loss(res.model, X, y) == pytest.approx(res.objective, rel=1e-9)


def test_stump_T_is_checked_against_one_condition_per_feature():
    X = np.column_stack([np.arange(12.0), np.arange(12.0) % 2])
    data = Dataset.from_arrays(X, np.where(np.arange(12) > 5, 1, -1))
    with pytest.raises(FormulationError, match=r"T=3 exceeds the 2 threshold columns that binarize='stump' "
                                               r"\(one per feature\).*or use cardinality"):
        get_formulation("ors", T=3, binarize="stump").build(data)
    with pytest.raises(FormulationError, match=r"or raise max_cuts, or use"):
        get_formulation("ors", T=4, binarize="quantile", max_cuts=2).build(data)
