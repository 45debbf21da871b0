"""benchmarks/gunluk_fig5.py (seed 002 Table 14 / Figure 5): the means per depth and level against numpy's, the
paper's frame against its CSV, and the figure and the printed table from a run of the grid's rows."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bench_scripts import load_script

FIG5 = load_script("gunluk_fig5")


def _fake_rows(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for depth in ("2", "3"):
        for level in ("100", "99.5", "95"):
            for seed in range(3):
                rows.append({"method": f"ODT-D{depth}-s{level}", "seed": seed, "ok": True,
                             "status": "optimal" if seed else "time_limit",
                             **{r: float(rng.uniform(0.8, 1.0)) for r in FIG5.RATES}})
    rows.append({"method": "CART-D3", "seed": 0, "ok": True, "status": "done", **dict.fromkeys(FIG5.RATES, 0.5)})
    return pd.DataFrame(rows)


def test_means_are_numpys_per_depth_and_level_and_leave_other_methods_out() -> None:
    rows = _fake_rows(np.random.default_rng(0))
    got = FIG5.means(rows)
    assert list(got.index) == [(d, lv) for d in ("2", "3") for lv in (100.0, 99.5, 95.0)]  # as the paper's rows
    for (depth, level), r in got.iterrows():
        name = f"ODT-D{depth}-s{level:g}"
        mine = rows[rows["method"] == name]
        for rate in FIG5.RATES:
            assert r[rate] == pytest.approx(float(np.mean(mine[rate])), abs=1e-12)
        assert (r["n"], r["proven"]) == (3, 2)


def test_the_papers_frame_is_its_csv() -> None:
    theirs = FIG5.paper()
    with FIG5.PAPER.open() as fh:
        entries = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    assert len(entries) == theirs.size == 64  # 8 levels x 2 depths x 4 rates
    for e in entries:
        m = FIG5.METHOD.match(e["method"])
        assert theirs.loc[(m["depth"], float(m["level"])), e["metric"]] == pytest.approx(float(e["value"]))
    # the training TPR column is the guaranteed level (the paper's reading of (15))
    levels = np.array([lv for _, lv in theirs.index]) / 100
    assert np.allclose(theirs["train_tpr"], levels)


def test_the_script_prints_both_and_writes_the_figure(tmp_path: Path, capsys) -> None:
    path = tmp_path / "rows.csv"
    _fake_rows(np.random.default_rng(1)).to_csv(path, index=False)
    assert FIG5.main([str(path), "--figure", str(tmp_path / "fig5.png")]) == 0
    out = capsys.readouterr().out
    assert "train_tnr_paper" in out and "wrote" in out
    assert (tmp_path / "fig5.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rows_that_are_not_table_14s_are_refused_naming_the_file(tmp_path: Path, capsys) -> None:
    other = tmp_path / "other.csv"
    pd.DataFrame([{"method": "CART-D3", "ok": True, "status": "done", **dict.fromkeys(FIG5.RATES, 0.5)}]).to_csv(
        other, index=False)
    for path, says in ((tmp_path / "missing.csv", "no file"), (other, "no finished ODT-D<depth>-s<level> task")):
        with pytest.raises(SystemExit) as err:
            FIG5.main([str(path)])
        assert err.value.code == 2
        message = capsys.readouterr().err
        assert says in message and str(path) in message
