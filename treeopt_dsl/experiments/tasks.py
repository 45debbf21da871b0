"""Tasks: one solve (or estimator fit) of one method on one dataset, seed and parameter combination.

A task is a plain JSON-able dict; its id is a readable prefix plus a hash of everything that defines it,
so the same grid gives the same ids on every run (the store's key: a rerun skips finished ids).

Example:

    >>> from treeopt_dsl.experiments.grid import parse_grid
    >>> g = parse_grid('[data]\\ndatasets = ["haberman"]\\nseeds = [0, 1]\\n'
    ...                '[[method]]\\nformulation = "olct"\\ngrid = { C = [0.1, 1.0] }\\n')
    >>> ts = expand(g)
    >>> len(ts), ts[0]["id"] == expand(g)[0]["id"]
    (4, True)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from typing import Any

from treeopt_dsl.experiments.grid import Grid, MethodSpec

__all__ = ["expand", "task_id"]

#: task fields that do not change what a task computes (left out of the id; ``base_dir``, the directory the grid's
#: relative paths are read against, is where the grid file sits: the same grid elsewhere gives the same ids)
_NOT_IN_ID = {"id", "experiment", "retries", "memory_mb", "task_timeout", "base_dir"}


def task_id(task: dict[str, Any]) -> str:
    """``method-dataset-s<seed>[-f<fold>]-<hash>``: stable across runs and machines for the same task."""
    core = {k: v for k, v in task.items() if k not in _NOT_IN_ID}
    digest = hashlib.sha1(json.dumps(core, sort_keys=True, default=str).encode()).hexdigest()[:10]
    fold = f"-f{task['fold']}" if task.get("fold") is not None else ""
    label = re.sub(r"[^A-Za-z0-9_.+\-]", "_", f"{task['method']}-{task['dataset']['name']}-s{task['seed']}{fold}")
    return f"{label}-{digest}"


def _combos(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    keys = sorted(grid)
    return [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*(grid[k] for k in keys))] or [{}]


def _method_fields(m: MethodSpec) -> dict[str, Any]:
    return {"method": m.name, "formulation": m.formulation, "estimator": m.estimator, "solver": m.solver,
            "backend": m.backend, "time_limit": m.time_limit, "threads": m.threads, "warm_start": m.warm_start,
            "cv": m.cv, "memory_mb": m.memory_mb, "task_timeout": m.task_timeout,
            **({"references": m.references} if m.references else {}),
            **({"train_sample": m.train_sample} if m.train_sample else {}),
            **({"scale": m.scale} if m.scale else {}), **({"path": m.path} if m.path else {}),
            **({"refine": True} if m.refine else {}),
            **({"start_only": True} if m.start_only else {})}  # only when set: the ids of grids without it stay


def expand(grid: Grid) -> list[dict[str, Any]]:
    """Every task of the grid (methods x parameter combinations x datasets x seeds [x folds]), ids included."""
    tasks = []
    folds = list(range(grid.folds)) if grid.folds else [None]
    for d in grid.datasets:  # instance-major: a partial run has every method on the same instances
        for seed in grid.seeds:
            for fold in folds:
                for m in grid.methods:
                    if m.datasets is not None and d.name not in m.datasets:
                        continue
                    for combo in _combos(m.grid):
                        t = {**_method_fields(m), "params": {**m.params_for(d), **combo}, "grid_point": combo,
                             "dataset": d.to_dict(), "data_dir": grid.data_dir, "seed": int(seed), "fold": fold,
                             "folds": grid.folds or None, "test_size": grid.test_size,
                             "validation_size": grid.validation_size, "sample": d.sample or grid.sample,
                             "metrics": grid.metrics, "experiment": grid.name, "retries": grid.retries,
                             **({"split": grid.split} if grid.split != "stratified" else {}),  # ids stay
                             **({"base_dir": grid.base_dir} if grid.base_dir is not None else {})}
                        t["id"] = task_id(t)
                        tasks.append(t)
    ids = [t["id"] for t in tasks]
    if len(set(ids)) != len(ids):  # two identical tasks (a repeated seed or grid value): keep one
        seen: set[str] = set()
        tasks = [t for t in tasks if not (t["id"] in seen or seen.add(t["id"]))]
    return tasks


def apply_overrides(tasks: list[dict[str, Any]], *, time_limit: float | None = None,
                    memory_mb: int | None = None, task_timeout: float | None = None) -> list[dict[str, Any]]:
    """Tasks with a new time limit, memory limit and/or wall timeout (a new time limit is a new task: its id
    changes; the memory limit and the timeout are not part of the id, so a task killed by its timeout reruns under
    its own id with ``--retry-failed --task-timeout``)."""
    out = []
    for t in tasks:
        t = dict(t)
        if time_limit is not None:
            t["time_limit"] = float(time_limit)
            if t.get("cv") and "time_limit" in t["cv"]:
                t["cv"] = {**t["cv"], "time_limit": min(float(t["cv"]["time_limit"]), float(time_limit))}
        if memory_mb is not None:
            t["memory_mb"] = int(memory_mb)
        if task_timeout is not None:
            t["task_timeout"] = float(task_timeout)
        t["id"] = task_id(t)
        out.append(t)
    return out
