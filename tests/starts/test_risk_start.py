"""The sparse beam-search start of ``ors`` (treeopt_dsl.starts.risk, FasterRisk-style) and the multiplier.

* the beam start is feasible and, being a heuristic, never better than the proven optimum; on
  breast-wisconsin-original-like data it is within a few per cent of it;
* ``warm_start="auto"`` on ``ors`` reports the ``"beam"`` candidate and never returns worse;
* ``multiplier=m`` (FasterRisk's ``P(y|x) = sigmoid((s·x + beta)/m)``): the MILP optimum equals a brute
  force written independently of the loss block (tangents of ``log(1 + e^-u)`` at ``u/m``, every ``s`` in
  ``A^p`` with at most ``T`` nonzeros, ``beta`` at every breakpoint: the exact minimum of a convex
  piecewise-linear function of ``beta``), and the decoded model predicts ``sigmoid((s·x + beta)/m)``.
"""

from __future__ import annotations

import itertools
import time as time_module

import numpy as np
import pytest

from treeopt_dsl import Dataset
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.embed import from_decisions
from treeopt_dsl.starts import resolve
from treeopt_dsl.starts.resolver import auto_start, start_point
from treeopt_dsl.starts.risk import _PiecewiseLoss, beam_supports, risk_score_start

TOL = 1e-7


def _data(seed: int, n: int = 60, p: int = 6, binary: bool = False) -> Dataset:
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) > 0.5).astype(float) if binary else rng.random((n, p))
    logit = 3 * X[:, 0] - 2 * X[:, 1] + 1.5 * X[:, 2] - 1.2 + 0.8 * rng.normal(size=n)
    y = np.where(logit > 0, 1, -1)
    X[0], X[1] = 0.0, 1.0  # every column spans [0, 1]: min-max scaling leaves the data as it is
    return Dataset.from_arrays(X, y)


def _check_start(built, dec: dict) -> float:
    x = from_decisions(built, dec)
    assert built.model.max_violation(x) <= TOL
    s = np.asarray(dec["s"])
    assert set(s.tolist()) <= set(built.formulation.blocks[0].A)
    return float(built.compile().objective(x))


@pytest.mark.parametrize(("seed", "kw"), [
    (0, dict(T=2)),
    (1, dict(T=3, cardinality="at_most")),
    (2, dict(T=2, A="-3,-1,0,1,3", tangents="V1")),
    (3, dict(T=3, beta_bound=1.0)),
    (4, dict(T=2, multiplier=2.5)),
])
def test_beam_start_is_feasible_and_no_better_than_the_optimum(seed, kw):
    d = _data(seed, binary=seed % 2 == 0)
    kw = {**kw, "loss": "tangent"}  # the start and the optimum in one loss: the model's (the tangents)
    built = get_formulation("ors", **kw).build(d)
    obj = _check_start(built, risk_score_start(built))
    res = get_formulation("ors", **kw).solve(d, gap=0.0, time_limit=60, threads=1)
    assert res.status.value == "optimal" and res.certificate.ok
    assert obj >= res.objective - 1e-6 * max(1.0, abs(res.objective))


def test_exact_cardinality_is_filled_when_fewer_features_help():
    rng = np.random.default_rng(7)
    X = rng.random((50, 4))
    X[0], X[1] = 0.0, 1.0
    y = np.where(X[:, 0] > 0.5, 1, -1)  # one informative feature, T = 3
    built = get_formulation("ors", T=3).build(Dataset.from_arrays(X, y))
    dec = risk_score_start(built)
    x = from_decisions(built, dec)
    assert built.model.max_violation(x) <= TOL
    assert built.ctx["l0"][0].values(x).sum() == 3  # (4.2): exactly T indicators, some with s_j = 0
    # at_most with T above the number of features: every feature may be used
    built = get_formulation("ors", T=6, cardinality="at_most").build(Dataset.from_arrays(X, y))
    _check_start(built, risk_score_start(built))


def test_beam_keeps_the_best_supports_and_finds_the_planted_one():
    rng = np.random.default_rng(11)
    X = rng.random((400, 8))
    y = np.where(4 * X[:, 2] - 4 * X[:, 5] + 3 * X[:, 7] - 1.5 + 0.3 * rng.normal(size=400) > 0, 1.0, -1.0)
    pool = beam_supports(X, y, T=3, beam=5)
    assert len(pool) == 5
    losses = [loss for _, _, loss in pool]
    assert losses == sorted(losses)
    assert sorted(pool[0][0].tolist()) == [2, 5, 7]


def test_intercept_is_the_exact_minimizer():
    """The closed-form beta (one sort of the breakpoints) equals the best of every breakpoint."""
    rng = np.random.default_rng(5)
    d = _data(5, n=30)
    built = get_formulation("ors", T=2, tangents="V2", multiplier=1.7).build(d)
    y = d.y.astype(float)
    pw = _PiecewiseLoss(built.ctx["loss"], y, -np.inf, np.inf)
    t = rng.integers(-4, 5, size=(6, 30)).astype(float)
    beta = pw.best_beta(t)
    for row, b in zip(t, beta, strict=True):
        cands = (y[:, None] * pw.cross[None, :] - row[:, None]).ravel()
        brute = min(float(pw.value(row, c)) for c in cands)
        assert float(pw.value(row, b)) == pytest.approx(brute, rel=1e-12, abs=1e-12)


def test_beam_start_is_close_to_the_optimum_on_breast_wisconsin():
    from treeopt_dsl.datasets import load
    from treeopt_dsl.errors import DataError

    try:
        d = load("breast-wisconsin-original")
    except (DataError, FileNotFoundError, KeyError) as exc:
        pytest.skip(f"breast-wisconsin-original not available: {exc}")
    idx = np.random.default_rng(0).choice(d.n_samples, 200, replace=False)
    d = Dataset.from_arrays(d.X[idx], d.y[idx])
    built = get_formulation("ors", T=5, loss="tangent").build(d)
    obj = _check_start(built, risk_score_start(built))
    res = get_formulation("ors", T=5, loss="tangent").solve(d, gap=0.0, time_limit=120, threads=1)
    assert res.status.value == "optimal"
    assert res.objective - 1e-6 <= obj <= 1.05 * res.objective


def test_auto_start_on_ors_reports_the_beam_candidate():
    d = _data(3, n=80)
    built = get_formulation("ors", T=3).build(d)
    x, report = auto_start(built)
    assert report["chosen"] == "beam" and report["proven"] is False
    assert report["candidates"]["beam"] == pytest.approx(report["objective"])
    assert built.model.max_violation(x) <= TOL
    res = get_formulation("ors", T=3).solve(d, warm_start="auto", time_limit=60, threads=1)
    assert res.start["chosen"] == "beam"
    assert res.objective <= res.start["objective"] + 1e-9 * max(1.0, abs(res.start["objective"]))
    assert res.certificate.ok
    # by name, and refused by name where it does not apply (the tree path is unchanged)
    x2 = start_point(built, "beam")
    assert built.model.max_violation(x2) <= TOL
    res = built.solve(warm_start=resolve(built, "beam"), time_limit=60, threads=1)
    assert res.start["chosen"] == "beam" and res.certificate.ok
    olct = get_formulation("olct", depth=1).build(d)
    with pytest.raises(FormulationError, match="unknown warm start"):
        start_point(olct, "beam")
    ogrs = get_formulation("ogrs", T=1).build(d)
    _, report = auto_start(ogrs)
    assert report["chosen"] is None  # other non-tree formulations still have no automatic start


# ------------------------------------------------------------------------------- the multiplier
def _logistic_tangent_loss(u: np.ndarray, m: float, points: tuple[float, ...]) -> np.ndarray:
    """``max(0, -u/m, max_v f(v) + f'(v)(u/m - v))`` with ``f(z) = log(1 + e^-z)``, written from scratch."""
    z = np.asarray(u, dtype=float) / m
    pieces = [np.zeros_like(z), -z]
    for v in points:
        f = np.log1p(np.exp(-v))
        df = -1.0 / (1.0 + np.exp(v))
        pieces.append(f + df * (z - v))
    return np.max(pieces, axis=0)


def _brute_force(X: np.ndarray, y: np.ndarray, T: int, A: range, m: float, points: tuple[float, ...]) -> float:
    """Every ``s`` in ``A^p`` with at most ``T`` nonzeros; ``beta`` at every margin where two pieces of one
    sample's loss cross (pairwise, so no assumption on which pieces are active)."""
    slopes = [0.0, -1.0 / m] + [-1.0 / (1.0 + np.exp(v)) / m for v in points]
    inters = [0.0, 0.0] + [np.log1p(np.exp(-v)) + v / (1.0 + np.exp(v)) for v in points]
    cross = [(inters[k] - inters[j]) / (slopes[j] - slopes[k])
             for j, k in itertools.combinations(range(len(slopes)), 2) if slopes[j] != slopes[k]]
    best = np.inf
    for s in itertools.product(A, repeat=X.shape[1]):
        s = np.array(s, dtype=float)
        if np.count_nonzero(s) > T:
            continue
        t = X @ s
        betas = (y[:, None] * np.array(cross)[None, :] - t[:, None]).ravel()
        vals = _logistic_tangent_loss(y[None, :] * (t[None, :] + betas[:, None]), m, points).sum(1)
        best = min(best, float(vals.min()))
    return best


@pytest.mark.parametrize(("m", "seed"), [(2.5, 0), (0.6, 1), (4.0, 2)])
def test_multiplier_optimum_equals_brute_force(m, seed):
    rng = np.random.default_rng(seed)
    X = (rng.random((12, 3)) > 0.5).astype(float)
    X[0], X[1] = 0.0, 1.0
    y = np.where(X[:, 0] - X[:, 2] + 0.6 * rng.normal(size=12) > 0, 1, -1)
    y[:2] = [-1, 1]
    res = get_formulation("ors", T=2, A="-2..2", tangents="V1", multiplier=m, loss="tangent").solve(
        Dataset.from_arrays(X, y), gap=0.0, time_limit=60, threads=1)
    assert res.status.value == "optimal" and res.certificate.ok
    brute = _brute_force(X, y.astype(float), 2, range(-2, 3), m, (0.0, -1.9, 1.9))
    assert res.objective == pytest.approx(brute, rel=1e-6, abs=1e-6)
    model = res.model
    assert model.multiplier == m
    p = model.predict_proba(X)[:, 1]
    np.testing.assert_allclose(p, 1 / (1 + np.exp(-(X @ model.s + model.beta) / m)), atol=1e-12)
    assert [r for _, r in model.risk_table()] == pytest.approx(
        [1 / (1 + np.exp(-(t + model.beta) / m)) for t, _ in model.risk_table()])
    assert f"/ {m:.4g}" in model.text()
    # the multiplier is a scale of the logit: the decoded points' loss on (s·x + beta)/m is the objective
    loss = _logistic_tangent_loss(y * (X @ model.s + model.beta), m, (0.0, -1.9, 1.9)).sum()
    assert loss == pytest.approx(res.objective, rel=1e-6, abs=1e-6)


def test_multiplier_one_is_the_thesis_model_and_bad_values_are_refused():
    d = _data(8, n=30, binary=True)
    a = get_formulation("ors", T=2, tangents="V1").solve(d, gap=0.0, time_limit=60, threads=1)
    b = get_formulation("ors", T=2, tangents="V1", multiplier=1.0).solve(d, gap=0.0, time_limit=60, threads=1)
    assert a.objective == pytest.approx(b.objective, rel=1e-9)
    assert a.model.multiplier == 1.0 and "/ " not in a.model.text()
    for bad in (0.0, -1.0):
        with pytest.raises(FormulationError, match="multiplier"):
            get_formulation("ors", multiplier=bad).formulation()


def test_estimator_multiplier_and_default_start() -> None:
    """RiskScoreClassifier(multiplier=m): probabilities are the score card's sigmoid((points + beta) / m), the
    fit starts from the beam card and is never worse than it."""
    from treeopt_dsl.estimator import RiskScoreClassifier

    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(80, 4)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.random(80) > 1.5).astype(int)
    clf = RiskScoreClassifier(T=2, multiplier=2.5, time_limit=30).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), clf.model_.predict_proba(X), rtol=1e-12, atol=1e-15)
    assert clf.result_.start["chosen"] == "beam" and clf.result_.objective <= clf.result_.start["objective"] + 1e-9
    with pytest.raises(FormulationError, match="multiplier"):
        RiskScoreClassifier(T=1, multiplier=0.0).fit(X, y)


def test_beam_start_weighs_samples_as_repeated_rows():
    """A sample of integer weight ``k`` is ``k`` copies of it: the beam start (supports, roundings, the exact
    intercept, the descent) finds the same card on weighted rows as on the rows repeated, and the intercept's
    minimizer with weights equals the one over the repeated rows."""
    d = _data(7, n=50, binary=True)
    w = np.random.default_rng(7).integers(1, 4, d.n_samples).astype(float)
    rep = d.take(np.repeat(np.arange(d.n_samples), w.astype(int)))
    weighted = d.with_weights(w)
    decs = [risk_score_start(get_formulation("ors", T=3, compress=False).build(data)) for data in (weighted, rep)]
    assert decs[0]["s"].tolist() == decs[1]["s"].tolist()
    assert decs[0]["beta"] == pytest.approx(decs[1]["beta"], rel=1e-9, abs=1e-9)
    built = get_formulation("ors", T=3, tangents="V2", compress=False).build(weighted)
    y = d.y.astype(float)
    t = np.random.default_rng(1).integers(-4, 5, size=(5, d.n_samples)).astype(float)
    pw_w = _PiecewiseLoss(built.ctx["loss"], y, -np.inf, np.inf, w)
    pw_r = _PiecewiseLoss(built.ctx["loss"], np.repeat(y, w.astype(int)), -np.inf, np.inf)
    t_r = np.repeat(t, w.astype(int), axis=1)
    assert pw_w.value(t, pw_w.best_beta(t)) == pytest.approx(pw_r.value(t_r, pw_r.best_beta(t_r)), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_best_rule_is_the_brute_force_rule(seed):
    """The rule-by-rule start's enumeration (issue 36: it replaced a one-rule MILP under a wall-clock limit that made
    the start depend on the machine's load) against a loop over every feature, distinct value and points."""
    from treeopt_dsl.blocks import TangentLogisticLoss
    from treeopt_dsl.starts.rules import best_rule

    rng = np.random.default_rng(seed)
    n, p, eps = 25, 3, 1e-4
    X = np.round(rng.random((n, p)), 1)
    X[:, 2] = rng.integers(0, 2, n)  # a binary feature: its threshold is 0.5 (4.15)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    w, offset, beta = rng.random(n) + 0.5, rng.integers(-2, 3, n).astype(float), float(rng.normal())
    A, loss = np.arange(-3, 4).astype(float), TangentLogisticLoss("V1", on="score")
    exclude = [0] if seed % 2 else []
    best = None
    for j in range(p):
        if j in exclude:
            continue
        for v in np.unique(X[:, j])[1:]:  # the rule holds on x >= v; the lowest value would hold everywhere
            b = 0.5 if set(np.unique(X[:, j])) <= {0.0, 1.0} else v
            fires = X[:, j] >= v
            for s in A[A != 0]:  # a rule of 0 points is no rule
                value = float(np.sum(w * loss.surrogate(y * (offset + s * fires + beta))))
                if best is None or value < best[3] - 1e-12:
                    best = (j, b, s, value)
    found = best_rule(X, y, w, offset, beta, A, loss, eps, exclude)
    assert found is not None and found[3] == pytest.approx(best[3], rel=1e-12, abs=1e-12)
    j, b, s, _ = found
    assert j not in exclude
    fires = X[:, j] >= b - eps / 2
    assert 0 < fires.sum() < n  # (4.12): both sides non-empty
    assert float(np.sum(w * loss.surrogate(y * (offset + s * fires + beta)))) == pytest.approx(best[3])


def test_the_beam_start_is_bounded_by_sweeps_not_seconds(monkeypatch):
    """On a machine where every clock reading is a day later (a busy one, in the limit) the start is the same card:
    its polish is bounded by sweeps (:data:`~treeopt_dsl.defaults.RISK_DESCENT_SWEEPS`), not by seconds; with no
    sweep at all it is the unpolished rounding, which the polish improves on this data."""
    built = get_formulation("ors", T=3, loss="tangent").build(_data(8, n=120, p=8))
    quiet = risk_score_start(built)
    unpolished = risk_score_start(built, max_sweeps=0)
    day = iter(itertools.count(0.0, 86400.0))
    monkeypatch.setattr(time_module, "perf_counter", lambda: next(day))
    busy = risk_score_start(built)
    np.testing.assert_array_equal(busy["s"], quiet["s"])
    assert busy["beta"] == quiet["beta"]
    assert _check_start(built, quiet) < _check_start(built, unpolished) - 1e-9
