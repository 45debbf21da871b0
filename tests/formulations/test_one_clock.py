"""One clock per call (issue 36): ``time_limit`` is the budget of the whole ``FormulationSpec.solve``; the solver
gets what preparing, building and the starts left, and the result says where the time went."""

from __future__ import annotations

import numpy as np

import treeopt_dsl.formulations.spec as spec_module
from treeopt_dsl.data import Dataset
from treeopt_dsl.formulation import Built
from treeopt_dsl.formulations import get_formulation


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
    real_resolve, seen = spec_module.resolve, {}

    def slow_resolve(built, warm_start):
        clock.now += 7.0
        return real_resolve(built, warm_start)

    real_solve = Built.solve

    def spy(self, *a, **kw):
        seen["time_limit"] = kw.get("time_limit")
        return real_solve(self, *a, **kw)

    monkeypatch.setattr(spec_module, "time", clock)
    monkeypatch.setattr(spec_module, "resolve", slow_resolve)
    monkeypatch.setattr(Built, "solve", spy)
    res = get_formulation("olct", depth=1).solve(data, solver="highs", time_limit=20, warm_start="cart")
    assert seen["time_limit"] == 13.0  # 20 s for the call, 7 s of it spent on the starts
    assert res.options["time_limit"] == 20  # the result reports the user's limit
    assert res.timing["start"] == 7.0 and res.timing["total"] == 7.0  # the fake clock moved only in the starts
    # a start that takes the whole budget leaves the solver 0 s: it stops at once with what it has (the start)
    clock.now = 100.0
    res = get_formulation("olct", depth=1).solve(data, solver="highs", time_limit=5, warm_start="cart")
    assert seen["time_limit"] == 0.0 and res.status.has_solution
