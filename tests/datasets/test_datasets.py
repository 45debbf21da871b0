"""Datasets: the bundled set, the manifest reader, CSV files, the data directory, error messages.

The shared collection's manifest states row and class counts that were established independently
of this parser (its header says how), so agreeing with them checks the parser. Where the shared
directory is absent those tests are skipped; a small manifest written here covers every parse key
with hand-counted expectations and always runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import treeopt_dsl.datasets as ds
from treeopt_dsl.datasets import ENV, data_dir, list_datasets, load
from treeopt_dsl.datasets.frames import label_key
from treeopt_dsl.datasets.manifest import entry_spec, read_manifest
from treeopt_dsl.errors import DataError

SHARED = data_dir()
needs_shared = pytest.mark.skipif(SHARED is None, reason="the shared data directory (../shared/data) is absent")
MANIFEST = read_manifest(SHARED) if SHARED is not None else {}


def _specs(task: str) -> list:
    """(name, variant, spec) for every manifest table (main tables and variants) of the task."""
    out = []
    for name, entry in sorted(MANIFEST.items()):
        for variant in [None, *sorted(entry.get("variants", {}))]:
            spec = entry_spec(entry, variant)
            if spec["task"] == task:
                out.append(pytest.param(name, variant, spec, id=name + (f"[{variant}]" if variant else "")))
    return out


def _key(v) -> str:
    """The manifest's key convention, written independently of the loader: 1, 1.0 and "1" are "1"."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v).strip()
    return str(int(f)) if f.is_integer() else str(v)


def _manifest_positives(spec: dict) -> int | None:
    """+1 rows over all rows of the files (before any row is dropped), from the manifest's counts."""
    if "binary_counts" in spec:
        return int(spec["binary_counts"]["+1"])
    if "positive" not in spec:
        return None
    pos = {_key(v) for v in spec["positive"]}
    return sum(int(n) for k, n in spec["class_counts"].items() if _key(k) in pos)


# ------------------------------------------------------------------------------------------------
# bundled set


def test_bundled_breast_cancer_maps_malignant_to_plus_one():
    from sklearn.datasets import load_breast_cancer

    d = load("breast-cancer")
    raw = load_breast_cancer()
    assert d.X.shape == (569, 30)
    assert d.classes == ("benign", "malignant")
    assert int((d.y == 1).sum()) == 212 and int((d.y == -1).sum()) == 357  # WDBC: 212 malignant, 357 benign
    assert np.array_equal(d.y == 1, raw.target == 0)  # scikit-learn codes malignant as 0
    assert d.feature_names == tuple(raw.feature_names) and d.feature_names[0] == "mean radius"
    assert "scikit-learn" in d.meta["source"] and "malignant" in d.meta["positive"]
    assert d.labels_of(d.y[:3]).tolist() == [("malignant" if t == 0 else "benign") for t in raw.target[:3]]


def test_bundled_positive_can_be_flipped_and_is_checked():
    d = load("breast-cancer", positive="benign")
    assert int((d.y == 1).sum()) == 357 and d.classes == ("malignant", "benign")
    with pytest.raises(DataError, match="'benign' and 'malignant'"):
        load("breast-cancer", positive="cancer")
    with pytest.raises(DataError, match="no variants"):
        load("breast-cancer", variant="x")


@needs_shared
def test_bundled_equals_the_uci_file_of_the_manifest():
    """scikit-learn's copy and UCI's wdbc.data (label 'M'/'B') are the same data, same order."""
    a, b = load("breast-cancer"), load("breast")
    assert np.array_equal(a.X, b.X)
    assert np.array_equal(a.y, b.y)
    assert b.classes == ("B", "M")


# ------------------------------------------------------------------------------------------------
# data directory


def test_data_dir_precedence(tmp_path, monkeypatch):
    (tmp_path / "env").mkdir()
    (tmp_path / "arg").mkdir()
    monkeypatch.setenv(ENV, str(tmp_path / "env"))
    assert data_dir() == tmp_path / "env"
    assert data_dir(tmp_path / "arg") == tmp_path / "arg"  # explicit beats the environment
    with pytest.raises(DataError, match="does not exist"):
        data_dir(tmp_path / "typo")
    monkeypatch.setenv(ENV, str(tmp_path / "nope"))
    with pytest.raises(DataError, match="not a directory"):
        data_dir()


def test_data_dir_falls_back_to_shared_data_next_to_the_repo_or_cwd(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    # a fake installation: <tmp>/repo/treeopt_dsl/datasets/__init__.py, data in <tmp>/shared/data
    fake_init = tmp_path / "repo" / "treeopt_dsl" / "datasets" / "__init__.py"
    monkeypatch.setattr(ds, "__file__", str(fake_init))
    monkeypatch.chdir(tmp_path)
    assert data_dir() is None  # neither <tmp>/shared/data nor <tmp>/../shared/data exists
    shared = tmp_path / "shared" / "data"
    shared.mkdir(parents=True)
    assert data_dir() is None  # present but without a MANIFEST.toml
    (shared / "MANIFEST.toml").write_text("[datasets]\n")
    assert data_dir() == shared.resolve()  # found next to the repository
    # next to the current directory, when the package lives elsewhere
    monkeypatch.setattr(ds, "__file__", str(tmp_path / "x" / "y" / "z" / "q" / "__init__.py"))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    assert data_dir() == shared.resolve()


# ------------------------------------------------------------------------------------------------
# a small manifest covering every parse key (always runs; counts by hand)

TOY_MANIFEST = """
[datasets.ws]
name = "ws"
title = "whitespace, headerless, id column dropped, '?' missing, categorical column, label first"
parse = ["a.train", "a.test"]
format = "whitespace"
header = false
delimiter = "whitespace"
missing = ["?"]
label = 0
task = "binary"
positive = [1]
negative = [0]
drop_columns = [3]
categorical_columns = [2]
n_rows = 5
n_features = 2

[datasets.ws.variants.rule]
parse = ["b.csv"]
format = "csv"
header = true
delimiter = ";"
missing = []
label = "grade"
task = "binary"
positive_rule = ">= 10"
drop_columns = []
categorical_columns = []

[datasets.filt]
name = "filt"
parse = ["c.csv"]
format = "csv"
header = true
delimiter = ","
skipinitialspace = true
missing = [""]
label = "y"
task = "binary"
positive = ["yes", "YES."]
negative = ["no"]
drop_columns = ["id"]
categorical_columns = ["color"]
common_feature_columns = ["age", "color"]
filter_query = "age >= 18"

[datasets.multi]
name = "multi"
parse = ["m.data"]
format = "uci-data"
header = false
delimiter = ","
missing = []
label = 2
task = "multiclass"
classes = ["L", "B", "R"]
drop_columns = []
categorical_columns = []

[datasets.svm]
name = "svm"
parse = ["s.libsvm", "s.libsvm.t"]
format = "libsvm"
header = false
delimiter = " "
missing = []
label = 0
task = "binary"
positive = [1]
negative = [2]
n_features = 4
"""


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    root = tmp_path / "data"
    for sub in ("ws", "filt", "multi", "svm"):
        (root / sub).mkdir(parents=True)
    (root / "MANIFEST.toml").write_text(TOY_MANIFEST)
    # label, x1, category, id; the second row has a '?'; runs of blanks and a leading blank
    (root / "ws" / "a.train").write_text(" 1  0.5 red id1\n 0 ? blue id2\n 1 2.5 red  id3\n")
    (root / "ws" / "a.test").write_text("0 1.0 green id4\n0 3.0 blue id5\n")
    (root / "ws" / "b.csv").write_text("h;grade\n1;12\n2;9\n3;10\n4;3\n")
    (root / "filt" / "c.csv").write_text("id, age, color, junk, y\n1, 30, red, a, yes\n2, 12, red, b, no\n"
                                         "3, 40, blue, c, no\n4, 50, , d, YES.\n5, 25, red, e, no\n")
    (root / "multi" / "m.data").write_text("1,2,L\n3,4,B\n5,6,R\n7,8,L\n")
    (root / "svm" / "s.libsvm").write_text("1 1:0.5 3:2\n2 2:1\n")
    (root / "svm" / "s.libsvm.t").write_text("1 4:7\n")
    monkeypatch.setenv(ENV, str(root))
    return root


def test_toy_whitespace_missing_drop_categorical_and_stacked_files(toy):
    d = load("ws")
    # rows: (1,0.5,red) (0,?,blue)->dropped (1,2.5,red) | (0,1.0,green) (0,3.0,blue)
    assert d.n_samples == 4
    assert d.meta["dropped_missing"] == 1 and d.meta["dropped_missing_by_class"] == {"+1": 0, "-1": 1}
    assert d.meta["rows_by_file"] == {"a.train": 2, "a.test": 2}
    assert d.y.tolist() == [1, 1, -1, -1]
    assert d.feature_names == ("col1", "col2=blue", "col2=green", "col2=red")
    assert d.groups == (0, 1, 1, 1)
    assert d.X.tolist() == [[0.5, 0, 0, 1], [2.5, 0, 0, 1], [1.0, 0, 1, 0], [3.0, 1, 0, 0]]
    assert d.meta["categorical"] == {"col2": ["blue", "green", "red"]}
    assert d.classes == (0, 1)
    assert "ws" in d.meta["source"] and d.meta["positive"]


def test_toy_variant_is_complete_in_itself_with_positive_rule(toy):
    d = load("ws", variant="rule")  # does not inherit drop_columns=[3] / categorical [2] / missing of the main table
    assert d.y.tolist() == [1, -1, 1, -1]  # grade >= 10
    assert d.feature_names == ("h",)
    assert d.classes == ("grade < 10", "grade >= 10")
    assert d.name == "ws[rule]" and d.meta["variant"] == "rule"
    with pytest.raises(DataError, match=r"no variant 'nope'.*\['rule'\]"):
        load("ws", variant="nope")


def test_toy_filter_common_features_skipinitialspace_and_several_positive_values(toy):
    d = load("filt")
    # age >= 18 drops id 2; id 4 has an empty colour (missing) and is dropped after the filter
    assert d.meta["filtered_out"] == 1 and d.meta["dropped_missing"] == 1
    assert d.meta["dropped_missing_by_class"] == {"+1": 1, "-1": 0}  # 'YES.' is positive too
    assert d.n_samples == 3
    assert d.y.tolist() == [1, -1, -1]
    assert d.feature_names == ("age", "color=blue", "color=red")  # 'junk' is not a common feature column
    assert d.groups == (0, 1, 1)
    assert d.classes == ("no", "yes|YES.")


def test_toy_multiclass_needs_positive(toy):
    with pytest.raises(DataError, match=r"3 classes \['L', 'B', 'R'\].*positive="):
        load("multi")
    d = load("multi", positive="L")
    assert d.y.tolist() == [1, -1, -1, 1] and d.classes == ("not L", "L")
    d2 = load("multi", positive="B")
    assert d2.y.tolist() == [-1, 1, -1, -1]
    d3 = load("multi", positive=["B", "R"])
    assert d3.y.tolist() == [-1, 1, 1, -1]
    with pytest.raises(DataError, match="positive class 'Q' does not occur"):
        load("multi", positive="Q")


def test_toy_libsvm_one_based_with_n_features(toy):
    d = load("svm")
    assert d.X.tolist() == [[0.5, 0, 2, 0], [0, 1, 0, 0], [0, 0, 0, 7]]  # index 1 is column 0
    assert d.y.tolist() == [1, -1, 1]
    assert d.feature_names == ("f1", "f2", "f3", "f4")
    assert d.meta["rows_by_file"] == {"s.libsvm": 2, "s.libsvm.t": 1}


def test_toy_unknown_name_lists_names_and_says_how_to_set_the_directory(toy):
    with pytest.raises(DataError, match=r"unknown dataset 'wss'.*did you mean \['ws'.*available: .*breast-cancer"
                                        r".*TREEOPT_DATA_DIR"):
        load("wss")
    with pytest.raises(DataError, match="label= is for CSV files"):
        load("ws", label="x")


def test_unknown_name_without_any_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setattr(ds, "_candidates", lambda: [])
    assert data_dir() is None
    with pytest.raises(DataError, match=r"unknown dataset 'pima' \(no data directory found: set TREEOPT_DATA_DIR"):
        load("pima")
    assert [r["name"] for r in list_datasets()] == ["breast-cancer"]
    assert load("breast-cancer").n_samples == 569  # the bundled set needs no directory


def test_data_dir_without_manifest(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, str(tmp_path))
    with pytest.raises(DataError, match=r"no MANIFEST\.toml in the data directory"):
        load("pima")


def test_label_key_convention():
    assert label_key(1) == label_key(1.0) == label_key("1") == label_key(" 1.0 ") == label_key(np.int64(1)) == "1"
    assert label_key(0.5) == label_key("0.5") == "0.5"
    assert label_key(">50K.") == ">50K." and label_key(" M") == "M"


# ------------------------------------------------------------------------------------------------
# the shared collection: every binary table (and variant) against the manifest's own counts


@needs_shared
@pytest.mark.parametrize("name,variant,spec", _specs("binary"))
def test_every_binary_manifest_table_matches_its_counts(name, variant, spec):
    d = load(name, variant=variant)
    n_rows = spec["n_rows"]
    complete = spec.get("n_rows_complete", n_rows)
    expected_rows = spec.get("n_rows_filtered", complete)
    assert d.n_samples == expected_rows
    if "n_rows_filtered" not in spec:
        assert d.meta["dropped_missing"] == n_rows - complete
        # +1 rows kept plus +1 rows dropped for a missing value = the manifest's count over all rows
        pos = _manifest_positives(spec)
        dropped = d.meta.get("dropped_missing_by_class", {"+1": 0, "-1": 0})
        assert int((d.y == 1).sum()) + dropped["+1"] == pos
        assert int((d.y == -1).sum()) + dropped["-1"] == n_rows - pos
    assert set(np.unique(d.y).tolist()) == {-1, 1}
    assert np.all(np.isfinite(d.X))
    # features: n_features counts the original columns (before one-hot), as the manifest defines it
    n_feat = len(spec.get("common_feature_columns", [])) or spec["n_features"]
    assert len(set(d.groups)) == n_feat and len(d.groups) == d.n_features
    if not spec.get("categorical_columns"):
        assert d.n_features == n_feat
    for g in {g for g in d.groups if d.groups.count(g) > 1}:  # one-hot groups: exactly one 1 per row
        cols = [j for j, gg in enumerate(d.groups) if gg == g]
        assert np.array_equal(d.X[:, cols].sum(axis=1), np.ones(d.n_samples))
    # stacked files keep their order: the per-file class counts hold on the matching slices
    if "class_counts_by_file" in spec and "n_rows_complete" not in spec:
        start = 0
        for f in spec["parse"]:
            k = d.meta["rows_by_file"][f]
            assert k == spec["n_rows_by_file"][f]
            pos_f = sum(int(n) for c, n in spec["class_counts_by_file"][f].items()
                        if _key(c) in {_key(v) for v in spec["positive"]})
            assert int((d.y[start:start + k] == 1).sum()) == pos_f
            start += k
    assert d.meta["source"] and d.meta["positive"]


@needs_shared
@pytest.mark.parametrize("name,variant,spec", _specs("multiclass"))
def test_every_multiclass_manifest_table_needs_positive_and_counts_one_vs_rest(name, variant, spec):
    with pytest.raises(DataError, match="choose the positive class"):
        load(name, variant=variant)
    for c in spec["classes"]:
        d = load(name, variant=variant, positive=c)
        assert int((d.y == 1).sum()) == spec["class_counts"][_key(c)]
        assert d.n_samples == spec["n_rows"]


@needs_shared
def test_shared_categorical_columns_and_text_levels():
    d = load("heart")  # 4 categorical columns among 13 features; 6 rows with '?' dropped
    assert d.n_samples == 297 and d.meta["dropped_missing"] == 6
    assert set(d.meta["categorical"]) == {"cp", "restecg", "slope", "thal"}  # heart-disease.names' names
    assert d.meta["categorical"]["cp"] == ["1", "2", "3", "4"]  # chest-pain type, numeric order
    assert "undeclared_categorical" not in d.meta
    v = load("votes")  # '?' is a third vote value here, not missing: 16 x {n, y, ?}
    assert v.X.shape == (435, 48) and v.meta["dropped_missing"] == 0


@needs_shared
def test_shared_unknown_name_suggests_close_names():
    with pytest.raises(DataError, match=r"unknown dataset 'pimaa'.*did you mean \['pima'.*TREEOPT_DATA_DIR"):
        load("pimaa")


@needs_shared
def test_list_datasets_includes_bundled_and_every_manifest_entry():
    rows = list_datasets()
    assert rows[0]["name"] == "breast-cancer" and rows[0]["source"] == "bundled"
    by_name = {r["name"]: r for r in rows[1:]}
    assert set(by_name) == set(MANIFEST)
    for name, e in MANIFEST.items():
        r = by_name[name]
        assert (r["n_rows"], r["n_features"], r["task"], r["source"]) == (e["n_rows"], e["n_features"], e["task"],
                                                                          "manifest")
        assert r["variants"] == sorted(e.get("variants", {}))


# ------------------------------------------------------------------------------------------------
# CSV files


def test_csv_with_label_and_categorical_column(tmp_path):
    p = tmp_path / "toy.csv"
    p.write_text("age,color,outcome\n30,red,yes\n40,blue,no\n50,red,yes\n20,green,no\n")
    d = load(p, label="outcome")
    assert d.classes == ("no", "yes")
    assert d.y.tolist() == [1, -1, 1, -1]
    assert d.feature_names == ("age", "color=blue", "color=green", "color=red")
    assert d.groups == (0, 1, 1, 1)
    assert d.X[:, 1:].tolist() == [[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert d.meta["undeclared_categorical"] == ["color"] and "toy.csv" in d.meta["source"]
    d2 = load(str(p), label="outcome", positive="no")
    assert d2.y.tolist() == [-1, 1, -1, 1] and d2.classes == ("yes", "no")


def test_csv_numeric_labels_larger_is_positive(tmp_path):
    p = tmp_path / "num.csv"
    p.write_text("x,y\n1,2\n2,10\n3,2\n")  # numeric order: 10 > 2 (text order would say '2' > '10')
    d = load(p, label="y")
    assert d.y.tolist() == [-1, 1, -1] and d.classes == (2, 10)


@pytest.mark.parametrize("content,label,match", [
    ("a,b\n1,x\n2,y\n", "c", r"label column 'c' is not in bad.csv; its columns are \['a', 'b'\]"),
    ("a;b\n1;x\n2;y\n", "b", "does not look comma-separated"),
    ("a,b,c\n1,x,0\n,y,1\n3,x,1\n", "c", r"missing values .* row\(s\) \[2\], in column\(s\) \['a'\]"),
    ("a,b\n1,x\n2,x\n", "b", r"two classes in 'b', found 1: \['x'\]"),
    ("a,b\n1,x\n2,y\n3,z\n", "b", r"found 3: \['x', 'y', 'z'\]; choose the positive class"),
    ("id,b\n" + "".join(f"q{i},{'xy'[i % 2]}\n" for i in range(22)), "b",
     r"'id' holds text with 22 distinct values in 22 rows \(an identifier\?\); drop"),
])
def test_csv_errors(tmp_path, content, label, match):
    p = tmp_path / "bad.csv"
    p.write_text(content)
    with pytest.raises(DataError, match=match):
        load(p, label=label)


def test_csv_needs_a_label_an_existing_file_and_a_present_positive(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n2,3\n")
    with pytest.raises(DataError, match="give the label column"):
        load(p)
    with pytest.raises(DataError, match="does not exist"):
        load(tmp_path / "missing.csv", label="a")
    with pytest.raises(DataError, match="positive class 7 does not occur; its labels are \\[2, 3\\]"):
        load(p, label="b", positive=7)
    with pytest.raises(DataError, match="variant= is for manifest datasets"):
        load(p, label="b", variant="v")


def test_csv_without_csv_suffix_given_as_path(tmp_path, monkeypatch):
    p = tmp_path / "plain.txt"
    p.write_text("a,b\n1,0\n2,1\n")
    assert load(str(p), label="b").y.tolist() == [-1, 1]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ENV, str(tmp_path))
    (tmp_path / "MANIFEST.toml").write_text("[datasets]\n")
    assert load("plain.txt", label="b").n_samples == 2  # not a manifest name, but an existing file


def test_loaded_sets_keep_their_groups_through_split():
    d = load("breast-cancer")
    tr, te = d.split(0.25, seed=1)
    assert tr.groups == d.groups == tuple(range(30)) and te.n_samples + tr.n_samples == 569


def test_aliases_used_by_the_benchmarks():
    assert ds.load_dataset is ds.load and ds.find_data_dir is ds.data_dir
