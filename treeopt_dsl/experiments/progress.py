"""The progress display of a run: tasks done / running / failed and the estimated time left.

A ``rich`` progress bar on a terminal; one plain line per finished task otherwise (logs, CI).

Example:

    >>> p = RunProgress(total=2, enabled=False)
    >>> p.finished({"id": "a", "ok": True, "status": "optimal"}, final=True)
    >>> p.done, p.failed
    (1, 0)
    >>> p.close()
"""

from __future__ import annotations

import sys
import time
from typing import Any

__all__ = ["RunProgress"]


class RunProgress:
    """Counts and shows the tasks of one run (``enabled=False``: counts only)."""

    def __init__(self, total: int, *, enabled: bool = True, skipped: int = 0, stream: Any = None) -> None:
        self.total, self.skipped = total, skipped
        self.done = self.failed = self.running = 0
        self.t0 = time.perf_counter()
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self._bar: Any = None
        if enabled and getattr(self.stream, "isatty", lambda: False)():
            try:
                from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

                self._bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                     TextColumn("{task.completed}/{task.total}"),
                                     TextColumn("running {task.fields[running]}  failed {task.fields[failed]}"),
                                     TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
                self._bar.start()
                self._task = self._bar.add_task("tasks", total=total, running=0, failed=0)
            except ImportError:
                self._bar = None
        if enabled and self._bar is None:
            print(f"{total} task(s) to run ({skipped} already finished)", file=self.stream, flush=True)

    def eta_s(self) -> float | None:
        """Seconds left at the pace so far (``None`` before the first task ends)."""
        n = self.done + self.failed
        if n == 0:
            return None
        return (time.perf_counter() - self.t0) / n * (self.total - n)

    def set_running(self, n: int) -> None:
        self.running = n
        if self._bar is not None:
            self._bar.update(self._task, running=n)

    def finished(self, row: dict[str, Any], *, final: bool) -> None:
        """A task's attempt ended; ``final`` False means it will be retried."""
        if final:
            if row.get("ok"):
                self.done += 1
            else:
                self.failed += 1
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done + self.failed, failed=self.failed)
        elif self.enabled:
            eta = self.eta_s()
            what = row.get("status") if row.get("ok") else f"FAILED ({row.get('reason')})"
            more = "" if final else " - will retry"
            obj = row.get("objective")
            print(f"[{self.done + self.failed}/{self.total} done {self.done} running {self.running} "
                  f"failed {self.failed}{'' if eta is None else f' ETA {eta:.0f}s'}] {row['id']}: {what}"
                  f"{'' if obj is None else f' objective {obj:.6g}'}{more}", file=self.stream, flush=True)

    def passed(self, task_id: str, why: str) -> None:
        """A task this run will not compute after all (another runner finished it or is computing it)."""
        self.total -= 1
        if self._bar is not None:
            self._bar.update(self._task, total=self.total)
        elif self.enabled:
            print(f"[{self.done + self.failed}/{self.total}] {task_id}: not run here, {why}", file=self.stream,
                  flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
