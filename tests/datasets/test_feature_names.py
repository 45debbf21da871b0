"""Every dataset of the data directory names its features from the data (issue 35): none prints ``col<k>``.

The names are checked against what the files and their documentation say, read here independently of the
loader: the list of ``kr-vs-kp.names``, scikit-learn's names of the digits images, the value ranges the UCI
pages give for biodeg and thyroid columns, and the structure of sonar, ionosphere, spectf and libras.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from treeopt_dsl.datasets import data_dir, load
from treeopt_dsl.datasets.manifest import entry_spec, read_manifest

SHARED = data_dir()
needs_shared = pytest.mark.skipif(SHARED is None, reason="the shared data directory (../shared/data) is absent")
MANIFEST = read_manifest(SHARED) if SHARED is not None else {}
COL = re.compile(r"^col\d+(=|$)")
LISTED = ("ionosphere", "sonar", "spectf", "libras", "german", "krkp", "thyroid", "biodeg", "digits")


def _tables() -> list:
    out = []
    for name, entry in sorted(MANIFEST.items()):
        for variant in [None, *sorted(entry.get("variants", {}))]:
            out.append(pytest.param(name, variant, id=name + (f"[{variant}]" if variant else "")))
    return out


def _load(name: str, variant: str | None = None):
    spec = entry_spec(MANIFEST[name], variant)
    positive = spec["classes"][0] if spec.get("task") == "multiclass" else None
    return load(name, variant=variant, positive=positive)


@needs_shared
@pytest.mark.parametrize("name,variant", _tables())
def test_no_dataset_prints_col_k(name, variant):
    d = _load(name, variant)
    generic = [f for f in d.feature_names if COL.match(f)]
    assert not generic, f"{name}[{variant}] still prints {generic[:3]}"
    assert len(set(d.feature_names)) == d.n_features  # and the names tell the columns apart


@needs_shared
def test_the_listed_sets_are_all_tables_of_the_manifest():
    assert set(LISTED) <= set(MANIFEST)


@needs_shared
def test_krkp_names_are_the_list_of_its_names_file():
    text = (SHARED / "krkp" / "kr-vs-kp.names").read_text()
    listed = re.search(r"\[(bkblk[^\]]*)\]", text).group(1)
    names = [w.strip() for w in listed.replace("\n", " ").split(",")]
    assert len(names) == 36
    d = _load("krkp")
    groups = [f.split("=", 1)[0] for f in d.feature_names]
    assert list(dict.fromkeys(groups)) == names
    # the one-hot column named by the file's own value of each attribute in its first line is set
    first = (SHARED / "krkp" / "kr-vs-kp.data").read_text().splitlines()[0].split(",")
    row0 = {f: v for f, v in zip(d.feature_names, d.X[0], strict=True)}
    for name, value in zip(names, first[:36], strict=True):
        assert row0[f"{name}={value}"] == 1.0


@needs_shared
def test_digits_names_are_scikit_learns_pixels():
    from sklearn.datasets import load_digits

    d = _load("digits")
    bunch = load_digits()
    assert list(d.feature_names) == list(bunch.feature_names)
    np.testing.assert_array_equal(d.X, bunch.data)  # same rows, same column order: the names sit on the pixels


@needs_shared
def test_structural_names_sit_on_their_columns():
    sonar = _load("sonar")
    assert sonar.feature_names[0] == "band_01" and sonar.feature_names[-1] == "band_60"
    raw = np.loadtxt(SHARED / "sonar" / "sonar.all-data", delimiter=",", usecols=range(60))
    np.testing.assert_array_equal(sonar.X, raw)
    iono = _load("ionosphere")
    assert iono.feature_names[:3] == ("pulse01_1", "pulse01_2", "pulse02_1") and len(iono.feature_names) == 34
    assert np.all(iono.X[:, iono.feature_names.index("pulse01_2")] == 0)  # the constant column of the .names
    spectf = _load("spectf")
    assert spectf.feature_names[:4] == ("F1R", "F1S", "F2R", "F2S") and spectf.feature_names[-1] == "F22S"
    libras = _load("libras")
    assert libras.feature_names[:4] == ("x1", "y1", "x2", "y2") and libras.feature_names[-1] == "y45"
    german = _load("german")
    assert german.feature_names == tuple(f"attr_{k:02d}" for k in range(1, 25))


@needs_shared
def test_documented_names_match_the_columns_values():
    bio = _load("biodeg")
    col = dict(zip(bio.feature_names, bio.X.T, strict=True))
    assert bio.feature_names[:3] == ("SpMax_L", "J_Dz(e)", "nHM") and bio.feature_names[-1] == "nX"
    # UCI's page: nHM takes 11 distinct counts, C% 188 values, B01[C-Br] is presence/absence
    assert len(np.unique(col["nHM"])) == 11 and np.all(col["nHM"] == np.round(col["nHM"]))
    assert len(np.unique(col["C%"])) == 188 and col["C%"].max() <= 100
    assert set(np.unique(col["B01[C-Br]"])) == {0.0, 1.0}
    thy = _load("thyroid")
    tcol = dict(zip(thy.feature_names, thy.X.T, strict=True))
    flags = thy.feature_names[1:16]
    assert flags[0] == "sex" and flags[-1] == "psych"
    assert all(set(np.unique(tcol[f])) <= {0.0, 1.0} for f in flags)
    assert all(len(np.unique(tcol[f])) > 2 for f in ("age", "TSH", "T3", "TT4", "T4U", "FTI"))
    cat = _load("german", "categorical")
    assert "checking account status=A11" in cat.feature_names and "duration in month" in cat.feature_names


@needs_shared
def test_mushrooms_raw_names_agree_with_the_risk_slim_header_beside_it():
    raw = _load("mushrooms", "uci_raw")
    header = (SHARED / "mushrooms" / "mushroom_riskslim_binarized.csv").read_text().splitlines()[0].split(",")[1:]
    theirs = list(dict.fromkeys(h.split("_eq_", 1)[0].replace("_", "-") for h in header))
    ours = [g for g in dict.fromkeys(f.split("=", 1)[0] for f in raw.feature_names) if g != "veil-type"]
    assert ours == theirs
