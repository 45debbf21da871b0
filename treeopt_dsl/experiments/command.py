"""``treeopt experiment``: run a grid into a store, list its tasks, report on a store.

    treeopt experiment run GRID.toml [--store R.sqlite] [--jobs N] [--executor local|dask] [--scheduler ADDR]
    treeopt experiment tasks GRID.toml                       # the tasks and their ids, nothing run
    treeopt experiment report R.sqlite --profile time --by method [--paper TABLE.csv] [--out DIR]

Example:

    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_parser(p.add_subparsers(dest="command"))
    >>> p.parse_args(["experiment", "run", "g.toml", "--jobs", "2"]).jobs
    2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from treeopt_dsl.errors import OptionError

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``experiment`` (with ``run``, ``tasks``, ``report``) on the ``treeopt`` sub-command parser."""
    c = sub.add_parser("experiment", help="run a TOML grid of solves into a results store; report on it")
    s = c.add_subparsers(dest="experiment_command", required=True)
    r = s.add_parser("run", help="run the grid's unfinished tasks (each in its own process)")
    r.add_argument("grid", help="the grid file (TOML, see docs/experiments.md)")
    r.add_argument("--store", help="SQLite results file (default: <grid name>.sqlite in the current directory)")
    r.add_argument("--jobs", "-j", type=int, default=1, help="tasks at a time (dask: LocalCluster workers)")
    r.add_argument("--executor", choices=("local", "dask"), default="local")
    r.add_argument("--scheduler", help="a Dask scheduler address (with --executor dask; default: a LocalCluster)")
    r.add_argument("--retries", type=int, default=None, help="reruns of a task whose worker died (default: grid's)")
    r.add_argument("--retry-failed", action="store_true", help="also rerun tasks stored as failed")
    r.add_argument("--time-limit", type=float, default=None, help="override every solve's time limit (new task ids)")
    r.add_argument("--memory-mb", type=int, default=None, help="override every task's memory limit")
    r.add_argument("--only", action="append", default=[], help="run only tasks whose id contains this (repeatable)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar or lines")
    t = s.add_parser("tasks", help="list the grid's tasks (validates the grid; runs nothing)")
    t.add_argument("grid")
    t.add_argument("--json", action="store_true")
    p = s.add_parser("report", help="performance profiles, cumulative gaps and a markdown table from a store")
    p.add_argument("store", help="the SQLite results file")
    p.add_argument("--profile", action="append", choices=("time", "objective", "accuracy", "sparsity"),
                   help="which plots (repeatable; default all): time = performance profile of the runtime "
                        "(unproven = failed), objective / accuracy = cumulative gap from the best, sparsity = "
                        "performance profile of the features per split")
    p.add_argument("--by", default="method", help="the column compared (default method; e.g. formulation)")
    p.add_argument("--out", help="directory of the plots and report.md (default: <store>_report)")
    p.add_argument("--format", choices=("png", "svg"), default="png")
    p.add_argument("--paper", help="a paper's table (CSV: dataset,method,metric,value) to print ours beside")
    p.add_argument("--experiment", help="only this experiment's rows (a store can hold several)")


def _run(args: argparse.Namespace) -> int:
    from treeopt_dsl.experiments.grid import load_grid
    from treeopt_dsl.experiments.runner import run_tasks
    from treeopt_dsl.experiments.store import ResultStore
    from treeopt_dsl.experiments.tasks import apply_overrides, expand

    grid = load_grid(args.grid)
    tasks = expand(grid)
    if args.time_limit is not None or args.memory_mb is not None:
        if args.time_limit is not None and args.time_limit <= 0:
            raise OptionError(f"--time-limit must be positive, got {args.time_limit}")
        tasks = apply_overrides(tasks, time_limit=args.time_limit, memory_mb=args.memory_mb)
    if args.only:
        tasks = [t for t in tasks if any(o in t["id"] for o in args.only)]
    store_path = Path(args.store or f"{grid.name}.sqlite")
    if args.executor == "local" and args.scheduler:
        raise OptionError("--scheduler is for --executor dask")
    with ResultStore(store_path) as store:
        print(f"{grid.name}: {len(tasks)} task(s) -> {store_path}", file=sys.stderr)
        summary = run_tasks(tasks, store, executor=args.executor, jobs=args.jobs, scheduler=args.scheduler,
                            retries=args.retries, retry_failed=args.retry_failed, progress=not args.no_progress)
    print(summary.line())
    for f in summary.failures[:20]:
        print(f"  failed {f['id']}: {f['reason']}")
    return 130 if summary.interrupted else (0 if summary.failed == 0 else 1)


def _tasks(args: argparse.Namespace) -> int:
    from treeopt_dsl.experiments.grid import load_grid
    from treeopt_dsl.experiments.tasks import expand

    tasks = expand(load_grid(args.grid))
    if args.json:
        print(json.dumps(tasks, indent=1, default=str))
    else:
        for t in tasks:
            print(t["id"])
        print(f"{len(tasks)} task(s)", file=sys.stderr)
    return 0


def _report(args: argparse.Namespace) -> int:
    from treeopt_dsl.experiments.report import write_report

    out = write_report(args.store, by=args.by, profiles=args.profile, out=args.out, fmt=args.format,
                       paper=args.paper, experiment=args.experiment)
    print(out["markdown"])
    print(f"wrote {', '.join(str(p) for p in out['files'])}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    """Dispatch ``treeopt experiment <run|tasks|report>``."""
    return {"run": _run, "tasks": _tasks, "report": _report}[args.experiment_command](args)
