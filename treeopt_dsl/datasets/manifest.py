"""Read a dataset of the shared data directory from its ``MANIFEST.toml`` entry alone.

Every parse key of the manifest is honoured: ``format`` (uci-data, csv, whitespace, libsvm),
``header``, ``delimiter``, ``skipinitialspace``, ``missing``, ``label``, ``positive``/``negative`` or
``positive_rule``, ``classes`` (multiclass: pick ``positive=`` for one-versus-rest),
``drop_columns``, ``categorical_columns`` (one-hot encoded; the group of every column is kept in
``Dataset.groups`` and the categories in ``meta["categorical"]``), ``filter_query``,
``common_feature_columns``, several ``parse`` files stacked, and ``variants``.

Rows with a missing value are dropped (their number is kept in ``meta["dropped_missing"]``): the
formulations need complete numeric data, and the papers use the complete rows.
"""

from __future__ import annotations

import operator
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from ..data import Dataset
from ..errors import DataError

MANIFEST = "MANIFEST.toml"


def read_manifest(directory: Path) -> dict[str, dict[str, Any]]:
    path = directory / MANIFEST
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh).get("datasets", {})
    except FileNotFoundError:
        raise DataError(f"no {MANIFEST} in the data directory {directory}") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{path} is not valid TOML: {exc}") from None


def entry_spec(entry: dict[str, Any], variant: str | None) -> dict[str, Any]:
    """The parse keys of ``entry`` with ``variant``'s overrides applied."""
    if variant is None:
        return dict(entry)
    variants = entry.get("variants", {})
    if variant not in variants:
        raise DataError(f"dataset {entry['name']!r} has no variant {variant!r}; "
                        f"its variants are {sorted(variants) or 'none'}")
    return {**entry, **variants[variant]}


def _read_table(files: list[Path], spec: dict[str, Any]) -> pd.DataFrame:
    fmt = spec["format"]
    sep = r"\s+" if fmt == "whitespace" or spec.get("delimiter") == "whitespace" else spec.get("delimiter", ",")
    kw: dict[str, Any] = dict(sep=sep, header=0 if spec.get("header") else None,
                              skipinitialspace=bool(spec.get("skipinitialspace", False)),
                              na_values=list(spec.get("missing", [])), keep_default_na=False,
                              encoding=spec.get("encoding", "utf-8"))
    if sep == r"\s+":
        kw.pop("skipinitialspace")
    frames = [pd.read_csv(f, **kw) for f in files]
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _labels_to_pm1(raw: pd.Series, spec: dict[str, Any], positive: Any) -> tuple[np.ndarray, str, tuple[str, str]]:
    """±1 labels, a description of the positive class, and the (negative, positive) class names."""
    text = raw.astype(str).str.strip()
    # numeric labels written as 1 and 1.0 must compare equal
    num = pd.to_numeric(raw, errors="coerce")
    canon = np.where(num.notna(), num.map(lambda v: f"{v:g}" if pd.notna(v) else ""), text)

    def key(v: Any) -> str:
        try:
            return f"{float(v):g}"
        except (TypeError, ValueError):
            return str(v).strip()

    if positive is not None:
        pos = {key(p) for p in (positive if isinstance(positive, (list, tuple)) else [positive])}
        if not np.isin(canon, list(pos)).any():
            raise DataError(f"positive class {positive!r} does not occur; labels are {sorted(set(canon))[:12]}")
        name = "|".join(sorted(pos))
        return np.where(np.isin(canon, list(pos)), 1, -1), f"{sorted(pos)} vs rest", (f"not {name}", name)
    if "positive_rule" in spec:
        m = re.fullmatch(r"\s*(>=|<=|>|<|==)\s*(-?[\d.]+)\s*", spec["positive_rule"])
        if not m:
            raise DataError(f"cannot read positive_rule {spec['positive_rule']!r}")
        op = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq}[m[1]]
        rule = spec["positive_rule"].strip()
        return (np.where(op(num.to_numpy(dtype=float), float(m[2])), 1, -1), f"label {rule}",
                (f"not {rule}", rule))
    if spec.get("task") == "multiclass" or "positive" not in spec:
        classes = spec.get("classes") or sorted(set(canon))
        raise DataError(f"dataset {spec['name']!r} has {len(classes)} classes {classes}: "
                        "choose the positive class (one versus rest), e.g. --positive "
                        f"{classes[0]!r} or positive={classes[0]!r}")
    pos = {key(p) for p in spec["positive"]}
    neg = {key(p) for p in spec.get("negative", [])}
    y = np.where(np.isin(canon, list(pos)), 1, np.where(np.isin(canon, list(neg)), -1, 0))
    if np.any(y == 0):
        odd = sorted(set(canon[y == 0]))[:6]
        raise DataError(f"dataset {spec['name']!r}: labels {odd} are neither positive nor negative in the manifest")
    names = ("|".join(str(v) for v in spec.get("negative", [])) or "rest", "|".join(str(v) for v in spec["positive"]))
    return y, spec.get("to_pm1", f"{sorted(pos)} = +1"), names


def _column(df: pd.DataFrame, ref: Any) -> Any:
    """A manifest column reference (0-based index for headerless files, a name otherwise)."""
    if ref in df.columns:
        return ref
    if isinstance(ref, int) and 0 <= ref < df.shape[1]:
        return df.columns[ref]
    raise DataError(f"column {ref!r} is not in the file; columns are {list(df.columns)[:20]}")


def frame_to_dataset(df: pd.DataFrame, label: Any, spec: dict[str, Any], positive: Any, name: str,
                     categorical: list[Any] | None = None, drop: list[Any] | None = None,
                     features: list[Any] | None = None) -> Dataset:
    """Labels, dropped/selected columns, missing rows, one-hot groups -> a validated :class:`Dataset`."""
    lab = _column(df, label)
    drop_cols = {_column(df, c) for c in (drop or [])}
    if features:
        feat = [_column(df, c) for c in features]
    else:
        feat = [c for c in df.columns if c != lab and c not in drop_cols]
    cat = [c for c in (_column(df, c) for c in (categorical or [])) if c in feat]
    # undeclared text columns are categorical too (say so in meta)
    extra_cat = [c for c in feat if c not in cat and not pd.api.types.is_numeric_dtype(df[c])
                 and pd.to_numeric(df[c], errors="coerce").isna().any()]
    cat += extra_cat
    sub = df[[*feat, lab]]
    complete = sub.notna().all(axis=1).to_numpy()
    n_missing = int((~complete).sum())
    sub = sub[complete]
    if sub.shape[0] == 0:
        raise DataError(f"dataset {name!r} has no complete row")
    y, pos_text, classes = _labels_to_pm1(sub[lab], {**spec, "name": name}, positive)
    columns, names, groups, cats = [], [], [], {}
    for g, c in enumerate(feat):
        col = sub[c]
        if c in cat:
            levels = sorted(col.astype(str).str.strip().unique())
            codes = col.astype(str).str.strip().to_numpy()
            columns.append((codes[:, None] == np.array(levels)[None, :]).astype(float))
            names += [f"{c}={lv}" for lv in levels]
            groups += [g] * len(levels)
            cats[str(c)] = levels
        else:
            vals = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
            if np.isnan(vals).any():
                raise DataError(f"dataset {name!r}: column {c!r} is not numeric and not declared categorical")
            columns.append(vals[:, None])
            names.append(str(c))
            groups.append(g)
    X = np.hstack(columns) if columns else np.zeros((sub.shape[0], 0))
    d = Dataset.from_arrays(X, y, feature_names=names, positive=1, name=name)
    meta = {**d.meta, "source": spec.get("source", name), "positive": pos_text, "dropped_missing": n_missing}
    if cats:
        meta["categorical"] = cats
        meta["undeclared_categorical"] = [str(c) for c in extra_cat]
    return Dataset(d.X, d.y, d.feature_names, classes, name, tuple(groups), meta)


def load_entry(directory: Path, entry: dict[str, Any], positive: Any = None, variant: str | None = None) -> Dataset:
    spec = entry_spec(entry, variant)
    name = entry["name"] + (f"[{variant}]" if variant else "")
    files = [directory / entry["name"] / f for f in spec["parse"]]
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        raise DataError(f"dataset {name!r}: file(s) {missing} are missing from the data directory")
    if spec["format"] == "libsvm":
        from sklearn.datasets import load_svmlight_files

        parts = load_svmlight_files([str(f) for f in files], n_features=spec.get("n_features"))
        X = np.vstack([parts[i].toarray() for i in range(0, len(parts), 2)])
        raw = pd.Series(np.concatenate([parts[i] for i in range(1, len(parts), 2)]))
        y, pos_text, classes = _labels_to_pm1(raw, {**spec, "name": name}, positive)
        d = Dataset.from_arrays(X, y, feature_names=[f"f{j + 1}" for j in range(X.shape[1])], positive=1, name=name)
        return Dataset(d.X, d.y, d.feature_names, classes, name, None,
                       {"source": spec.get("source", name), "positive": pos_text, "dropped_missing": 0})
    df = _read_table(files, spec)
    if spec.get("filter_query"):
        df = df.query(spec["filter_query"]).reset_index(drop=True)
    return frame_to_dataset(df, spec["label"], spec, positive, name, categorical=spec.get("categorical_columns"),
                            drop=spec.get("drop_columns"), features=spec.get("common_feature_columns"))
