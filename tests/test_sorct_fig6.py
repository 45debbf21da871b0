"""benchmarks/sorct_fig6.py (seed 001 Figure 6): CART on the very splits of the stored S-ORCT paths, the paired t
interval against its textbook formula, and the comparison rows against the stored points they are read from."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from bench_scripts import load_script
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import t as student_t
from sklearn.tree import DecisionTreeClassifier

from treeopt_dsl.datasets import load

FIG6 = load_script("sorct_fig6")


@pytest.fixture(scope="module")
def fig6() -> ModuleType:
    return FIG6


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100)), min_size=2, max_size=12))
def test_the_paired_interval_is_the_textbook_one(pairs: list[tuple[float, float]]) -> None:
    module = FIG6
    a, b = np.array(pairs).T
    d = a - b
    mean, low, high = module.paired_interval(a, b)
    half = student_t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)  # mean +- t_{n-1} s / sqrt(n)
    assert mean == pytest.approx(d.mean(), abs=1e-9)
    assert low == pytest.approx(d.mean() - half, abs=1e-6) and high == pytest.approx(d.mean() + half, abs=1e-6)
    assert module.paired_interval(a[:1], b[:1])[1:] == (None, None)  # one split: no interval


def test_cart_is_fitted_on_the_paths_splits(fig6: ModuleType) -> None:
    points = [p for p in fig6.sorct_points() if p["dataset"] == "monks-3"]
    sizes = {int(p["split"]): (p["n_train"], p["n_test"]) for p in points}
    assert len(sizes) == 10  # the stored rows of the paper's training file record each split's sizes
    cart = fig6.cart_on_splits("monks-3", 1, sorted(sizes), sizes)  # raises if a split is not the path's
    # split 3 by hand: the training file's first 122 rows, the last level of each attribute dropped (p = 11)
    data = load("monks-3", multiclass=True, one_hot_drop="last")
    data = data.take(np.arange(122))
    train, test = data.split(0.25, seed=3)
    tree = DecisionTreeClassifier(max_depth=1, random_state=0).fit(train.X, train.y)
    assert cart[3]["accuracy"] == pytest.approx(100 * np.mean(tree.predict(test.X) == test.y))
    assert cart[3]["delta_g"] == pytest.approx(100 * (1 - 1 / 11))  # a stump uses one of the 11 columns
    with pytest.raises(RuntimeError, match="not the path's split"):
        fig6.cart_on_splits("monks-3", 1, [0], {0: (sizes[0][0] + 1, sizes[0][1])})


def test_the_rows_are_the_stored_points_minus_cart(fig6: ModuleType) -> None:
    points = [p for p in fig6.sorct_points() if p["dataset"] in ("iris", "monks-3")]
    rows = fig6.comparisons(points)
    assert {(r["table"], r["dataset"]) for r in rows} == {(3, "monks-3"), (5, "iris")}
    assert len(rows) == 2 * 17  # every lambda point of both paths
    for r in rows:
        mine = [p for p in points if p["dataset"] == r["dataset"] and p["r"] == r["r"]]
        assert r["splits"] == len(mine)
        assert r["sorct_accuracy"] == pytest.approx(100 * np.mean([p["test_accuracy"] for p in mine]))
        assert r["accuracy_diff"] == pytest.approx(r["sorct_accuracy"] - r["cart_accuracy"])
        assert r["delta_g_diff"] == pytest.approx(r["sorct_delta_g"] - r["cart_delta_g"])
        assert r["accuracy_low"] <= r["accuracy_diff"] <= r["accuracy_high"]
    table = fig6.report(rows)
    assert f"| 5 | iris | {rows[-1]['splits']} | 0 |" in table and "the paper's statement" in table


@pytest.mark.parametrize("option", ["--out", "--figure"])
def test_a_bad_output_is_refused_by_name_before_the_comparisons(fig6: ModuleType, option: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """``--out`` in a directory that does not exist, ``--figure`` naming a directory: a usage error naming the option
    and the path before the stored paths are read and CART fitted (was a traceback after them), nothing written."""
    monkeypatch.setattr(fig6, "sorct_points", lambda: pytest.fail("the stored paths were read"))
    bad = tmp_path / "missing" / "rows.jsonl" if option == "--out" else tmp_path
    with pytest.raises(SystemExit) as stop:
        fig6.main([option, str(bad)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"error: {option}" in err and str(bad) in err, err
    assert list(tmp_path.iterdir()) == []
