"""The backend protocol (``backends/base.py``): option checks, stdout silence, HiGHS threads, interrupts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from treeopt_dsl.backends import SolveOptions, available_solvers, get_backend
from treeopt_dsl.backends.native import importable
from treeopt_dsl.errors import OptionError
from treeopt_dsl.ir import Model
from treeopt_dsl.result import Status

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
TREEOPT = str(Path(PY).parent / "treeopt")


def hard_knapsack(n: int = 70, m: int = 6, seed: int = 0):
    """A multi-dimensional knapsack: incumbents at once, a proof that takes far longer than the test."""
    rng = np.random.default_rng(seed)
    W = rng.integers(20, 100, size=(m, n)).astype(float)
    p = W.sum(0) / m + rng.integers(0, 10, n)
    mod = Model("mkp")
    v = mod.add_variables("v", ("k",), {"k": n}, kind="binary")
    mod.add_constraints("cap", v.dot(xr.DataArray(W, dims=("r", "k")), "k") <= W.sum(1) / 2)
    mod.add_objective(v * -p, "profit")
    return mod.compile()


def small_sf():
    from treeopt_dsl.datasets import load
    from treeopt_dsl.formulations import get_formulation

    return get_formulation("olct", depth=1).build(load("breast-cancer").subsample(30, seed=0)).compile()


# ------------------------------------------------------------------------------- options
@pytest.mark.parametrize(("kw", "name"), [({"time_limit": -5}, "time_limit"), ({"gap": -0.1}, "gap"),
                                          ({"threads": -1}, "threads"), ({"threads": 1.5}, "threads"),
                                          ({"time_limit": float("inf")}, "time_limit"),
                                          ({"gap": float("nan")}, "gap"), ({"seed": -3}, "seed")])
def test_bad_common_options_are_refused(kw, name):
    with pytest.raises(OptionError, match=name):
        SolveOptions(**kw)


def test_time_limit_zero_is_allowed():
    raw = get_backend("highs").solve(hard_knapsack(), "highs", SolveOptions(time_limit=0))
    assert raw.status in (Status.TIME_LIMIT, Status.TIME_LIMIT_NO_SOLUTION, Status.OPTIMAL)


#: CBC as a command-line program (linopy, pyomo) cannot list its options: names pass through unchecked
CHECKED = [r for r in available_solvers() if r["installed"] and "MILP" in r["problem_classes"]
           and not (r["solver"] == "cbc" and r["backend"] in ("linopy", "pyomo"))]


@pytest.mark.parametrize("row", CHECKED, ids=lambda r: f"{r['backend']}-{r['solver']}")
def test_misspelled_option_fails_before_the_solve(row):
    """``timelimt`` is no option of any solver: refused at once (the model would take minutes), naming it."""
    be = get_backend(row["solver"], row["backend"])
    t0 = time.perf_counter()
    with pytest.raises(OptionError, match="timelimt") as err:
        be.solve(hard_knapsack(), row["solver"], SolveOptions(extra={"timelimt": 5}))
    assert time.perf_counter() - t0 < 10
    assert "time_limit" in str(err.value)  # the suggestion


# ------------------------------------------------------------------------------- HiGHS specifics
def test_highs_threads_change_within_one_process():
    be, sf = get_backend("highs"), small_sf()
    for threads in (1, 2, 1):
        raw = be.solve(sf, "highs", SolveOptions(threads=threads, time_limit=30))
        assert raw.status is Status.OPTIMAL, raw.message


def test_library_prints_nothing_on_stdout():
    code = ("from treeopt_dsl import export\n"
            "from treeopt_dsl.backends import SolveOptions, get_backend\n"
            "from treeopt_dsl.backends.highs import HighsBackend\n"
            "from tests.backends.test_backend_protocol import small_sf\n"
            "sf = small_sf()\nHighsBackend.load(sf)\nexport.to_highs(sf)\n"
            "get_backend('highs').solve(sf, 'highs', SolveOptions(time_limit=20))\n")
    out = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""


def _routes() -> list:
    rows = [r for r in available_solvers() if r["installed"] and "MILP" in r["problem_classes"]]
    return [pytest.param(r["solver"], r["backend"], id=f"{r['backend']}-{r['solver']}") for r in rows]


@pytest.mark.slow
@pytest.mark.parametrize(("solver", "backend"), _routes())
def test_cli_json_stdout_is_one_document(solver, backend):
    out = subprocess.run([TREEOPT, "solve", "olct", "--data", "breast-cancer", "--depth", "1", "--sample", "60",
                          "--time-limit", "20", "--json", "--solver", solver, "--backend", backend],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    doc = json.loads(out.stdout)
    assert doc["status"] == "optimal"


# ------------------------------------------------------------------------------- interrupts
INTERRUPTIBLE = [r for r in available_solvers() if r["installed"] and "interrupt" in r["features"]
                 and "MILP" in r["problem_classes"]]


def _kill_later(sig: int, after: float) -> threading.Timer:
    t = threading.Timer(after, lambda: os.kill(os.getpid(), sig))
    t.start()
    return t


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("row", INTERRUPTIBLE, ids=lambda r: f"{r['backend']}-{r['solver']}")
def test_signal_returns_the_incumbent(row, sig):
    sf = hard_knapsack()
    be = get_backend(row["solver"], row["backend"], sf)
    previous = signal.getsignal(sig)
    _kill_later(sig, 2.5)
    t0 = time.perf_counter()
    raw = be.solve(sf, row["solver"], SolveOptions(time_limit=60))
    elapsed = time.perf_counter() - t0
    assert signal.getsignal(sig) is previous  # handlers restored
    assert raw.status is Status.INTERRUPTED, (raw.status, raw.message)
    assert raw.x is not None and raw.objective is not None
    assert elapsed < 30
    assert ("SIGINT" if sig == signal.SIGINT else "SIGTERM") in raw.message


@pytest.mark.parametrize("row", [r for r in available_solvers()
                                 if r["installed"] and "MILP" in r["problem_classes"]
                                 and "interrupt" not in r["features"] and r["backend"] == "mip"],
                         ids=lambda r: f"{r['backend']}-{r['solver']}")
def test_route_that_cannot_stop_raises_at_once(row):
    """CBC through python-mip cannot be stopped with its incumbent: Ctrl-C is not swallowed."""
    sf = hard_knapsack(n=90, m=8)
    be = get_backend(row["solver"], row["backend"], sf)
    _kill_later(signal.SIGINT, 2.0)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):  # the abandoned worker runs on to its (short) limit in the background
        be.solve(sf, row["solver"], SolveOptions(time_limit=12))
    assert time.perf_counter() - t0 < 6


@pytest.mark.slow
def test_cli_sigint_prints_the_interrupted_result_promptly():
    """Ctrl-C during a HiGHS solve that sits in a sub-MIP heuristic (where HiGHS does not read its
    interrupt callbacks: 107 s to return before the grace period) still ends within seconds with the
    last incumbent, printed as one JSON document with status "interrupted", exit 130."""
    import threading

    proc = subprocess.Popen([TREEOPT, "solve", "oct", "--data", "breast-cancer", "--depth", "3", "--sample", "200",
                             "--time-limit", "120", "--json", "--solver", "highs", "--warm-start", "cart"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # wait until the solver runs (its first progress line on stderr: the warm starts are computed before it,
    # and a loaded machine takes longer), then a few seconds more, then Ctrl-C
    lines: list[str] = []
    started = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "incumbent" in line:
                started.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    assert started.wait(timeout=90), "the solve did not start: " + "".join(lines)[-2000:]
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    t0 = time.perf_counter()
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.wait(timeout=120)
    reader.join(timeout=10)
    err = "".join(lines)
    assert time.perf_counter() - t0 < 30, "the stop was not prompt"
    assert proc.returncode == 130, err[-2000:]
    doc = json.loads(out)
    assert doc["status"] == "interrupted" and doc["objective"] is not None
    assert doc["certificate"]["ok"]
    assert err.strip().splitlines()[-1].startswith("treeopt: interrupted (Ctrl-C)")


@pytest.mark.parametrize("row", [r for r in available_solvers() if r["installed"] and r["backend"] == "direct"
                                 and "MILP" in r["problem_classes"]],
                         ids=lambda r: f"{r['backend']}-{r['solver']}")
def test_time_to_the_final_incumbent_is_reported(row):
    """The direct MILP routes say when they found the incumbent they return (the rest of the run is the
    proof), read from the solver's own callbacks or solution records."""
    sf = hard_knapsack(n=40, m=4)
    raw = get_backend(row["solver"], row["backend"], sf).solve(sf, row["solver"], SolveOptions(time_limit=30))
    assert raw.x is not None and raw.incumbent_time_s is not None
    assert 0.0 <= raw.incumbent_time_s <= raw.runtime_s + 0.05


@pytest.mark.parametrize("row", [r for r in available_solvers() if r["installed"] and r["backend"] == "direct"
                                 and "MILP" in r["problem_classes"]],
                         ids=lambda r: f"{r['backend']}-{r['solver']}")
@pytest.mark.parametrize("progress", [False, True])
def test_an_optimal_start_is_the_final_incumbent_at_time_zero(row, progress):
    """Started from an optimal point, the answer existed at 0 s: the solver's later points of the same objective
    (HiGHS reports points 1e-14 from its start as "improving") are ties and do not move the incumbent's time,
    with and without a progress callback (both subscribe to the solver's improving-solution events)."""
    sf = hard_knapsack(n=12, m=2)
    be = get_backend(row["solver"], row["backend"], sf)
    first = be.solve(sf, row["solver"], SolveOptions(time_limit=30))
    assert first.status is Status.OPTIMAL
    events = []
    raw = be.solve(sf, row["solver"], SolveOptions(time_limit=30, warm_start=first.x,
                                                   progress=events.append if progress else None))
    assert raw.status is Status.OPTIMAL and raw.objective == pytest.approx(first.objective, rel=1e-9)
    assert raw.incumbent_time_s == 0.0


def test_an_incumbent_time_moves_only_on_an_improvement():
    """``Run.found``: the first point sets the time, a tie (within ``TIE_RTOL``) does not, a better point does."""
    from treeopt_dsl.backends.base import Run
    from treeopt_dsl.result import TIE_RTOL

    run = Run(hard_knapsack(n=5, m=1), "highs", SolveOptions())
    run.found(100.0, 0.0)
    run.found(100.0 - 0.1 * TIE_RTOL * 100.0, 3.0)  # a tie: HiGHS' "improving" point 1e-14 away
    assert run.incumbent_time == 0.0
    run.found(99.0, 5.0)
    run.found(99.5, 6.0)  # worse: a heuristic's point reported late
    assert (run.incumbent_time, run.best_objective) == (5.0, 99.0)


def test_an_improvement_within_the_tie_tolerance_is_zero():
    """``SolveResult.improvement`` says 0 for a tie with the start (not HiGHS' 1e-13), the gain otherwise."""
    from treeopt_dsl.result import TIE_RTOL, SolveResult

    res = SolveResult(status=Status.OPTIMAL, objective=46.228 - 1e-13, bound=46.228, gap=0.0, runtime_s=1.0,
                      solver="highs", backend="direct")
    res.start = {"objective": 46.228}
    assert res.improvement == 0.0
    res.objective = 46.228 * (1 - 10 * TIE_RTOL)
    assert res.improvement == pytest.approx(46.228 * 10 * TIE_RTOL)


PROGRAM_THAT_LOOPS = """
import sys
from treeopt_dsl.datasets import load
from treeopt_dsl.formulations import get_formulation

data, _ = load("breast-cancer").split(0.6, seed=0)  # about 230 rows
spec = get_formulation("oct", depth=3)
started = []

def progress(event):
    if not started:
        started.append(1)
        print("solving", flush=True)

for i in range(3):  # a loop of fits: SIGTERM must end the program, not only the fit
    res = spec.solve(data, solver="highs", warm_start="cart", time_limit=120, progress=progress)
    print("fit", i, "returned", res.status.value, flush=True)
"""


@pytest.mark.slow
def test_sigterm_ends_a_python_program_after_reporting_the_incumbent():
    """Issue 36: in the Python API a SIGTERM during a fit stops the solve, reports the incumbent on stderr and then
    ends the program (SIGTERM's default action), instead of returning to a loop that goes on fitting."""
    proc = subprocess.Popen([sys.executable, "-c", PROGRAM_THAT_LOOPS], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the first progress event: the solver runs
    assert line.strip() == "solving", line + proc.stderr.read()[-2000:] if proc.stderr else ""
    time.sleep(2.0)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGTERM, (proc.returncode, out, err[-2000:])
    assert "fit 1" not in out and "fit 2" not in out  # the loop did not go on
    assert "SIGTERM: ending the program; the incumbent: status interrupted, objective" in err


def test_a_solver_that_runs_past_its_time_limit_is_left_with_the_best_point_known(monkeypatch):
    """Issue 36: HiGHS reads its clock neither in presolve nor in the root LP (24 minutes under a 120 s limit were
    seen). A run still going ``limit_grace_s`` after its limit ends the wait with the warm start, as a time limit,
    and the solver is left to finish in its worker. Simulated: HiGHS' run starts with a 30 s stall."""
    from treeopt_dsl.backends.highs import HighsBackend

    sf = hard_knapsack()
    be = get_backend("highs", "direct", sf)
    assert isinstance(be, HighsBackend)
    real_run, release = be.run, threading.Event()

    def stalls_then_runs(run):
        release.wait(30)  # presolve that ignores the clock
        real_run(run)

    monkeypatch.setattr(be, "run", stalls_then_runs)
    start = np.zeros(sf.n_cols)  # the empty knapsack: feasible
    raw = be.solve(sf, "highs", SolveOptions(time_limit=0.5, warm_start=start))
    release.set()  # let the abandoned worker finish
    assert raw.status is Status.TIME_LIMIT and raw.x is not None
    np.testing.assert_array_equal(raw.x, start)
    assert "did not stop at its time limit" in raw.message


STALLED_HIGHS = """
import sys
from treeopt_dsl.backends.highs import HighsBackend
real = HighsBackend.run
def ignores_its_limit(self, run):  # HiGHS' own threads run on natively, as in a presolve that ignores the clock
    run.model.setOptionValue("time_limit", 60.0)
    real(self, run)
HighsBackend.run = ignores_its_limit
from treeopt_dsl.cli import console
sys.argv = ["treeopt", "solve", "oct", "--data", "breast-cancer", "--depth", "3", "--solver", "highs",
            "--warm-start", "cart", "--time-limit", "0.5", "--threads", "2", "--json"]
console()
"""


@pytest.mark.slow
def test_the_command_ends_cleanly_when_a_solver_was_left_running():
    """The abandoned solver still runs native code when the command has printed its result: the executable ends
    there with the command's status (before: the interpreter's shutdown aborted it, SIGABRT, 'terminate called
    without an active exception')."""
    out = subprocess.run([sys.executable, "-c", STALLED_HIGHS], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    doc = json.loads(out.stdout)
    assert doc["status"] == "time_limit" and "did not stop at its time limit" in doc["message"]


DEAF_HIGHS = """
import sys
from treeopt_dsl.backends.highs import HighsBackend
real = HighsBackend.run
def deaf(self, run):  # HiGHS deaf to its interrupt callbacks (as inside a sub-MIP heuristic)
    run.guarded = False
    real(self, run)
HighsBackend.run = deaf
from treeopt_dsl.cli import console
sys.argv = ["treeopt", "solve", "oct", "--data", "breast-cancer", "--depth", "3", "--sample", "200", "--solver",
            "highs", "--warm-start", "cart", "--time-limit", "60", "--threads", "2", "--json"]
console()
"""


@pytest.mark.slow
def test_two_ctrl_c_end_the_command_with_the_start_and_never_abort():
    """Issue 36: two Ctrl-C 0.5 s apart while HiGHS does not look at its interrupt callbacks. The second one ends
    the wait (``KeyboardInterrupt``); the solver's thread must count as still running although CPython's
    ``Thread.is_alive`` says otherwise after an interrupted ``join``: before, the interpreter's shutdown unwound
    HiGHS' frames and aborted the process (SIGABRT, 'terminate called without an active exception')."""
    proc = subprocess.Popen([sys.executable, "-c", DEAF_HIGHS], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen: list[str] = []
    for line in proc.stderr:  # the first progress line: the solver runs
        seen.append(line)
        if "incumbent" in line:
            break
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, "".join(seen) + err[-2000:])
    assert "terminate called" not in err
    doc = json.loads(out)
    assert doc["status"] == "interrupted" and doc["certificate"]["ok"] and "twice" in doc["message"]


@pytest.mark.skipif(not importable("pyscipopt"), reason="SCIP not installed")
def test_a_model_scip_could_not_read_within_the_limit_returns_the_start(monkeypatch):
    """Issue 36: MARGOT on adult (24 million nonzeros) took SCIP 47 s to write and read under a 60 s call. The
    file's writing measures the machine's pace; a model SCIP would not read within the time left is not loaded:
    the warm start comes back as a time limit, with the reason."""
    from treeopt_dsl.backends import scip

    sf = hard_knapsack()
    be = get_backend("scip", "direct", sf)
    start = np.zeros(sf.n_cols)
    monkeypatch.setattr(scip, "READ_PER_WRITE", 1e9)  # any write is too slow to leave time for the read
    raw = be.solve(sf, "scip", SolveOptions(time_limit=5, warm_start=start))
    assert raw.status is Status.TIME_LIMIT
    np.testing.assert_array_equal(raw.x, start)
    assert "SCIP would take about" in raw.message and "not run" in raw.message
    monkeypatch.setattr(scip, "READ_PER_WRITE", 1.7)
    raw = be.solve(sf, "scip", SolveOptions(time_limit=2, warm_start=start))  # read and run: it improves the start
    assert raw.status.has_solution and raw.objective < sf.objective(start) and "SCIP would take" not in raw.message
