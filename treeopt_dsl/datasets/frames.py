"""Tables to :class:`~treeopt_dsl.data.Dataset`: label mapping to ±1, one-hot groups, missing rows.

Shared by the manifest reader (:mod:`.manifest`) and the CSV reader (:mod:`.csvfile`). Everything
here works per column or per distinct value, never per row in Python.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import DataError

#: A text column that is not declared categorical is one-hot encoded unless it looks like an identifier:
#: more than this many distinct values, and more distinct values than half the rows.
MAX_AUTO_LEVELS = 20


def label_key(v: Any) -> str:
    """A label value as comparable text, so that ``1``, ``1.0``, ``"1"`` and ``" 1"`` are all ``"1"``.

    This is the manifest's convention for ``class_counts`` keys and ``positive``/``negative`` values.
    """
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    s = str(v).strip()
    try:
        f = float(v) if isinstance(v, (float, np.floating)) else float(s)
    except ValueError:
        return s
    if not math.isfinite(f):
        return s
    return str(int(f)) if f.is_integer() else repr(f)


def _plain(v: Any) -> Any:
    """A numpy scalar as a plain Python value; integral floats as ints; text stripped."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v.strip() if isinstance(v, str) else v


def _keys(raw: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Per-row label keys (an array of str) and the raw distinct values, computed once per distinct value."""
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    if (codes < 0).any():
        raise DataError("the label column has missing values")  # callers drop such rows first
    ukeys = np.array([label_key(u) for u in uniques], dtype=object)
    return ukeys[codes], [_plain(u) for u in uniques]


def _sorted(values: Sequence[Any]) -> list[Any]:
    """Numeric order when every value is a number, text order otherwise."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return sorted(values)
    return sorted(values, key=str)


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple, set, frozenset, np.ndarray)) else [v]


def _name(values: Sequence[Any]) -> Any:
    return values[0] if len(values) == 1 else "|".join(str(v) for v in values)


_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq,
        "!=": operator.ne}
_NOT = {">=": "<", "<=": ">", ">": "<=", "<": ">=", "==": "!=", "!=": "=="}


class _AllClasses:
    """``positive=ALL_CLASSES``: keep every class (for the multiclass formulations, e.g. S-ORCT)."""

    def __repr__(self) -> str:
        return "ALL_CLASSES"


ALL_CLASSES = _AllClasses()


@dataclass(frozen=True)
class Labels:
    """Labels mapped to ±1, with the (negative, positive) class names and a description of +1."""

    y: np.ndarray
    classes: tuple[Any, Any]
    positive: str


def labels_to_pm1(raw: pd.Series, spec: dict[str, Any], positive: Any = None) -> Labels:
    """Map raw labels to ±1.

    Precedence: the caller's ``positive`` (one value or a list; every other value is -1, i.e. one
    versus rest); else the spec's ``positive_rule`` (``">= 10"``: a numeric threshold); else the
    spec's ``positive``/``negative`` lists (a value in neither is an error); else, when the spec
    says ``auto_binary``, the larger of exactly two classes is +1 (numeric order when the labels are
    numbers, text order otherwise). A multiclass spec without ``positive`` is an error that lists
    the classes.
    """
    name = spec.get("name", "data")
    keys, uniques = _keys(raw)
    ukeys = [label_key(u) for u in uniques]
    shown = _sorted(uniques)
    if positive is ALL_CLASSES:  # every class kept as a code 0..K-1 (a binary task keeps its own ±1 mapping)
        binary_task = spec.get("task") != "multiclass" and (spec.get("positive_rule") or "positive" in spec)
        if binary_task or len(uniques) <= 2:  # a rule or a positive list defines two classes whatever the raw labels
            return labels_to_pm1(raw, spec, None)
        codes = pd.Index([label_key(u) for u in shown]).get_indexer(keys).astype(np.int64)
        return Labels(codes, tuple(shown), f"{len(shown)} classes {shown[:10]} (codes 0..{len(shown) - 1})")
    if positive is not None:
        want = [label_key(p) for p in _as_list(positive)]
        absent = [p for p, k in zip(_as_list(positive), want, strict=True) if k not in ukeys]
        if absent:
            raise DataError(f"dataset {name!r}: positive class {absent if len(absent) > 1 else absent[0]!r} does "
                            f"not occur; its labels are {shown[:20]}")
        pos_vals = [u for u, k in zip(uniques, ukeys, strict=True) if k in want]
        rest = [u for u, k in zip(uniques, ukeys, strict=True) if k not in want]
        pos_name = _name(pos_vals)
        neg_name = rest[0] if len(rest) == 1 else f"not {pos_name}"
        y = np.where(np.isin(keys, want), 1, -1)
        rest_text = neg_name if len(rest) == 1 else f"the other {len(rest)} classes"
        return Labels(y, (neg_name, pos_name), f"+1 = {pos_name}, -1 = {rest_text} (positive= chosen by the caller)")
    if spec.get("positive_rule"):
        rule = str(spec["positive_rule"])
        m = re.fullmatch(r"\s*(>=|<=|==|!=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*", rule)
        if not m:
            raise DataError(f"dataset {name!r}: cannot read positive_rule {rule!r} (expected e.g. '>= 10')")
        num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
        if np.isnan(num).any():
            raise DataError(f"dataset {name!r}: positive_rule {rule!r} needs numeric labels")
        y = np.where(_OPS[m[1]](num, float(m[2])), 1, -1)
        col = spec.get("label", "label")
        t = label_key(m[2])
        return Labels(y, (f"{col} {_NOT[m[1]]} {t}", f"{col} {m[1]} {t}"), spec.get("to_pm1", f"+1 = {col} {rule}"))
    if spec.get("task") == "multiclass" or (not spec.get("auto_binary") and "positive" not in spec):
        classes = spec.get("classes") or shown
        raise DataError(f"dataset {name!r} has {len(classes)} classes {list(classes)[:20]}: choose the positive class "
                        f"(one versus rest), e.g. positive={classes[0]!r} (--positive {classes[0]})")
    if spec.get("auto_binary") and "positive" not in spec:
        if len(uniques) != 2:
            raise DataError(f"dataset {name!r}: a binary classifier needs two classes in {spec.get('label')!r}, "
                            f"found {len(uniques)}: {shown[:20]}"
                            + ("; choose the positive class (positive=..., --positive)" if len(uniques) > 2 else ""))
        neg_v, pos_v = shown
        return Labels(np.where(keys == label_key(pos_v), 1, -1), (neg_v, pos_v),
                      f"{pos_v} = +1, {neg_v} = -1 (the larger label)")
    pos_vals, neg_vals = _as_list(spec["positive"]), _as_list(spec.get("negative", []))
    pos_k, neg_k = [label_key(v) for v in pos_vals], [label_key(v) for v in neg_vals]
    odd = sorted({u for u, k in zip(uniques, ukeys, strict=True) if k not in pos_k and k not in neg_k}, key=str)
    if odd:
        raise DataError(f"dataset {name!r}: labels {odd[:8]} are neither positive {pos_vals} nor negative "
                        f"{neg_vals} in the manifest")
    y = np.where(np.isin(keys, pos_k), 1, -1)
    return Labels(y, (_name(neg_vals), _name(pos_vals)), spec.get("to_pm1", f"{pos_vals} = +1, {neg_vals} = -1"))


def column(df: pd.DataFrame, ref: Any, what: str = "column") -> Any:
    """A column reference of the manifest (0-based index for headerless files, else a name)."""
    if ref in df.columns:
        return ref
    if isinstance(ref, int) and not isinstance(ref, bool) and 0 <= ref < df.shape[1]:
        return df.columns[ref]
    raise DataError(f"{what} {ref!r} is not in the file; its columns are {list(df.columns)[:40]}")


def looks_numeric(col: pd.Series) -> bool:
    """Whether a column reads as numbers (its dtype, or every present value parses as one): else it is text, a
    categorical feature one-hot encoded (:class:`treeopt_dsl.estimator.text.OneHotText` does the same)."""
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
        return True
    present = col.dropna()
    return bool(pd.to_numeric(present, errors="coerce").notna().all())


def one_hot_column(col: pd.Series, numeric: bool) -> tuple[np.ndarray, list[str]]:
    """Indicator columns, one per distinct value (numeric order for numbers, text order otherwise): the sorted levels
    and one indicator per row (pandas' ``factorize``; scikit-learn's ``OneHotEncoder`` gives the same columns but its
    import, 0.8 s, was most of the first call of ``treeopt fit`` on a dataset with categorical columns)."""
    if numeric:
        vals = pd.to_numeric(col).to_numpy(dtype=float)
    else:
        vals = col.astype(str).str.strip().to_numpy(dtype=object)
    codes, levels = pd.factorize(vals, sort=True)
    M = np.zeros((vals.size, levels.size))
    M[np.arange(vals.size), codes] = 1.0
    names = [label_key(v) for v in levels] if numeric else [str(v) for v in levels]
    return M, names


def _feature_name(c: Any, header: bool) -> str:
    return str(c) if header else f"col{c}"


def frame_to_dataset(df: pd.DataFrame, label: Any, spec: dict[str, Any], *, name: str, positive: Any = None,
                     categorical: Sequence[Any] = (), drop: Sequence[Any] = (), features: Sequence[Any] = (),
                     missing: str = "drop", header: bool = True, row_file: np.ndarray | None = None,
                     files: Sequence[str] = (), meta: dict[str, Any] | None = None) -> Dataset:
    """A validated :class:`Dataset` from a table.

    ``label`` names the label column; ``features`` (if given) selects the feature columns, else all
    columns but the label and ``drop``. Columns listed in ``categorical``, and text columns that are
    not numbers, are one-hot encoded: every level becomes a 0/1 column named ``column=level`` and
    ``Dataset.groups`` gives each output column the index of its source column (one group per
    original feature), ``meta["categorical"]`` the levels. Rows with a missing value in a used
    column are dropped when ``missing="drop"`` (their number, and their ±1 labels where known, go to
    ``meta["dropped_missing"]`` / ``meta["dropped_missing_by_class"]``) or rejected when
    ``missing="error"``. ``row_file`` (index into ``files`` of every row, for stacked files)
    becomes ``meta["rows_by_file"]``, counted after the drop; rows keep the order of the files.
    """
    lab = column(df, label, "label column")
    drop_cols = {column(df, c, "drop column") for c in drop}
    feat = [column(df, c, "feature column") for c in features] if features else \
        [c for c in df.columns if c != lab and c not in drop_cols]
    if not feat:
        raise DataError(f"dataset {name!r} has no feature column besides the label {lab!r}")
    declared = [column(df, c, "categorical column") for c in categorical]
    cat = [c for c in feat if c in declared]
    auto = [c for c in feat if c not in cat and not looks_numeric(df[c])]
    sub = df[[*feat, lab]]
    na = sub.isna().to_numpy()
    bad_rows = na.any(axis=1)
    n_bad = int(bad_rows.sum())
    dropped_by_class: dict[str, int] = {}
    if n_bad and missing == "error":
        rows = np.flatnonzero(bad_rows)
        cols = [str(c) for c, has in zip(sub.columns, na.any(axis=0), strict=True) if has]
        raise DataError(f"dataset {name!r} has missing values (NaN or empty fields) in {n_bad} row(s), first at "
                        f"data row(s) {(rows[:5] + 1).tolist()}, in column(s) {cols[:10]}; fill or drop them first")
    if n_bad:
        labelled = sub[lab].notna().to_numpy()
        if labelled.any() and positive is not ALL_CLASSES:
            y_all = labels_to_pm1(sub[lab][labelled], {**spec, "name": name}, positive).y
            lost = bad_rows[labelled]
            dropped_by_class = {"+1": int((y_all[lost] == 1).sum()), "-1": int((y_all[lost] == -1).sum())}
        if (~labelled).any():
            dropped_by_class["unlabelled"] = int((~labelled).sum())
        sub = sub[~bad_rows]
    if sub.shape[0] == 0:
        raise DataError(f"dataset {name!r} has no row without missing values ({n_bad} rows had one)")
    lab_res = labels_to_pm1(sub[lab], {**spec, "name": name}, positive)
    y = lab_res.y
    multi = len(lab_res.classes) > 2
    if np.all(y == y[0]):
        which = lab_res.classes[1] if y[0] == 1 else lab_res.classes[0]
        raise DataError(f"dataset {name!r}: every {'kept ' if n_bad else ''}row has the class {which!r}; "
                        "a binary classifier needs rows of both classes")
    blocks, names, groups, cats = [], [], [], {}
    for g, c in enumerate(feat):
        col = sub[c]
        cname = _feature_name(c, header)
        if c in cat or c in auto:
            numeric = c not in auto and looks_numeric(col)
            M, levels = one_hot_column(col, numeric)
            if c in auto and len(levels) > MAX_AUTO_LEVELS and len(levels) > sub.shape[0] / 2:
                raise DataError(f"dataset {name!r}: column {cname!r} holds text with {len(levels)} distinct values "
                                f"in {sub.shape[0]} rows (an identifier?); drop that column")
            blocks.append(M)
            names += [f"{cname}={lv}" for lv in levels]
            groups += [g] * len(levels)
            cats[cname] = levels
        else:
            blocks.append(pd.to_numeric(col).to_numpy(dtype=np.float64)[:, None])
            names.append(cname)
            groups.append(g)
    X = np.hstack(blocks)
    d = Dataset.from_arrays(X, y, feature_names=names, positive=None if multi else 1, name=name, multiclass=multi)
    info: dict[str, Any] = {**(meta or {}), "positive": lab_res.positive, "dropped_missing": n_bad,
                            "n_original_features": len(feat)}
    if n_bad:
        info["dropped_missing_by_class"] = dropped_by_class
    if cats:
        info["categorical"] = cats
    if auto:
        info["undeclared_categorical"] = [_feature_name(c, header) for c in auto]
    if row_file is not None:
        counts = np.bincount(np.asarray(row_file)[~bad_rows], minlength=len(files))
        info["rows_by_file"] = {str(f): int(k) for f, k in zip(files, counts, strict=True)}
    return replace(d, classes=lab_res.classes, groups=tuple(groups), meta=info)


def arrays_to_dataset(X: np.ndarray, raw_y: np.ndarray, spec: dict[str, Any], *, name: str, positive: Any = None,
                      feature_names: Sequence[str] | None = None, meta: dict[str, Any] | None = None) -> Dataset:
    """A dense matrix and raw labels (e.g. a LIBSVM file) to a validated :class:`Dataset`."""
    lab_res = labels_to_pm1(pd.Series(raw_y), {**spec, "name": name}, positive)
    if np.all(lab_res.y == lab_res.y[0]):
        raise DataError(f"dataset {name!r}: every row has the same class; a binary classifier needs both")
    multi = len(lab_res.classes) > 2
    d = Dataset.from_arrays(X, lab_res.y, feature_names=feature_names, positive=None if multi else 1, name=name,
                            multiclass=multi)
    info = {**(meta or {}), "positive": lab_res.positive, "dropped_missing": 0, "n_original_features": X.shape[1]}
    return replace(d, classes=lab_res.classes, groups=tuple(range(X.shape[1])), meta=info)
