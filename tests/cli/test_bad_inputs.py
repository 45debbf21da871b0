"""Every bad input answered (issue 13): the library's own error type in Python, and through the command
line exactly one stderr line ``treeopt: error: ...`` with exit status 2 naming the parameter and what is
allowed. Also the other endings of the command (interrupted: 130, SIGTERM: 143, uncertified: 3) and
the writers' atomic replacement of an existing file."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from treeopt_dsl import cli
from treeopt_dsl.cli import info as cli_info
from treeopt_dsl.cli import main
from treeopt_dsl.cli import solve as cli_solve
from treeopt_dsl.data import Dataset, Scaler
from treeopt_dsl.datasets import load
from treeopt_dsl.defaults import TIME_LIMIT
from treeopt_dsl.errors import DataError, FormulationError, ModelError
from treeopt_dsl.estimator import OptimalTreeClassifier, RiskScoreClassifier
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.io import write_model
from treeopt_dsl.result import Status

SMALL = ["--data", "breast-cancer", "--sample", "30", "--depth", "1", "--time-limit", "10", "--quiet"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    """The single stderr line of a refused input."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("treeopt: error: "), err
    return lines[0]


def tiny(n: int = 30, p: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, (X[:, 0] > 0).astype(int)


def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    path.write_text(",".join(header) + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return path


@pytest.fixture
def dup_label_csv(tmp_path: Path) -> Path:
    rows = [[i, i % 2, 7 - i, 1 - i % 2] for i in range(8)]
    return write_csv(tmp_path / "dup.csv", ["a", "y", "b", "y"], rows)


@pytest.fixture
def huge_csv(tmp_path: Path) -> Path:
    rows = [[float(i), float(i % 3), i % 2] for i in range(12)]
    rows[0][1] = 1e300
    return write_csv(tmp_path / "huge.csv", ["a", "big", "y"], rows)


# ------------------------------------------------------------------------------------------- command line
CLI_CASES = {
    "negative time limit": (["solve", "olct", *SMALL, "--time-limit", "-1"], r"--time-limit.*>= 0.*'none'"),
    "nan time limit": (["fit", "olct", *SMALL, "--time-limit", "nan"], r"--time-limit.*>= 0"),
    "negative gap": (["solve", "olct", *SMALL, "--gap", "-0.5"], r"--gap.*>= 0"),
    "negative threads": (["fit", "olct", *SMALL, "--threads", "-2"], r"--threads.*integer >= 0"),
    "log in a missing directory": (["solve", "olct", *SMALL, "--log", "/missing/dir/x.log"],
                                   r"--log.*'/missing/dir' does not exist"),
    "fit output in a missing directory": (["fit", "olct", *SMALL, "--output", "/missing/dir/m.mps"],
                                          r"--output.*'/missing/dir' does not exist"),
    "solve output in a missing directory": (["solve", "olct", *SMALL, "-o", "/missing/dir/m.lp"],
                                            r"--output.*does not exist"),
    "compile output in a missing directory": (["compile", "olct", "--data", "breast-cancer", "--sample", "30",
                                               "-o", "/missing/dir/m.mps"], r"--output.*does not exist"),
    "output of unknown format": (["fit", "olct", *SMALL, "--output", "m.txt"], r"--output.*\.lp, \.mps"),
    "bad formulation parameter type": (["compile", "oct", "--data", "breast-cancer", "--sample", "30",
                                        "--param", "alpha=1,2"], r"alpha"),
    "T above the number of features": (["compile", "ors", "--data", "breast-cancer", "--sample", "30",
                                        "--param", "T=40"], r"T=40 exceeds the number of features \(n_features=30\)"),
}


@pytest.mark.parametrize("argv, match", list(CLI_CASES.values()), ids=list(CLI_CASES))
def test_cli_refuses_bad_input_in_one_line(capsys, argv: list[str], match: str) -> None:
    start = time.perf_counter()
    code, out, err = run(capsys, *argv)
    assert code == 2, err
    assert re.search(match, one_error_line(err)), err
    assert out == ""
    assert time.perf_counter() - start < 20  # refused before any long work


def test_cli_refuses_duplicate_label_column(capsys, dup_label_csv: Path) -> None:
    code, _, err = run(capsys, "compile", "olct", "--data", str(dup_label_csv), "--label", "y", "--depth", "1")
    assert code == 2
    line = one_error_line(err)
    assert "'y'" in line and "leak" in line and "distinct name" in line


@pytest.mark.parametrize("scaling", ["standard", "minmax", "none"])
def test_cli_refuses_huge_values(capsys, huge_csv: Path, scaling: str) -> None:
    code, _, err = run(capsys, "solve", "olct", "--data", str(huge_csv), "--label", "y", "--depth", "1",
                       "--param", f"scaling={scaling}", "--time-limit", "10", "--quiet")
    assert code == 2
    line = one_error_line(err)
    assert "'big'" in line and "rescale" in line and "clip" in line


def test_time_limit_default_and_none() -> None:
    parser = cli.build_parser()
    assert parser.parse_args(["fit", "olct", "--data", "x"]).time_limit == TIME_LIMIT == 300.0
    assert parser.parse_args(["solve", "olct", "--data", "x"]).time_limit == 300.0
    assert parser.parse_args(["solve", "olct", "--data", "x", "--time-limit", "none"]).time_limit is None
    assert parser.parse_args(["solve", "olct", "--data", "x", "--time-limit", "0"]).time_limit == 0.0
    assert "300" in parser._subparsers._group_actions[0].choices["fit"].format_help()


@pytest.mark.parametrize("command", ["fit", "solve", "compile"])
@pytest.mark.parametrize("suffix", [".mps", ".lp.gz"])
def test_output_is_written(capsys, tmp_path: Path, command: str, suffix: str) -> None:
    out_file = tmp_path / f"model{suffix}"
    argv = [command, "olct", "--data", "breast-cancer", "--sample", "40", "--depth", "1", "-o", str(out_file),
            "--json"]
    if command != "compile":
        argv += ["--time-limit", "10", "--quiet"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    doc = json.loads(out)  # exactly one JSON document on stdout
    assert doc["output"] == str(out_file)
    assert out_file.stat().st_size > 100
    assert [p.name for p in tmp_path.iterdir()] == [out_file.name]  # no temporary file left


def test_json_stdout_is_one_document(capsys) -> None:
    code, out, err = run(capsys, "fit", "olct", "--data", "breast-cancer", "--sample", "40", "--depth", "1",
                         "--time-limit", "10", "--json")
    assert code == 0, err
    doc = json.loads(out)  # fails on anything else on stdout
    assert doc["status"] == "optimal" and out.count("\n") == 1


# ------------------------------------------------------------------------------------------- endings
@pytest.fixture(scope="module")
def solved() -> object:
    data = load("breast-cancer").subsample(30, seed=0)
    return get_formulation("olct", depth=1).solve(data, time_limit=10)


@pytest.mark.parametrize("status, code, message", [
    (Status.INTERRUPTED, 130, "treeopt: interrupted (Ctrl-C): returning the best tree found so far"),
    (Status.INTERRUPTED_NO_SOLUTION, 130, "treeopt: interrupted (Ctrl-C): no solution yet"),
    (Status.UNCERTIFIED, 3, "treeopt: certificate failed: "),
])
@pytest.mark.parametrize("json_out", [False, True])
def test_interrupted_and_uncertified_endings(capsys, monkeypatch, solved, status: Status, code: int, message: str,
                                             json_out: bool) -> None:
    keep = status.has_solution
    fake = dataclasses.replace(solved, status=status, **({} if keep else {"model": None}))
    monkeypatch.setattr(cli_solve, "run_solve", lambda spec, data, args: fake)
    argv = ["solve", "olct", *SMALL] + (["--json"] if json_out else [])
    got, out, err = run(capsys, *argv)
    assert got == code
    assert err.strip().splitlines() == [err.strip()] and err.startswith(message), err
    if json_out:
        assert json.loads(out)["status"] == status.value
    else:
        assert f"status      {status.value}" in out


def test_keyboard_interrupt_outside_a_solve(capsys, monkeypatch) -> None:
    def boom(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_info, "run", boom)
    code, _, err = run(capsys, "formulations")
    assert code == 130 and err == "treeopt: interrupted (Ctrl-C)\n"


def test_sigterm_outside_a_solve(capsys, monkeypatch) -> None:
    def term(args: object) -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends
        return 0

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(cli_info, "run", term)
    code, _, err = run(capsys, "formulations")
    assert code == 143 and err == "treeopt: terminated (SIGTERM)\n"
    assert signal.getsignal(signal.SIGTERM) == before  # restored


# ------------------------------------------------------------------------------------------- files
@pytest.mark.parametrize("name", ["m.mps", "m.lp", "m.mps.gz", "m.lp.gz"])
def test_interrupted_write_keeps_the_old_file(monkeypatch, tmp_path: Path, name: str) -> None:
    from treeopt_dsl.io import lp, mps

    built = get_formulation("olct", depth=1).build(load("breast-cancer").subsample(20, seed=0))
    target = tmp_path / name
    target.write_bytes(b"old bytes\n")
    module, attr = (mps, "mps_parts") if ".mps" in name else (lp, "lp_parts")
    real = getattr(module, attr)

    def interrupted(*a: object, **k: object):
        parts = real(*a, **k)
        yield parts[0]
        raise KeyboardInterrupt  # midway through the chunk loop

    monkeypatch.setattr(module, attr, interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_model(built, target)
    assert target.read_bytes() == b"old bytes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary file left
    monkeypatch.setattr(module, attr, real)
    write_model(built, target)
    assert target.stat().st_size > 100


def test_write_into_a_missing_directory(tmp_path: Path) -> None:
    built = get_formulation("olct", depth=1).build(load("breast-cancer").subsample(20, seed=0))
    with pytest.raises(ModelError, match=r"directory .* does not exist; create it first"):
        write_model(built, tmp_path / "nope" / "m.mps")


# ------------------------------------------------------------------------------------------- Python API
def _huge(scaling: str) -> object:
    X, y = tiny()
    X[0, 1] = 1e300
    return get_formulation("olct", depth=1, scaling=scaling).build(
        Dataset.from_arrays(X, y, feature_names=["a", "big", "c"]))


def _labels_with(value: object) -> object:
    X, y = tiny()
    yo = y.astype(object) if value is None else y.astype(float)
    yo[[3, 7]] = value
    return Dataset.from_arrays(X, yo)


def _frame_with(kind: str) -> object:
    X, y = tiny()
    df = pd.DataFrame(X, columns=["a", "b", "colour"])
    df["colour"] = ["r", "g"] * 15 if kind == "str" else pd.Categorical(["r", "g"] * 15)
    return OptimalTreeClassifier(depth=1, time_limit=10).fit(df, y)


def _fit_huge() -> object:
    X, y = tiny()
    X[0, 1] = 1e300
    return OptimalTreeClassifier(depth=1, time_limit=10).fit(X, y)


def _predict_overflow() -> object:
    X, y = tiny()
    clf = OptimalTreeClassifier(depth=1, time_limit=10).fit(X, y)
    X2 = X.copy()
    X2[0, 2] = 1.7e308
    return clf.predict(X2)


API_CASES = {
    "standard scaling overflows": (lambda: _huge("standard"), DataError, r"'big'.*overflows.*rescale.*clip"),
    "minmax scaling squashes the column": (lambda: _huge("minmax"), DataError, r"'big'.*squashes.*drop"),
    "no scaling, huge values": (lambda: _huge("none"), DataError, r"scaling='none'.*'big'.*1e\+12"),
    "Scaler directly": (lambda: Scaler("minmax").fit(np.array([[1.0], [2.0], [3.0], [1e300]])), DataError,
                        r"'x0'"),
    "None labels": (lambda: _labels_with(None), DataError, r"missing .* rows 3, 7"),
    "NaN labels": (lambda: _labels_with(np.nan), DataError, r"missing .* rows 3, 7"),
    "estimator None labels": (lambda: OptimalTreeClassifier(depth=1).fit(tiny()[0], [None] + [0, 1] * 14 + [1]),
                              DataError, r"row 0"),
    "duplicate label column": (None, DataError, r"repeats column name.*'y'.*leak"),
    "T above n_features (ors)": (lambda: RiskScoreClassifier(T=5, time_limit=10).fit(*tiny()), FormulationError,
                                 r"T=5 exceeds the number of features \(n_features=3\)"),
    "T above n_features (ogrs)": (lambda: RiskScoreClassifier("ogrs", T=4, time_limit=10).fit(*tiny()),
                                  FormulationError, r"T=4 .*n_features=3"),
    "eps None": (lambda: OptimalTreeClassifier(depth=1, params={"eps": None}).fit(*tiny()), FormulationError,
                 r"'eps'.*finite number"),
    "alpha list": (lambda: OptimalTreeClassifier("oct", depth=1, params={"alpha": [1, 2]}).fit(*tiny()),
                   FormulationError, r"\[1, 2\].*'alpha'.*finite number"),
    "C with text in a list": (lambda: get_formulation("olct", C=[1.0, "x"]), FormulationError,
                              r"'C'.*one per level"),
    "depth not whole": (lambda: get_formulation("olct", depth=1.5), FormulationError, r"'depth'.*whole number"),
    "big_m inf": (lambda: get_formulation("olct", big_m=float("inf")), FormulationError, r"'big_m'.*'derived'"),
    "DataFrame text column": (lambda: _frame_with("str"), DataError, r"'colour'.*one-hot.*CategoricalTreeClassifier"),
    "DataFrame Categorical column": (lambda: _frame_with("cat"), DataError, r"'colour'.*OneHotEncoder"),
    "fit on huge values": (_fit_huge, DataError, r"'x1'.*overflows"),
    "predict overflows": (_predict_overflow, DataError, r"overflows at row 0, feature 'x2'"),
}


@pytest.mark.parametrize("call, error, match", list(API_CASES.values()), ids=list(API_CASES))
def test_api_raises_own_error(call, error: type, match: str, dup_label_csv: Path) -> None:
    if call is None:
        def call() -> object:
            return load(str(dup_label_csv), label="y")
    with pytest.raises(error, match=match):
        call()


def test_at_most_cardinality_allows_large_T() -> None:
    X, y = tiny()
    spec = get_formulation("ors", T=5, cardinality="at_most")
    spec.check_data(Dataset.from_arrays(X, y))  # an upper bound: no error


def test_ordinary_data_still_scales() -> None:
    """Heavy-tailed but usable columns (incomes) and 0/1 columns pass the huge-value checks."""
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.lognormal(10, 2, 200), rng.integers(0, 2, 200), rng.normal(size=200)])
    for kind in Scaler.KINDS:
        Scaler(kind).fit(X)


# ------------------------------------------------------------------------------------------- issue 36
def test_fit_keeps_the_only_positive_row_in_training(capsys, tmp_path: Path) -> None:
    """The stratified split used to hold out the only positive row: the CART start raised an IndexError."""
    X, _ = tiny(20)
    rows = [[*np.round(x, 4), int(i == 5)] for i, x in enumerate(X)]
    csv = write_csv(tmp_path / "one_positive.csv", ["a", "b", "c", "y"], rows)
    code, out, err = run(capsys, "fit", "olct", "--data", str(csv), "--label", "y", "--depth", "1",
                         "--time-limit", "10", "--quiet", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["n_train"], doc["n_test"]) == (16, 4)
    assert doc["metrics"]["test"]["balanced_accuracy"] == doc["metrics"]["test"]["accuracy"]
