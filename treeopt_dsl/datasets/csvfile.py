"""A user's CSV file: header row, a label column, numeric or text features."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from treeopt_dsl.data import Dataset
from treeopt_dsl.datasets.frames import frame_to_dataset
from treeopt_dsl.errors import DataError

#: the label column of a CSV file when none is named (the CLI's ``--label``, ``born-again``'s files)
DEFAULT_LABEL = "Class"


def default_label(columns: list[str], name: str) -> str:
    """The label column of a CSV file whose label is not named: :data:`DEFAULT_LABEL` when the file has that column,
    else a :class:`DataError` naming the file and its columns (the one rule of every face that reads CSV files).

    >>> default_label(["a", "b", "Class"], "d.csv")
    'Class'
    >>> default_label(["a", "outcome"], "d.csv")
    Traceback (most recent call last):
    ...
    treeopt_dsl.errors.DataError: d.csv: give the label column (label=... / --label COLUMN; a column named 'Class' \
is taken when there is one); its columns are ['a', 'outcome']
    """
    if DEFAULT_LABEL in columns:
        return DEFAULT_LABEL
    raise DataError(f"{name}: give the label column (label=... / --label COLUMN; a column named {DEFAULT_LABEL!r} is "
                    f"taken when there is one); its columns are {list(columns)[:40]}")


def load_csv(path: str | Path, label: Any, positive: Any = None) -> Dataset:
    """Load a comma-separated file with a header row as a binary :class:`Dataset`.

    ``label`` names the label column (``None``: :func:`default_label`, a column named ``Class``; an int is taken
    as a 0-based column index when no column has that name). With two classes the larger label is +1 (numeric
    order for numbers, text order otherwise: ``yes`` over ``no``, 1 over 0) unless ``positive=`` names it; with
    more classes ``positive=`` is required (one versus rest). Text feature columns are one-hot encoded
    (``Dataset.groups``, ``meta["categorical"]``). Missing values (empty fields, ``NA``, ``NaN``)
    are an error that names the rows and columns: fill or drop them first.
    """
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataError(f"CSV file {p} does not exist")
    try:
        df = pd.read_csv(p)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"cannot read {p} as CSV: {exc}") from None
    if label is None:
        label = default_label([str(c) for c in df.columns], p.name)
    _refuse_duplicate_columns(p, label)
    if label not in df.columns and not (isinstance(label, int) and 0 <= label < df.shape[1]):
        hint = ""
        if df.shape[1] == 1 and any(ch in str(df.columns[0]) for ch in ";\t|"):
            hint = " (the file does not look comma-separated)"
        raise DataError(f"label column {label!r} is not in {p.name}; its columns are {list(df.columns)[:40]}{hint}")
    spec = {"name": p.stem, "label": label, "task": "binary", "auto_binary": True}
    meta = {"source": f"CSV file {p}", "title": p.name, "variant": None, "task": "binary"}
    return frame_to_dataset(df, label, spec, name=p.stem, positive=positive, missing="error", header=True,
                            meta=meta)


def _refuse_duplicate_columns(p: Path, label: Any) -> None:
    """Refuse a header that repeats a column name: pandas would rename the copy ``name.1`` and keep it as a
    feature, so a repeated label column would leak the label into the features."""
    try:
        header = pd.read_csv(p, header=None, nrows=1, dtype=str, keep_default_na=False).iloc[0].tolist()
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError, IndexError):
        return  # the full read reports it
    names = [str(h).strip() for h in header]
    seen: dict[str, int] = {}
    for h in names:
        seen[h] = seen.get(h, 0) + 1
    dups = sorted(h for h, k in seen.items() if k > 1)
    if not dups:
        return
    leak = str(label) in dups
    raise DataError(
        f"{p.name}: the header repeats column name(s) {dups}"
        + (f", among them the label {str(label)!r}: the copy would become a feature and leak the label" if leak
           else "")
        + "; give every column a distinct name (or drop the copies) first")
