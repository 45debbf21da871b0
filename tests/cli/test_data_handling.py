"""First contact with data: the rows a command drops and why, features named from the data, and one rule for text
columns on the command line and in the Python estimators."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline

from treeopt_dsl.cli import main
from treeopt_dsl.datasets import find_data_dir, load
from treeopt_dsl.errors import DataError
from treeopt_dsl.estimator import OptimalTreeClassifier
from treeopt_dsl.estimator.text import OneHotText

SHARED = find_data_dir(None)
needs_shared = pytest.mark.skipif(SHARED is None, reason="the shared data directory is not present")


@needs_shared
def test_fit_reports_the_rows_it_dropped_and_why(capsys) -> None:
    raw = pd.read_csv(SHARED / "heart" / "processed.cleveland.data", header=None)  # the file, read independently
    incomplete = int((raw == "?").any(axis=1).sum())
    assert main(["fit", "oct", "--data", "heart", "--depth", "1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["data"]["rows"]
    assert rows["read"] == raw.shape[0] == 303
    assert rows["dropped_missing"] == incomplete == 6
    assert rows["loaded"] == rows["used"] == raw.shape[0] - incomplete and rows["sampled"] is None
    assert main(["fit", "oct", "--data", "heart", "--depth", "1", "--sample", "100", "-q"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^data {8}heart: 100 of 303 rows used, \d+ features; 6 dropped: a missing value in a used "
                     r"column.*--sample drew 100 of the 297 complete rows", out, re.M), out
    assert re.search(r"^split {7}80 training rows, 20 test rows", out, re.M), out


@needs_shared
@pytest.mark.parametrize("name", ["adult", "pima", "haberman", "heart", "banknote", "seeds", "mammo", "car",
                                  "tic-tac-toe", "votes", "monks-1", "balance", "wine", "spambase",
                                  "credit-approval", "spect-heart", "ozone"])
def test_features_are_named_from_the_data(name: str) -> None:
    try:
        d = load(name)
    except DataError:  # a multiclass table: its classes are not the point here
        d = load(name, multiclass=True)
    assert not [f for f in d.feature_names if re.fullmatch(r"col\d+(=.*)?", str(f))], d.feature_names[:5]


@needs_shared
def test_adult_names_are_the_documentation_files() -> None:
    doc = (SHARED / "adult" / "adult.names").read_text()
    documented = re.findall(r"^([a-z][a-z\-]*): ", doc, re.M)  # "age: continuous." ...: the 14 attributes
    d = load("adult")
    assert {str(f).split("=")[0] for f in d.feature_names} == set(documented) and len(documented) == 14


def _csv(tmp_path) -> tuple[pd.DataFrame, str]:
    rng = np.random.default_rng(3)
    n = 48
    color = rng.choice(["red", "green", "blue"], n)
    size = rng.normal(size=n).round(3)
    y = np.where((color == "red") ^ (rng.random(n) < 0.1), "yes", "no")
    df = pd.DataFrame({"size": size, "color": color, "y": y})
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    return df, str(path)


def test_one_text_rule_the_command_line_and_onehottext_encode_alike(tmp_path) -> None:
    df, path = _csv(tmp_path)
    d = load(path, label="y")  # what `treeopt ... --data t.csv --label y` reads
    enc = OneHotText().fit(df.drop(columns="y"))
    assert list(enc.get_feature_names_out()) == list(d.feature_names) == ["size", "color=blue", "color=green",
                                                                          "color=red"]
    assert np.array_equal(enc.transform(df.drop(columns="y")).to_numpy(), d.X)
    assert np.array_equal(enc.transform(df.drop(columns="y").to_numpy()), d.X)  # an array: an array back


def test_the_estimators_refuse_text_naming_the_column_and_the_rule(tmp_path) -> None:
    df, _ = _csv(tmp_path)
    with pytest.raises(DataError, match=r"'color'.*OneHotText"):
        OptimalTreeClassifier(formulation="oct", depth=1).fit(df.drop(columns="y"), df["y"])


def test_the_pipeline_fits_what_the_command_line_fits(tmp_path, capsys) -> None:
    df, path = _csv(tmp_path)
    assert main(["solve", "oct", "--data", path, "--label", "y", "--depth", "2", "--solver", "highs",
                 "--warm-start", "none", "--json", "-q"]) == 0
    cli = json.loads(capsys.readouterr().out)
    pipe = make_pipeline(OneHotText(), OptimalTreeClassifier(formulation="oct", depth=2, solver="highs",
                                                             warm_start=None, time_limit=60))
    pipe.fit(df.drop(columns="y"), df["y"])
    res = pipe[-1].result_
    assert cli["status"] == res.status.value == "optimal"
    assert cli["objective"] == pytest.approx(res.objective, abs=1e-6)
    assert cli["metrics"]["train"]["accuracy"] == pytest.approx(pipe.score(df.drop(columns="y"), df["y"]))
    assert list(pipe[-1].feature_names_in_) == list(load(path, label="y").feature_names)  # the tree's names


def test_one_label_rule_for_every_csv_reader(tmp_path) -> None:
    from treeopt_dsl.cli.bornagain import read_csv

    p = tmp_path / "c.csv"
    p.write_text("a,Class,b\n1,0,5\n2,1,6\n3,0,7\n4,1,8\n")
    d = load(p)  # no label named: the column 'Class', as born-again reads its files
    assert d.feature_names == ("a", "b") and d.n_samples == 4
    X, y, names = read_csv(p, None, 2)
    assert names == ["a", "b"] and y.tolist() == [0, 1, 0, 1] and np.array_equal(X, d.X)
    q = tmp_path / "n.csv"
    q.write_text("a,b,outcome\n1,2,0\n2,3,1\n")
    for reader in (lambda: load(q), lambda: read_csv(q, None, 2)):  # no 'Class': the label must be named
        with pytest.raises(DataError, match=r"give the label column .*'Class'.*\['a', 'b', 'outcome'\]"):
            reader()


@needs_shared
@pytest.mark.parametrize("fitter, extra", [
    ("tao", []),
    ("tmo", ["--param", "n_trees=6", "--param", "n_generations=1"]),
    ("cct", ["--param", "n_trees=4", "--param", "epochs=3", "--param", "hidden=8"]),
])
def test_every_fit_prints_the_data_line(fitter: str, extra: list[str], capsys) -> None:
    if fitter == "cct":
        pytest.importorskip("torch")
    raw = pd.read_csv(SHARED / "heart" / "processed.cleveland.data", header=None)  # the file, read independently
    incomplete = int((raw == "?").any(axis=1).sum())
    argv = ["fit", fitter, "--data", "heart", "--depth", "2", "--sample", "120", "--seed", "0", *extra]
    assert main(argv) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    complete = raw.shape[0] - incomplete
    assert re.fullmatch(rf"data {{8}}heart: 120 of {raw.shape[0]} rows used, \d+ features; {incomplete} dropped: a "
                        rf"missing value in a used column( \(.*\))?; --sample drew 120 of the {complete} "
                        r"complete rows \(stratified\)", first), first
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["data"]["rows"]
    assert rows["read"] == raw.shape[0] and rows["dropped_missing"] == incomplete and rows["used"] == 120


def test_crt_prints_the_data_line(capsys) -> None:
    pytest.importorskip("torch")
    argv = ["fit", "crt", "--data", "friedman", "--sample", "200", "--depth", "2", "--param", "n_trees=3",
            "--param", "epochs=2"]
    assert main(argv) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "data        friedman: 200 of 200 rows used, 20 features", first
