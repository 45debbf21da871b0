"""The experiment runner's own overhead per task (issue 18's target: under 5% of a 10-second task).

    .venv/bin/python benchmarks/runner_overhead.py                       # 6 tasks of 10 s, local processes
    .venv/bin/python benchmarks/runner_overhead.py --tasks 20 --seconds 1 --executor dask

Each task is the runner's diagnostic ``sleep`` task (it only waits ``--seconds``), so everything beyond
``--seconds`` per task is the runner's: expanding the grid, the SQLite rows, forking the task's process
from the pre-loaded fork server (or a Dask round trip), the pipe back, the progress display. Printed:
the run's wall time per task minus ``--seconds`` (steady state: the one-off fork-server start, which
imports the library once, is reported separately), and each task's wall time in the runner minus its
time inside the child.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from treeopt_dsl.experiments import ResultStore, expand, parse_grid, run_tasks
from treeopt_dsl.experiments.executors import make_executor

GRID = """\
[experiment]
name = "overhead"
[data]
datasets = [{names}]
[[method]]
name = "sleep"
estimator = "sleep"
params = {{ seconds = {seconds} }}
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--executor", choices=("local", "dask"), default="local")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    names = ", ".join(f'"d{i}"' for i in range(args.tasks + 1))
    tasks = expand(parse_grid(GRID.format(names=names, seconds=args.seconds)))
    warm, tasks = tasks[:1], tasks[1:]
    with tempfile.TemporaryDirectory() as tmp, ResultStore(Path(tmp) / "o.sqlite") as store:
        ex = make_executor(args.executor, jobs=args.jobs)
        t0 = time.perf_counter()
        run_tasks(warm, store, executor_obj=ex, progress=False)  # starts the fork server / the cluster's workers
        startup = time.perf_counter() - t0 - args.seconds
        t0 = time.perf_counter()
        summary = run_tasks(tasks, store, executor_obj=ex, progress=False)
        wall = time.perf_counter() - t0
        ex.close()
        rows = [r for r in store.rows() if r["id"] in {t["id"] for t in tasks}]
    assert summary.succeeded == len(tasks), summary.line()
    per_task = wall * args.jobs / len(tasks) - args.seconds
    inner = np.array([r["wall_s"] - r["task_s"] for r in rows if r.get("wall_s") is not None])
    print(f"{len(tasks)} task(s) of {args.seconds:g} s, {args.executor} executor, {args.jobs} job(s)")
    print(f"one-off start (fork server / workers, the first task): {startup:.3f} s")
    print(f"overhead per task, whole run: {per_task:.3f} s = {100 * per_task / args.seconds:.2f}% of a "
          f"{args.seconds:g} s task (target < 5%)")
    if inner.size:
        print(f"per task, runner wall - time in the child: mean {inner.mean():.3f} s, max {inner.max():.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
