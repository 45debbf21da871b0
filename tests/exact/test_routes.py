"""The exact routes (issue 32): every engine's optimum equals brute force over every distinct cut (ties, duplicate
rows, integer weights, three classes, a penalty per split); ``solver="auto"`` explains its choice and a named
solver is honoured; a composition with something an engine does not model never goes to one."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import brute_force
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treeopt_dsl import blocks as B
from treeopt_dsl.backends import engines, plan_route
from treeopt_dsl.data import Dataset
from treeopt_dsl.defaults import MEMORY_ENV
from treeopt_dsl.errors import CapabilityError, ModelTooLarge
from treeopt_dsl.exact import cost
from treeopt_dsl.formulations import OCT, get_formulation
from treeopt_dsl.result import Status

ENGINES = [name for name, e in engines().items() if e.available()]


@st.composite
def cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """6..14 rows, 2-3 features on a small grid (ties) or continuous, some rows repeated, 2 or 3 classes, integer
    weights or none."""
    n = draw(st.integers(6, 14))
    p = draw(st.integers(2, 3))
    grid = draw(st.booleans())
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, p)).astype(float) if grid else np.round(rng.normal(size=(n, p)), 3)
    X[: draw(st.integers(0, 3))] = X[n - 1]  # duplicate rows (labels may differ)
    k = draw(st.sampled_from([2, 3]))
    y = rng.integers(0, k, size=n)
    y[:k] = np.arange(k)
    w = rng.integers(1, 4, size=n).astype(float) if draw(st.booleans()) else None
    return X, y, w


@pytest.mark.parametrize("solver", ENGINES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), depth=st.integers(1, 2), alpha=st.sampled_from([0.0, 0.5, 2.0]))
def test_every_engine_reaches_the_brute_force_optimum(solver: str, case, depth: int, alpha: float) -> None:
    X, y, w = case
    data = Dataset.from_arrays(X, y, multiclass=np.unique(y).size > 2, sample_weight=w)
    res = get_formulation("oct", depth=depth, alpha=alpha).solve(data, solver=solver)
    assert res.status is Status.OPTIMAL and res.certificate.ok, res.message
    assert res.objective == pytest.approx(brute_force(X, y, depth, alpha, w), abs=1e-9)
    # the decoded tree itself scores it: its predictions' (weighted) errors plus alpha per split
    pred = np.asarray(res.model.predict(X))
    errors = float(np.sum((np.ones(y.size) if w is None else w) * (pred != data.labels_of(data.y))))
    assert errors + alpha * int(res.model.n_features_used().sum()) == pytest.approx(res.objective, abs=1e-9)


def test_a_cut_between_values_closer_than_eps_is_searched() -> None:
    """Two values 1e-9 apart hold the two classes: the exact route puts a cut between them (every distinct cut),
    the MILP's scaled rows with eps = 1e-5 cannot (its result says so), and ConTree, which compares in single
    precision, declines rather than call a worse tree optimal."""
    X = np.array([[0.0], [1e-9], [1.0], [2.0], [2.0 + 1e-9], [3.0]])
    y = np.array([-1, 1, 1, 1, -1, -1])
    d = Dataset.from_arrays(X, y)
    res = get_formulation("oct", depth=2).solve(d)
    assert res.status is Status.OPTIMAL and res.objective == 0.0 and res.solver == "streed", res.message
    assert np.array_equal(res.model.predict(X), y)
    assert "contree" not in ENGINES or "single precision" in res.route["estimates"]["contree"]["why"]
    if "contree" in ENGINES:
        with pytest.raises(CapabilityError, match="single precision"):
            get_formulation("oct", depth=2).solve(d, solver="contree")
    milp = get_formulation("oct", depth=2).solve(d, solver="highs", time_limit=30)
    assert milp.objective >= 1 and milp.resolution is not None


@pytest.mark.skipif(len(ENGINES) < 2, reason="needs pystreed and pycontree")
def test_auto_explains_its_choice_and_a_named_route_is_honoured() -> None:
    rng = np.random.default_rng(0)
    binary = Dataset.from_arrays(rng.integers(0, 2, size=(200, 6)).astype(float), rng.integers(0, 2, 200))
    continuous = Dataset.from_arrays(rng.normal(size=(300, 8)), rng.integers(0, 2, 300))
    for data, depth in ((binary, 3), (continuous, 2)):  # (STreeD needs minutes on 2,392 cuts at depth 3)
        spec = get_formulation("oct", depth=depth)
        solver, report = plan_route("auto", spec, data, fallback="highs")
        assert report["chosen"] == solver and solver in report["estimates"] and solver in report["why"]
        assert all(v["seconds"] is not None for v in report["estimates"].values())
        res = spec.solve(data)
        assert res.solver == solver and res.route["chosen"] == solver and res.status is Status.OPTIMAL
        for forced in ENGINES:  # a named route is taken, and every route proves the same optimum
            other = spec.solve(data, solver=forced)
            assert other.solver == forced and other.route is None and other.objective == res.objective
    # binary columns: the count and STreeD; many continuous cuts: ConTree (measured, docs/benchmarks.md)
    assert plan_route("auto", get_formulation("oct", depth=3), binary, "highs")[0] == "streed"
    for depth in (2, 3):
        assert plan_route("auto", get_formulation("oct", depth=depth), continuous, "highs")[0] == "contree"


#: measured cases (benchmarks/results/exact_cost_fit_2026-11-27.jsonl: the smallest of 9 whole calls, the median of 5
#: on spectf; each engine forced on the same data back to back): (set, n, p, cuts, depth, the faster engine, its ms,
#: the other's ms)
MEASURED = [
    ("monks-1", 556, 17, 17, 2, "streed", 0.66, 1.32),
    ("monks-1", 556, 17, 17, 3, "streed", 1.50, 25.6),
    ("breast-wisconsin-original", 683, 9, 80, 2, "contree", 1.89, 7.34),
    ("breast-wisconsin-original", 683, 9, 80, 3, "streed", 35.1, 84.6),
    ("votes", 435, 48, 48, 3, "streed", 10.0, 401),
    ("mushrooms", 8124, 112, 111, 2, "streed", 28.4, 915),
    ("heart", 297, 22, 388, 2, "contree", 4.87, 26.1),
    ("heart", 297, 22, 388, 3, "contree", 301, 2330),
    ("wholesale", 440, 9, 2527, 2, "contree", 2.69, 140),
    ("spectf", 267, 44, 1843, 2, "contree", 80.8, 116),
]


@pytest.mark.parametrize(("name", "n", "p", "cuts", "depth", "faster", "fast_ms", "slow_ms"), MEASURED)
def test_the_cost_model_ranks_the_engines_as_measured(name: str, n: int, p: int, cuts: int, depth: int, faster: str,
                                                      fast_ms: float, slow_ms: float) -> None:
    """The fitted cost model (treeopt_dsl.exact.cost) puts the engine measured faster first, on the measured shapes
    (an engine with few distinct values per feature, ConTree, against the count on breast-wisconsin-original at
    depth 2; binary data to the count and STreeD; many cuts to ConTree), and within a factor 10 of the measured
    time (the depth-2 and depth-3 fits' spread)."""
    est = {"streed": cost.binarized(n, p, cuts, depth)[0], "contree": cost.contree(n, p, depth, cuts)[0]}
    assert min(est, key=est.get) == faster
    assert 0.1 < est[faster] / (fast_ms / 1e3) < 10


class _OCTWithL1(OCT):
    name = "oct_with_l1_test"
    summary = "OCT plus an l1 penalty on the splits (a term the DP engines do not model)"

    def regularizers(self) -> list:
        return [*super().regularizers(), B.L1(weight=0.1)]


def test_a_composition_an_engine_does_not_model_goes_to_the_milp() -> None:
    rng = np.random.default_rng(1)
    data = Dataset.from_arrays(rng.normal(size=(40, 3)), rng.integers(0, 2, 40))
    spec = _OCTWithL1(depth=1)
    solver, report = plan_route("auto", spec, data, fallback="highs")
    assert solver == "highs" and "L1" in report["why"]
    res = spec.solve(data, time_limit=30)
    assert res.solver == "highs" and res.x is not None and res.certificate.ok
    for forced in ENGINES:  # a named engine refuses, naming why
        with pytest.raises(CapabilityError, match="L1"):
            spec.solve(data, solver=forced)
    olct = get_formulation("olct", depth=1)
    assert plan_route("auto", olct, data, fallback=olct.default_solver)[0] == "highs"


@pytest.mark.skipif("contree" not in ENGINES, reason="needs pycontree")
def test_contree_answers_before_the_model_is_built_and_refuses_fractional_weights() -> None:
    rng = np.random.default_rng(2)
    data = Dataset.from_arrays(rng.normal(size=(30, 2)), rng.integers(0, 2, 30))
    built = get_formulation("oct", depth=1).build(data)
    with pytest.raises(CapabilityError, match="before any model is built"):
        built.solve(solver="contree")
    weighted = Dataset.from_arrays(data.X, data.y, sample_weight=rng.uniform(0.5, 2.0, 30))
    with pytest.raises(CapabilityError, match="fractional"):
        get_formulation("oct", depth=2).solve(weighted, solver="contree")
    assert plan_route("auto", get_formulation("oct", depth=2), weighted, "highs")[0] == "streed"  # the count weighs


@pytest.mark.skipif("contree" not in ENGINES, reason="pycontree not installed")
def test_a_route_that_would_not_fit_the_memory_budget_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Size before work: 2,000 rows of 5 continuous features have ~10,000 cuts, whose binarization (~0.4 GB) does not
    fit a 200 MB budget while ConTree's ~65 MB does: auto takes ConTree and says why; forcing the count is refused
    before it starts with what would fit (quantile cuts, ConTree); ConTree's answer is the count's (with the budget
    lifted)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3).astype(int)
    d = Dataset.from_arrays(X, y)
    spec = get_formulation("oct", depth=2)
    monkeypatch.setenv(MEMORY_ENV, "200M")
    chosen, report = plan_route("auto", spec, d, fallback="highs")
    assert chosen == "contree"
    assert "above the budget of 200 MB" in str(report["estimates"]["streed"]["why"])
    with pytest.raises(ModelTooLarge, match=r"the count over 99\d\d cuts needs.*--max-thresholds 256.*contree"):
        spec.solve(d, solver="streed")
    res = spec.solve(d)
    assert res.route["chosen"] == "contree" and res.status is Status.OPTIMAL
    monkeypatch.delenv(MEMORY_ENV)
    assert spec.solve(d, solver="streed").objective == pytest.approx(res.objective)
