"""``treeopt experiment``: run a grid into a store, list its tasks, report on a store.

    treeopt experiment run GRID.toml [--store R.sqlite] [--jobs N] [--executor local|dask] [--scheduler ADDR]
    treeopt experiment tasks GRID.toml                       # the tasks and their ids, nothing run
    treeopt experiment report R.sqlite --profile time --by method [--paper TABLE.csv] [--out DIR]
    treeopt experiment export R.sqlite --to rows.csv                # or rows.parquet (needs pyarrow)

Example:

    >>> from treeopt_dsl.cli.parsers import build_parser
    >>> build_parser().parse_args(["experiment", "run", "g.toml", "--jobs", "2"]).jobs
    2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from treeopt_dsl.cli.common import EXIT_INTERRUPTED, EXIT_NO_SOLUTION, EXIT_OK
from treeopt_dsl.errors import OptionError, TreeoptError
from treeopt_dsl.experiments.export import export_rows
from treeopt_dsl.experiments.grid import load_grid
from treeopt_dsl.experiments.report import write_report
from treeopt_dsl.experiments.runner import run_tasks
from treeopt_dsl.experiments.store import ResultStore
from treeopt_dsl.experiments.tasks import apply_overrides, expand

__all__ = ["run"]


def _run(args: argparse.Namespace) -> int:
    grid = load_grid(args.grid)
    tasks = expand(grid)
    if args.solve_time_limit is not None or args.memory_mb is not None or args.task_timeout is not None:
        for flag, v in (("--solve-time-limit", args.solve_time_limit), ("--task-timeout", args.task_timeout)):
            if v is not None and not v > 0:
                raise OptionError(f"{flag} must be a positive number of seconds, got {v}")
        tasks = apply_overrides(tasks, time_limit=args.solve_time_limit, memory_mb=args.memory_mb,
                                task_timeout=args.task_timeout)
    if args.only:
        tasks = [t for t in tasks if any(o in t["id"] for o in args.only)]
    store_path = Path(args.store or f"{grid.name}.sqlite")
    if args.executor == "local" and args.scheduler:
        raise OptionError("--scheduler is for --executor dask")
    try:  # opened before any task runs: a directory, a missing parent or a foreign file is refused here
        opened = ResultStore(store_path)
    except TreeoptError as exc:
        raise OptionError(f"--store: {exc}") from None
    with opened as store:
        print(f"{grid.name}: {len(tasks)} task(s) -> {store_path}", file=sys.stderr)
        summary = run_tasks(tasks, store, executor=args.executor, jobs=args.jobs, scheduler=args.scheduler,
                            retries=args.retries, retry_failed=args.retry_failed, progress=not args.quiet)
    print(summary.line())
    for f in summary.failures[:20]:
        print(f"  failed {f['id']}: {f['reason']}")
    return EXIT_INTERRUPTED if summary.interrupted else (EXIT_OK if summary.failed == 0 else EXIT_NO_SOLUTION)


def _tasks(args: argparse.Namespace) -> int:
    tasks = expand(load_grid(args.grid))
    if args.json:
        print(json.dumps(tasks, indent=1, default=str))
    else:
        for t in tasks:
            print(t["id"])
        print(f"{len(tasks)} task(s)", file=sys.stderr)
    return 0


def _report(args: argparse.Namespace) -> int:
    out = write_report(args.store, by=args.by, profiles=args.profile, out=args.out, fmt=args.format,
                       paper=args.paper, experiment=args.experiment, methods=args.methods, against=args.against)
    print(out["markdown"])
    print(f"wrote {', '.join(str(p) for p in out['files'])}", file=sys.stderr)
    return 0


def _export(args: argparse.Namespace) -> int:
    out = export_rows(args.store, args.to, experiment=args.experiment)
    print(f"wrote {out['path']}: {out['rows']} rows, {out['columns']} columns", file=sys.stderr)
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Dispatch ``treeopt experiment <run|tasks|report|export>``."""
    return {"run": _run, "tasks": _tasks, "report": _report, "export": _export}[args.experiment_command](args)
