"""The results store: one SQLite file, one row per task, each written in its own transaction.

Tables: ``tasks`` (every task of the grids run into this store, as JSON), ``results`` (the final row of
a task: succeeded, or failed for good), ``attempts`` (every attempt, failed ones with their reason), ``leases``
(the tasks a runner is computing: its owner, host and pid, until when; :meth:`ResultStore.claim`), so that two
runners on one store compute each task once.
SQLite's write-ahead log makes each row atomic: a process killed mid-write leaves the previous rows intact.

Example:

    >>> import tempfile, os
    >>> s = ResultStore(os.path.join(tempfile.mkdtemp(), "r.sqlite"))
    >>> s.add_tasks([{"id": "a", "method": "m", "dataset": {"name": "d"}, "seed": 0}])
    >>> s.record({"id": "a", "ok": True, "status": "optimal", "attempt": 1}, final=True)
    >>> s.finished_ids()
    {'a'}
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

from treeopt_dsl.errors import DataError
from treeopt_dsl.numeric import json_default

__all__ = ["ResultStore", "load_rows", "new_owner"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY, experiment TEXT, method TEXT, dataset TEXT, seed INTEGER, fold INTEGER,
    task_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    id TEXT PRIMARY KEY, experiment TEXT, method TEXT, dataset TEXT, seed INTEGER, fold INTEGER,
    ok INTEGER NOT NULL, status TEXT, attempts INTEGER, reason TEXT, objective REAL, bound REAL, gap REAL,
    runtime_s REAL, task_s REAL, wall_s REAL, test_balanced_accuracy REAL, features_per_node REAL,
    finished_at REAL, row_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    id TEXT, attempt INTEGER, ok INTEGER, status TEXT, reason TEXT, finished_at REAL, PRIMARY KEY (id, attempt)
);
CREATE TABLE IF NOT EXISTS leases (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, host TEXT, pid INTEGER, claimed_at REAL, expires REAL NOT NULL
);
"""


def _schema_columns() -> dict[str, list[str]]:
    """Each table's columns in order, read from the schema made in memory."""
    mem = sqlite3.connect(":memory:")
    try:
        mem.executescript(_SCHEMA)
        names = [r[0] for r in mem.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: [c[1] for c in mem.execute(f"PRAGMA table_info({t})")] for t in names}
    finally:
        mem.close()


#: each table's columns (a file holding a table of one of these names with other columns is not a store)
_COLUMNS = _schema_columns()


class ResultStore:
    """An SQLite results file (created with its tables if missing); rows are dicts, see the module doc."""

    def __init__(self, path: str | Path) -> None:
        """Open (or create) the store at ``path``; a :class:`~treeopt_dsl.errors.DataError` naming the path for a
        directory, a missing parent directory (not created: a typo would scatter results), a file that is not
        an SQLite database, or a database whose tables are not a store's. Nothing is written to such a file."""
        self.path = Path(path)
        if self.path.is_dir():
            raise DataError(f"results store {str(self.path)!r} is a directory; give a file name, e.g. "
                            f"{str(self.path / 'results.sqlite')!r}")
        parent = self.path.parent
        if not parent.is_dir():
            raise DataError(f"results store {str(self.path)!r}: the directory {str(parent)!r} does not exist; "
                            "create it first (mkdir -p) or choose another path")
        self.conn = sqlite3.connect(str(self.path), timeout=60, isolation_level=None, check_same_thread=False)
        try:
            tables = {name: [c[1] for c in self.conn.execute(f"PRAGMA table_info({name})")]
                      for name in _COLUMNS}  # reads the header: fails on a file that is not a database
            wrong = next((t for t, cols in tables.items() if cols and cols != _COLUMNS[t]), None)
            if wrong is not None:
                raise DataError(f"{str(self.path)!r} is an SQLite file whose table {wrong!r} is not a results "
                                f"store's (columns {', '.join(tables[wrong])}); choose another file")
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise DataError(f"{str(self.path)!r} is not a results store (an SQLite file): {exc}") from None
        except BaseException:
            self.conn.close()
            raise

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def add_tasks(self, tasks: list[dict[str, Any]]) -> None:
        """Remember the tasks (their definitions let ``report`` work from the store alone)."""
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.executemany(
                "INSERT OR IGNORE INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(t["id"], t.get("experiment"), t.get("method"), t["dataset"]["name"], t.get("seed"), t.get("fold"),
                  json.dumps(t, default=json_default)) for t in tasks])
            self.conn.execute("COMMIT")

    def record(self, row: dict[str, Any], *, final: bool, task: dict[str, Any] | None = None) -> None:
        """Log an attempt and, when ``final``, write the task's result row (one transaction)."""
        now = time.time()
        t = task or {}
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute("INSERT OR REPLACE INTO attempts VALUES (?, ?, ?, ?, ?, ?)",
                              (row["id"], int(row.get("attempt", 1)), int(bool(row.get("ok"))), row.get("status"),
                               row.get("reason"), now))
            if final:
                self.conn.execute("DELETE FROM leases WHERE id = ?", (row["id"],))
                ds = t.get("dataset", {}).get("name") if t else row.get("dataset")
                self.conn.execute(
                    f"INSERT OR REPLACE INTO results VALUES ({', '.join(['?'] * 20)})",
                    (row["id"], t.get("experiment"), t.get("method"), ds, t.get("seed"), t.get("fold"),
                     int(bool(row.get("ok"))), row.get("status"), int(row.get("attempt", 1)), row.get("reason"),
                     row.get("objective"), row.get("bound"), row.get("gap"), row.get("runtime_s"),
                     row.get("task_s"), row.get("wall_s"), row.get("test_balanced_accuracy"),
                     row.get("features_per_node"), now, json.dumps(row, default=json_default)))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def claim(self, task_id: str, owner: str, seconds: float, *, retry_failed: bool = False) -> str | None:
        """Lease ``task_id`` to ``owner`` for ``seconds`` (one transaction); ``None`` when claimed (or renewed: the
        owner holds it already), else why not: ``"finished"`` (a final row; a failed one counts unless
        ``retry_failed``), or who holds it. A lease past its time, or held by a process of this host that is gone
        (a runner killed with SIGKILL), is taken over. ``owner`` is ``"host:pid:token"`` (:func:`new_owner`)."""
        now = time.time()
        host, pid = _host_pid(owner)
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            done = self.conn.execute("SELECT ok FROM results WHERE id = ?", (task_id,)).fetchone()
            if done is not None and (done[0] or not retry_failed):
                self.conn.execute("COMMIT")
                return "finished"
            held = self.conn.execute("SELECT owner, host, pid, expires FROM leases WHERE id = ?",
                                     (task_id,)).fetchone()
            if held is not None and held[0] != owner and held[3] > now and not _gone(held[1], held[2]):
                self.conn.execute("COMMIT")
                return f"computed by another runner ({held[1]}, pid {held[2]}) until {time.ctime(held[3])}"
            self.conn.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?, ?)",
                              (task_id, owner, host, pid, now, now + float(seconds)))
            self.conn.execute("COMMIT")
            return None
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def release(self, task_ids: Any, owner: str) -> None:
        """Give back ``owner``'s leases of ``task_ids`` (an interrupted run: a rerun takes them at once)."""
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.executemany("DELETE FROM leases WHERE id = ? AND owner = ?", [(t, owner) for t in task_ids])
            self.conn.execute("COMMIT")

    def finished_ids(self, *, include_failed: bool = True) -> set[str]:
        """Ids with a final row (succeeded; and failed for good unless ``include_failed`` is False)."""
        q = "SELECT id FROM results" + ("" if include_failed else " WHERE ok = 1")
        return {r[0] for r in self.conn.execute(q)}

    def attempts_of(self, task_id: str) -> list[dict[str, Any]]:
        cur = self.conn.execute("SELECT attempt, ok, status, reason FROM attempts WHERE id = ? ORDER BY attempt",
                                (task_id,))
        return [{"attempt": a, "ok": bool(o), "status": s, "reason": r} for a, o, s, r in cur]

    def n_attempts(self, task_id: str) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM attempts WHERE id = ?", (task_id,)).fetchone()[0])

    def rows(self, experiment: str | None = None) -> list[dict[str, Any]]:
        """Every final row, each with its task's fields (method, dataset, seed, params, ...) merged in; the task's
        whole dataset entry (how the rows were loaded: ``one_hot_drop``, ``rows``, ``file``, ...) as
        ``task_dataset``."""
        q = ("SELECT r.row_json, t.task_json FROM results r LEFT JOIN tasks t ON r.id = t.id"
             + (" WHERE r.experiment = ?" if experiment else ""))
        out = []
        for rj, tj in self.conn.execute(q, (experiment,) if experiment else ()):
            row = json.loads(rj)
            task = json.loads(tj) if tj else {}
            out.append({**{f"task_{k}": v for k, v in task.items() if k in ("params", "time_limit", "dataset")},
                        **{k: task.get(k) for k in ("formulation", "estimator", "solver", "grid_point")},
                        "method": task.get("method"), "dataset": (task.get("dataset") or {}).get("name"),
                        "seed": task.get("seed"), "fold": task.get("fold"), "experiment": task.get("experiment"),
                        **row})
        return out

    def tasks(self) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self.conn.execute("SELECT task_json FROM tasks")]


def new_owner() -> str:
    """A lease owner unique to this call: ``host:pid:token``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _host_pid(owner: str) -> tuple[str, int | None]:
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    return host, int(pid) if pid.isdigit() else None


def _gone(host: str | None, pid: int | None) -> bool:
    """Whether the lease holder is a process of this host that no longer exists."""
    if host != socket.gethostname() or not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # exists, another user's
        return False
    return False


def load_rows(path: str | Path, experiment: str | None = None) -> list[dict[str, Any]]:
    """The rows of a results file: a store's final rows (:meth:`ResultStore.rows`), or, for a ``.jsonl``
    file (the benchmark scripts' results before the runner, kept as the records of the runs the docs cite),
    one dict per line as written. What the scripts' ``--summary FILE`` reads.

        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "old.jsonl")
        >>> _ = open(p, "w").write('{"a": 1}\\n\\n{"a": 2}\\n')
        >>> load_rows(p)
        [{'a': 1}, {'a': 2}]
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"no results file {p}")
    if p.suffix == ".jsonl":
        return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
    with ResultStore(p) as store:
        return store.rows(experiment)
