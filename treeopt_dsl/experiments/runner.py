"""Run tasks into a store: skip the finished, retry killed workers, stop cleanly on Ctrl-C.

Example:

    >>> import os, tempfile
    >>> from treeopt_dsl.experiments.store import ResultStore
    >>> store = ResultStore(os.path.join(tempfile.mkdtemp(), "r.sqlite"))
    >>> t = {"id": "s", "method": "sleep", "dataset": {"name": "-"}, "seed": 0, "estimator": "sleep",
    ...      "params": {"seconds": 0}, "memory_mb": 4096}
    >>> run_tasks([t], store, progress=False).succeeded
    1
    >>> run_tasks([t], store, progress=False).skipped   # a rerun skips it
    1
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from treeopt_dsl.experiments.executors import make_executor
from treeopt_dsl.experiments.grid import parse_grid
from treeopt_dsl.experiments.progress import RunProgress
from treeopt_dsl.experiments.store import ResultStore, new_owner
from treeopt_dsl.experiments.tasks import expand
from treeopt_dsl.experiments.worker import wall_timeout, with_hooks

__all__ = ["LEASE_MARGIN_S", "RunSummary", "run_grid_text", "run_tasks"]

#: seconds a lease outlasts its task's wall timeout (the runner's own delays: submitting, recording)
LEASE_MARGIN_S = 120.0


@dataclass
class RunSummary:
    """What one run did: tasks skipped (already finished), succeeded, failed for good, attempts made."""

    total: int = 0
    skipped: int = 0
    succeeded: int = 0
    failed: int = 0
    retried: int = 0
    #: tasks another runner on the same store was computing (its lease), left to it
    elsewhere: int = 0
    interrupted: bool = False
    wall_s: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)

    def line(self) -> str:
        return (f"{self.total} task(s): {self.skipped} already finished, {self.succeeded} succeeded, "
                f"{self.failed} failed, {self.retried} retried attempt(s)"
                + (f", {self.elsewhere} left to another runner" if self.elsewhere else "")
                + f" in {self.wall_s:.1f} s"
                + (" - INTERRUPTED (rerun the command to finish)" if self.interrupted else ""))


class _StopOnCtrlC:
    """Ctrl-C and SIGTERM during :func:`run_tasks` (main thread): the first sets a flag the loop reads between its
    steps (at most 0.5 s apart), so that the exception is raised there and never at an arbitrary point inside
    ``concurrent.futures``' waiting, where it could leave a future's lock half-acquired and the pool's shutdown
    waiting for a thread that cannot finish (a hazard read from the standard library's code, not observed); a
    second Ctrl-C (or SIGTERM) raises at once. A signal the process ignores (a background job's Ctrl-C) stays
    ignored.

    Ctrl-C raises ``KeyboardInterrupt``. SIGTERM calls the handler the program had installed (the command's
    raises its ``Terminated``) or, under the default disposition (which ends the process at once and left the
    task processes, the forkserver and the resource tracker computing, reparented to init), raises
    ``SystemExit(143)``: either way the loop ends the running tasks' processes before the exception goes on."""

    def __init__(self) -> None:
        self.requested = False
        self.terminated = False
        self.previous: Any = None
        self.previous_term: Any = None
        self.term_installed = False
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # an ignored Ctrl-C stays ignored
            self.previous = signal.signal(signal.SIGINT, self._handler)
        term = signal.getsignal(signal.SIGTERM)
        if term is signal.SIG_DFL or callable(term):  # not ignored, not a handler set outside Python (None)
            self.previous_term = signal.signal(signal.SIGTERM, self._on_term)
            self.term_installed = True

    def _handler(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def _on_term(self, signum: int, frame: Any) -> None:
        if self.terminated:
            self._terminate(frame)
        self.terminated = True

    def _terminate(self, frame: Any = None) -> None:
        self.terminated = False
        if callable(self.previous_term):
            self.previous_term(signal.SIGTERM, frame)  # the program's own handler: it raises, or the run goes on
            return
        raise SystemExit(128 + signal.SIGTERM)

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` here when Ctrl-C was pressed; act on a SIGTERM (see the class)."""
        if self.requested:
            raise KeyboardInterrupt
        if self.terminated:
            self._terminate()

    def restore(self) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            self.previous = None
        if self.term_installed:
            signal.signal(signal.SIGTERM, self.previous_term)
            self.term_installed = False


def run_tasks(tasks: list[dict[str, Any]], store: ResultStore, *, executor: str = "local", jobs: int = 1,
              scheduler: str | None = None, retries: int | None = None, retry_failed: bool = False,
              progress: bool = True, executor_obj: Any = None) -> RunSummary:
    """Run the unfinished ``tasks`` and write each final row to ``store`` as it ends.

    ``retries``: attempts after the first for a task whose worker died (default: each task's ``retries``).
    ``retry_failed``: also rerun tasks stored as failed. Ctrl-C ends running children and returns with
    ``interrupted`` set; every row finished before stays in the store. SIGTERM ends the running children too,
    then raises (the program's SIGTERM handler's exception, or ``SystemExit(143)`` under the default disposition).

    Each task is leased in the store before it starts (:meth:`ResultStore.claim`, for its wall timeout plus
    :data:`LEASE_MARGIN_S`): several runners on one store (on one machine or several) compute each task once; a
    task another runner holds is left to it (``elsewhere``), one it finished meanwhile is skipped. An interrupted
    run gives its leases back; those of a runner killed outright lapse (at once on the same host).
    """
    t0 = time.perf_counter()
    store.add_tasks(tasks)
    finished = store.finished_ids(include_failed=not retry_failed)
    todo = [t for t in tasks if t["id"] not in finished]
    summary = RunSummary(total=len(tasks), skipped=len(tasks) - len(todo))
    if not todo:
        summary.wall_s = time.perf_counter() - t0
        return summary
    ex = executor_obj or make_executor(executor, jobs=jobs, scheduler=scheduler)
    bar = RunProgress(len(todo), enabled=progress, skipped=summary.skipped)
    by_id = {t["id"]: t for t in todo}
    pending = list(reversed(todo))  # pop() from the end keeps the grid's order
    tries: dict[str, int] = {}
    inflight: dict[Any, str] = {}
    owner, held = new_owner(), set[str]()
    stop = _StopOnCtrlC()
    try:
        while pending or inflight:
            stop.check()
            while pending and len(inflight) < ex.capacity:
                t = pending.pop()
                why = store.claim(t["id"], owner, wall_timeout(t) + LEASE_MARGIN_S, retry_failed=retry_failed)
                if why is not None:  # finished or being computed by another runner since this run began
                    if why == "finished":
                        summary.skipped += 1
                    else:
                        summary.elsewhere += 1
                    bar.passed(t["id"], why)
                    continue
                held.add(t["id"])
                tries[t["id"]] = tries.get(t["id"], 0) + 1
                attempt = store.n_attempts(t["id"]) + 1
                inflight[ex.submit(with_hooks(t), attempt)] = t["id"]
            bar.set_running(min(len(inflight), ex.capacity))
            stop.check()
            for f in ex.wait(list(inflight), timeout=0.5):
                tid = inflight.pop(f)
                task = by_id[tid]
                row = ex.result(f)
                row.setdefault("attempt", store.n_attempts(tid) + 1)
                limit = 1 + (task.get("retries", 2) if retries is None else retries)
                again = not row.get("ok") and row.get("retryable") and tries[tid] < limit
                store.record(row, final=not again, task=task)  # a final row ends the lease
                if not again:
                    held.discard(tid)
                if again:
                    summary.retried += 1
                    pending.append(task)
                elif row.get("ok"):
                    summary.succeeded += 1
                else:
                    summary.failed += 1
                    summary.failures.append({"id": tid, "reason": row.get("reason")})
                bar.finished(row, final=not again)
    except KeyboardInterrupt:
        summary.interrupted = True
        ex.abort(list(inflight))
    except BaseException:  # SIGTERM (the command's Terminated) and the like: end the children, then raise
        summary.interrupted = True
        ex.abort(list(inflight))
        raise
    finally:
        stop.restore()
        bar.close()
        if executor_obj is None:
            ex.close()
        if held:  # interrupted: a rerun (or another runner) takes these at once
            store.release(held, owner)
        summary.wall_s = time.perf_counter() - t0
    return summary


def run_grid_text(text: str, out: Any, source: str, **kw: Any) -> tuple[RunSummary, list[dict[str, Any]]]:
    """Run the grid of TOML ``text`` into the SQLite store ``out`` (a ``.jsonl`` path of the old benchmark
    scripts becomes the ``.sqlite`` beside it) and return the summary and the stored rows of *this* grid's
    tasks; ``kw`` go to :func:`run_tasks`. What the benchmark scripts that build a grid call."""
    from pathlib import Path


    out = Path(out)
    if out.suffix == ".jsonl":  # the old JSON-lines results (kept as history): the store goes beside them
        out = out.with_suffix(".sqlite")
        print(f"results now go to an SQLite store: {out}")
    tasks = expand(parse_grid(text, source=source))
    with ResultStore(out) as store:
        summary = run_tasks(tasks, store, **kw)
        ids = {t["id"] for t in tasks}
        rows = [r for r in store.rows() if r["id"] in ids]
    return summary, rows
