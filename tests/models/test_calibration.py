"""Calibration of risk score cards (issue 34, build item 3): the expected calibration error over equal-mass bins
against a direct computation, the scale search against an independent logistic regression and never worse than
the card at multiplier 1, ``ors scale="search"`` and what its result says is proven, and the reliability diagram
from the estimator and the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

from treeopt_dsl import Dataset
from treeopt_dsl.cli import main
from treeopt_dsl.datasets import load
from treeopt_dsl.errors import DataError, FormulationError
from treeopt_dsl.estimator import RiskScoreClassifier
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.calibration import equal_mass_bins, expected_calibration_error, log_loss, reliability_curve
from treeopt_dsl.models.scale import fit_scale, scaled_loss
from treeopt_dsl.numeric import sigmoid
from treeopt_dsl.result import Status


def test_ece_equals_a_direct_computation_over_sorted_chunks() -> None:
    rng = np.random.default_rng(0)
    p = rng.permutation(np.linspace(0.02, 0.98, 20))  # distinct: 4 bins of exactly 5 samples
    y = (rng.random(20) < p).astype(int)
    order = np.argsort(p)
    direct = sum(5 / 20 * abs(y[idx].mean() - p[idx].mean()) for idx in np.split(order, 4))
    assert expected_calibration_error(y, p, bins=4) == pytest.approx(direct, abs=1e-15)
    assert expected_calibration_error(2 * y - 1, p, bins=4) == pytest.approx(direct, abs=1e-15)  # ±1 labels
    # 20 bins of one sample: the mean absolute error; one bin: |mean(y) - mean(p)|
    assert expected_calibration_error(y, p, bins=20) == pytest.approx(np.mean(np.abs(y - p)), abs=1e-15)
    assert expected_calibration_error(y, p, bins=1) == pytest.approx(abs(y.mean() - p.mean()), abs=1e-15)


def test_equal_probabilities_share_a_bin_and_weights_are_repeated_rows() -> None:
    # a card's few risks: 0.2 (x4), 0.5 (x4), 0.9 (x2); two bins of mass 5 would split the 0.5s
    p = np.array([0.2] * 4 + [0.5] * 4 + [0.9] * 2)
    y = np.array([0, 0, 0, 1, 1, 0, 1, 1, 1, 1])
    b = equal_mass_bins(p, bins=2)
    assert b.tolist() == [0] * 8 + [1] * 2  # the 0.5s start at mass 4 (bin floor(2 * 4 / 10) = 0): kept together
    # by hand: bin 0 = {0.2 x4, 0.5 x4}: |4/8 - 2.8/8| * 8/10; bin 1 = {0.9 x2}: |1 - 0.9| * 2/10
    hand = 0.8 * abs(0.5 - 0.35) + 0.2 * abs(1.0 - 0.9)
    assert expected_calibration_error(y, p, bins=2) == pytest.approx(hand, abs=1e-15)
    rng = np.random.default_rng(1)
    p2, y2, w = rng.random(30), rng.integers(0, 2, 30), rng.integers(1, 4, 30)
    rep = np.repeat(np.arange(30), w)
    assert expected_calibration_error(y2, p2, 7, sample_weight=w) == pytest.approx(
        expected_calibration_error(y2[rep], p2[rep], 7), abs=1e-14)
    c = reliability_curve(y2, p2, 7, sample_weight=w)
    assert c.mass.sum() == pytest.approx(1.0) and np.all(np.diff(c.predicted) > 0)


def test_calibration_inputs_are_checked() -> None:
    with pytest.raises(DataError, match="bins must be an integer >= 1"):
        expected_calibration_error([0, 1], [0.2, 0.8], bins=0)
    with pytest.raises(DataError, match=r"p must hold probabilities in \[0, 1\]"):
        expected_calibration_error([0, 1], [0.2, 1.5])
    with pytest.raises(DataError, match="same length"):
        log_loss([0, 1, 1], [0.2, 0.8])


def _card(seed: int, n: int = 60) -> tuple[np.ndarray, np.ndarray, float]:
    rng = np.random.default_rng(seed)
    total = rng.integers(-4, 6, n).astype(float)
    y = np.where(rng.random(n) < sigmoid((total - 1.0) / rng.uniform(0.3, 3.0)), 1, -1)
    return total, y, float(rng.normal(-1.0, 1.0))


@pytest.mark.filterwarnings("ignore:'penalty' was deprecated")  # penalty=None: scikit-learn 1.6 and 1.8 alike
@pytest.mark.parametrize("seed", range(4))
def test_the_scale_search_is_the_logistic_regression_on_the_total(seed: int) -> None:
    total, y, beta = _card(seed)
    fit = fit_scale(total, y, 1.0, beta)
    lr = LogisticRegression(penalty=None, tol=1e-12, max_iter=10_000).fit(total[:, None], y)
    a, c = float(lr.coef_[0, 0]), float(lr.intercept_[0])
    assert a > 0  # the data were drawn increasing in the total
    assert fit.multiplier == pytest.approx(1.0 / a, rel=1e-4) and fit.intercept == pytest.approx(c / a, rel=1e-4,
                                                                                                  abs=1e-6)
    assert fit.loss_after == pytest.approx(scaled_loss(total, y, np.ones_like(total), 1 / a, c / a), rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), beta=st.floats(-6, 6), m=st.floats(0.2, 5.0))
def test_the_scale_search_never_increases_the_log_loss(seed: int, beta: float, m: float) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    total = rng.integers(-5, 6, n).astype(float)
    y = rng.choice([-1, 1], n)
    w = rng.integers(1, 4, n).astype(float)
    fit = fit_scale(total, y, m, beta, sample_weight=w)
    assert fit.loss_before == pytest.approx(scaled_loss(total, y, w, m, beta), rel=1e-12)
    assert fit.loss_after <= fit.loss_before
    assert fit.loss_after == pytest.approx(scaled_loss(total, y, w, fit.multiplier, fit.intercept), rel=1e-12)
    assert fit.multiplier > 0


def _data(seed: int = 0, n: int = 60) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 4)).astype(float)
    X[0], X[1] = 0.0, 1.0
    y = np.where(X @ np.array([2.0, -2.0, 1.0, 0.0]) + rng.normal(0, 0.4, n) > 0.5, 1, -1)
    return Dataset.from_arrays(X, y)


def test_ors_scale_search_keeps_the_proven_card_and_says_what_is_proven() -> None:
    d = _data()
    kw = dict(T=2, A="-2..2", loss="true")
    fixed = get_formulation("ors", **kw).solve(d, solver="highs", time_limit=120)
    res = get_formulation("ors", scale="search", **kw).solve(d, solver="highs", time_limit=120)
    assert fixed.status is res.status is Status.OPTIMAL and res.certificate.ok
    assert fixed.scale_search is None
    cal = res.scale_search
    # the proof is the card's at multiplier 1: the same objective and points; the scaled card is a step after it
    assert res.objective == pytest.approx(fixed.objective, rel=1e-9)
    np.testing.assert_array_equal(res.model.s, fixed.model.s)
    assert cal["multiplier_before"] == 1.0 and cal["loss_before"] == pytest.approx(res.objective, rel=1e-9)
    assert "not part of the proof" in cal["proven"] and "calibration step after the solve" in res.message
    assert res.message.startswith(fixed.message.split("; then")[0].split(";")[0])
    # the returned model is the scaled card and its log-loss is the search's, never above the proven card's
    p = res.model.predict_proba(d.X)[:, 1]
    loss = -np.sum(np.log(np.where(d.y > 0, p, 1 - p)))
    assert res.model.multiplier == cal["multiplier"] and loss == pytest.approx(cal["loss_after"], rel=1e-9)
    assert cal["loss_after"] <= cal["loss_before"]
    # the card reports the multiplier and its risk table follows it
    card = res.model.card()
    assert card.multiplier == res.model.multiplier and "multiplier" in card.text()
    for total, risk in card.risk_table():
        assert risk == pytest.approx(float(sigmoid((total + res.model.beta) / res.model.multiplier)), rel=1e-12)
    assert res.to_dict()["scale_search"]["multiplier"] == cal["multiplier"]
    with pytest.raises(FormulationError, match="scale must be one of"):
        get_formulation("ors", scale="auto")


def test_the_estimator_reports_calibration_and_draws_the_reliability_diagram() -> None:
    d = _data(1)
    y = np.where(d.y > 0, "sick", "well")
    clf = RiskScoreClassifier(T=2, A="-2..2", scale="search", time_limit=60).fit(d.X, y)
    assert clf.result_.scale_search is not None
    p = clf.predict_proba(d.X)[:, list(clf.classes_).index("well")]  # classes_ sorted: 'sick' < 'well'
    pos = y == clf.classes_[1]
    out = clf.calibration(d.X, y, bins=5)
    assert out["ece"] == pytest.approx(expected_calibration_error(pos, p, 5), abs=1e-15)
    assert out["log_loss"] == pytest.approx(-np.mean(np.log(np.clip(np.where(pos, p, 1 - p), 1e-15, 1))), rel=1e-12)
    fig = clf.plot_reliability(d.X, y, bins=5)
    ax = fig.axes[0]
    assert "ECE" in ax.get_legend().get_texts()[1].get_text()
    with pytest.raises(FormulationError, match="applies to formulation='ors' only"):
        RiskScoreClassifier(formulation="ogrs", scale="search").fit(d.X, y)


def test_fit_ors_reports_calibration_and_writes_the_reliability_plot(capsys, tmp_path) -> None:
    png = tmp_path / "rel.png"
    code = main(["fit", "ors", "--data", "breast-wisconsin-original", "--sample", "120", "--param", "T=2",
                 "--param", "A=-2..2", "--param", "scale=search", "--binarize", "quantile", "--max-cuts", "1",
                 "--time-limit", "60", "--calibration-plot", str(png), "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out["calibration_plot"] == str(png)
    assert out["calibration"]["train"]["bins"] == 10
    assert out["scale_search"]["loss_after"] <= out["scale_search"]["loss_before"]
    # the printed card scores the rows; its probabilities give the reported log-loss and ECE
    card = out["card"]
    assert card["multiplier"] == out["scale_search"]["multiplier"]
    names = list(load("breast-wisconsin-original").feature_names)
    train, test = load("breast-wisconsin-original").subsample(120, seed=0).split(0.2, seed=0)
    for part, dd in (("train", train), ("test", test)):
        total = sum(c["points"] * (dd.X[:, names.index(c["feature"])] >= c["threshold"]) for c in card["conditions"])
        p = sigmoid((total + card["intercept"]) / card["multiplier"])
        pos = dd.y > 0
        assert out["calibration"][part]["ece"] == pytest.approx(expected_calibration_error(pos, p), abs=1e-12)
        assert out["calibration"][part]["log_loss"] == pytest.approx(
            -np.mean(np.log(np.where(pos, p, 1 - p))), rel=1e-9)
    code = main(["fit", "ors", "--data", "breast-wisconsin-original", "--sample", "60", "--param", "T=1",
                 "--time-limit", "30", "--calibration-plot", str(tmp_path / "missing" / "r.png")])
    assert code == 2 and "--calibration-plot" in capsys.readouterr().err
