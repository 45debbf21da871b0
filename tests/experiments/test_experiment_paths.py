"""A grid's relative paths are read against the grid file's directory and checked before anything runs; every row
records the host that ran it, and ``treeopt experiment export`` writes it (CART tasks: no solver)."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from treeopt_dsl.cli import main
from treeopt_dsl.experiments.grid import GridError, load_grid, parse_grid, resolve_path
from treeopt_dsl.experiments.tasks import expand
from treeopt_dsl.experiments.worker import run_task

GRID = """\
[experiment]
name = "rel"
time_limit = 5.0

[data]
datasets = [{{ path = "data/small.csv", label = "y" }}, {{ path = "data/small.csv", name = "again", label = "y" }}]
seeds = [0]
{extra}
[[method]]
estimator = "cart"
params = {{ max_depth = 2 }}
"""


def _layout(root: Path, extra: str = "") -> Path:
    """``root/exp/grid.toml`` and its CSV ``root/exp/data/small.csv`` (two separable classes)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 2))
    y = np.where(x[:, 0] + 0.2 * x[:, 1] > 0, "yes", "no")
    (root / "exp" / "data").mkdir(parents=True)
    pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": y}).to_csv(root / "exp" / "data" / "small.csv", index=False)
    grid = root / "exp" / "grid.toml"
    grid.write_text(GRID.format(extra=extra))
    return grid


def test_relative_paths_are_read_against_the_grid_file(tmp_path, monkeypatch) -> None:
    grid = _layout(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the working directory holds no data/small.csv
    g = load_grid(grid)
    assert g.base_dir == str((tmp_path / "exp").resolve())
    tasks = expand(g)
    assert len(tasks) == 2
    row = run_task(tasks[0])
    assert row["ok"], row.get("reason")
    assert row["n_train"] + row["n_test"] == 60
    assert row["host"] == socket.gethostname()


def test_task_ids_do_not_depend_on_where_the_grid_sits(tmp_path) -> None:
    a, b = _layout(tmp_path / "a"), _layout(tmp_path / "b")
    ids_a, ids_b = [t["id"] for t in expand(load_grid(a))], [t["id"] for t in expand(load_grid(b))]
    assert ids_a == ids_b
    assert {t["base_dir"] for t in expand(load_grid(b))} == {str((tmp_path / "b" / "exp").resolve())}


def test_a_missing_relative_file_is_refused_naming_the_key_and_the_path(tmp_path, monkeypatch) -> None:
    grid = _layout(tmp_path)
    (tmp_path / "exp" / "data" / "small.csv").rename(tmp_path / "small.csv")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GridError) as info:
        load_grid(grid)
    msg = str(info.value)
    want = str((tmp_path / "exp" / "data" / "small.csv").resolve())
    assert "key 'datasets'" in msg and "line 6" in msg and "no data file 'data/small.csv'" in msg
    assert f"looked for at {want!r}" in msg and "grid file's directory" in msg
    # before anything runs: no store is made
    store = tmp_path / "r.sqlite"
    assert main(["experiment", "run", str(grid), "--store", str(store), "--quiet"]) == 2
    assert not store.exists()


def test_a_missing_data_dir_is_refused_naming_the_key(tmp_path) -> None:
    grid = _layout(tmp_path, extra='data_dir = "nodata"\n')
    with pytest.raises(GridError, match=r"key 'data_dir': no directory 'nodata' \(looked for at '.*exp/nodata'"):
        load_grid(grid)
    (tmp_path / "exp" / "nodata").mkdir()
    assert load_grid(grid).base_dir is not None  # now it exists, beside the grid


def test_text_grids_read_relative_paths_against_the_working_directory(tmp_path, monkeypatch) -> None:
    grid = _layout(tmp_path)
    text = grid.read_text()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GridError, match="working directory"):
        parse_grid(text)
    monkeypatch.chdir(tmp_path / "exp")
    assert len(expand(parse_grid(text))) == 2
    assert str(resolve_path("~/x.csv", "/b")).startswith(str(Path.home()))


def test_every_row_records_its_host_and_export_writes_it(tmp_path, monkeypatch, capsys) -> None:
    grid = _layout(tmp_path)
    monkeypatch.chdir(tmp_path)
    store, table = tmp_path / "r.sqlite", tmp_path / "rows.csv"
    assert main(["experiment", "run", str(grid), "--store", str(store), "--quiet"]) == 0
    assert main(["experiment", "export", str(store), "--to", str(table)]) == 0
    df = pd.read_csv(table)
    assert len(df) == 2 and df["ok"].all()
    assert df["host"].tolist() == [socket.gethostname()] * 2


def test_a_task_lost_with_its_dask_worker_names_the_workers_host() -> None:
    from treeopt_dsl.experiments.executors import _worker_host

    class Worker:
        address = "tcp://node-7.cluster:40123"

    class KilledWorker(Exception):
        last_worker = Worker()

    assert _worker_host(KilledWorker()) == "node-7.cluster"
    assert _worker_host(TimeoutError()) is None
