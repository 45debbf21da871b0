"""The experiment runner end to end: local processes vs a Dask LocalCluster, Ctrl-C and rerun, killed workers,
and the report drawn from the store alone."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from treeopt_dsl.experiments import ResultStore, expand, parse_grid, run_tasks
from treeopt_dsl.experiments.report import write_report
from treeopt_dsl.experiments.runner import _StopOnCtrlC

#: the README's grid (experiments/tiny.toml): 3 datasets x 2 seeds x 2 formulations
TINY = (Path(__file__).resolve().parents[2] / "experiments" / "tiny.toml").read_text()

SLEEPS = """\
[experiment]
name = "sleeps"
retries = 2
[data]
datasets = ["a", "b"]
[[method]]
name = "sleep"
estimator = "sleep"
params = { seconds = 0.1 }
"""


@pytest.fixture(scope="module")
def dask_cluster():
    """One Dask LocalCluster (2 worker processes, 1 thread each) for the module's tests."""
    pytest.importorskip("distributed")
    from treeopt_dsl.experiments.executors import DaskExecutor

    ex = DaskExecutor(n_workers=2, threads_per_worker=1)
    yield ex
    ex.close()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, dask_cluster) -> dict:
    """The 3 datasets x 2 seeds x 2 formulations grid, run on local processes and on a Dask LocalCluster."""
    d = tmp_path_factory.mktemp("tiny")
    (d / "tiny.toml").write_text(TINY)
    tasks = expand(parse_grid(TINY, source=str(d / "tiny.toml")))
    out = {"dir": d, "tasks": tasks}
    for kind in ("local", "dask"):
        with ResultStore(d / f"{kind}.sqlite") as store:
            summary = run_tasks(tasks, store, executor=kind, jobs=2, progress=False,
                                executor_obj=dask_cluster if kind == "dask" else None)
            out[kind] = {r["id"]: r for r in store.rows()}
            out[f"{kind}_summary"] = summary
    return out


def test_local_and_dask_give_the_same_results(tiny: dict) -> None:
    assert len(tiny["tasks"]) == 12
    ids = {t["id"] for t in tiny["tasks"]}
    for kind in ("local", "dask"):
        assert set(tiny[kind]) == ids, kind
        assert tiny[f"{kind}_summary"].succeeded == 12
        assert all(r["ok"] for r in tiny[kind].values())
    proven = 0
    for tid, a in tiny["local"].items():
        b = tiny["dask"][tid]
        assert a["status"] == b["status"]
        if a["status"] == "optimal":
            proven += 1
            assert b["objective"] == pytest.approx(a["objective"], rel=1e-6, abs=1e-6)
            assert a["test_balanced_accuracy"] == pytest.approx(b["test_balanced_accuracy"])
    assert proven >= 6  # depth-1 trees on 40 training rows: proven within the limit
    row = next(iter(tiny["local"].values()))
    for key in ("status", "objective", "bound", "gap", "certificate", "runtime_s", "compile_s", "n_variables",
                "train_balanced_accuracy", "test_balanced_accuracy", "test_auc", "model_text", "versions",
                "params", "task_s", "wall_s"):
        assert key in row, key
    assert row["versions"]["highspy"] != "not installed"
    task = {t["id"]: t for t in tiny["tasks"]}
    assert all(r["task_dataset"] == task[tid]["dataset"] for tid, r in tiny["local"].items())  # how it was loaded


def test_report_from_the_store_alone(tiny: dict, tmp_path: Path) -> None:
    store = tmp_path / "copy.sqlite"
    shutil.copy(tiny["dir"] / "local.sqlite", store)  # no grid file, no task list: only the store
    out = write_report(store, by="method", out=tmp_path / "rep", profiles=["time", "accuracy", "objective"])
    png = tmp_path / "rep" / "profile_time.png"
    assert png.exists() and png.read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "rep" / "gap_accuracy.png").exists()
    md = (tmp_path / "rep" / "report.md").read_text()
    assert md == out["markdown"]
    lines = md.splitlines()
    assert any(line.startswith("| olct | 6 | 6 |") for line in lines)
    assert any(line.startswith("| oct | 6 | 6 |") for line in lines)
    assert any(line.startswith("| haberman |") for line in lines)


def _cli() -> list[str]:
    return [sys.executable, "-c", "import sys; from treeopt_dsl.cli import main; sys.exit(main())"]


def _ctrl_c_as_in_a_shell() -> None:
    """In the child before it runs: Ctrl-C's default disposition, as in a terminal. A test suite started as a
    background job of a non-interactive shell (``bash .ci/run &``) inherits SIGINT ignored, and Python then never
    raises ``KeyboardInterrupt``: the run would not stop, as the user's would."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_interrupt_and_rerun_finishes_only_the_missing_tasks(tmp_path: Path) -> None:
    """Ctrl-C after two of six tasks, then a rerun: only the missing tasks are computed.

    The first two tasks (dataset a) end at once; the other four wait until a gate file exists, so the first run
    cannot finish them before the Ctrl-C however loaded the machine is (with tasks of a fixed length, the
    remaining ones could all end between two looks at the store, and then nothing was interrupted). The gate
    opens before the rerun."""
    gate = tmp_path / "gate"
    grid = tmp_path / "g.toml"
    grid.write_text(SLEEPS.replace('datasets = ["a", "b"]', 'datasets = ["a", "b", "c"]\nseeds = [0, 1]')
                    .replace('params = { seconds = 0.1 }', 'params = { seconds = 0.0 }\ndatasets = ["a"]')
                    + f'[[method]]\nname = "gated"\nestimator = "sleep"\ndatasets = ["b", "c"]\n'
                      f'params = {{ seconds = 600.0, until_file = "{gate}" }}\n')
    store, log1, log2 = tmp_path / "r.sqlite", tmp_path / "log1", tmp_path / "log2"
    tasks = expand(parse_grid(grid.read_text()))
    n = len(tasks)
    assert n == 6
    first_two = {t["id"] for t in tasks if t["method"] == "sleep"}
    env = {**os.environ, "TREEOPT_EXPERIMENT_TEST_LOG": str(log1)}
    proc = subprocess.Popen([*_cli(), "experiment", "run", str(grid), "--store", str(store), "--quiet"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_ctrl_c_as_in_a_shell)
    deadline = time.time() + 300
    done: set[str] = set()
    while time.time() < deadline and proc.poll() is None:
        if store.exists():
            with ResultStore(store) as s:
                done = s.finished_ids()
            if len(done) >= 2:
                break
        time.sleep(0.1)
    assert done == first_two, "the first run did not finish its two ungated tasks"
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    with ResultStore(store) as s:
        before = s.finished_ids()
    assert before == first_two  # the gated tasks cannot have ended
    gate.touch()
    env["TREEOPT_EXPERIMENT_TEST_LOG"] = str(log2)
    res = subprocess.run([*_cli(), "experiment", "run", str(grid), "--store", str(store), "--quiet"],
                         env=env, capture_output=True, timeout=300)
    assert res.returncode == 0, res.stderr.decode()
    solved_again = log2.read_text().split()
    assert len(solved_again) == n - len(before)  # the rerun computes only the missing tasks
    assert not set(solved_again) & before
    with ResultStore(store) as s:
        assert len(s.finished_ids(include_failed=False)) == n


def test_a_grid_runs_from_a_directory_outside_the_repository(tmp_path: Path) -> None:
    """A user runs ``treeopt experiment run`` wherever their grid is: the worker's fork server must find the
    library's packages by their installed names (it imported ``formulations`` as a top-level package, which
    exists only when the current directory is the repository's root)."""
    grid = tmp_path / "g.toml"
    grid.write_text(SLEEPS)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([*_cli(), "experiment", "run", str(grid), "--store", "r.sqlite", "--quiet"],
                         cwd=tmp_path, env=env, capture_output=True, timeout=300)
    assert res.returncode == 0, res.stderr.decode()
    with ResultStore(tmp_path / "r.sqlite") as s:
        assert len(s.finished_ids(include_failed=False)) == len(expand(parse_grid(SLEEPS)))


@pytest.mark.parametrize("executor", ["local", "dask"])
def test_killed_worker_is_recorded_and_retried(executor: str, tmp_path: Path, monkeypatch, request) -> None:
    ex = request.getfixturevalue("dask_cluster") if executor == "dask" else None
    tasks = expand(parse_grid(SLEEPS))
    victim = next(t["id"] for t in tasks if t["id"].startswith("sleep-a-"))
    # killed on its first attempt only: retried and finished
    monkeypatch.setenv("TREEOPT_EXPERIMENT_TEST_KILL", f"{victim}:1")
    with ResultStore(tmp_path / "once.sqlite") as store:
        summary = run_tasks(tasks, store, executor=executor, jobs=2, progress=False, executor_obj=ex)
        assert summary.succeeded == 2 and summary.failed == 0 and summary.retried == 1
        attempts = store.attempts_of(victim)
        assert [a["ok"] for a in attempts] == [False, True]
        assert "SIGKILL" in attempts[0]["reason"]
        assert len(store.rows()) == 2
    # killed every time: failed for good after 1 + retries attempts, with the reason
    monkeypatch.setenv("TREEOPT_EXPERIMENT_TEST_KILL", f"{victim}:99")
    with ResultStore(tmp_path / "always.sqlite") as store:
        summary = run_tasks(tasks, store, executor=executor, jobs=2, retries=2, progress=False, executor_obj=ex)
        assert summary.failed == 1 and summary.succeeded == 1
        row = next(r for r in store.rows() if r["id"] == victim)
        assert not row["ok"] and "killed by SIGKILL" in row["reason"] and row["attempt"] == 3
        assert store.n_attempts(victim) == 3
        # a rerun skips it (failed for good) unless asked to retry failed tasks
        assert run_tasks(tasks, store, executor="local", progress=False).skipped == 2


def test_dask_worker_killed_mid_task_loses_no_result(dask_cluster, tmp_path: Path, monkeypatch) -> None:
    """SIGKILL a Dask worker process while it runs a task: the task runs again elsewhere and every row is stored."""
    import threading

    log = tmp_path / "log"
    monkeypatch.setenv("TREEOPT_EXPERIMENT_TEST_LOG", str(log))
    tasks = expand(parse_grid(SLEEPS.replace("seconds = 0.1", "seconds = 3.0")))
    client = dask_cluster.client
    pids = client.run(os.getpid)  # worker address -> pid
    out: dict = {}
    with ResultStore(tmp_path / "r.sqlite") as store:
        th = threading.Thread(target=lambda: out.update(s=run_tasks(tasks, store, executor_obj=dask_cluster,
                                                                    progress=False)))
        th.start()
        deadline = time.time() + 60
        while time.time() < deadline and not (log.exists() and len(log.read_text().split()) >= 2):
            time.sleep(0.05)  # both tasks running: one on each worker (1 thread each)
        assert len(log.read_text().split()) == 2, "the tasks did not start"
        victim = next(iter(pids.values()))
        os.kill(victim, signal.SIGKILL)  # a worker dies in the middle of its task
        th.join(timeout=180)
        assert not th.is_alive()
        assert out["s"].succeeded == 2 and out["s"].failed == 0
        assert {r["id"] for r in store.rows() if r["ok"]} == {t["id"] for t in tasks}
    assert len(log.read_text().split()) >= 3  # the killed worker's task was computed again


def test_a_child_started_after_ctrl_c_is_killed_at_once() -> None:
    """Ctrl-C while a task's thread was starting its child: the child joined the running set after the runner
    had killed its members, and the runner then waited for the whole task (seen as a 60 s hang of the test
    above)."""
    from treeopt_dsl.experiments.executors import LocalExecutor

    ex = LocalExecutor(jobs=1)
    ex.abort([])  # Ctrl-C came first; the task's thread starts its child only now
    f = ex.submit({"id": "late", "estimator": "sleep", "params": {"seconds": 120.0}, "memory_mb": 4096}, 1)
    row = ex.result(f)
    ex.close()
    assert not row["ok"] and "killed by SIGKILL" in row["reason"]


@pytest.fixture
def foreign_sqlite(tmp_path: Path) -> Path:
    import sqlite3

    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE results (a, b)")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("kind, words", [
    ("directory", "is a directory; give a file name"),
    ("missing parent", "the directory '{tmp}/missing/dir' does not exist; create it first"),
    ("text file", "is not a results store (an SQLite file): file is not a database"),
    ("foreign database", "an SQLite file whose table 'results' is not a results store's (columns a, b)"),
])
def test_a_store_that_is_not_one_is_refused_naming_store_before_any_task(tmp_path: Path, capsys, kind: str,
                                                                          words: str, foreign_sqlite: Path) -> None:
    """Issue 36: raw sqlite3 tracebacks for a directory or a foreign file, and a missing directory tree created
    silently; now exit 2, one line naming --store, nothing run and nothing written."""
    from treeopt_dsl.cli import main

    grid = tmp_path / "g.toml"
    grid.write_text(SLEEPS)
    target = {"directory": tmp_path, "missing parent": tmp_path / "missing" / "dir" / "r.sqlite",
              "text file": tmp_path / "notes.sqlite", "foreign database": foreign_sqlite}[kind]
    if kind == "text file":
        target.write_text("my notes\n")
    before = target.read_bytes() if target.is_file() else None
    log = tmp_path / "log"
    os.environ["TREEOPT_EXPERIMENT_TEST_LOG"] = str(log)
    try:
        code = main(["experiment", "run", str(grid), "--store", str(target), "--quiet"])
    finally:
        del os.environ["TREEOPT_EXPERIMENT_TEST_LOG"]
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("treeopt: error: --store: ") and words.format(tmp=tmp_path) in err, err
    assert not log.exists()  # no task ran
    assert not (tmp_path / "missing").exists()
    if before is not None:
        assert target.read_bytes() == before
    if kind != "missing parent":
        code = main(["experiment", "report", str(target)])
        assert code == 2 and "treeopt: error:" in capsys.readouterr().err


def test_load_rows_of_a_missing_file_is_a_data_error(tmp_path: Path) -> None:
    from treeopt_dsl.errors import DataError
    from treeopt_dsl.experiments import load_rows

    with pytest.raises(DataError, match="no results file"):
        load_rows(tmp_path / "none.sqlite")


def test_two_runners_on_one_store_compute_each_task_once(tmp_path: Path) -> None:
    """Issue 36: two runners on one store used to compute every task twice. The four tasks wait on a gate file
    that opens only once four tasks have started (two at a time per runner): without leases those are each
    runner's first two, twice over; with leases they are the four tasks, once each."""
    gate = tmp_path / "gate"
    grid = tmp_path / "g.toml"
    grid.write_text(SLEEPS.replace('datasets = ["a", "b"]', 'datasets = ["a", "b"]\nseeds = [0, 1]')
                    .replace("seconds = 0.1", f'seconds = 600.0, until_file = "{gate}"'))
    tasks = expand(parse_grid(grid.read_text()))
    assert len(tasks) == 4
    store, log = tmp_path / "r.sqlite", tmp_path / "log"
    env = {**os.environ, "TREEOPT_EXPERIMENT_TEST_LOG": str(log)}
    argv = [*_cli(), "experiment", "run", str(grid), "--store", str(store), "--quiet", "--jobs", "2"]
    runners = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    try:
        deadline = time.time() + 300
        while time.time() < deadline and not (log.exists() and len(log.read_text().split()) >= 4):
            assert all(p.poll() is None for p in runners), [p.communicate() for p in runners]
            time.sleep(0.1)
        started = log.read_text().split()
        assert sorted(started) == sorted(t["id"] for t in tasks)  # four different tasks, not two twice
    finally:
        gate.touch()
        ends = [p.communicate(timeout=120) for p in runners]
    assert [p.returncode for p in runners] == [0, 0], ends
    assert sorted(log.read_text().split()) == sorted(t["id"] for t in tasks)  # each computed once
    with ResultStore(store) as s:
        assert len(s.finished_ids(include_failed=False)) == 4
        assert s.conn.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0
    lines = [e[0].decode() for e in ends]
    assert sum(int(line.split(" succeeded")[0].rsplit(" ", 1)[1]) for line in lines) == 4, lines
    assert any("left to another runner" in line for line in lines), lines


def test_a_lease_is_held_renewed_released_ended_and_taken_over(tmp_path: Path) -> None:
    from treeopt_dsl.experiments.store import new_owner

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with ResultStore(tmp_path / "r.sqlite") as s:
        a, b = new_owner(), new_owner()
        assert s.claim("t", a, 60) is None and s.claim("t", a, 60) is None  # claimed, renewed
        assert "computed by another runner" in s.claim("t", b, 60)
        s.release(["t"], a)
        assert s.claim("t", b, 60) is None
        s.record({"id": "t", "ok": False, "status": "failed", "attempt": 1}, final=True)
        assert s.claim("t", a, 60) == "finished"
        assert s.claim("t", a, 60, retry_failed=True) is None  # a failed task, rerun on request
        assert s.claim("u", a, -1) is None and s.claim("u", b, 60) is None  # a lapsed lease is taken over
        host = a.split(":")[0]
        assert s.claim("v", f"{host}:{dead.pid}:gone", 600) is None
        assert s.claim("v", b, 60) is None  # its holder, a process of this host, is gone


def test_ctrl_c_in_a_run_is_raised_between_steps_and_a_second_at_once() -> None:
    """The runner's Ctrl-C: the first only sets a flag the loop reads between its steps (never a
    ``KeyboardInterrupt`` inside ``concurrent.futures``' waiting, which once left the pool's shutdown waiting
    forever), a second raises at once, and the previous handler is back afterwards."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (the suite may run with
    stop = _StopOnCtrlC()  # SIGINT ignored, as a background job)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs in this (main) thread: no exception here
        assert stop.requested
        with pytest.raises(KeyboardInterrupt):
            stop.check()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
    finally:
        stop.restore()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        signal.signal(signal.SIGINT, before)
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert _StopOnCtrlC().previous is None  # an ignored Ctrl-C stays ignored: nothing installed
    finally:
        signal.signal(signal.SIGINT, ignored)


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process, from /proc (Linux)."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:  # ended meanwhile
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            out[int(entry)] = (int(fields[1]), fields[0])
    return out


def _descendants(root: int) -> set[int]:
    table, found, grew = _proc_table(), {root}, True
    while grew:
        grew = False
        for pid, (parent, _) in table.items():
            if parent in found and pid not in found:
                found.add(pid)
                grew = True
    return found - {root}


def _alive(pids: set[int]) -> set[int]:
    table = _proc_table()
    return {p for p in pids if p in table and table[p][1] != "Z"}


#: a script as benchmarks/sorct_path.py is: run_grid_text under Python's default SIGTERM disposition
RUN_GRID_SCRIPT = """\
import sys
from treeopt_dsl.experiments import run_grid_text
if __name__ == "__main__":  # the fork server imports the main module
    run, _ = run_grid_text(open(sys.argv[1]).read(), sys.argv[2], "signal-test", jobs=1, progress=False)
    sys.exit(130 if run.interrupted else 0)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow),
                                 pytest.param(signal.SIGKILL, marks=pytest.mark.slow)])
def test_a_signal_to_a_script_running_a_grid_ends_its_task_processes(sig: int, tmp_path: Path) -> None:
    """SIGTERM (or Ctrl-C, or SIGKILL) to a benchmark script that runs a grid (benchmarks/sorct_path.py's way:
    run_grid_text under the default SIGTERM disposition) leaves no process behind: no task process still computing,
    no forkserver, no resource tracker. Before, SIGTERM and SIGKILL ended the script alone and the three were
    reparented to init (the task, a gated sleep here, would have run its 600 s; the task process holds the fork
    server's and the tracker's pipes, so they lived as long as it did). SIGKILL: the task process ends itself when
    the runner's end of its lifeline closes."""
    grid, script = tmp_path / "g.toml", tmp_path / "run.py"
    grid.write_text(SLEEPS.replace('datasets = ["a", "b"]', 'datasets = ["a"]').replace(
        "params = { seconds = 0.1 }", f'params = {{ seconds = 600.0, until_file = "{tmp_path / "gate"}" }}'))
    script.write_text(RUN_GRID_SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                         os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, str(script), str(grid), str(tmp_path / "r.sqlite")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_ctrl_c_as_in_a_shell)
    tree: set[int] = set()
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            tree = _descendants(proc.pid)
            table = _proc_table()
            if any(table.get(p, (0,))[0] in tree for p in tree):  # a grandchild: the task under the forkserver
                break
            time.sleep(0.1)
        assert proc.poll() is None and len(tree) >= 3, "the task process did not start"
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
        deadline = time.time() + 10  # the forkserver ends when it reads its parent's end of the pipe
        while _alive(tree) and time.time() < deadline:
            time.sleep(0.1)
        assert not _alive(tree), f"left behind: {sorted(_alive(tree))} of {sorted(tree)}"
        assert proc.returncode == {signal.SIGTERM: 143, signal.SIGINT: 130, signal.SIGKILL: -9}[sig], err.decode()
    finally:
        for pid in _alive(tree):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()


def test_sigterm_in_a_run_is_acted_on_between_steps() -> None:
    """The runner's SIGTERM: a flag read between the loop's steps; under the default disposition it raises
    ``SystemExit(143)``, with a program's own handler it calls that handler there; the handler is back after."""
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        stop = _StopOnCtrlC()
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # the handler runs in this (main) thread: only the flag is set
            assert stop.terminated
            with pytest.raises(SystemExit) as exc:
                stop.check()
            assert exc.value.code == 143
        finally:
            stop.restore()
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        calls: list[int] = []
        signal.signal(signal.SIGTERM, lambda signum, frame: calls.append(signum))
        stop = _StopOnCtrlC()
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            assert calls == []  # not yet: at the loop's next step
            stop.check()
            assert calls == [signal.SIGTERM]
            stop.check()  # once per signal
            assert calls == [signal.SIGTERM]
        finally:
            stop.restore()
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_worker_dying_after_the_library_changed_names_the_change(monkeypatch) -> None:
    """Files of the library edited while a run goes on: a task forked then mixes old and new modules and may die
    before reporting (exit 1); its row says so, and says nothing of the kind while the files are as loaded."""
    from treeopt_dsl.experiments import worker

    newest, path = worker.source_stamp()  # the newest of the library's files: at least this module's
    assert os.path.getmtime(worker.__file__) <= newest and os.path.getmtime(path) == newest
    task = {"id": "t"}
    monkeypatch.setattr(worker, "_STAMP", (100.0, "/lib/a.py"))
    monkeypatch.setattr(worker, "source_stamp", lambda: (100.0, "/lib/a.py"))
    assert worker._died(task, 1, 1, time.perf_counter())["reason"] == "worker exited with code 1 before reporting"
    monkeypatch.setattr(worker, "source_stamp", lambda: (200.0, "/lib/b.py"))
    row = worker._died(task, 1, 1, time.perf_counter(), "Traceback: ImportError")
    assert row["reason"].startswith("worker exited with code 1 before reporting: Traceback: ImportError; the "
                                    "library's files changed after this run's worker processes loaded them (/lib/b.py")
    assert "--retry-failed" in row["reason"] and row["retryable"]
    killed = worker._died(task, 1, -9, time.perf_counter())  # a kill is a kill, whatever the files did
    assert "changed" not in killed["reason"]


def test_task_timeout_flag_kills_a_task_then_reruns_it_under_its_own_id(tmp_path: Path, capsys) -> None:
    """``--task-timeout``: a task past it is killed and stored as failed, the reason naming the flag; the same
    task reruns under its own id with ``--retry-failed`` and a longer timeout (Table 3.2's w5a OLCT at 10 s per
    solve was killed by the computed timeout with no way to give it more)."""
    from treeopt_dsl.cli import main

    grid = tmp_path / "g.toml"
    grid.write_text(SLEEPS.replace("seconds = 0.1", "seconds = 6.0").replace('["a", "b"]', '["a"]'))
    store = tmp_path / "r.sqlite"
    code = main(["experiment", "run", str(grid), "--store", str(store), "--quiet", "--task-timeout", "1"])
    out = capsys.readouterr().out
    assert code != 0 and "task timeout: killed after 1 s" in out and "--task-timeout" in out, out
    with ResultStore(store) as s:
        (row,) = s.rows()
    assert not row["ok"] and row["status"] == "timeout"
    code = main(["experiment", "run", str(grid), "--store", str(store), "--quiet", "--task-timeout", "120",
                 "--retry-failed"])
    assert code == 0, capsys.readouterr()
    with ResultStore(store) as s:
        (again,) = s.rows()
    assert again["id"] == row["id"] and again["ok"]
    assert main(["experiment", "run", str(grid), "--task-timeout", "0"]) == 2
    assert "--task-timeout must be a positive number of seconds, got 0.0" in capsys.readouterr().err
