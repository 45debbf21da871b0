"""benchmarks/tmo.py, odt_categorical.py and sorct_path.py on the experiment runner: their grids (the configs in
experiments/ are what they write), a tiny run of each into a store, and their summaries from the stored rows."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest
from bench_scripts import load_script

from treeopt_dsl.experiments import expand, load_rows, parse_grid

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tmo() -> ModuleType:
    return load_script("tmo")


@pytest.fixture(scope="module")
def odt() -> ModuleType:
    return load_script("odt_categorical")


@pytest.fixture(scope="module")
def sorct() -> ModuleType:
    return load_script("sorct_path")


def _written(main, args: list[str], path: Path) -> str:
    assert main([*args, "--write-grid", str(path)]) == 0
    return path.read_text()


def test_tmo_grid(tmo: ModuleType, tmp_path: Path) -> None:
    text = _written(tmo.main, [], tmp_path / "tmo.toml")
    assert text == (ROOT / "experiments" / "thesis_tables3_4_6_tmo.toml").read_text()  # the config is the grid
    g = parse_grid(text)
    assert (g.test_size, g.validation_size, g.seeds, g.split) == (0.2, 0.2, [0, 42, 314, 6, 71], "sklearn")  # 64/16/20
    assert {d.name: d.rows for d in g.datasets}["a2a"] == 2265 and {d.name: d.rows for d in g.datasets}["a4a"] == 4781
    assert len(expand(g)) == 13 * 5 * 4 * 3  # datasets x seeds x columns x depths
    oct4 = next(m for m in g.methods if m.name == "OCT-D4")
    assert oct4.cv == {"folds": 0, "grid": {"alpha": list(tmo.ALPHAS)}, "metric": "accuracy"}
    assert oct4.scale == {"alpha": "baseline_errors"} and oct4.time_limit == 10.0 and oct4.params == {"depth": 4}


def test_tmo_grid_on_this_librarys_split(tmo: ModuleType, tmp_path: Path) -> None:
    """``--split stratified``: the same grid on this library's split of the author's seeds (the first run's
    reading); ``--seeds`` takes at most the author's five."""
    g = parse_grid(_written(tmo.main, ["--split", "stratified", "--seeds", "2"], tmp_path / "tmo.toml"))
    assert g.split == "stratified" and g.seeds == [0, 42]
    with pytest.raises(SystemExit):
        tmo.main(["--seeds", "6", "--write-grid", str(tmp_path / "x.toml")])


def test_odt_grids(odt: ModuleType, tmp_path: Path) -> None:
    assert odt.main(["--write-grid", str(tmp_path)]) == 0
    t2, t8 = (tmp_path / "gunluk_table2.toml").read_text(), (tmp_path / "gunluk_table8.toml").read_text()
    assert t2 == (ROOT / "experiments" / "gunluk_table2.toml").read_text()
    assert t8 == (ROOT / "experiments" / "gunluk_table8.toml").read_text()
    g2, g8 = parse_grid(t2), parse_grid(t8)
    assert len(expand(g2)) == 2 * 5 and (g2.sample, g2.test_size) == (200, 0.0)
    assert {m.name: m.params["anchor"] for m in g2.methods} == {"Nothing": False, "No-anchor": False,
                                                                "No-relax": True, "No-strength": True, "All": True}
    assert len(expand(g8)) == 9 * 5 * 3 and g8.test_size == 0.1
    # CART on the whole 90%: rpart as the paper (subset splits), and scikit-learn's on the one-hot columns
    assert {m.name: (m.estimator, m.train_sample) for m in g8.methods} == {
        "ODT-D2": (None, 600), "CART-D3": ("rpart", 0), "CART-D3-onehot": ("cart", 0)}
    one = _written(odt.main, ["--experiments", "table8", "--splits", "2"], tmp_path / "one.toml")
    assert len(expand(parse_grid(one))) == 9 * 2 * 3


def test_sorct_grid(sorct: ModuleType, tmp_path: Path) -> None:
    text = _written(sorct.main, ["--tables", "3,4,5", "--splits", "10", "--n-starts", "20", "--fresh", "0"],
                    tmp_path / "s.toml")
    assert text == (ROOT / "experiments" / "sorct_tables3_5.toml").read_text()
    g = parse_grid(text)
    assert len(expand(g)) == (12 + 6 + 6) * 10  # one task per (table, dataset, split) path
    # the paper's protocol: 20 random starts at the first point, every later one chained alone (no fresh points)
    assert {(m.path["n_starts"], m.path["fresh"]) for m in g.methods} == {(20, 0)}
    # Figure 5's grid (the whole 17 x 17) reads the same data and starts as the tables
    fig5 = parse_grid((ROOT / "experiments" / "sorct_fig5.toml").read_text())
    assert [d for d in fig5.datasets] == [d for d in g.datasets if d.name in {x.name for x in fig5.datasets}]
    assert fig5.methods[0].path == {"lambda_l": "paper", "lambda_g": "paper", "n_starts": 20, "fresh": 0}
    # Table 4 in the paper's pair order (each point from the end of the lambda_G row before); Table 3 a path alone
    assert {m.name: m.path["lambda_g"] for m in g.methods} == {"S-ORCT-T3": [0.0], "S-ORCT-T4": "paper-ends",
                                                              "S-ORCT-T5": "paper"}
    column = _written(sorct.main, ["--tables", "4", "--pair-order", "column"], tmp_path / "c.toml")
    assert "--pair-order column: Tables 3-4 with lambda_g = [0.0]" in column and "paper-ends" not in column
    assert parse_grid(column).methods[0].path["lambda_g"] == [0.0]
    t5 = next(m for m in g.methods if m.name == "S-ORCT-T5")
    assert t5.path == {"lambda_l": [0.0], "lambda_g": "paper", "n_starts": 20, "fresh": 0} and t5.params["depth"] == 2
    short = _written(sorct.main, ["--tables", "3", "--datasets", "sonar,iris", "--n-starts", "5", "--fresh", "0"],
                     tmp_path / "short.toml")
    tasks = expand(parse_grid(short))
    assert len(tasks) == 1 and tasks[0]["path"]["fresh"] == 0  # iris is not a Table 3 set


#: seed 001 Table 2 (lines 384-401): N and the largest class's share (%) of each data set of Tables 3-5
SORCT_TABLE2 = {"monks-3": (122, 51), "monks-1": (124, 50), "monks-2": (169, 62), "sonar": (208, 55),
                "ionosphere": (351, 64), "breast": (569, 63), "credit-approval": (653, 55), "pima": (768, 65),
                "german": (1000, 70), "banknote": (1372, 56), "ozone": (1848, 97), "spambase": (4601, 61),
                "iris": (150, 33.3), "wine": (178, 40), "seeds": (210, 33.3), "balance": (625, 46),
                "thyroid": (3772, 92.5), "car": (1728, 70)}
#: seed 001 Table 2's p of the sets the grid reads with the paper's columns (balance: 4 attributes one-hot, one
#: level dropped; car: one level of each of its 6 attributes dropped; german: the original file, its 13 nominal
#: attributes one-hot with one level dropped, and 7 numeric)
SORCT_TABLE2_P = {"balance": 16, "car": 15, "german": 48, "monks-1": 11, "monks-2": 11, "monks-3": 11}


def test_sorct_grid_reads_the_papers_rows() -> None:
    """Every data set of experiments/sorct_tables3_5.toml, loaded as its tasks load it, has the paper's N rows and
    its largest class's share within 1.7 points (sonar: 111 of 208 = 53.4 %, printed 55 %): the Monks sets and
    Thyroid are their UCI training files alone."""
    from treeopt_dsl.datasets import data_dir
    from treeopt_dsl.experiments.worker import load_task

    if data_dir() is None:
        pytest.skip("no data directory")
    tasks = {t["dataset"]["name"]: t for t in expand(parse_grid((ROOT / "experiments" / "sorct_tables3_5.toml")
                                                                .read_text()))}
    assert set(tasks) == set(SORCT_TABLE2)
    for name, (n, share) in SORCT_TABLE2.items():
        d = load_task(tasks[name])
        counts = np.unique(d.y, return_counts=True)[1]
        assert d.n_samples == n, name
        assert abs(100 * counts.max() / n - share) <= 1.7, name
        if name in SORCT_TABLE2_P:  # the sets whose columns the grid encodes as the paper does
            assert d.n_features == SORCT_TABLE2_P[name], name
        if name == "monks-1":  # the paper's sparsest trees (Table 3, r = 2, 3: 72.6 / 72.2 %) are one column, a5 = 1
            a5 = d.X[:, d.feature_names.index("a5=1")]
            assert np.mean((a5 == 1) == (d.y == 1)) == pytest.approx(91 / 124)  # 73.4 %: the paper's r = 3, 72.2 %


def test_a_later_tmo_file_replaces_the_cells_it_holds(tmo: ModuleType, tmp_path: Path) -> None:
    """``tmo.py --summary A B``: B's (dataset, depth, column) cells replace A's (a column rerun), A's others stay."""
    def rows(method: str, acc: float) -> list[dict]:
        return [{"dataset": "Sonar", "depth": 3, "seed": s, "method": method, "test_acc": acc} for s in range(5)]

    first, rerun = tmp_path / "first.jsonl", tmp_path / "rerun.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in rows("tmo", 0.5) + rows("cart", 0.6)))
    rerun.write_text("".join(json.dumps(r) + "\n" for r in rows("tmo", 0.7)))
    merged = tmo.summary_rows([first, rerun])
    assert sorted((r["method"], r["test_acc"]) for r in merged) == [("cart", 0.6)] * 5 + [("tmo", 0.7)] * 5
    assert len(tmo.summary_rows([rerun, first])) == 10 and {r["test_acc"] for r in tmo.summary_rows([rerun, first])
                                                            if r["method"] == "tmo"} == {0.5}


def test_tmo_runs_on_the_runner(tmo: ModuleType, tmp_path: Path, capsys) -> None:
    store = tmp_path / "tmo.sqlite"
    args = ["--datasets", "Heart", "--depths", "2", "--seeds", "1", "--methods", "cart,oct", "--oct-time-limit", "1",
            "--out", str(store)]
    assert tmo.main(args) == 0
    out = capsys.readouterr().out
    assert "2 succeeded" in out
    heart = next(line for line in out.splitlines() if line.startswith("| Heart"))
    assert heart.count("(1 seeds)") == 2  # CART and OCT, beside the paper
    rows = tmo.table_rows(load_rows(store))
    assert {(r["dataset"], r["method"], r["depth"]) for r in rows} == {("Heart", "cart", 2), ("Heart", "oct", 2)}
    assert all(0.0 < r["test_acc"] <= 1.0 for r in rows)
    assert next(r for r in rows if r["method"] == "oct")["alpha"] in tmo.ALPHAS
    assert tmo.main(["--summary", str(store), "--depths", "2"]) == 0  # the summary from the store alone
    assert heart in capsys.readouterr().out
    assert tmo.main(args) == 0 and "2 already finished" in capsys.readouterr().out  # a rerun computes nothing


def test_tmo_summary_reads_several_exports_into_one_table(tmo: ModuleType, capsys) -> None:
    """The stored exports of Tables 3.4-3.6 (CART, TAO and TMO in one, OCT in another) make one table: Sonar's
    depth-2 OCT cell is the mean of the OCT export's five rows, beside the other export's CART cell."""
    results = Path(tmo.__file__).parent / "results"
    first = results / "tmo_tables_author_splits_2026-12-07.csv"
    second = results / "tmo_tables_oct_author_splits_2026-12-07.csv"
    assert tmo.main(["--summary", str(first), str(second), "--depths", "2"]) == 0
    sonar = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| Sonar"))
    rows = pd.read_csv(second)
    want = 100 * rows[(rows["dataset"] == "sonar") & (rows["method"] == "OCT-D2")]["test_accuracy"]
    assert len(want) == 5 and sonar.split(" | ")[-1].startswith(f"{want.mean():.2f} ± ")
    assert sonar.split(" | ")[1].startswith("69.52 ± ")  # CART, from the first file


def test_odt_runs_on_the_runner(odt: ModuleType, tmp_path: Path, capsys) -> None:
    store = tmp_path / "odt.sqlite"
    assert odt.main(["--table2-datasets", "monks-1", "--table2-samples", "40", "--table2-shape", "2",
                     "--table2-configs", "All", "--datasets", "monks-1", "--splits", "1", "--train-samples", "60",
                     "--time-limit", "5", "--out", str(store)]) == 0
    out = capsys.readouterr().out
    assert "All          ours " in out and "monks-1                    ours " in out
    rows = odt.table_rows(load_rows(store))
    t2 = next(r for r in rows if r["experiment"] == "table2")
    assert t2["config"] == "All" and t2["n"] == 40 and isinstance(t2["nodes"], int)
    assert isinstance(t2["lp_iterations"], int)
    t8 = next(r for r in rows if r["experiment"] == "table8")
    assert t8["n_train"] == 60 and 0 < t8["test_acc"] <= 1 and 0 < t8["cart_d3_test_acc"] <= 1
    cart = next(r for r in load_rows(store) if r["method"] == "CART-D3")
    # CART-D3 on the whole 90% (Dataset.split(0.1, seed=0)) of the paper's 432-row file (556 stacked before)
    assert cart["n_train"] == 432 - 43
    exported = tmp_path / "rows.jsonl"
    assert odt.main(["--summary", str(store), "--export", str(exported)]) == 0 and "Table 8" in capsys.readouterr().out
    assert load_rows(exported) == json.loads(json.dumps(rows).replace("NaN", "null"))  # the summary's rows


def test_sorct_runs_on_the_runner(sorct: ModuleType, tmp_path: Path, capsys) -> None:
    store = tmp_path / "sorct.sqlite"
    assert sorct.main(["--tables", "4", "--datasets", "iris", "--n-starts", "1", "--fresh", "0", "--time-limit", "20",
                       "--out", str(store), "--plot", str(tmp_path / "plots")]) == 0
    out = capsys.readouterr().out
    assert "1 succeeded" in out and "iris (1 split(s))" in out
    [row] = load_rows(store)
    # Table 4 in the paper's pair order: each lambda_L point, then the end of its lambda_G row (8 / p)
    assert len(row["points"]) == 34 and row["points"][0]["lambda_l"] == 0.0
    assert [p["lambda_g"] for p in row["points"]] == [0.0, 8.0 / 4] * 17
    points = sorct.point_rows([row])
    assert [p["r"] for p in points] == sorct.R and all("test_accuracy" in p and "delta_l" in p for p in points)
    assert [p["lambda_l"] for p in points] == [p["lambda_l"] for p in row["points"][::2]]
    assert row["task_dataset"]["name"] == "iris" and "one_hot_drop" not in points[0]  # iris has no level to drop
    last = sorct.point_rows([{**row, "task_dataset": {**row["task_dataset"], "one_hot_drop": "last"}}])
    assert {p["one_hot_drop"] for p in last} == {"last"}  # the level dropped travels with the rows it made
    assert (tmp_path / "plots" / "sorct_T4_iris_split0.png").exists()
    assert sorct.main(["--summary", str(store), "--tables", "4"]) == 0
    assert "mean |difference|" in capsys.readouterr().out
    # --export-grid from the store: every pair of the path, in its order (here the 17 rows' two ends)
    grid = tmp_path / "grid.jsonl"
    assert sorct.main(["--summary", str(store), "--tables", "4", "--export-grid", str(grid)]) == 0
    assert f"wrote 34 grid points to {grid}" in capsys.readouterr().out
    assert [(q["lambda_l"], q["lambda_g"]) for q in load_rows(grid)] == [
        (p["lambda_l"], p["lambda_g"]) for p in row["points"]]


def _balance_split0_grid() -> list[dict[str, Any]]:
    """Balance's split 0 of the stored whole-grid paths (S-ORCT Table 4 in whole rows, Figure 5)."""
    return [p for p in load_rows(ROOT / "benchmarks" / "results" / "sorct_fig5_whole_rows_2026-11-29.jsonl")
            if p["dataset"] == "balance" and p["split"] == 0]


def test_sorct_grid_figure_draws_the_stored_whole_grid(sorct: ModuleType, tmp_path: Path) -> None:
    """Figure 5 from the stored 17 x 17 grids (four sets x 10 splits, 289 points a path, each pair chained from the
    one before; balance's split 0 here) and from a store's path row flattened the same way."""
    pytest.importorskip("matplotlib")
    pts = _balance_split0_grid()
    assert len(pts) == 17 * 17 and sorct.grid_points(pts) == pts
    row = {"dataset": "balance", "seed": 0, "points": [{k: v for k, v in p.items() if k not in ("dataset", "split")}
                                                      for p in pts]}
    flat = sorct.grid_points([row])
    assert [(q["lambda_l"], q["lambda_g"], q["test_accuracy"]) for q in flat] == [
        (q["lambda_l"], q["lambda_g"], q["test_accuracy"]) for q in pts]
    # the paper's statements on the figure, measured on the mean grid: here one split, so the points themselves
    acc00 = next(q["test_accuracy"] for q in pts if q["lambda_l"] == 0.0 and q["lambda_g"] == 0.0)
    at_least = sum(q["test_accuracy"] >= acc00 for q in pts)
    (line,) = sorct.grid_statements(pts)
    assert line.startswith(f"balance: accuracy at (0, 0) {100 * acc00:.1f}")
    assert f"pairs at or above (0, 0): {at_least} of 289" in line
    first = min(q["lambda_l"] for q in pts if q["lambda_l"] > 0)
    dl_first = next(q["delta_l"] for q in pts if q["lambda_l"] == first and q["lambda_g"] == 0.0)
    assert f"delta_L at the first lambda_L {dl_first:.1f}" in line
    # the mean grid over two copies of the split (one shifted by 10 points) against the points themselves
    shifted = [{**q, "split": 1, "test_accuracy": q["test_accuracy"] - 0.1} for q in pts]
    means = sorct.grid_means(pts + shifted, "balance")
    ls, gs = sorted({q["lambda_l"] for q in pts}), sorted({q["lambda_g"] for q in pts})
    dense = np.zeros((17, 17))
    for q in pts:
        dense[ls.index(q["lambda_l"]), gs.index(q["lambda_g"])] = 100 * q["test_accuracy"] - 5
    assert np.allclose(means["test_accuracy"], dense)
    column = [q for q in pts if q["lambda_g"] == 0.0]  # a path of 17 points is not the grid: no statements
    assert sorct.grid_statements(column) == ["balance: 17 x 1 pairs, not the paper's 17 x 17 grid: no statements"]
    png = tmp_path / "fig5.png"
    one = tmp_path / "balance_split0.jsonl"
    one.write_text("".join(json.dumps(p) + "\n" for p in pts))
    assert sorct.main(["--grid-figure", str(one), str(png)]) == 0
    assert png.stat().st_size > 10_000


def test_sorct_export_grid_writes_every_pair_read_back_as_stored(sorct: ModuleType, tmp_path: Path) -> None:
    """``--export-grid``: every pair of a store's whole-grid path, read back (JSON lines) to the same lambdas
    (exact) and measures (6 significant digits), the keys Figure 5 draws; the lambda_G = 0 column of the export is the
    path's Table 4 column (``point_rows``)."""
    pts = _balance_split0_grid()
    row = {"dataset": "balance", "seed": 0, "method": "S-ORCT-T4",
           "points": [{k: v for k, v in p.items() if k not in ("dataset", "split")} for p in pts]}
    out = tmp_path / "grid.jsonl"
    assert sorct.export_grid([row], out) == 17 * 17
    back = load_rows(out)
    assert [(q["lambda_l"], q["lambda_g"]) for q in back] == [(q["lambda_l"], q["lambda_g"]) for q in pts]
    for key in ("objective", "test_accuracy", "delta_l", "delta_g"):
        assert [q[key] for q in back] == pytest.approx([q[key] for q in pts], rel=1e-5), key
    assert set(back[0]) <= set(sorct.GRID_KEYS) and back[0]["dataset"] == "balance" and back[0]["split"] == 0
    column = [q["test_accuracy"] for q in back if q["lambda_g"] == 0.0]
    assert column == pytest.approx([p["test_accuracy"] for p in sorct.point_rows([row])], rel=1e-5)


def test_depth2_benchmark_reprints_and_draws_saved_rows(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """benchmarks/exact_depth2_continuous.py --rows FILE --plot PNG: the docs' table and picture from the saved rows
    (every optimum there equals the peers' where they finished)."""
    import json
    import sys

    pytest.importorskip("matplotlib")
    script = load_script("exact_depth2_continuous")
    rows_file = ROOT / "benchmarks" / "results" / "exact_depth2_continuous_2026-11-24.jsonl"
    rows = [json.loads(line) for line in rows_file.read_text().splitlines() if line.strip()]
    assert all(r["ours_status"] == "optimal" and r["ours_err"] == r["dl85_err"] for r in rows)
    png = tmp_path / "times.png"
    argv = sys.argv
    sys.argv = ["exact_depth2_continuous.py", "--rows", str(rows_file), "--plot", str(png)]
    try:
        script.main()
    finally:
        sys.argv = argv
    out = capsys.readouterr().out
    assert out.count("| optimal |") == len(rows) == 10 and "out of memory" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("option, argv", [("--rows", ["--rows", "{none}"]), ("--json-out", ["--json-out", "{missing}"]),
                                          ("--plot", ["--plot", "{dir}"])])
def test_depth2_benchmark_refuses_a_bad_path_by_name_before_any_solve(option: str, argv: list[str], tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """benchmarks/exact_depth2_continuous.py: --rows that does not exist, --json-out in a missing directory, --plot
    naming a directory: a usage error naming the option and the path before any dataset is solved (were
    tracebacks, --plot's after every solve), nothing written."""
    script = load_script("exact_depth2_continuous")
    monkeypatch.setattr(script, "run", _never)
    paths = {"none": tmp_path / "none.jsonl", "missing": tmp_path / "missing" / "rows.jsonl", "dir": tmp_path}
    args = [a.format(**paths) for a in argv]
    with pytest.raises(SystemExit) as stop:
        script.main(["--datasets", "heart", *args])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"error: {option}" in err and args[1] in err, err
    assert list(tmp_path.iterdir()) == []


def test_tree_solve_grid_puts_margot_on_scip(tmp_path: Path) -> None:
    """benchmarks/tree_solve.py: the default grid is experiments/tree_solve.toml; MARGOT (an MIQP, which HiGHS
    does not solve) runs on SCIP, the MILPs on the experiment's default (HiGHS)."""
    ts = load_script("tree_solve")
    assert _written(ts.main, [], tmp_path / "default.toml") == (ROOT / "experiments" / "tree_solve.toml").read_text()
    g = parse_grid(_written(ts.main, ["--formulations", "margot", "olct", "--datasets", "table31", "--seeds", "0",
                                      "--configs", "derived", "derived+auto"], tmp_path / "grid.toml"))
    solvers = {m.name: m.solver for m in g.methods}
    assert solvers == {"margot.derived": "scip", "margot.derived+auto": "scip", "olct.derived": "highs",
                       "olct.derived+auto": "highs"}
    assert len(expand(g)) == 4 * 10
    assert next(m for m in g.methods if m.name == "margot.derived+auto").warm_start == "auto"


#: (script, option, argv with {missing}: a file in a missing directory, {none}: a missing file, {dir}: a directory,
#: {rows}: stored grid points)
BAD_PATHS = [
    ("tmo", "--out", ["--datasets", "Heart", "--depths", "2", "--seeds", "1", "--out", "{missing}"]),
    ("tmo", "--write-grid", ["--write-grid", "{missing}"]),
    ("tmo", "--summary", ["--summary", "{none}"]),
    ("odt_categorical", "--out", ["--experiments", "table2", "--table2-datasets", "monks-1", "--out", "{missing}"]),
    ("odt_categorical", "--export", ["--experiments", "table2", "--table2-datasets", "monks-1", "--out",
                                     "{dir}/s.sqlite", "--export", "{missing}"]),
    ("odt_categorical", "--write-grid", ["--experiments", "table2", "--write-grid", "{missing}.toml"]),
    ("odt_categorical", "--summary", ["--summary", "{none}"]),
    ("sorct_path", "--out", ["--datasets", "iris", "--tables", "4", "--out", "{missing}"]),
    ("sorct_path", "--export", ["--datasets", "iris", "--tables", "4", "--out", "{dir}/s.sqlite", "--export",
                                "{missing}"]),
    ("sorct_path", "--export-grid", ["--datasets", "iris", "--tables", "4", "--out", "{dir}/s.sqlite",
                                     "--export-grid", "{missing}"]),
    ("sorct_path", "--figures", ["--datasets", "iris", "--tables", "4", "--out", "{dir}/s.sqlite", "--figures",
                                 "{dir}/notes.txt"]),
    ("sorct_path", "--write-grid", ["--write-grid", "{missing}"]),
    ("sorct_path", "--summary", ["--summary", "{none}"]),
    ("sorct_path", "--grid-figure", ["--grid-figure", "{none}", "{dir}/fig5.png"]),
    ("sorct_path", "--grid-figure", ["--grid-figure", "{rows}", "{missing}"]),
    ("tree_solve", "--out", ["--datasets", "heart", "--seeds", "0", "--out", "{missing}"]),
    ("tree_solve", "--write-grid", ["--write-grid", "{missing}"]),
    ("risk_scores", "--out", ["--ors-data", "heart", "--ogrs-data", "heart", "--out", "{missing}"]),
    ("risk_scores", "--write-grid", ["--write-grid", "{missing}"]),
]


def _never(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("the grid ran (or the rows were read) before the bad path was refused")


@pytest.mark.parametrize("name, option, argv", BAD_PATHS, ids=[f"{b[0]}{b[1]}" for b in BAD_PATHS])
def test_a_bad_path_is_refused_by_name_before_any_task(name: str, option: str, argv: list[str], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """A missing input, or an output in a missing directory (or a file where a directory goes): an argparse usage
    error naming the option and the path, before the grid runs, nothing written (was a traceback, for --export and
    --export-grid after the whole grid)."""
    import treeopt_dsl.experiments as experiments

    script = load_script(name)
    monkeypatch.setattr(experiments, "run_grid_text", _never)
    if name == "sorct_path":
        monkeypatch.setattr(script, "grid_points", _never)
    (tmp_path / "notes.txt").write_text("not a directory\n")
    paths = {"missing": tmp_path / "missing" / "out.jsonl", "none": tmp_path / "none.jsonl", "dir": tmp_path,
             "rows": ROOT / "benchmarks" / "results" / "sorct_fig5_whole_rows_2026-11-29.jsonl"}
    args = [a.format(**paths) for a in argv]
    bad = next(a for a, t in zip(args, argv, strict=True) if any(k in t for k in ("{missing}", "{none}", "notes")))
    before = sorted(tmp_path.iterdir())
    with pytest.raises(SystemExit) as stop:
        script.main(args)
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    assert f"error: {option}" in err and bad in err, err
    assert sorted(tmp_path.iterdir()) == before  # no store, no directory, no file
