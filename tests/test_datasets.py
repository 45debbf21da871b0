"""Datasets: the bundled set, every manifest entry parsed from its manifest keys alone, CSV files, errors.

The manifest's row and class counts were established independently of this parser (see its
header), so agreeing with them checks the parser.
"""

from __future__ import annotations

import numpy as np
import pytest

from treeopt_dsl.datasets import ENV, data_dir, list_datasets, load
from treeopt_dsl.datasets.manifest import read_manifest
from treeopt_dsl.errors import DataError

SHARED = data_dir()
needs_shared = pytest.mark.skipif(SHARED is None, reason="the shared data directory (../shared/data) is absent")


def manifest_entries() -> list:
    if SHARED is None:
        return []
    return sorted(read_manifest(SHARED).items())


def test_bundled_breast_cancer_maps_malignant_to_plus_one():
    d = load("breast-cancer")
    assert d.X.shape == (569, 30)
    assert int((d.y == 1).sum()) == 212  # malignant (scikit-learn codes it 0)
    assert d.classes == ("benign", "malignant")
    assert d.feature_names[0] == "mean radius"


def test_data_dir_precedence(tmp_path, monkeypatch):
    (tmp_path / "env").mkdir()
    (tmp_path / "arg").mkdir()
    monkeypatch.setenv(ENV, str(tmp_path / "env"))
    assert data_dir() == tmp_path / "env"
    assert data_dir(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.setenv(ENV, str(tmp_path / "nope"))
    with pytest.raises(DataError, match="not a directory"):
        data_dir()


def _expected_positives(e: dict) -> int | None:
    if "n_rows_complete" in e or "filter_query" in e:
        return None  # counts are given before rows with missing values are dropped
    if "binary_counts" in e:
        return int(e["binary_counts"]["+1"])
    if "n_rows_complete" in e or "filter_query" in e or "positive" not in e:
        return None  # class counts are given before rows are dropped
    pos = {f"{float(p):g}" if isinstance(p, (int, float)) else str(p) for p in e["positive"]}
    return sum(v for k, v in e["class_counts"].items()
               if (f"{float(k):g}" if k.replace(".", "", 1).lstrip("-").isdigit() else k) in pos)


@needs_shared
@pytest.mark.parametrize("name,entry", [(n, e) for n, e in manifest_entries()
                                        if e["task"] == "binary" and e["n_rows"] <= 12000],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_every_binary_manifest_dataset_matches_its_counts(name, entry):
    d = load(name)
    rows = entry.get("n_rows_complete", entry.get("n_rows_filtered", entry["n_rows"]))
    assert d.n_samples == rows
    assert d.meta["dropped_missing"] == entry["n_rows"] - rows if "n_rows_filtered" not in entry else True
    pos = _expected_positives(entry)
    if pos is not None:
        assert int((d.y == 1).sum()) == pos
    assert np.all(np.isfinite(d.X))
    if not entry.get("categorical_columns") and entry["format"] != "libsvm":
        n_feat = len(entry.get("common_feature_columns", [])) or entry["n_features"]
        assert d.n_features == n_feat


@needs_shared
def test_categorical_columns_are_one_hot_groups():
    d = load("heart")  # 4 categorical columns among 13 features
    assert d.groups is not None and len(d.groups) == d.n_features
    assert len(set(d.groups)) == 13
    cats = d.meta["categorical"]
    assert len(cats) == 4
    # each one-hot group has exactly one 1 per row
    for g in set(d.groups):
        cols = [j for j, gg in enumerate(d.groups) if gg == g]
        if len(cols) > 1:
            assert np.all(d.X[:, cols].sum(1) == 1)


@needs_shared
def test_multiclass_needs_a_positive_class():
    with pytest.raises(DataError, match="choose the positive class"):
        load("iris")
    d = load("iris", positive="Iris-setosa")
    assert int((d.y == 1).sum()) == 50


@needs_shared
def test_variant_and_unknown_names():
    d = load("tic-tac-toe", variant="onehot27")
    assert d.X.shape == (958, 27)
    with pytest.raises(DataError, match="no variant"):
        load("tic-tac-toe", variant="nope")
    with pytest.raises(DataError, match=r"unknown dataset 'pimaa'.*pima"):
        load("pimaa")


def test_unknown_name_without_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, str(tmp_path))
    with pytest.raises(DataError, match="MANIFEST"):
        load("pima")


def test_csv_with_label_and_categorical_column(tmp_path):
    p = tmp_path / "toy.csv"
    p.write_text("age,color,outcome\n30,red,yes\n40,blue,no\n50,red,yes\n20,green,no\n")
    d = load(p, label="outcome")
    assert d.classes == ("no", "yes")
    assert d.y.tolist() == [1, -1, 1, -1]
    assert d.feature_names == ("age", "color=blue", "color=green", "color=red")
    assert d.groups == (0, 1, 1, 1)
    d2 = load(p, label="outcome", positive="no")
    assert d2.y.tolist() == [-1, 1, -1, 1]


@pytest.mark.parametrize("content,label,match", [
    ("a,b\n1,x\n2,y\n", "c", "label column 'c' is not in"),
    ("a,b\n1,x\n,y\n", "b", "missing values"),
    ("a,b\n1,x\n2,x\n", "b", "two classes"),
    ("a,b\n1,x\n2,y\n3,z\n", "b", "choose the positive class"),
])
def test_csv_errors(tmp_path, content, label, match):
    p = tmp_path / "bad.csv"
    p.write_text(content)
    with pytest.raises(DataError, match=match):
        load(p, label=label)


def test_csv_needs_a_label(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match="label column"):
        load(p)
    with pytest.raises(DataError, match="does not exist"):
        load(tmp_path / "missing.csv", label="a")


def test_list_datasets_includes_the_bundled_set():
    rows = list_datasets()
    assert rows[0]["name"] == "breast-cancer"
    if SHARED is not None:
        assert {"pima", "mushrooms", "iris"} <= {r["name"] for r in rows}
