"""Where tasks run: local processes (``--jobs N``) or a Dask cluster (a scheduler address or a LocalCluster).

Both executors run :func:`~treeopt_dsl.experiments.worker.run_isolated`, so every task gets its own
process, time limit and memory limit wherever it runs; the runner only sees futures that give rows.

Example:

    >>> ex = LocalExecutor(jobs=1)
    >>> f = ex.submit({"id": "t", "estimator": "sleep", "params": {"seconds": 0}, "memory_mb": 4096}, 1)
    >>> ex.result(f)["ok"]
    True
    >>> ex.close()
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from typing import Any

from treeopt_dsl.errors import OptionError, SolverNotAvailable
from treeopt_dsl.experiments.worker import run_isolated

__all__ = ["Children", "DaskExecutor", "LocalExecutor", "make_executor"]


class Children:
    """The child processes of the running tasks (what :func:`run_isolated` adds and discards as ``running``).

    After :meth:`kill_all` (Ctrl-C) a child that joins is killed at once: a task whose thread was starting its
    child when Ctrl-C came would otherwise run to its end while the runner waits for it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._handles: set[Any] = set()
        self.aborted = False

    def add(self, handle: Any) -> None:
        with self._lock:
            self._handles.add(handle)
            aborted = self.aborted
        if aborted:
            _kill(handle)

    def discard(self, handle: Any) -> None:
        with self._lock:
            self._handles.discard(handle)

    def kill_all(self) -> None:
        with self._lock:
            self.aborted = True
            handles = list(self._handles)
        for h in handles:
            _kill(h)

    def __len__(self) -> int:
        with self._lock:
            return len(self._handles)


def _kill(handle: Any) -> None:
    try:
        handle.kill()
    except Exception:  # already gone
        pass


class LocalExecutor:
    """``jobs`` tasks at a time, each in its own child process (threads here only wait for them)."""

    def __init__(self, jobs: int = 1) -> None:
        if jobs < 1:
            raise OptionError(f"--jobs must be at least 1, got {jobs}")
        self.capacity = jobs
        self.pool = cf.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="treeopt-task")
        self.running = Children()

    def submit(self, task: dict[str, Any], attempt: int) -> Any:
        return self.pool.submit(run_isolated, task, attempt, running=self.running)

    def wait(self, futures: list[Any], timeout: float) -> set[Any]:
        done, _ = cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return set(done)

    def result(self, future: Any) -> dict[str, Any]:
        return future.result()

    def n_running(self, futures: list[Any]) -> int:
        return sum(f.running() for f in futures)

    def abort(self, futures: list[Any]) -> None:
        """Ctrl-C: cancel what has not started and kill the children of what has."""
        for f in futures:
            f.cancel()
        self.running.kill_all()  # and any child a task's thread starts from now on

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Tasks as Dask futures on ``scheduler`` (an address), or on a LocalCluster of ``n_workers`` processes."""

    def __init__(self, scheduler: str | None = None, n_workers: int = 2, threads_per_worker: int = 1) -> None:
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            raise SolverNotAvailable("the Dask executor needs dask[distributed]: pip install "
                                     "'treeopt-dsl[experiments]'") from None
        self.cluster = None
        if scheduler:
            self.client = Client(scheduler)
        else:
            with dask.config.set({"distributed.worker.daemon": False}):
                self.cluster = LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker,
                                            processes=True, dashboard_address=None)
            self.client = Client(self.cluster)
        self.capacity = max(1, sum(self.client.nthreads().values()))

    def submit(self, task: dict[str, Any], attempt: int) -> Any:
        return self.client.submit(run_isolated, task, attempt, pure=False, key=f"{task['id']}-a{attempt}")

    def wait(self, futures: list[Any], timeout: float) -> set[Any]:
        from distributed import wait

        try:
            done, _ = wait(futures, timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return set()
        return set(done)

    def result(self, future: Any) -> dict[str, Any]:
        try:
            return future.result()
        except Exception as exc:  # KilledWorker: the Dask worker died (with the task) too often
            task_id = str(future.key).rsplit("-a", 1)[0]
            return {"id": task_id, "ok": False, "status": "failed", "retryable": True, "host": _worker_host(exc),
                    "reason": f"dask: {type(exc).__name__}: {exc}"}

    def n_running(self, futures: list[Any]) -> int:
        return min(len(futures), self.capacity)

    def abort(self, futures: list[Any]) -> None:
        self.client.cancel(futures, force=True)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _worker_host(exc: BaseException) -> str | None:
    """The host of the Dask worker a failed future last ran on, when the error names it (``KilledWorker``'s
    ``last_worker``); ``None`` when no worker is known (the row's ``reason`` says what happened)."""
    worker = getattr(exc, "last_worker", None)
    address = getattr(worker, "address", worker)
    if not isinstance(address, str) or "://" not in address:
        return None
    return address.split("://", 1)[1].rsplit(":", 1)[0] or None


def make_executor(kind: str = "local", *, jobs: int = 1, scheduler: str | None = None) -> Any:
    """``local`` (``jobs`` processes) or ``dask`` (``scheduler`` address, else a LocalCluster of ``jobs`` workers)."""
    if kind == "local":
        return LocalExecutor(jobs)
    if kind == "dask":
        return DaskExecutor(scheduler, n_workers=jobs)
    raise OptionError(f"unknown executor {kind!r}: use local or dask")
