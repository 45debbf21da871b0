"""``treeopt experiment export``: a store's rows as a CSV (or Parquet) table, read back (no solves)."""

from __future__ import annotations

import importlib.util

import pandas as pd
import pytest

from treeopt_dsl.cli import main
from treeopt_dsl.errors import DataError
from treeopt_dsl.experiments.export import export_rows, read_table
from treeopt_dsl.experiments.store import ResultStore


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "r.sqlite"
    tasks = [{"id": f"t{i}", "experiment": "e1" if i < 2 else "e2", "method": m, "dataset": {"name": "heart"},
              "seed": i, "params": {"depth": 2}} for i, m in enumerate(("olct", "oct", "olct"))]
    with ResultStore(path) as s:
        s.add_tasks(tasks)
        for i, t in enumerate(tasks):
            s.record({"id": t["id"], "ok": True, "status": "optimal", "objective": 10.0 + i,
                      "metrics": {"test": {"accuracy": 0.5 + i / 10}}, "start": {"tried": ["cart", "greedy"]}},
                     final=True, task=t)
    return path


def test_export_csv_reads_back_every_row(store, tmp_path, capsys) -> None:
    out = tmp_path / "rows.csv"
    assert main(["experiment", "export", str(store), "--to", str(out)]) == 0
    assert "3 rows" in capsys.readouterr().err
    df = pd.read_csv(out)
    assert df.columns[:4].tolist() == ["id", "experiment", "method", "dataset"]
    df = df.set_index("id").sort_index()
    assert df["method"].tolist() == ["olct", "oct", "olct"] and df["seed"].tolist() == [0, 1, 2]
    assert df["objective"].tolist() == [10.0, 11.0, 12.0]
    assert df["metrics.test.accuracy"].tolist() == pytest.approx([0.5, 0.6, 0.7])
    assert df.loc["t0", "start.tried"] == '["cart", "greedy"]'
    assert df.loc["t1", "task_params.depth"] == 2


def test_read_table_gives_a_store_and_its_export_the_same_table(store, tmp_path) -> None:
    """What the figure scripts read (``read_table``): a store flattened as ``export`` flattens it, so a script gives
    the same answer on a store and on its exported CSV."""
    export_rows(store, tmp_path / "rows.csv")
    a = read_table(store).set_index("id").sort_index()
    b = read_table(tmp_path / "rows.csv").set_index("id").sort_index()
    assert a.columns.tolist() == b.columns.tolist()
    assert a["metrics.test.accuracy"].tolist() == b["metrics.test.accuracy"].tolist()
    assert a["start.tried"].tolist() == b["start.tried"].tolist() == ['["cart", "greedy"]'] * 3
    with pytest.raises(DataError, match="no results file"):
        read_table(tmp_path / "missing.sqlite")


def test_export_one_experiment(store, tmp_path) -> None:
    out = export_rows(store, tmp_path / "e2.csv", experiment="e2")
    assert out["rows"] == 1 and pd.read_csv(tmp_path / "e2.csv")["id"].tolist() == ["t2"]


def test_export_parquet_or_a_clear_error(store, tmp_path, capsys) -> None:
    out = tmp_path / "rows.parquet"
    code = main(["experiment", "export", str(store), "--to", str(out)])
    if importlib.util.find_spec("pyarrow") is None:
        assert code == 2 and "pip install pyarrow" in capsys.readouterr().err and not out.exists()
    else:
        assert code == 0 and sorted(pd.read_parquet(out)["id"]) == ["t0", "t1", "t2"]


@pytest.mark.parametrize(("store_name", "to", "words"), [
    ("missing.sqlite", "rows.csv", "no results store"),
    (None, "rows.xlsx", "--to must end in .csv or .parquet"),
    (None, "no/such/dir/rows.csv", "does not exist"),
])
def test_export_refuses_before_reading(store, tmp_path, capsys, store_name, to, words) -> None:
    path = tmp_path / store_name if store_name else store
    assert main(["experiment", "export", str(path), "--to", str(tmp_path / to)]) == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "missing.sqlite").exists()  # not created by looking
