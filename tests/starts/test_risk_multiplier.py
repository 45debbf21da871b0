"""The risk-score start's search pieces (treeopt_dsl.starts.risk) and ``ors multiplier="auto"``.

* one-feature swaps find the support a greedy beam misses (a feature that pays only beside another);
* the true-loss scorer of the start (distinct totals grouped) equals the loss and best intercept on every sample;
* the discrete descent ends where no single move and no pair move of one step lowers the loss (checked by
  enumerating both neighbourhoods);
* the multiplier search's card is what it reports, and never beats brute force over every card with its own best
  ``(m, beta)``; on small data it finds that optimum;
* ``ors multiplier="auto"`` proves the card at the multiplier the search chose (brute force at that multiplier),
  through the API, the estimator and ``treeopt fit``; a bad value is refused by name.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from brute_force import brute_force_ors_true, installed
from brute_force import risk_data as _data

from treeopt_dsl import Dataset
from treeopt_dsl.blocks.lattice import best_intercept
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.estimator import RiskScoreClassifier
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.scale import fit_scale
from treeopt_dsl.result import Status
from treeopt_dsl.starts.risk import (
    _descend,
    _pair_moves,
    _TrueLoss,
    beam_supports,
    search_multiplier,
    swap_supports,
)


def _logloss(t: np.ndarray, y: np.ndarray, beta: float, m: float, w: np.ndarray | None = None) -> float:
    w = np.ones_like(t) if w is None else w
    return float(np.sum(w * np.logaddexp(0.0, -y * (t + beta) / m)))


def test_a_swap_finds_the_pair_the_greedy_beam_misses():
    rng = np.random.default_rng(0)
    n = 600
    X = rng.normal(size=(n, 5))
    X[:, 2] = X[:, 0] - X[:, 1] + 0.8 * rng.normal(size=n)  # alone the best predictor, in a pair not
    y = np.where(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    greedy = beam_supports(X, y, T=2, beam=1)
    assert 2 in greedy[0][0].tolist()  # the beam of one keeps the best single feature
    swapped = swap_supports(X, y, greedy, beam=1)
    assert sorted(swapped[0][0].tolist()) == [0, 1]
    assert swapped[0][2] < greedy[0][2]
    losses = [e[2] for e in swapped]
    assert losses == sorted(losses)


@pytest.mark.parametrize("m", [1.0, 2.5])
def test_true_loss_scorer_equals_the_loss_on_every_sample(m):
    rng = np.random.default_rng(1)
    n = 80
    X = rng.integers(0, 2, size=(n, 4)).astype(float)
    y = np.where(rng.random(n) > 0.4, 1.0, -1.0)
    w = rng.integers(1, 4, size=n).astype(float)
    S = rng.integers(-3, 4, size=(5, 4)).astype(float)
    T = S @ X.T
    scorer = _TrueLoss(m, 1.0, y, -np.inf, np.inf, w)
    betas, values = scorer.best(T)
    for t, b, v in zip(T, betas, values, strict=True):
        beta = best_intercept(t, y, w, m)
        assert b == pytest.approx(beta, abs=1e-7)
        assert v == pytest.approx(_logloss(t, y, beta, m, w), rel=1e-10)
    bounded = _TrueLoss(m, 1.0, y, -0.1, 0.1, w)  # a bound on beta: the clipped minimizer of a convex function
    b2, v2 = bounded.best(T)
    for t, b, v in zip(T, b2, v2, strict=True):
        grid = np.linspace(-0.1, 0.1, 2001)
        assert -0.1 <= b <= 0.1 and v == pytest.approx(_logloss(t, y, b, m, w), rel=1e-10)
        assert v <= min(_logloss(t, y, g, m, w) for g in grid) + 1e-9


def test_descent_ends_at_a_single_and_pair_move_minimum():
    X, y = _data(3, n=60)
    y = y.astype(float)
    A = np.arange(-3.0, 4.0)
    scorer = _TrueLoss(1.3, 1.0, y, -np.inf, np.inf)
    feats = np.array([0, 1, 2])
    s0 = np.zeros(4)
    s0[feats] = (3.0, 3.0, -3.0)  # far from the optimum's signs
    s, beta, loss = _descend(X, feats, s0.copy(), A, scorer)
    assert (beta, loss) == pytest.approx(tuple(v[0] for v in scorer.best((X @ s)[None])), rel=1e-12)
    for j, a in itertools.product(feats, A):  # no single move lowers the loss
        t = s.copy()
        t[j] = a
        assert scorer.best((X @ t)[None])[1][0] >= loss - 1e-9
    P, V, _ = _pair_moves(s, feats, A)
    assert P.shape[0] > 0
    for pair, vals in zip(P, V, strict=True):  # nor any pair of one step each
        t = s.copy()
        t[pair] = vals
        assert scorer.best((X @ t)[None])[1][0] >= loss - 1e-9


def _brute_force_over_m(X: np.ndarray, y: np.ndarray, T: int, A: range) -> float:
    """The smallest true log-loss over every card of at most ``T`` nonzero points in ``A``, each at its own best
    multiplier and intercept (fit_scale from the card's best intercept at m = 1 and at m = 3)."""
    best = np.inf
    for s in itertools.product(A, repeat=X.shape[1]):
        s = np.array(s, dtype=float)
        if np.count_nonzero(s) > T or not np.any(s):
            continue
        t = X @ s
        for m0 in (1.0, 3.0):
            fit = fit_scale(t, y, m0, best_intercept(t, y, np.ones_like(t), m0))
            best = min(best, fit.loss_after)
    return best


@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_multiplier_search_reports_its_card_and_meets_brute_force(seed):
    X, y = _data(seed, n=40)
    y = y.astype(float)
    found = search_multiplier(X, y, T=2, A=range(-3, 4))
    assert np.count_nonzero(found.s) <= 2 and set(found.s.tolist()) <= set(range(-3, 4))
    assert found.loss == pytest.approx(_logloss(X @ found.s, y, found.beta, found.multiplier), rel=1e-9)
    brute = _brute_force_over_m(X, y, 2, range(-3, 4))
    assert found.loss >= brute - 1e-6 * max(1.0, brute)  # a heuristic cannot beat the optimum over (card, m)
    assert found.loss <= brute * (1 + 1e-3)  # and on 4 features it finds it


@pytest.mark.parametrize("solver", [pytest.param(s, marks=pytest.mark.skipif(not installed(s), reason=f"{s} missing"))
                                    for s in ("highs", "gurobi")])
def test_ors_auto_multiplier_is_proven_at_the_multiplier_it_chose(solver):
    X, y = _data(2, n=40)
    d = Dataset.from_arrays(X, y)
    res = get_formulation("ors", T=2, A="-3..3", cardinality="at_most", multiplier="auto").solve(
        d, solver=solver, time_limit=120)
    assert res.status is Status.OPTIMAL and res.certificate.ok
    m = res.multiplier_search["multiplier"]
    assert res.model.multiplier == pytest.approx(m)
    assert "chosen with the start's card" in res.message
    best, _, _ = brute_force_ors_true(X, y, 2, range(-3, 4), m)
    assert best - 1e-7 <= res.objective <= best + 1e-4 * max(1.0, best)
    assert res.objective <= res.multiplier_search["loss"] + 1e-7  # the proof is never worse than the search's card
    assert res.to_dict()["multiplier_search"]["multiplier"] == m


def test_ors_auto_multiplier_through_the_estimator_and_the_command_line(tmp_path, capsys):
    from treeopt_dsl.cli import main

    X, y = _data(0, n=40)
    clf = RiskScoreClassifier(T=2, A="-3..3", multiplier="auto", cardinality="at_most", time_limit=60).fit(X, y)
    assert clf.result_.multiplier_search is not None
    assert clf.model_.multiplier == pytest.approx(clf.result_.multiplier_search["multiplier"])
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,c,d,y", comments="", fmt="%g")
    args = ["fit", "ors", "--data", str(path), "--label", "y", "--param", "T=2", "--param", "A=-3..3",
            "--param", "multiplier=auto", "--param", "cardinality=at_most", "--time-limit", "60"]
    assert main(args) == 0
    assert "multiplier  chosen with the start's card" in capsys.readouterr().out
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["multiplier_search"]["multiplier"] > 0


@pytest.mark.parametrize("bad", ["often", "-1", "0", "nan"])
def test_a_bad_multiplier_is_refused_by_name(bad):
    with pytest.raises(FormulationError, match="multiplier"):
        get_formulation("ors", multiplier=bad)
    with pytest.raises(FormulationError, match="multiplier"):
        RiskScoreClassifier(multiplier=bad).fit(*_data(0))
