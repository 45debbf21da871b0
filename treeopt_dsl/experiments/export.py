"""A results store as one flat table: ``treeopt experiment export STORE --to out.csv|out.parquet``.

One row per finished task (:meth:`~treeopt_dsl.experiments.store.ResultStore.rows`: the task's method, dataset,
seed, ... merged with its result row); nested fields become dotted columns (``metrics.test.accuracy``), lists and
anything else nested stay one JSON text cell. Parquet needs ``pyarrow`` (not a dependency of treeopt-dsl).

Example:

    >>> import tempfile, os
    >>> from treeopt_dsl.experiments.store import ResultStore, load_rows
    >>> d = tempfile.mkdtemp(); store = os.path.join(d, "r.sqlite")
    >>> with ResultStore(store) as s:
    ...     s.add_tasks([{"id": "a", "method": "olct", "dataset": {"name": "heart"}, "seed": 0}])
    ...     s.record({"id": "a", "ok": True, "status": "optimal", "metrics": {"test": {"accuracy": 0.8}}}, final=True)
    >>> export_rows(store, os.path.join(d, "r.csv"))["rows"]
    1
    >>> open(os.path.join(d, "r.csv")).readline().split(",")[:3]
    ['id', 'experiment', 'method']
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from treeopt_dsl.errors import CapabilityError, DataError, OptionError
from treeopt_dsl.experiments.store import ResultStore, load_rows
from treeopt_dsl.io import check_writable
from treeopt_dsl.numeric import json_default

__all__ = ["FORMATS", "export_rows", "flat_rows", "read_table"]

#: the table formats by file suffix
FORMATS = (".csv", ".parquet")
#: the columns that name a row, first in the table (the rest follow in the order the rows give them)
KEY_COLUMNS = ("id", "experiment", "method", "dataset", "seed", "fold", "ok", "status", "objective", "bound", "gap",
               "runtime_s", "test_balanced_accuracy", "host")


def flat_rows(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows as a table: nested dicts as dotted columns, lists (and dicts left in lists) as JSON text.

    >>> flat_rows([{"id": "a", "m": {"x": 1, "y": [1, 2]}}, {"id": "b", "z": 3}]).columns.tolist()
    ['id', 'm.x', 'm.y', 'z']
    >>> flat_rows([{"id": "a", "m": {"x": 1, "y": [1, 2]}}])["m.y"].tolist()
    ['[1, 2]']
    """
    df = pd.json_normalize(rows, sep=".")
    for col in df.columns:
        if df[col].map(lambda v: isinstance(v, (list, tuple, dict))).any():
            df[col] = df[col].map(lambda v: json.dumps(v, default=json_default)
                                  if isinstance(v, (list, tuple, dict)) else v)
    first = [c for c in KEY_COLUMNS if c in df.columns]
    return df[first + [c for c in df.columns if c not in first]]


def read_table(path: str | Path) -> pd.DataFrame:
    """The rows of a results file as the table :func:`export_rows` writes: an exported ``.csv`` / ``.parquet`` as it
    is, a store or a ``.jsonl`` file flattened by :func:`flat_rows` (so a store and its export give the same
    columns). What the benchmark scripts that draw a paper's figure read.

        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "old.jsonl")
        >>> _ = open(p, "w").write('{"id": "a", "params": {"T": 3}}\\n')
        >>> read_table(p).columns.tolist()
        ['id', 'params.T']
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"no results file {p}")
    if p.suffix.lower() == ".csv":
        return pd.read_csv(p)
    if p.suffix.lower() == ".parquet":
        return pd.read_parquet(p)
    return flat_rows(load_rows(p))


def export_rows(store: str | Path, to: str | Path, experiment: str | None = None) -> dict[str, Any]:
    """Write the final rows of ``store`` (one experiment's with ``experiment``) to ``to`` (:data:`FORMATS`), checked
    before anything is read; written to a temporary file beside ``to`` and moved into place at the end. Returns
    ``{"path", "rows", "columns"}``."""
    store, to = Path(store), Path(to)
    suffix = to.suffix.lower()
    if suffix not in FORMATS:
        raise OptionError(f"--to must end in {' or '.join(FORMATS)} (the table's format), got {str(to)!r}")
    if suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise CapabilityError(f"writing {str(to)!r} needs pyarrow, which is not installed: `pip install pyarrow`, "
                              "or export to a .csv file")
    if not store.is_file():  # ResultStore would create an empty store
        raise DataError(f"no results store {str(store)!r}: give the SQLite file `treeopt experiment run` wrote")
    check_writable(to, "the table (--to)")
    with ResultStore(store) as s:
        rows = s.rows(experiment)
    if not rows:
        where = f" for experiment {experiment!r}" if experiment else ""
        raise DataError(f"{store} holds no finished task{where}: nothing to export")
    df = flat_rows(rows)
    tmp = to.with_name(f".{to.name}.partial")
    try:
        if suffix == ".csv":
            df.to_csv(tmp, index=False)
        else:
            df.to_parquet(tmp, index=False)
        os.replace(tmp, to)
    finally:
        tmp.unlink(missing_ok=True)
    return {"path": str(to), "rows": len(df), "columns": len(df.columns)}
