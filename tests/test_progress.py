"""Progress read from the solvers' live logs: the last incumbent seen is the objective returned."""

from __future__ import annotations

import io

import pytest

from treeopt_dsl.datasets import load
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.progress import Progress, parse_progress


@pytest.mark.parametrize("solver", ["highs", pytest.param("gurobi", marks=pytest.mark.solver("gurobi"))])
def test_progress_tracks_incumbent_and_bound(solver):
    seen: list[tuple] = []
    stream = io.StringIO()
    prog = Progress(stream=stream, callback=lambda inc, bd, gap, t: seen.append((inc, bd, gap)), interval=0.0)
    built = get_formulation("olct", depth=2).build(load("breast-cancer").subsample(60, seed=0))
    res = built.solve(solver=solver, time_limit=60, gap=0.0, log_callback=prog)
    prog.close()
    assert res.status.value == "optimal"
    assert seen, "no progress line was parsed from the solver log"
    assert prog.incumbent == pytest.approx(res.objective, rel=1e-4)
    assert prog.bound is not None and prog.bound <= prog.incumbent + 1e-6
    assert "incumbent" in stream.getvalue()


def test_parse_progress_ignores_other_lines():
    assert parse_progress("Presolving model") is None
    assert parse_progress("Optimize a model with 540 rows, 473 columns and 13570 nonzeros (Min)") is None
    inc, bound, gap, secs = parse_progress(
        " L       0       0         0   0.00%   9.09657892      13.51618912       32.70%      519     31      0"
        "       323     1.3s")
    assert (inc, bound, secs) == (13.51618912, 9.09657892, 1.3) and gap == pytest.approx(0.327)
