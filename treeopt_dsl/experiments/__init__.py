"""Experiment runner: TOML grids of solves and fits, run in isolated processes into an SQLite store.

    treeopt experiment run experiments/tiny.toml --jobs 2             # local processes
    treeopt experiment run experiments/tiny.toml --executor dask      # a Dask LocalCluster (or --scheduler ADDR)
    treeopt experiment report tiny.sqlite --profile time --by method  # profiles, cumulative gaps, a table

Example:

    >>> from treeopt_dsl.experiments import parse_grid, expand
    >>> g = parse_grid('[data]\\ndatasets = ["haberman"]\\n[[method]]\\nformulation = "olct"\\n')
    >>> len(expand(g))
    1
"""

from __future__ import annotations

from treeopt_dsl.experiments.grid import Grid, GridError, load_grid, parse_grid, toml_value
from treeopt_dsl.experiments.runner import RunSummary, run_grid_text, run_tasks
from treeopt_dsl.experiments.store import ResultStore, load_rows
from treeopt_dsl.experiments.tasks import expand, task_id

__all__ = ["Grid", "GridError", "ResultStore", "RunSummary", "expand", "load_grid", "load_rows", "parse_grid",
           "run_grid_text", "run_tasks", "task_id", "toml_value"]
