"""The loader's one-hot option for integer columns (``load(..., one_hot=, one_hot_drop=)``).

Checked against an independent encoding: the raw data file read with the csv module and encoded by pandas'
``get_dummies``, and against the seed papers' ``p`` as the manifest quotes them (S-ORCT balance 16, thesis 20).
"""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from treeopt_dsl.data import Dataset
from treeopt_dsl.datasets import data_dir, load, one_hot_columns
from treeopt_dsl.datasets.manifest import read_manifest
from treeopt_dsl.errors import DataError

SHARED = data_dir()
needs_shared = pytest.mark.skipif(SHARED is None, reason="the shared data directory (../shared/data) is absent")
BALANCE = ["left-weight", "left-distance", "right-weight", "right-distance"]


def _raw_balance() -> tuple[np.ndarray, np.ndarray]:
    """balance-scale.data read with the csv module: the 4 integer attributes and the label, file order."""
    assert SHARED is not None
    with open(SHARED / "balance" / "balance-scale.data", newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    return np.array([[int(v) for v in r[1:]] for r in rows]), np.array([r[0] for r in rows])


def _paper_p(ref: str) -> int:
    assert SHARED is not None
    return next(int(s["p"]) for s in read_manifest(SHARED)["balance"]["seed_papers"] if s["ref"] == ref)


@needs_shared
@pytest.mark.parametrize(("drop", "ref"), [("first", "blanquero-2020-sorct"), (None, "aldinucci-thesis-2024")])
def test_balance_one_hot_has_the_papers_p_and_the_same_rows(drop, ref) -> None:
    plain = load("balance", multiclass=True)
    d = load("balance", multiclass=True, one_hot=BALANCE, one_hot_drop=drop)
    assert d.X.shape == (625, _paper_p(ref))  # S-ORCT Table 2: 16 (one level dropped); thesis Table 4.1: 20
    assert np.array_equal(d.y, plain.y) and d.classes == plain.classes
    raw, labels = _raw_balance()  # the file itself, encoded by pandas: the same matrix, row for row
    expected = pd.get_dummies(pd.DataFrame(raw, columns=BALANCE).astype(str), drop_first=drop == "first")
    assert np.array_equal(d.X, expected.to_numpy(float))
    assert list(d.feature_names) == [c.replace("_", "=", 1) for c in expected.columns]
    assert np.array_equal(np.array(d.classes)[d.y], labels)
    assert d.groups == tuple(np.repeat(np.arange(4), 4 if drop else 5).tolist())
    assert d.meta["one_hot"] == BALANCE
    assert d.meta["dropped_levels"] == dict.fromkeys(BALANCE, "1") if drop else "dropped_levels" not in d.meta


@needs_shared
def test_drop_first_applies_to_the_loaders_own_categorical_columns() -> None:
    car = load("car", multiclass=True)
    dropped = load("car", multiclass=True, one_hot_drop="first")
    assert (car.n_features, dropped.n_features) == (21, 15)  # seed 001 Table 2: 'Car 1728 15 4'
    kept = [car.feature_names.index(n) for n in dropped.feature_names]
    assert np.array_equal(dropped.X, car.X[:, kept])
    firsts = sorted(set(car.feature_names) - set(dropped.feature_names))
    assert firsts == sorted(f"{a}={lv[0]}" for a, lv in car.meta["categorical"].items())


@needs_shared
def test_drop_last_keeps_the_first_levels_where_drop_first_drops_them() -> None:
    full = load("monks-1", file="monks-1.train")
    last = load("monks-1", file="monks-1.train", one_hot_drop="last")
    first = load("monks-1", file="monks-1.train", one_hot_drop="first")
    assert full.n_features == 17 and last.n_features == first.n_features == 11  # seed 001 Table 2: p = 11
    levels = {a: sorted(lv, key=float) for a, lv in full.meta["categorical"].items()}
    assert last.meta["dropped_levels"] == {a: lv[-1] for a, lv in levels.items()}
    assert first.meta["dropped_levels"] == {a: lv[0] for a, lv in levels.items()}
    assert "a5=1" in last.feature_names and "a5=1" not in first.feature_names  # monks-1's rule: a5 = 1 or a1 = a2
    kept = [full.feature_names.index(n) for n in last.feature_names]
    assert np.array_equal(last.X, full.X[:, kept]) and np.array_equal(last.y, full.y)
    assert last.groups == tuple(full.groups[k] for k in kept)


@needs_shared
def test_unknown_or_unfit_columns_are_refused_by_name() -> None:
    with pytest.raises(DataError, match=r"no column 'left-weigth' in dataset 'balance'; did you mean \['left-weight'"):
        load("balance", multiclass=True, one_hot=["left-weigth"])
    with pytest.raises(DataError, match=r"column 'buying' is already one-hot encoded"):
        load("car", multiclass=True, one_hot="buying")
    with pytest.raises(DataError, match=r"column 'sepal length' holds non-integer values \(e.g. 5.1\)"):
        load("iris", multiclass=True, one_hot="sepal length")
    with pytest.raises(DataError, match=r"one_hot_drop must be one of \(None, 'first', 'last'\).*got 'middle'"):
        load("balance", multiclass=True, one_hot=BALANCE, one_hot_drop="middle")


def test_one_hot_columns_on_arrays() -> None:
    X = np.array([[3.0, 0.5, 1.0], [1.0, 0.1, 1.0], [3.0, 0.7, 1.0], [2.0, 0.2, 1.0]])
    d = Dataset.from_arrays(X, [0, 1, 0, 1], feature_names=["grade", "x", "const"])
    e = one_hot_columns(d, ["grade"])
    assert e.feature_names == ("grade=1", "grade=2", "grade=3", "x", "const")
    assert np.array_equal(e.X[:, :3].argmax(1) + 1, X[:, 0]) and np.array_equal(e.X[:, 3:], X[:, 1:])
    assert np.array_equal(e.y, d.y)
    with pytest.raises(DataError, match=r"one_hot names the column 'grade' twice"):
        one_hot_columns(d, ["grade", "grade"])
    with pytest.raises(DataError, match=r"attribute 'const' has a single level"):
        one_hot_columns(d, ["const"], drop="first")
    assert one_hot_columns(d, None) is d


# ------------------------------------------------------------------------------------------------
# file=: one file of a stacked set


@needs_shared
def test_file_reads_one_file_of_a_stacked_set() -> None:
    """Günlük et al.'s monks-1 is the 432-row test file alone (seed 002 Table 1: 'monks-1 432 50% 17 6'); the data
    directory stacks the 124-row training file before it. The rows are the file's, checked against the csv module."""
    assert SHARED is not None
    d = load("monks-1", file="monks-1.test")
    assert (d.n_samples, d.n_features) == (432, 17) and d.meta["rows_by_file"] == {"monks-1.test": 432}
    with open(SHARED / "monks-1" / "monks-1.test") as f:
        rows = [line.split() for line in f if line.strip()]
    raw = np.array([[int(v) for v in r[1:7]] for r in rows])
    expected = pd.get_dummies(pd.DataFrame(raw, columns=[f"a{k}" for k in range(1, 7)]).astype(str))
    assert np.array_equal(d.X, expected.to_numpy(float))
    assert np.array_equal(np.array(d.classes)[(d.y + 1) // 2].astype(int), [int(r[0]) for r in rows])
    assert abs(100 * (d.y == 1).mean() - 50) < 0.5  # the paper's 50 %
    train = load("monks-1", file="monks-1.train")
    assert train.n_samples == 124 and np.array_equal(train.X, load("monks-1").X[:124])
    with pytest.raises(DataError, match=r"dataset 'monks-1' has no file 'monks-1.tst' \(file= reads one of its "
                                        r"parse files: \['monks-1.train', 'monks-1.test'\]\)"):
        load("monks-1", file="monks-1.tst")
    with pytest.raises(DataError, match=r"file= picks one file of a manifest dataset; the bundled 'breast-cancer'"):
        load("breast-cancer", file="x")
