"""Datasets: the bundled breast-cancer set, the shared benchmark collection, CSV files.

>>> from treeopt_dsl.datasets import load
>>> d = load("breast-cancer")
>>> d.X.shape, d.classes
((569, 30), ('benign', 'malignant'))

``load(name)`` looks the name up in this order: ``breast-cancer`` (bundled: scikit-learn's copy,
malignant = +1, needs no data directory); a dataset of the data directory's ``MANIFEST.toml``;
a path to a ``.csv`` file (give ``label=``). The data directory is, in order of precedence, the
``data_dir=`` argument, the environment variable ``TREEOPT_DATA_DIR``, or ``../shared/data`` next
to the repository (or to the current directory) when it exists. Files are read in place, never
copied.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..data import Dataset
from ..errors import DataError
from .manifest import frame_to_dataset, load_entry, read_manifest

ENV = "TREEOPT_DATA_DIR"
BUNDLED = ("breast-cancer",)


def find_data_dir(explicit: str | Path | None = None) -> Path | None:
    """The data directory: ``explicit`` > ``$TREEOPT_DATA_DIR`` > ``../shared/data`` when present."""
    if explicit is not None:
        p = Path(explicit).expanduser()
        if not p.is_dir():
            raise DataError(f"data directory {p} does not exist")
        return p
    env = os.environ.get(ENV)
    if env:
        p = Path(env).expanduser()
        if not p.is_dir():
            raise DataError(f"{ENV}={env} is not a directory")
        return p
    repo = Path(__file__).resolve().parents[2]
    for base in (repo, Path.cwd()):
        p = (base / ".." / "shared" / "data").resolve()
        if (p / "MANIFEST.toml").is_file():
            return p
    return None


def breast_cancer() -> Dataset:
    """scikit-learn's copy of WDBC (569 x 30); malignant = +1 (scikit-learn codes it 0)."""
    from sklearn.datasets import load_breast_cancer

    raw = load_breast_cancer()
    labels = np.where(raw.target == 0, "malignant", "benign")
    d = Dataset.from_arrays(raw.data, labels, feature_names=list(raw.feature_names), positive="malignant",
                            name="breast-cancer")
    d.meta.update(source="scikit-learn (bundled)", positive="malignant", dropped_missing=0)
    return d


def load(name_or_path: str | Path, *, data_dir: str | Path | None = None, label: Any = None,
         positive: Any = None, variant: str | None = None) -> Dataset:
    """A validated binary :class:`~treeopt_dsl.data.Dataset` (labels ±1, mapping kept in ``classes``)."""
    text = str(name_or_path)
    if text in BUNDLED and variant is None:
        return breast_cancer()
    if text.lower().endswith((".csv", ".csv.gz")) or (os.sep in text and Path(text).is_file()):
        return load_csv(text, label=label, positive=positive)
    directory = find_data_dir(data_dir)
    if directory is None:
        raise DataError(f"unknown dataset {text!r}: only {list(BUNDLED)} is bundled and no data directory was "
                        f"found; set {ENV} (or --data-dir) to a directory with a MANIFEST.toml, or give a .csv path")
    entries = read_manifest(directory)
    if text not in entries:
        close = [n for n in entries if text.lower() in n.lower() or n.lower() in text.lower()][:5]
        hint = f"; did you mean {close}?" if close else f"; available: {', '.join(sorted(entries)[:25])} ..."
        raise DataError(f"unknown dataset {text!r} in {directory}/MANIFEST.toml{hint}")
    return load_entry(directory, entries[text], positive=positive, variant=variant)


def load_csv(path: str | Path, label: Any, positive: Any = None) -> Dataset:
    """A CSV file with a header row; ``label`` names the label column; text columns are one-hot encoded."""
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise DataError(f"CSV file {p} does not exist")
    if label is None:
        raise DataError(f"{p.name}: give the label column (--label COLUMN / label=...)")
    try:
        df = pd.read_csv(p)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"cannot read {p}: {exc}") from None
    if label not in df.columns:
        raise DataError(f"label column {label!r} is not in {p.name}; its columns are {list(df.columns)}")
    if df.isna().any().any():
        bad = [c for c in df.columns if df[c].isna().any()]
        raise DataError(f"{p.name} has missing values (NaN) in {bad}; fill or drop them first")
    classes = sorted(df[label].astype(str).unique())
    if positive is None and len(classes) != 2:
        raise DataError(f"a binary classifier needs two classes in {label!r}, found {len(classes)}: {classes[:8]}"
                        + ("; choose the positive class with --positive" if len(classes) > 2 else ""))
    if positive is None:
        positive = classes[1]
    spec = {"name": p.stem, "source": str(p), "positive": [positive], "task": "binary",
            "negative": [c for c in classes if c != str(positive)], "to_pm1": f"+1 = {positive}"}
    return frame_to_dataset(df, label, spec, None, p.stem)


def list_datasets(data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The bundled set and every manifest entry: name, title, rows, features, task, source."""
    rows: list[dict[str, Any]] = [{"name": "breast-cancer", "title": "Breast Cancer Wisconsin (scikit-learn copy)",
                                   "n_rows": 569, "n_features": 30, "task": "binary", "source": "bundled"}]
    directory = find_data_dir(data_dir)
    if directory is not None:
        for name, e in sorted(read_manifest(directory).items()):
            rows.append({"name": name, "title": e.get("title", ""), "n_rows": e.get("n_rows"),
                         "n_features": e.get("n_features"), "task": e.get("task"), "source": "manifest",
                         "variants": sorted(e.get("variants", {}))})
    return rows


load_dataset = load
data_dir = find_data_dir

__all__ = ["BUNDLED", "ENV", "breast_cancer", "data_dir", "find_data_dir", "list_datasets", "load", "load_csv",
           "load_dataset"]
