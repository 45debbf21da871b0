"""The loader's ``drop_classes`` option: a paper's dataset without the rows of some classes (the thesis' Table 4.1
reads balance without its "B" rows: 576 rows, 20 one-hot columns, thesis lines 1389-1392), checked against the raw
file read with the csv module."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from treeopt_dsl.data import Dataset
from treeopt_dsl.datasets import data_dir, load
from treeopt_dsl.datasets.classes import drop_classes
from treeopt_dsl.errors import DataError

SHARED = data_dir()
needs_shared = pytest.mark.skipif(SHARED is None, reason="the shared data directory (../shared/data) is absent")
BALANCE = ["left-weight", "left-distance", "right-weight", "right-distance"]


@needs_shared
def test_balance_without_b_is_the_theses_table_4_1_set():
    assert SHARED is not None
    with open(SHARED / "balance" / "balance-scale.data", newline="") as f:
        rows = [r for r in csv.reader(f) if r and r[0] != "B"]
    raw_X = np.array([[float(v) for v in r[1:]] for r in rows])
    raw_y = np.array([r[0] for r in rows])
    d = load("balance", drop_classes=["B"])
    assert d.n_samples == 576 and d.classes == ("L", "R") and d.meta["dropped_classes"] == {"B": 49}
    assert np.array_equal(d.X, raw_X) and np.array_equal(d.y, np.where(raw_y == "R", 1, -1))
    flipped = load("balance", drop_classes="B", positive="L")
    assert flipped.classes == ("R", "L") and np.array_equal(flipped.y, -d.y)
    encoded = load("balance", drop_classes=["B"], one_hot=BALANCE)
    assert encoded.X.shape == (576, 20) and np.array_equal(encoded.y, d.y)  # the thesis' 576 x 20
    assert np.array_equal(encoded.X.sum(axis=1), np.full(576, 4.0))  # one level of each attribute


def _three() -> Dataset:
    rng = np.random.default_rng(0)
    return Dataset.from_arrays(rng.random((30, 2)), np.repeat(["a", "b", "c", "d", "e", "f"], 5), multiclass=True)


def test_dropping_keeps_the_rows_and_codes_of_the_classes_left():
    d = _three()
    kept = drop_classes(d, ["b", "e"], multiclass=True)
    assert kept.classes == ("a", "c", "d", "f") and kept.n_samples == 20
    assert np.array_equal(np.asarray(kept.classes)[kept.y], np.repeat(["a", "c", "d", "f"], 5))
    assert np.array_equal(kept.X, d.X[np.isin(np.asarray(d.classes)[d.y], ["a", "c", "d", "f"])])
    ovr = drop_classes(d, ["b"], positive=["a", "c"])
    assert ovr.classes == ("not a/c", "a/c") and int((ovr.y > 0).sum()) == 10 and ovr.n_samples == 25


def test_bad_drop_classes_are_refused_by_name():
    d = _three()
    with pytest.raises(DataError, match="'z' is not a class of"):
        drop_classes(d, ["z"])
    with pytest.raises(DataError, match="leaves 1 class"):
        drop_classes(d, ["a", "b", "c", "d", "e"])
    with pytest.raises(DataError, match="name the positive class"):
        drop_classes(d, ["a"])  # five classes left, binary asked for, no positive
    with pytest.raises(DataError, match="positive class 'a' is not among the classes left"):
        drop_classes(d, ["a", "b", "c", "d"], positive="a")
    with pytest.raises(DataError, match="at least one class"):
        drop_classes(d, [])
