"""Progress read from the solvers' live logs: the last incumbent seen is the objective returned."""

from __future__ import annotations

import io
import itertools

import pytest

from treeopt_dsl.datasets import load
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.progress import Progress, ProgressEvent, parse_progress
from treeopt_dsl.starts import resolve


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


# --------------------------------------------------------------------------- the solvers' own callbacks
def _monotone(events: list) -> None:
    incs = [e.incumbent for e in events if e.incumbent is not None]
    bounds = [e.bound for e in events if e.bound is not None]
    assert all(a >= b - 1e-9 for a, b in itertools.pairwise(incs)), incs  # minimization: never worse
    assert all(a <= b + 1e-9 for a, b in itertools.pairwise(bounds)), bounds


@pytest.mark.parametrize("solver", ["highs", pytest.param("gurobi", marks=pytest.mark.solver("gurobi")),
                                    pytest.param("scip", marks=pytest.mark.solver("scip"))])
def test_progress_events_come_from_the_solver_callbacks(solver):
    """``progress=`` receives events from the solver's own callbacks: incumbents only improve, bounds only rise,
    and the last incumbent is the objective returned (an optimum: the bound meets it)."""
    events: list[ProgressEvent] = []
    built = get_formulation("olct", depth=2).build(load("breast-cancer").subsample(60, seed=0))
    res = built.solve(solver=solver, time_limit=60, gap=0.0, progress=events.append)
    assert res.status.value == "optimal"
    assert events and {e.source for e in events} == {"callback"}
    _monotone(events)
    last = [e for e in events if e.incumbent is not None][-1]
    assert last.incumbent == pytest.approx(res.objective, rel=1e-6)
    assert max(e.bound for e in events if e.bound is not None) <= res.objective * (1 + 1e-6)


def test_progress_falls_back_to_the_log_where_there_are_no_callbacks():
    """linopy hands HiGHS' log over after the solve: the same events, read from the log (and shifted by the
    objective's constant, which linopy leaves out of the model the solver sees)."""
    pytest.importorskip("linopy")
    events: list = []
    built = get_formulation("oct", depth=2).build(load("breast-cancer").subsample(50, seed=1))
    res = built.solve(solver="highs", backend="linopy", time_limit=60, gap=0.0, progress=events.append)
    assert res.status.value == "optimal" and events and {e.source for e in events} == {"log"}
    assert [e for e in events if e.incumbent is not None][-1].incumbent == pytest.approx(res.objective, abs=1e-6)


def test_a_failing_progress_callback_does_not_stop_the_solve():
    calls: list = []

    def boom(ev):
        calls.append(ev)
        raise RuntimeError("boom")

    built = get_formulation("oct", depth=1).build(load("breast-cancer").subsample(40, seed=2))
    with pytest.warns(RuntimeWarning, match="boom"):
        res = built.solve(solver="highs", time_limit=30, progress=boom)
    assert res.status.value == "optimal" and len(calls) == 1


def test_progress_bar_on_a_terminal():
    """On a terminal the progress is a tqdm bar of the gap closed, with the numbers beside it."""
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    p = Progress(stream=stream)
    p.event(ProgressEvent(10.0, 5.0, 0.5, 1.0, "callback"))
    p.event(ProgressEvent(8.0, 8.0, 0.0, 2.0, "callback"))
    p.close()
    text = stream.getvalue()
    assert "closed" in text and "100%" in text and "incumbent 8" in text


def test_progress_true_shows_the_solve_on_stderr(capsys):
    """``progress=True`` is the bar for Python users: on a stream that is not a terminal, a plain line with the
    incumbent, bound and gap."""
    built = get_formulation("olct", depth=1).build(load("breast-cancer").subsample(60, seed=0))
    res = built.solve(solver="highs", time_limit=30, progress=True)
    err = capsys.readouterr().err
    assert res.status.value == "optimal" and "incumbent" in err and "gap" in err


def test_the_start_is_the_first_incumbent_before_the_solver_runs():
    """With a warm start, ``progress`` hears of it first (``source="start"``, at time 0, its objective in the
    model), before the solver's presolve: the start is a completed, feasible point. The solver's events follow
    and never report worse. A callback that fails on it is warned about and not called again."""
    events: list[ProgressEvent] = []
    built = get_formulation("olct", depth=2).build(load("breast-cancer").subsample(60, seed=0))
    res = built.solve(solver="highs", time_limit=60, gap=0.0, progress=events.append,
                      warm_start=resolve(built, "greedy"))
    assert res.status.value == "optimal"
    assert events[0].source == "start" and events[0].time_s == 0.0 and events[0].bound is None
    assert events[0].incumbent == pytest.approx(res.start["objective"], rel=1e-12)
    assert {e.source for e in events[1:]} == {"callback"}
    _monotone(events)

    calls: list = []

    def boom(ev):
        calls.append(ev)
        raise RuntimeError("boom")

    with pytest.warns(RuntimeWarning, match="boom"):
        res = built.solve(solver="highs", time_limit=30, progress=boom, warm_start=resolve(built, "greedy"))
    assert res.status.value == "optimal" and len(calls) == 1 and calls[0].source == "start"


def test_the_last_plain_line_is_never_stale() -> None:
    """On a plain stream (a file, a pipe) lines come at most every ``interval`` seconds; a change after the last
    line is written when the solve ends, so the last line printed is the final state (issue 35)."""
    stream = io.StringIO()
    p = Progress(stream=stream, interval=3600.0)
    p.event(ProgressEvent(20.0, 5.0, 0.75, 0.1, "callback"))  # the first change: a line
    p.event(ProgressEvent(10.0, 10.0, 0.0, 0.2, "callback"))  # within the interval: not yet
    assert stream.getvalue().count("\n") == 1 and "incumbent 20" in stream.getvalue()
    p.close()
    last = stream.getvalue().splitlines()[-1]
    assert "incumbent 10" in last and "bound 10" in last and "gap 0.00%" in last
    p.close()  # nothing new: nothing written again
    assert stream.getvalue().count("\n") == 2
    quiet = Progress(stream=io.StringIO(), interval=0.0)
    quiet.event(ProgressEvent(3.0, 1.0, 0.5, 0.1, "callback"))
    quiet.close()  # every change already written: no repeated line
    assert quiet.stream.getvalue().count("\n") == 1
