"""Read a dataset of the shared data directory from its ``MANIFEST.toml`` entry alone.

Every parse key of the manifest is honoured: ``format`` (``uci-data``, ``csv``, ``whitespace``,
``libsvm``), ``header``, ``delimiter``, ``skipinitialspace``, ``encoding``, ``missing`` (read with
``keep_default_na=False, na_values=missing``), ``label``, ``positive``/``negative`` or
``positive_rule``, ``classes`` (multiclass: pick ``positive=`` for one versus rest),
``drop_columns``, ``categorical_columns`` (one-hot encoded; the source column of every output column
is kept in ``Dataset.groups`` and the levels in ``meta["categorical"]``), ``filter_query``,
``common_feature_columns``, several ``parse`` files stacked in order (``meta["rows_by_file"]``),
and ``variants`` (a variant table is complete in itself: only the identification keys ``name``,
``source``, ``license`` come from the main table).

Rows with a missing value in a used column are **dropped**: the formulations need complete
numeric data, and the papers report the complete rows (e.g. heart 297, ozone 1848, credit 653).
Their number is ``meta["dropped_missing"]`` and their labels ``meta["dropped_missing_by_class"]``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from treeopt_dsl.data import Dataset
from treeopt_dsl.datasets.frames import arrays_to_dataset, frame_to_dataset, label_key
from treeopt_dsl.errors import DataError

MANIFEST = "MANIFEST.toml"
FORMATS = ("uci-data", "csv", "whitespace", "libsvm")
#: keys a variant takes from its main table; every parse key comes from the variant itself
INHERITED = ("name", "source", "license")


def read_manifest(directory: str | Path) -> dict[str, dict[str, Any]]:
    """The ``[datasets.<name>]`` tables of ``directory/MANIFEST.toml`` (name -> table)."""
    path = Path(directory) / MANIFEST
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise DataError(f"no {MANIFEST} in the data directory {directory}; point TREEOPT_DATA_DIR (or "
                        "data_dir=, --data-dir) at the directory that holds it") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{path} is not valid TOML: {exc}") from None
    entries = doc.get("datasets", {})
    for key, e in entries.items():
        e.setdefault("name", key)
    return entries


def entry_spec(entry: dict[str, Any], variant: str | None = None) -> dict[str, Any]:
    """The parse keys of ``entry``, or of its ``variant`` (plus the main table's name/source/license)."""
    if variant is None:
        return {k: v for k, v in entry.items() if k != "variants"}
    variants = entry.get("variants", {})
    if variant not in variants:
        raise DataError(f"dataset {entry['name']!r} has no variant {variant!r}; "
                        f"its variants are {sorted(variants) or 'none'}")
    return {**{k: entry[k] for k in INHERITED if k in entry}, **variants[variant], "variant": variant}


_WDBC = ("radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity", "concave points",
         "symmetry", "fractal dimension")
#: Names of the columns (in file order) and classes (raw label -> name) of headerless files whose
#: documentation (the ``.names`` files) gives them; a manifest entry's own ``column_names`` / ``class_names``
#: keys win. Without them a headerless file's features print as ``col0, col1, ...``.
KNOWN_NAMES: dict[str, dict[str, Any]] = {
    "iris": {"columns": ["sepal length", "sepal width", "petal length", "petal width", "class"]},
    "breast": {"columns": ["id", "diagnosis", *(f"mean {f}" for f in _WDBC), *(f"{f} error" for f in _WDBC),
                           *(f"worst {f}" for f in _WDBC)]},  # scikit-learn's names (the bundled copy's)
    "breast-wisconsin-original": {
        "columns": ["sample code number", "clump thickness", "uniformity of cell size", "uniformity of cell shape",
                    "marginal adhesion", "single epithelial cell size", "bare nuclei", "bland chromatin",
                    "normal nucleoli", "mitoses", "class"],
        "classes": {"2": "benign", "4": "malignant"}},
    # the column names of the UCI documentation files the manifest lists under ``docs`` (``adult.names``, ...) or,
    # where there is none, of its PROVENANCE.txt (haberman: the header of a copy of the same rows)
    "adult": {"columns": ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                          "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
                          "native-country", "income"]},
    "pima": {"columns": ["pregnancies", "glucose", "blood pressure", "skin thickness", "insulin", "BMI",
                         "diabetes pedigree", "age", "class"]},
    "haberman": {"columns": ["age", "year of operation", "positive axillary nodes", "survival status"]},
    "heart": {"columns": ["age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak",
                          "slope", "ca", "thal", "num"]},
    "banknote": {"columns": ["variance", "skewness", "curtosis", "entropy", "class"]},
    "seeds": {"columns": ["area", "perimeter", "compactness", "kernel length", "kernel width", "asymmetry coefficient",
                          "kernel groove length", "class"]},
    "mammo": {"columns": ["BI-RADS", "age", "shape", "margin", "density", "severity"]},
    "car": {"columns": ["buying", "maint", "doors", "persons", "lug_boot", "safety", "class"]},
    "tic-tac-toe": {"columns": [f"{row}-{col}-square" for row in ("top", "middle", "bottom")
                                for col in ("left", "middle", "right")] + ["class"]},
    "votes": {"columns": ["party", "handicapped-infants", "water-project-cost-sharing",
                          "adoption-of-the-budget-resolution", "physician-fee-freeze", "el-salvador-aid",
                          "religious-groups-in-schools", "anti-satellite-test-ban", "aid-to-nicaraguan-contras",
                          "mx-missile", "immigration", "synfuels-corporation-cutback", "education-spending",
                          "superfund-right-to-sue", "crime", "duty-free-exports",
                          "export-administration-act-south-africa"]},
    **{f"monks-{k}": {"columns": ["class", "a1", "a2", "a3", "a4", "a5", "a6", "id"]} for k in (1, 2, 3)},
    "balance": {"columns": ["class", "left-weight", "left-distance", "right-weight", "right-distance"]},
    "wine": {"columns": ["class", "alcohol", "malic acid", "ash", "alcalinity of ash", "magnesium", "total phenols",
                         "flavanoids", "nonflavanoid phenols", "proanthocyanins", "color intensity", "hue",
                         "OD280/OD315 of diluted wines", "proline"]},
    "spambase": {"columns": [*(f"word_freq_{w}" for w in (
        "make address all 3d our over remove internet order mail receive will people report addresses free business "
        "email you credit your font 000 money hp hpl george 650 lab labs telnet 857 data 415 85 technology 1999 parts "
        "pm direct cs meeting original project re edu table conference").split()),
        *(f"char_freq_{c}" for c in ";([!$#"), "capital_run_length_average", "capital_run_length_longest",
        "capital_run_length_total", "spam"]},
    "credit-approval": {"columns": [f"A{k}" for k in range(1, 17)]},  # crx.names: anonymized as A1..A16
    "spect-heart": {"columns": ["OVERALL_DIAGNOSIS", *(f"F{k}" for k in range(1, 23))]},
    # -- issue 35: the rest of the headerless sets. Names from the documentation where it gives them; where it
    # documents only a structure, names from that structure (docs/datasets.md, "Feature names", says which is which)
    "ionosphere": {"columns": [*(f"pulse{k:02d}_{j}" for k in range(1, 18) for j in (1, 2)), "class"]},
    "sonar": {"columns": [*(f"band_{k:02d}" for k in range(1, 61)), "class"]},
    "spectf": {"columns": [*(f"F{k}{s}" for k in range(1, 23) for s in "RS"), "OVERALL_DIAGNOSIS"]},
    "libras": {"columns": [*(f"{a}{k}" for k in range(1, 46) for a in "xy"), "class"]},
    "german": {"columns": [*(f"attr_{k:02d}" for k in range(1, 25)), "class"]},
    "german[categorical]": {
        "columns": ["checking account status", "duration in month", "credit history", "purpose", "credit amount",
                    "savings account/bonds", "present employment since", "installment rate in % of income",
                    "personal status and sex", "other debtors/guarantors", "present residence since", "property",
                    "age in years", "other installment plans", "housing", "existing credits at this bank", "job",
                    "people liable to maintain", "telephone", "foreign worker", "class"]},
    "krkp": {"columns": [*("bkblk bknwy bkon8 bkona bkspr bkxbq bkxcr bkxwp blxwp bxqsq cntxt dsopp dwipd hdchk katri "
                           "mulch qxmsq r2ar8 reskd reskr rimmx rkxwp rxmsq simpl skach skewr skrxp spcop stlmt thrsk "
                           "wkcti wkna8 wknck wkovl wkpos wtoeg").split(), "class"]},
    "thyroid": {"columns": ["age", "sex", "on thyroxine", "query on thyroxine", "on antithyroid medication", "sick",
                            "pregnant", "thyroid surgery", "I131 treatment", "query hypothyroid", "query hyperthyroid",
                            "lithium", "goitre", "tumor", "hypopituitary", "psych", "TSH", "T3", "TT4", "T4U", "FTI",
                            "class"]},
    "thyroid[new_thyroid]": {"columns": ["T3-resin uptake", "total serum thyroxin", "total serum triiodothyronine",
                                         "basal TSH", "TSH difference after TRH", "class"]},
    "biodeg": {"columns": ["SpMax_L", "J_Dz(e)", "nHM", "F01[N-N]", "F04[C-N]", "NssssC", "nCb-", "C%", "nCp", "nO",
                           "F03[C-N]", "SdssC", "HyWi_B(m)", "LOC", "SM6_L", "F03[C-O]", "Me", "Mi", "nN-N", "nArNO2",
                           "nCRX3", "SpPosA_B(p)", "nCIR", "B01[C-Br]", "B03[C-Cl]", "N-073", "SpMax_A", "Psi_i_1d",
                           "B04[C-Br]", "SdO", "TI2_L", "nCrt", "C-026", "F02[C-N]", "nHDon", "SpMax_B(m)", "Psi_i_A",
                           "nN", "SM6_B(m)", "nArCOOR", "nX", "class"]},
    # agaricus-lepiota.names' 22 attributes (the risk-slim copy's header beside it names the same, veil-type dropped)
    "mushrooms[uci_raw]": {"columns": ["class", "cap-shape", "cap-surface", "cap-color", "bruises", "odor",
                                       "gill-attachment", "gill-spacing", "gill-size", "gill-color", "stalk-shape",
                                       "stalk-root", "stalk-surface-above-ring", "stalk-surface-below-ring",
                                       "stalk-color-above-ring", "stalk-color-below-ring", "veil-type", "veil-color",
                                       "ring-number", "ring-type", "spore-print-color", "population", "habitat"]},
    "digits": {"columns": [*(f"pixel_{r}_{c}" for r in range(8) for c in range(8)), "digit"]},
    "ozone": {"columns": ["Date", *(f"WSR{h}" for h in range(24)), "WSR_PK", "WSR_AV", *(f"T{h}" for h in range(24)),
                          "T_PK", "T_AV", *(f"{v}{p}" for p in (85, 70, 50) for v in ("T", "RH", "U", "V", "HT")),
                          "KI", "TT", "SLP", "SLP_", "Precp", "ozone day"]},
}


def _known_names(entry: dict[str, Any], spec: dict[str, Any], variant: str | None) -> dict[str, Any]:
    """``{"columns": [...], "classes": {...}}`` for a headerless table: the spec's keys, else :data:`KNOWN_NAMES`
    (the entry's own name, or ``name[variant]`` for a variant, which may be another file)."""
    known = KNOWN_NAMES.get(entry["name"] if variant is None else f"{entry['name']}[{variant}]", {})
    return {"columns": spec.get("column_names") or known.get("columns"),
            "classes": spec.get("class_names") or known.get("classes")}


def _named_classes(d: Dataset, names: dict[str, Any] | None) -> Dataset:
    """``d`` with its class labels replaced by their documented names (``{raw label: name}``)."""
    if not names:
        return d
    table = {label_key(k): v for k, v in names.items()}
    return replace(d, classes=tuple(table.get(label_key(c), c) for c in d.classes))


def _files(directory: Path, entry: dict[str, Any], spec: dict[str, Any], name: str) -> list[Path]:
    files = [directory / entry["name"] / f for f in spec["parse"]]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise DataError(f"dataset {name!r}: file(s) {missing} named in {MANIFEST} are missing")
    return files


def _read_table(files: list[Path], spec: dict[str, Any], name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The stacked table of the ``parse`` files and the file index of every row."""
    whitespace = spec["format"] == "whitespace" or spec.get("delimiter") == "whitespace"
    kw: dict[str, Any] = dict(sep=r"\s+" if whitespace else spec.get("delimiter", ","),
                              header=0 if spec.get("header") else None,
                              na_values=list(spec.get("missing", [])), keep_default_na=False,
                              encoding=spec.get("encoding", "utf-8"))
    if not whitespace:
        kw["skipinitialspace"] = bool(spec.get("skipinitialspace", False))
    frames = []
    for f in files:
        try:
            frames.append(pd.read_csv(f, **kw))
        except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
            raise DataError(f"dataset {name!r}: cannot parse {f} with the manifest's keys: {exc}") from None
    widths = {fr.shape[1] for fr in frames}
    if len(widths) > 1:
        raise DataError(f"dataset {name!r}: the parse files have different numbers of columns {sorted(widths)}")
    row_file = np.repeat(np.arange(len(frames)), [fr.shape[0] for fr in frames])
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return df, row_file


def _load_libsvm(files: list[Path], spec: dict[str, Any], name: str, positive: Any,
                 meta: dict[str, Any]) -> Dataset:
    from sklearn.datasets import load_svmlight_files

    try:  # LIBSVM indices are 1-based (the manifest says so); n_features fixes the width
        parts = load_svmlight_files([str(f) for f in files], n_features=spec.get("n_features"), zero_based=False)
    except ValueError as exc:
        raise DataError(f"dataset {name!r}: cannot read the LIBSVM file(s): {exc}") from None
    Xs, ys = parts[0::2], parts[1::2]
    X = np.vstack([x.toarray() for x in Xs])
    meta = {**meta, "rows_by_file": {str(f.name): int(y.shape[0]) for f, y in zip(files, ys, strict=True)}}
    names = [f"f{j + 1}" for j in range(X.shape[1])]  # the file's own 1-based feature index
    return arrays_to_dataset(X, np.concatenate(ys), spec, name=name, positive=positive, feature_names=names,
                             meta=meta)


def only_file(spec: dict[str, Any], file: str | None, name: str) -> dict[str, Any]:
    """``spec`` reading only ``file``, one of its ``parse`` files (a stacked set's training or test file), or
    ``spec`` itself when ``file`` is ``None``; another name is refused with the files there are."""
    if file is None:
        return spec
    files = list(spec.get("parse", []))
    if file not in files:
        raise DataError(f"dataset {name!r} has no file {file!r} (file= reads one of its parse files: {files})")
    return {**spec, "parse": [file]}


def load_entry(directory: str | Path, entry: dict[str, Any], *, positive: Any = None,
               variant: str | None = None, file: str | None = None) -> Dataset:
    """Load one manifest entry (or its ``variant``) as a binary :class:`Dataset`.

    Binary tasks map the manifest's ``positive`` values (or ``positive_rule``) to +1 unless
    ``positive=`` overrides it (one versus rest); multiclass tasks need ``positive=``. Rows with a
    missing value are dropped (``meta["dropped_missing"]``). ``file``: only this one of the entry's ``parse``
    files (e.g. ``"monks-1.test"`` of the stacked monks-1; ``meta["file"]``).
    """
    directory = Path(directory)
    name = entry["name"] + (f"[{variant}]" if variant else "")
    spec = only_file(entry_spec(entry, variant), file, name)
    fmt = spec.get("format")
    if fmt not in FORMATS:
        raise DataError(f"dataset {name!r}: unknown format {fmt!r} in {MANIFEST} (known: {', '.join(FORMATS)})")
    files = _files(directory, entry, spec, name)
    meta: dict[str, Any] = {"source": f"{MANIFEST}: {entry['name']}" + (f" variant {variant}" if variant else "")
                            + f" ({', '.join(spec['parse'])}) in {directory}",
                            "origin": spec.get("source", ""), "title": spec.get("title", entry.get("title", "")),
                            "license": spec.get("license", ""), "variant": variant, "task": spec.get("task"),
                            "manifest_positive": spec.get("to_pm1", "")}
    if file is not None:
        meta["file"] = file
    if fmt == "libsvm":
        return _load_libsvm(files, spec, name, positive, meta)
    df, row_file = _read_table(files, spec, name)
    meta["n_rows_read"] = int(df.shape[0])
    if spec.get("filter_query"):
        try:
            kept = df.query(spec["filter_query"])
        except Exception as exc:  # pandas raises several types (UndefinedVariableError, SyntaxError, ...)
            raise DataError(f"dataset {name!r}: filter_query {spec['filter_query']!r} failed: {exc}") from None
        row_file = row_file[df.index.get_indexer(kept.index)]
        meta["filtered_out"] = int(df.shape[0] - kept.shape[0])
        df = kept.reset_index(drop=True)
    header = bool(spec.get("header"))
    known = _known_names(entry, spec, variant) if not header else {"columns": None, "classes": None}
    if known["columns"] is not None and len(known["columns"]) == df.shape[1]:
        df = df.set_axis([str(c) for c in known["columns"]], axis=1)  # integer references stay positional
        header = True
    d = frame_to_dataset(df, spec["label"], spec, name=name, positive=positive,
                         categorical=spec.get("categorical_columns", []), drop=spec.get("drop_columns", []),
                         features=spec.get("common_feature_columns", []), missing="drop",
                         header=header, row_file=row_file,
                         files=[Path(f).name for f in spec["parse"]], meta=meta)
    return _named_classes(d, known["classes"])


def describe(entry: dict[str, Any]) -> dict[str, Any]:
    """One row of :func:`treeopt_dsl.datasets.list_datasets` for a manifest entry."""
    return {"name": entry["name"], "title": entry.get("title", ""), "n_rows": entry.get("n_rows"),
            "n_features": entry.get("n_features"), "task": entry.get("task"), "source": "manifest",
            "n_classes": entry.get("n_classes"), "n_rows_complete": entry.get("n_rows_complete"),
            "positive": entry.get("to_pm1", ""), "variants": sorted(entry.get("variants", {}))}
