"""Datasets: the bundled breast-cancer set, the shared benchmark collection, CSV files.

>>> from treeopt_dsl.datasets import load
>>> d = load("breast-cancer")
>>> d.X.shape, d.classes, int((d.y == 1).sum())
((569, 30), ('benign', 'malignant'), 212)

``load(name_or_path)`` resolves, in order:

1. ``"breast-cancer"``: bundled (scikit-learn's copy of WDBC, malignant = +1); needs no data directory.
2. a path to a ``.csv`` file (or any existing file given as a path): header row, ``label=`` names
   the label column, text columns are one-hot encoded, missing values are an error.
3. a dataset of the data directory's ``MANIFEST.toml`` (``variant=`` picks another encoding of it).
   Rows with a missing value are **dropped**; their number is ``meta["dropped_missing"]``.
   Multiclass sets need ``positive=`` (that class versus the rest).

The data directory is, in order of precedence, the ``data_dir=`` argument, the environment variable
``TREEOPT_DATA_DIR``, or ``../shared/data`` next to the repository (or next to the current
directory) when it holds a ``MANIFEST.toml``. Files are read in place, never copied.

Every loaded dataset carries ``meta["source"]`` (where it came from), ``meta["positive"]`` (which
raw label is +1), ``meta["dropped_missing"]``, and ``Dataset.groups`` (the original column of
every feature column; one-hot columns of one categorical attribute share a group).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from treeopt_dsl.data import Dataset
from treeopt_dsl.datasets.bundled import BUNDLED, breast_cancer
from treeopt_dsl.datasets.classes import drop_classes as drop_class_rows
from treeopt_dsl.datasets.csvfile import load_csv
from treeopt_dsl.datasets.frames import ALL_CLASSES, label_key
from treeopt_dsl.datasets.manifest import MANIFEST, describe, entry_spec, load_entry, only_file, read_manifest
from treeopt_dsl.datasets.onehot import one_hot_columns
from treeopt_dsl.errors import DataError

ENV = "TREEOPT_DATA_DIR"


def _candidates() -> list[Path]:
    """``../shared/data`` next to the repository root (parent of the package dir) and next to the cwd."""
    repo = Path(__file__).resolve().parents[2]
    out = []
    for base in (repo, Path.cwd()):
        p = (base / ".." / "shared" / "data").resolve()
        if p not in out:
            out.append(p)
    return out


def data_dir(explicit: str | Path | None = None) -> Path | None:
    """The data directory: ``explicit`` > ``$TREEOPT_DATA_DIR`` > ``../shared/data`` when present; else None.

    An explicit directory or ``TREEOPT_DATA_DIR`` that does not exist is an error (a typo should not
    silently fall back to another directory); the ``../shared/data`` fallback counts only if it holds
    a ``MANIFEST.toml``.
    """
    if explicit is not None and str(explicit) != "":
        p = Path(explicit).expanduser()
        if not p.is_dir():
            raise DataError(f"data directory {p} does not exist (given as data_dir= / --data-dir)")
        return p
    env = os.environ.get(ENV, "")
    if env:
        p = Path(env).expanduser()
        if not p.is_dir():
            raise DataError(f"{ENV}={env} is not a directory; set it to the folder holding {MANIFEST}")
        return p
    for p in _candidates():
        if (p / MANIFEST).is_file():
            return p
    return None


find_data_dir = data_dir


def _is_path(name_or_path: str | Path) -> bool:
    if isinstance(name_or_path, Path):
        return True
    text = str(name_or_path)
    if text.lower().endswith((".csv", ".csv.gz", ".csv.bz2", ".csv.zip", ".csv.xz")):
        return True
    return (os.sep in text or (os.altsep is not None and os.altsep in text)) and Path(text).expanduser().is_file()


def _unknown(text: str, names: list[str], directory: Path | None) -> DataError:
    close = difflib.get_close_matches(text, names, n=3, cutoff=0.6)
    close += [n for n in names if n not in close and (text.lower() in n.lower() or n.lower() in text.lower())][:3]
    shown = ", ".join(sorted(names)[:30]) + (" ..." if len(names) > 30 else "")
    where = (f"in {directory / MANIFEST}" if directory is not None
             else f"(no data directory found: set {ENV} or pass data_dir= / --data-dir)")
    return DataError(f"unknown dataset {text!r} {where}" + (f"; did you mean {close}?" if close else "")
                     + f"; available: {shown}; a CSV file needs a path ending in .csv and label=; "
                     f"to use another data collection set {ENV}=/path/to/dir (with a {MANIFEST})")


def load(name_or_path: str | Path, *, data_dir: str | Path | None = None, label: Any = None,
         positive: Any = None, variant: str | None = None, multiclass: bool = False,
         one_hot: str | Sequence[str] | None = None, one_hot_drop: str | None = None,
         file: str | None = None, drop_classes: str | Sequence[Any] | None = None) -> Dataset:
    """A validated binary :class:`~treeopt_dsl.data.Dataset` (labels ±1; the raw labels in ``classes``).

    ``multiclass=True`` (without ``positive``) keeps every class of a multiclass set (labels are
    then the codes ``0..K-1`` of ``classes``, for the multiclass formulations such as S-ORCT);
    binary sets load as usual.

    ``name_or_path``: ``"breast-cancer"`` (bundled), a manifest name (``"pima"``, ``"heart"``,
    ...), or a CSV path. ``data_dir``: the data directory (default: see the module doc).
    ``label``: the label column of a CSV file. ``positive``: the raw label (or list of labels) to map
    to +1, every other label to -1; required for multiclass sets, optional otherwise (manifest
    sets default to the manifest's ``positive``, e.g. the disease; CSV files to the larger label).
    ``variant``: another encoding of a manifest set (``list_datasets()`` lists them).

    ``one_hot``: feature names of integer (ordinal or code) columns to one-hot encode, one 0/1 column per
    value (S-ORCT's balance: its four attributes); ``one_hot_drop="first"`` (``"last"``) drops the first (last)
    level of every one-hot attribute, these and those the loader makes from categorical columns (the papers' ``p``
    where they drop one level: balance 16, car 15, the Monks sets 11). See
    :func:`~treeopt_dsl.datasets.onehot.one_hot_columns`.
    ``file``: only this one of a manifest set's files, for a set the data directory stacks from several
    (``load("monks-1", file="monks-1.test")``: the 432-row test file alone, as Günlük et al. read it).
    ``drop_classes``: the rows of these classes left out before the labels are mapped
    (:func:`~treeopt_dsl.datasets.classes.drop_classes`; the thesis' Table 4.1 reads balance without its "B" rows:
    ``load("balance", drop_classes=["B"], positive="L")``, 576 rows).

    Manifest sets drop rows with missing values (``meta["dropped_missing"]``); CSV files with missing
    values are rejected.

    >>> d = load("balance", multiclass=True, one_hot=["left-weight", "left-distance", "right-weight",
    ...          "right-distance"], one_hot_drop="first")                # doctest: +SKIP
    >>> d.X.shape, d.feature_names[:4]                                   # doctest: +SKIP
    ((625, 16), ('left-weight=2', 'left-weight=3', 'left-weight=4', 'left-weight=5'))
    """
    if drop_classes is None:
        d = _load(name_or_path, data_dir=data_dir, label=label, positive=positive, variant=variant,
                  multiclass=multiclass, file=file)
    else:
        d = _load(name_or_path, data_dir=data_dir, label=label, positive=ALL_CLASSES, variant=variant,
                  multiclass=True, file=file)
        d = drop_class_rows(d, drop_classes, positive=positive, multiclass=multiclass)
    if one_hot is None and one_hot_drop is None:
        return d
    return one_hot_columns(d, one_hot, drop=one_hot_drop)


def _load(name_or_path: str | Path, *, data_dir: str | Path | None, label: Any, positive: Any,
          variant: str | None, multiclass: bool, file: str | None) -> Dataset:
    """:func:`load` before its ``one_hot`` options."""
    if multiclass and positive is None:
        positive = ALL_CLASSES
    text = str(name_or_path)
    if not isinstance(name_or_path, Path) and text in BUNDLED:
        if variant is not None:
            raise DataError(f"the bundled dataset {text!r} has no variants (got variant={variant!r})")
        if file is not None:
            raise DataError(f"file= picks one file of a manifest dataset; the bundled {text!r} has none")
        if label is not None:
            raise DataError(f"label= is for CSV files; the bundled {text!r} has its labels")
        d = breast_cancer()
        if positive is None or positive is ALL_CLASSES or label_key(positive) == "malignant":
            return d
        if label_key(positive) != "benign":
            raise DataError(f"positive class {positive!r} does not occur in {text!r}; "
                            "its classes are 'benign' and 'malignant'")
        return replace(d, y=-d.y, classes=("malignant", "benign"),
                       meta={**d.meta, "positive": "+1 = benign, -1 = malignant (positive= chosen by the caller)"})
    if _is_path(name_or_path):
        if variant is not None or file is not None:
            raise DataError(f"{'variant' if variant is not None else 'file'}= is for manifest datasets, not for "
                            f"the file {text}")
        return load_csv(name_or_path, label=label, positive=positive)
    directory = find_data_dir(data_dir)
    entries = read_manifest(directory) if directory is not None else {}
    if text not in entries:
        if Path(text).expanduser().is_file():
            if file is not None:
                raise DataError(f"file= is for manifest datasets, not for the file {text}")
            return load_csv(text, label=label, positive=positive)
        raise _unknown(text, [*BUNDLED, *entries], directory)
    if label is not None:
        raise DataError(f"label= is for CSV files; dataset {text!r} takes its label column from {MANIFEST}")
    assert directory is not None
    return load_entry(directory, entries[text], positive=positive, variant=variant, file=file)


def check_dataset(name_or_path: str | Path, *, data_dir: str | Path | None = None, variant: str | None = None,
                  file: str | None = None) -> None:
    """Raise the :class:`DataError` :func:`load` would for a name or file it cannot find (an unknown name, with
    the available ones; a missing CSV file; an unknown variant), without reading any data: a grid's datasets are
    checked before anything runs.

    >>> check_dataset("breast-cancer")
    >>> check_dataset("/nowhere/x.csv")
    Traceback (most recent call last):
    ...
    treeopt_dsl.errors.DataError: no data file '/nowhere/x.csv'
    """
    text = str(name_or_path)
    if not isinstance(name_or_path, Path) and text in BUNDLED:
        if variant is not None:
            raise DataError(f"the bundled dataset {text!r} has no variants (got variant={variant!r})")
        if file is not None:
            raise DataError(f"file= picks one file of a manifest dataset; the bundled {text!r} has none")
        return
    if _is_path(name_or_path):
        if not Path(text).expanduser().is_file():
            raise DataError(f"no data file {text!r}")
        if variant is not None or file is not None:
            raise DataError(f"{'variant' if variant is not None else 'file'}= is for manifest datasets, not for "
                            f"the file {text}")
        return
    directory = find_data_dir(data_dir)
    entries = read_manifest(directory) if directory is not None else {}
    if text not in entries:
        if Path(text).expanduser().is_file():
            return
        raise _unknown(text, [*BUNDLED, *entries], directory)
    if variant is not None or file is not None:
        only_file(entry_spec(entries[text], variant), file, text)


def list_datasets(data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The bundled set and every manifest entry: name, title, n_rows, n_features, task, source, variants.

    ``n_features`` counts the original columns (before one-hot encoding), as the manifest does;
    ``source`` is ``"bundled"`` or ``"manifest"``. Without a data directory only the bundled set is listed.
    """
    rows = [dict(v) for v in BUNDLED.values()]
    directory = find_data_dir(data_dir)
    if directory is not None:
        rows += [describe(e) for _, e in sorted(read_manifest(directory).items())]
    return rows


load_dataset = load

__all__ = ["BUNDLED", "ENV", "MANIFEST", "breast_cancer", "check_dataset", "data_dir", "entry_spec", "find_data_dir",
           "list_datasets", "load", "load_csv", "load_dataset", "load_entry", "one_hot_columns", "read_manifest"]
