"""The exact route's bookkeeping (issue 32): its result says where the call's time went, a forced STreeD keeps its
time limit (its setup runs outside its own clock), and the engines' compiled cores answer as their wrappers do."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import brute_force

from treeopt_dsl.data import Dataset
from treeopt_dsl.exact import cost, dp
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.result import Status

pytest.importorskip("pystreed")


def _data(n: int = 40, p: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, p)), 2)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("solver", ["auto", "streed", "contree", "built"])
def test_the_exact_route_reports_prepare_search_certify_and_total(solver: str) -> None:
    if solver == "contree":
        pytest.importorskip("pycontree")
    X, y = _data()
    data = Dataset.from_arrays(X, y)
    spec = get_formulation("oct", depth=2)
    res = spec.build(data).solve(solver="streed") if solver == "built" else spec.solve(data, solver=solver)
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(brute_force(X, y, 2, 0.0, None))
    t = res.timing
    assert t is not None and set(t) == {"prepare", "search", "certify", "total"}, t
    assert min(t.values()) >= 0.0
    assert t["prepare"] + t["search"] + t["certify"] == pytest.approx(t["total"], rel=1e-9, abs=1e-12)


def test_streed_is_not_started_when_its_setup_alone_exceeds_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """STreeD's clock starts after its setup (parkinsons: 10 s under a 5 s limit): a run whose estimated setup is
    above the time left is not started; the answer is the optimal depth-2 tree, as a time limit."""
    X, y = _data(seed=1)
    data = Dataset.from_arrays(X, y)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("STreeD was started")

    monkeypatch.setattr(cost, "STREED_SETUP_COST", 1.0)  # any setup: far above the limit
    monkeypatch.setattr(dp, "_run", never)
    res = get_formulation("oct", depth=3).solve(data, solver="streed", time_limit=30)
    assert res.status is Status.TIME_LIMIT and res.certificate.ok, res.message
    assert "STreeD not started" in res.message and "depth-2 tree" in res.message
    assert res.objective == pytest.approx(brute_force(X, y, 2, 0.0, None))


def test_streed_searches_for_what_its_setup_leaves_of_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    X, y = _data(seed=2)
    data = Dataset.from_arrays(X, y)
    n, c = y.size, int(sum(np.unique(X[:, j]).size - 1 for j in range(X.shape[1])))
    setup = 4.0
    monkeypatch.setattr(cost, "STREED_SETUP_COST", setup / (n * c**2))
    seen: list[float] = []
    run = dp._run

    def spy(Z: np.ndarray, y01: np.ndarray, depth: int, nodes: int, time_limit: float):
        seen.append(time_limit)
        return run(Z, y01, depth, nodes, time_limit)

    monkeypatch.setattr(dp, "_run", spy)
    res = get_formulation("oct", depth=3).solve(data, solver="streed", time_limit=10)
    assert res.status is Status.OPTIMAL, res.message
    assert seen and seen[0] <= 10 - setup + 1e-9 and seen[0] > 10 - setup - 5.0


def test_streeds_core_finds_the_trees_its_wrapper_finds() -> None:
    """The core called directly (no scikit-learn wrapper) with the wrapper's parameters: the same errors at depth
    1-3, with and without a node limit, on random 0/1 columns."""
    from pystreed import STreeDClassifier

    rng = np.random.default_rng(3)
    for _ in range(5):
        Z = rng.integers(0, 2, size=(60, 8)).astype(np.int32)
        y = ((Z[:, 0] ^ Z[:, 1]) | (rng.random(60) < 0.2)).astype(np.int32)
        for depth, nodes in [(1, 1), (2, 3), (2, 2), (3, 7), (3, 4)]:
            node, proved = dp._run(Z, y, depth, nodes, 30.0)
            ours = int(np.sum(dp._predict(node, Z) != y))
            m = STreeDClassifier(max_depth=depth, max_num_nodes=nodes, time_limit=30, random_seed=0,
                                 use_terminal_solver=nodes >= 2**depth - 1).fit(Z, y)
            assert proved and m.fit_result.is_optimal()
            assert ours == int(np.sum(m.predict(Z) != y)), (depth, nodes)


def test_axis_aligned_scores_are_the_products_numbers() -> None:
    """Gathering one column per split gives exactly ``X @ W.T + b`` (the other terms are exact zeros); an oblique
    row takes the product."""
    from treeopt_dsl.numeric import hyperplane_scores

    rng = np.random.default_rng(4)
    for _ in range(20):
        X = rng.normal(size=(50, 6)) * 10.0 ** rng.integers(-3, 4)
        W = np.zeros((7, 6))
        rows = rng.random(7) < 0.7
        W[rows, rng.integers(0, 6, size=int(rows.sum()))] = rng.normal(size=int(rows.sum()))
        b = rng.normal(size=7)
        assert np.array_equal(hyperplane_scores(X, W, b), X @ W.T + b)
        W[0] = rng.normal(size=6)  # oblique
        assert np.array_equal(hyperplane_scores(X, W, b), X @ W.T + b)
