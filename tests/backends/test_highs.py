"""The HiGHS backend on tiny hand-solved models: every status, options, warm start, values."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from treeopt_dsl import Formulation
from treeopt_dsl.backends import SolveOptions, get_backend
from treeopt_dsl.ir import Model
from treeopt_dsl.result import Status

HIGHS = get_backend("highs")


def solve(m: Model, **kw) -> object:
    return HIGHS.solve(m.compile(), "highs", SolveOptions(**kw))


def lp() -> Model:
    # max 3x + 2y  s.t. x + y <= 4, x + 3y <= 6, x <= 3  -> x = 3, y = 1, value 11
    m = Model("lp")
    v = m.add_variables("v", ("k",), {"k": ["x", "y"]}, lower=0)
    x, y = v.sel(k="x"), v.sel(k="y")
    m.add_constraints("c1", x + y <= 4)
    m.add_constraints("c2", x + y * 3 <= 6)
    m.add_constraints("c3", x <= 3)
    m.add_objective(x * -3.0 + y * -2.0, "profit")
    return m


def market_split(seed: int = 0, rows: int = 4, cols: int = 30) -> Model:
    """Cornuéjols-Dawande market split: hard to find any feasible point."""
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 100, size=(rows, cols)).astype(float)
    m = Model("ms")
    x = m.add_variables("x", ("j",), {"j": cols}, kind="binary")
    s = m.add_variables("s", ("r",), {"r": rows}, lower=0, upper=0)  # no slack: pure feasibility
    m.add_constraints("split", x.dot(xr.DataArray(A, dims=("r", "j")), "j") + s == np.floor(A.sum(1) / 2))
    m.add_objective(x.sum() * 0.0 + s.sum(), "zero")
    return m


def test_optimal_lp_matches_hand_solution():
    raw = solve(lp())
    assert raw.status is Status.OPTIMAL
    assert raw.objective == pytest.approx(-11.0)
    np.testing.assert_allclose(raw.x, [3.0, 1.0], atol=1e-9)


def test_milp_with_integrality_gap():
    # max x + y s.t. 2x + 2y <= 3, integer: LP 1.5, MILP 1
    m = Model("gap")
    v = m.add_variables("v", ("k",), {"k": 2}, kind="integer", lower=0, upper=10)
    m.add_constraints("c", v.sum() * 2.0 <= 3)
    m.add_objective(v * -1.0, "obj")
    raw = solve(m, gap=0.0)
    assert raw.status is Status.OPTIMAL and raw.objective == pytest.approx(-1.0)
    assert raw.gap == pytest.approx(0.0, abs=1e-9)


def test_infeasible_and_unbounded():
    m = Model("inf")
    x = m.add_variables("x", ("k",), {"k": 1}, lower=0, upper=1)
    m.add_constraints("c", x >= 2)
    m.add_objective(x, "o")
    assert solve(m).status is Status.INFEASIBLE
    m = Model("unb")
    x = m.add_variables("x", ("k",), {"k": 1})
    m.add_constraints("c", x >= 2)
    m.add_objective(x * -1.0, "o")
    assert solve(m).status is Status.UNBOUNDED


def test_time_limit_statuses_are_consistent():
    raw = solve(market_split(), time_limit=0.05)
    assert raw.status in (Status.TIME_LIMIT_NO_SOLUTION, Status.TIME_LIMIT, Status.INFEASIBLE)
    assert raw.status.has_solution == (raw.x is not None)
    if raw.status is Status.TIME_LIMIT_NO_SOLUTION:
        assert raw.objective is None
    # an easy feasible point exists when the slack may absorb everything: an incumbent at the limit
    m = market_split(rows=6, cols=60)
    m.variables["s"].upper[:] = 1e6
    raw = solve(m, time_limit=0.5)
    assert raw.status in (Status.OPTIMAL, Status.TIME_LIMIT)
    assert raw.x is not None and np.isfinite(raw.objective)


def test_warm_start_is_reported_and_options_reach_the_log():
    rng = np.random.default_rng(0)
    w, p = rng.integers(10, 60, 25).astype(float), rng.integers(10, 60, 25).astype(float)
    m = Model("ws")  # a knapsack presolve cannot solve away
    v = m.add_variables("v", ("k",), {"k": 25}, kind="binary")
    m.add_constraints("c", v.dot(xr.DataArray(w, dims=("k",)), "k") <= w.sum() / 3)
    m.add_objective(v * -p, "o")
    start = np.zeros(25)
    start[np.argmin(w)] = 1.0
    lines: list[str] = []
    raw = solve(m, warm_start=start, log_callback=lines.append, threads=1, seed=7, time_limit=10, gap=0.0)
    assert raw.warm_start_accepted is True
    assert raw.objective <= -p[np.argmin(w)]
    assert any("MIP" in ln for ln in lines)
    bad = np.ones(25)  # violates the capacity: not accepted
    assert solve(m, warm_start=bad, time_limit=10).warm_start_accepted is False


def test_result_values_are_labeled_dataarrays():
    f = Formulation("lp", [])
    from treeopt_dsl.data import Dataset
    from treeopt_dsl.formulation import BuildContext, Built, Numerics

    ctx = BuildContext(lp(), Dataset.from_arrays([[0.0], [1.0]], [0, 1]), None, Numerics())
    res = Built(f, ctx).solve()
    val = res.values["v"]
    assert isinstance(val, xr.DataArray)
    assert val.sel(k="x").item() == pytest.approx(3.0) and val.sel(k="y").item() == pytest.approx(1.0)
    assert res.size["n_variables"] == 2 and res.size["n_constraints"] == 3
