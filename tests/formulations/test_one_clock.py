"""One clock per call (issue 36): ``time_limit`` is the budget of the whole ``FormulationSpec.solve``; the solver
gets what preparing, building and the starts left, and the result says where the time went."""

from __future__ import annotations

import time

import numpy as np
import pytest

import treeopt_dsl.formulations.spec as spec_module
from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Built
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.embed import feasible_start
from treeopt_dsl.starts.greedy import greedy_tree
from treeopt_dsl.starts.node_lp import greedy_lp_tree
from treeopt_dsl.starts.resolver import auto_start


class FakeClock:
    """``perf_counter`` that advances only when told (the starts "take" 7 s)."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


def test_the_solver_gets_what_the_starts_left_of_the_time_limit(monkeypatch) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    data = Dataset.from_arrays(X, np.where(X[:, 0] > 0, 1, -1))
    clock = FakeClock()
    real_resolve, seen = spec_module.resolve_start, {}

    def slow_resolve(built, warm_start, time_budget=None, **kw):
        seen["start_budget"] = time_budget
        clock.now += 7.0
        return real_resolve(built, warm_start, time_budget, **kw)

    real_solve = Built.solve

    def spy(self, *a, **kw):
        seen["time_limit"] = kw.get("time_limit")
        return real_solve(self, *a, **kw)

    monkeypatch.setattr(spec_module, "time", clock)
    monkeypatch.setattr(spec_module, "resolve_start", slow_resolve)
    monkeypatch.setattr(Built, "solve", spy)
    res = get_formulation("olct", depth=1).solve(data, solver="highs", time_limit=20, warm_start="cart")
    assert seen["start_budget"] == 5.0  # the starts' share: a quarter of the call's 20 s
    # 20 s for the call, 7 s of it spent on the starts, 1.25 s + 2e-7 s per cell (30 x 3, one node) kept for the
    # decoding, the certificate and a solver's guard
    assert seen["time_limit"] == pytest.approx(11.75 - 2e-7 * 90)
    assert res.options["time_limit"] == 20  # the result reports the user's limit
    assert res.timing["start"] == 7.0 and res.timing["total"] == 7.0  # the fake clock moved only in the starts
    # a start that takes the whole budget leaves the solver 0 s: it stops at once with what it has (the start)
    clock.now = 100.0
    res = get_formulation("olct", depth=1).solve(data, solver="highs", time_limit=5, warm_start="cart")
    assert seen["time_limit"] == 0.0 and res.status.has_solution


def test_the_automatic_start_stops_trying_candidates_when_its_share_is_spent() -> None:
    """With no time left the first candidate still gives a start; every later one says why it was skipped."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    built = get_formulation("olct", depth=1).build(Dataset.from_arrays(X, np.where(X[:, 1] > 0, 1, -1)))
    x, report = auto_start(built, time_budget=0.0)
    first, *rest = report["candidates"]
    assert x is not None and report["chosen"] == first
    assert rest and all("share of the time limit" in str(report["candidates"][k]) for k in rest)
    x, report = auto_start(built)  # no budget: every candidate is tried
    assert not any("share of the time limit" in str(v) for v in report["candidates"].values())


def test_auto_picks_a_solver_that_takes_the_model_and_a_named_one_that_cannot_is_refused_before_the_starts(
        monkeypatch) -> None:
    """MARGOT is an MIQP: ``auto`` (HiGHS for the other trees) must hand it to SCIP or Gurobi, and a named HiGHS is
    refused once the model is built, before any start runs (adult: the refusal came after 64 s of starts)."""
    from treeopt_dsl.backends.native import importable
    from treeopt_dsl.errors import CapabilityError

    if not (importable("pyscipopt") or importable("gurobipy")):
        pytest.skip("no MIQP solver installed")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    data = Dataset.from_arrays(X, np.where(X[:, 0] > 0, 1, -1))
    res = get_formulation("margot", depth=1).solve(data, time_limit=30)
    assert res.solver in ("scip", "gurobi") and res.status.value == "optimal"
    assert "cannot solve a MIQP model" in res.route["why"]
    called = []
    monkeypatch.setattr(spec_module, "resolve_start", lambda *a, **k: called.append(1))
    with pytest.raises(CapabilityError, match="MIQP"):
        get_formulation("margot", depth=1).solve(data, solver="highs", time_limit=30)
    assert not called


def test_a_tree_milp_that_would_not_fit_is_refused_before_it_is_built(monkeypatch) -> None:
    """Issue 36, size before work: OLCT on adult at depth 3 held 3.7 GB before its first node. A build estimated
    above the memory budget is refused with what fits (a lower depth, a number of rows), before anything is built."""
    from treeopt_dsl.errors import ModelTooLarge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    data = Dataset.from_arrays(X, np.where(X[:, 0] > 0, 1, -1))
    spec = get_formulation("olct", depth=3)
    assert spec.build_bytes(data) == pytest.approx(225.0 * 200 * 5 * 7)
    monkeypatch.setenv("TREEOPT_MEMORY_LIMIT", "1M")  # depth 3 needs 1.5 MiB, depth 2 0.64 MiB
    built = []
    monkeypatch.setattr(type(spec), "build", lambda self, d: built.append(1))
    with pytest.raises(ModelTooLarge, match=r"what fits: depth 2 \(0\.0 GiB\), or at most 133 rows at depth 3"):
        spec.solve(data, solver="highs", time_limit=10)
    assert not built
    assert get_formulation("olct", depth=2).build_bytes(data) < 2 ** 20  # and depth 2 would go on to be built


def test_the_callers_time_before_the_call_is_off_the_limit(monkeypatch) -> None:
    """``started`` (the command line passes the process' start): reading the data counts against ``time_limit``."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    data = Dataset.from_arrays(X, np.where(X[:, 0] > 0, 1, -1))
    clock = FakeClock()
    seen = {}
    real_solve = Built.solve

    def spy(self, *a, **kw):
        seen["time_limit"] = kw.get("time_limit")
        return real_solve(self, *a, **kw)

    monkeypatch.setattr(spec_module, "time", clock)
    monkeypatch.setattr(Built, "solve", spy)
    res = get_formulation("olct", depth=1).solve(data, solver="highs", time_limit=20, warm_start="cart",
                                                  started=clock.now - 6.0)
    # 6 s already spent before the call: the solver gets 20 - 6 less the certificate's reserve
    assert seen["time_limit"] == pytest.approx(14.0 - 1.25 - 2e-7 * 90)
    assert res.options["time_limit"] == 20  # the user's limit is reported
    assert res.timing["before"] == 6.0 and res.timing["total"] == 6.0


def test_greedy_lp_keeps_to_its_deadline_and_is_the_same_tree_within_it() -> None:
    """The starts' share ends ``greedy_lp``: past its deadline it is not used (a clear reason); well inside it, the
    tree is the one without a deadline (its work is bounded by rows, not seconds)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 4))
    data = Dataset.from_arrays(X, np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1))
    built = get_formulation("olct", depth=2).build(data)
    with pytest.raises(FormulationError, match="share of the time limit was spent"):
        greedy_lp_tree(built, deadline=time.perf_counter() - 1.0)
    W0, b0 = greedy_lp_tree(built)
    W1, b1 = greedy_lp_tree(built, deadline=time.perf_counter() + 3600.0)
    np.testing.assert_array_equal(W0, W1)
    np.testing.assert_array_equal(b0, b1)


@pytest.mark.parametrize("name", ["olct", "margot"])
def test_greedy_past_its_deadline_is_a_whole_tree_of_stumps_and_the_same_tree_within_it(name: str) -> None:
    """The starts' share ends the greedy start's linear node fits: past its deadline every node is CART's stump (one
    feature, a feasible whole tree the solver accepts); well inside it, the tree is the one without a deadline."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 4))
    data = Dataset.from_arrays(X, np.where(X[:, 0] + 0.5 * X[:, 1] - 0.3 * X[:, 2] > 0, 1, -1))
    built = get_formulation(name, depth=2).build(data)
    W0, b0 = greedy_tree(built)
    assert np.count_nonzero(W0, axis=1).max() > 1  # linear fits: more than one feature somewhere
    W1, b1 = greedy_tree(built, deadline=time.perf_counter() + 3600.0)
    np.testing.assert_array_equal(W0, W1)
    np.testing.assert_array_equal(b0, b1)
    W2, b2 = greedy_tree(built, deadline=time.perf_counter() - 1.0)
    assert np.count_nonzero(W2, axis=1).max() <= 1
    x = feasible_start(built, W2, b2)  # completed to a point of the model (raises if it cannot be)
    assert np.isfinite(built.model.objective_value(x))
