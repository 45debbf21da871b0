"""The memory limit: a task whose process allocates beyond its ``memory_mb`` ends as a failed row whose
reason says out of memory, the attempts are recorded, and the runner goes on with the other tasks."""

from __future__ import annotations

from pathlib import Path

from treeopt_dsl.experiments import ResultStore, expand, parse_grid, run_tasks

GREEDY = """\
[experiment]
name = "memory"
memory_mb = 2048
retries = 1
[data]
datasets = ["d"]
[[method]]
name = "greedy"
estimator = "sleep"
params = { seconds = 0.0, allocate_mb = 8192 }
[[method]]
name = "modest"
estimator = "sleep"
params = { seconds = 0.0, allocate_mb = 64 }
"""


def test_a_task_beyond_its_memory_limit_fails_with_the_reason(tmp_path: Path) -> None:
    tasks = expand(parse_grid(GREEDY))
    greedy = next(t["id"] for t in tasks if t["method"] == "greedy")
    with ResultStore(tmp_path / "r.sqlite") as store:
        summary = run_tasks(tasks, store, progress=False)
        assert summary.succeeded == 1 and summary.failed == 1 and summary.retried == 1
        assert not summary.interrupted
        rows = {r["method"]: r for r in store.rows()}
        row = rows["greedy"]
        assert not row["ok"] and row["status"] == "failed" and "out of memory" in row["reason"]
        assert row["attempt"] == 2 and store.n_attempts(greedy) == 2  # retried once, then failed for good
        assert all("out of memory" in a["reason"] for a in store.attempts_of(greedy))
        assert summary.failures == [{"id": greedy, "reason": row["reason"]}]
        assert rows["modest"]["ok"] and rows["modest"]["allocated_mb"] == 64  # within its limit
        # the store is whole: a rerun skips both (the failed one unless asked)
        assert run_tasks(tasks, store, progress=False).skipped == 2
