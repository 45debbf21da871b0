"""``treeopt born-again`` end to end on the paper's forest files and on a pickled scikit-learn forest."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from treeopt_dsl.bornagain import born_again, read_ba_forest
from treeopt_dsl.cli import main
from treeopt_dsl.datasets import find_data_dir

DATA = find_data_dir()
needs_data = pytest.mark.skipif(DATA is None or not (DATA / "ba-trees").is_dir(),
                                reason="the shared ba-trees data is not here")


def ba(kind: str, name: str) -> str:
    assert DATA is not None
    short = {"forest": f"forests/HTRU2/HTRU2.{name}.txt", "data": f"datasets/HTRU2/HTRU2.{name}.csv"}[kind]
    return str(DATA / "ba-trees" / short)


@needs_data
def test_born_again_command_prunes_scores_and_writes_a_faithful_tree(tmp_path, capsys) -> None:
    out = tmp_path / "tree.txt"
    code = main(["born-again", ba("forest", "RF1"), "--objective", "depth", "--prune", "--train", ba("data", "train1"),
                 "--test", ba("data", "test1"), "--output", str(out), "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    ens = read_ba_forest(ba("forest", "RF1"))
    exact = born_again(ens, "depth")
    assert doc["faithful"] and (doc["depth"], doc["leaves"]) == (exact.depth, exact.n_leaves)
    assert doc["pruned"]["leaves"] <= doc["leaves"]
    # the written tree reads back as a one-tree forest that predicts what the pruned tree does on the test data
    X = np.loadtxt(ba("data", "test1"), delimiter=",", skiprows=1)[:, :-1]
    back = read_ba_forest(out)
    assert back.n_trees == 1 and back.trees[0].n_leaves == doc["pruned"]["leaves"]
    assert doc["test"]["pruned"]["accuracy"] == pytest.approx(
        float(np.mean(back.predict(X) == np.loadtxt(ba("data", "test1"), delimiter=",", skiprows=1)[:, -1])))
    assert doc["test"]["forest"] == doc["test"]["born_again"]  # faithful: the same predictions everywhere


@needs_data
def test_born_again_command_draws_the_tree_with_the_csv_names(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "tree.png"
    assert main(["born-again", ba("forest", "RF1"), "--objective", "leaves", "--prune", "--train",
                 ba("data", "train1"), "--plot", str(png)]) == 0
    assert png.stat().st_size > 5000 and png.read_bytes()[:4] == b"\x89PNG"
    assert "Integrated-Kurtosis" in capsys.readouterr().out  # the CSV header names the features


@needs_data
def test_born_again_command_heuristic_text(capsys) -> None:
    assert main(["born-again", ba("forest", "RF2"), "--heuristic", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "faithful to the 10-tree forest: yes" in text and "heuristic" in text


@needs_data
def test_born_again_heuristic_keeps_to_the_commands_time_limit(capsys) -> None:
    """``--heuristic`` under ``--time-limit``: the command's clock (started 5 s before the call, as reading a large
    forest would) is spent, so every region becomes a majority leaf, said in the status, and the tree is reported
    as not faithful (exit 3) instead of running on."""
    code = main(["born-again", ba("forest", "RF2"), "--heuristic", "--json", "--time-limit", "4"],
                started=time.perf_counter() - 5.0)
    out = json.loads(capsys.readouterr().out)
    assert code == 3 and out["status"].startswith("time_limit") and out["proofs"] == 0


def test_born_again_command_on_a_pickled_scikit_learn_forest(tmp_path, capsys) -> None:
    import joblib
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(200, 3)).astype(float)
    y = (X[:, 0] + X[:, 1] > 4).astype(int)
    path = tmp_path / "rf.joblib"
    joblib.dump(RandomForestClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y), path)
    assert main(["born-again", str(path), "--objective", "leaves", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["faithful"]
    assert main(["born-again", str(path), "--heuristic", "--n-cells", "0"]) == 2
    assert "n_cells must be at least 1" in capsys.readouterr().err


def test_born_again_command_bad_input(tmp_path, capsys) -> None:
    assert main(["born-again", str(tmp_path / "missing.txt")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("not a forest\n")
    assert main(["born-again", str(bad)]) == 2
    assert main(["born-again", str(bad), "--prune"]) == 2
    assert "--prune needs --train" in capsys.readouterr().err


def _tiny_forest(tmp_path, body_trees: int, header_trees: int, threshold: str = "0.5"):
    tree = ["NB_NODES: 3", f"0 IN 1 2 0 {threshold} 0 -1", "1 LN -1 -1 -1 -1 1 0", "2 LN -1 -1 -1 -1 1 1", ""]
    lines = ["DATASET_NAME: tiny", "ENSEMBLE: RF", f"NB_TREES: {header_trees}", "NB_FEATURES: 2", "NB_CLASSES: 2",
             "MAX_TREE_DEPTH: 1", ""]
    for k in range(body_trees):
        lines += [f"[TREE {k}]", *tree]
    path = tmp_path / "forest.txt"
    path.write_text("\n".join(lines))
    return path


@pytest.mark.parametrize("threshold", ["nan", "inf", "-inf"])
def test_a_forest_with_a_non_finite_threshold_is_refused(tmp_path, capsys, threshold) -> None:
    """A NaN threshold compares false both ways: the tree built from it disagreed with the forest on 2-3% of points
    while the command said "faithful: yes". It is refused at the line that holds it."""
    path = _tiny_forest(tmp_path, 2, 2, threshold)
    assert main(["born-again", str(path)]) == 2
    err = capsys.readouterr().err
    assert "forest.txt:10" in err and "not a finite number" in err


def test_a_forest_header_that_miscounts_its_trees_is_refused(tmp_path, capsys) -> None:
    assert read_ba_forest(_tiny_forest(tmp_path, 3, 3)).n_trees == 3
    assert main(["born-again", str(_tiny_forest(tmp_path, 10, 3))]) == 2
    assert "announces NB_TREES: 3, the file holds 10 trees" in capsys.readouterr().err
    assert main(["born-again", str(_tiny_forest(tmp_path, 2, 3))]) == 2
    assert "announces NB_TREES: 3, the file holds 2" in capsys.readouterr().err


def test_a_binary_file_is_refused(tmp_path, capsys) -> None:
    path = tmp_path / "forest.bin"
    path.write_bytes(bytes(range(256)) * 4)
    assert main(["born-again", str(path)]) == 2
    assert "not a text file" in capsys.readouterr().err


def test_scikit_learn_forests_without_trees_or_with_a_nan_threshold_are_refused() -> None:
    from sklearn.ensemble import RandomForestClassifier

    from treeopt_dsl.bornagain import Ensemble
    from treeopt_dsl.errors import DataError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    empty = RandomForestClassifier(n_estimators=3).fit(X, y)
    empty.estimators_ = []
    with pytest.raises(DataError, match="holds no trees"):
        Ensemble.from_sklearn(empty)
    rf.estimators_[1].tree_.threshold[0] = np.nan
    with pytest.raises(DataError, match=r"RandomForestClassifier: tree 1: .*node 0 .*NaN or infinite threshold"):
        Ensemble.from_sklearn(rf)


# ------------------------------------------------------------------------------------------- issue 36
@pytest.fixture
def forest_file(tmp_path):
    import joblib
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(80, 2)).astype(float)
    path = tmp_path / "rf.joblib"
    joblib.dump(RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, X[:, 0] > 1), path)
    return path


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the dynamic program or the heuristic starts: the input must be refused before."""
    from treeopt_dsl.cli import bornagain as cli_ba

    def started(*a, **k):
        raise AssertionError("the work started before the bad input was refused")

    monkeypatch.setattr(cli_ba, "born_again", started)
    monkeypatch.setattr(cli_ba, "born_again_heuristic", started)


@pytest.mark.parametrize("option", ["--train", "--test"])
def test_a_header_only_csv_is_refused_before_the_work(tmp_path, capsys, forest_file, no_work, option) -> None:
    csv = tmp_path / "empty.csv"
    csv.write_text("a,b,Class\n")
    argv = ["born-again", str(forest_file), option, str(csv)] + (["--prune"] if option == "--train" else [])
    assert main(argv) == 2
    assert "empty.csv: no data rows (only a header)" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--output", "-o", "--plot"])
def test_an_output_into_a_missing_directory_is_refused_before_the_work(tmp_path, capsys, forest_file, no_work,
                                                                       option) -> None:
    target = tmp_path / "missing" / ("tree.png" if option == "--plot" else "tree.txt")
    assert main(["born-again", str(forest_file), option, str(target), "--heuristic"]) == 2
    err = capsys.readouterr().err
    name = "--plot" if option == "--plot" else "--output"
    assert f"({name}) to '{target}'" in err and "does not exist" in err
    assert not target.parent.exists()


def test_a_threshold_made_nan_after_the_forest_was_built_is_refused_naming_the_tree(forest_file) -> None:
    import joblib

    from treeopt_dsl.bornagain import Ensemble, born_again_heuristic
    from treeopt_dsl.errors import DataError

    ens = Ensemble.from_sklearn(joblib.load(forest_file))
    ens.trees[2].threshold[0] = np.nan
    with pytest.raises(DataError, match=r"tree 2: node 0 splits at threshold nan"):
        born_again_heuristic(ens)
    with pytest.raises(DataError, match=r"tree 2: node 0"):
        born_again(ens, "depth")
