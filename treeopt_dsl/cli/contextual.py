"""``treeopt fit cct`` / ``treeopt fit crt``: contextual classification / regression trees from the command line.

    treeopt fit cct --data phishing                                   # 64/16/20 split, B = 50, depth validated
    treeopt fit cct --data spambase --seed 3 --param epochs=300 --json
    treeopt fit cct --data iris                                       # multiclass (no --positive): all classes
    treeopt fit crt --data friedman                                   # make_friedman1, 5000 x 20
    treeopt fit crt --data house.csv --label price --param n_trees=20 --output trees.json

The test part is ``--test-size`` (default 0.2) of the data; ``validation_fraction`` (default 0.2) of the rest is
the validation part (CART's depth, early stopping): the thesis' 64/16/20 split ([aldinucci-thesis-2024] line 1649).
``--param KEY=VALUE`` sets the estimator's parameters (:data:`PARAMS`); ``--depth N`` fixes the forest's
depth instead of validating it; ``--seed`` seeds the split, the forest and the policy; ``--time-limit`` bounds
the policy's training; ``--threads`` its PyTorch threads; ``--verbose`` prints one line per epoch on stderr;
``--output FILE.json`` writes the trees the policy uses on the test part (the library's ``DecisionTree``
dicts). Multiclass sets without ``--positive`` are fitted with all their classes.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.model_selection import train_test_split

from treeopt_dsl.cli.common import check_writable_options, parse_param_items, rows_report, rows_text, time_left
from treeopt_dsl.contextual.estimator import ContextualTreeClassifier, ContextualTreeRegressor
from treeopt_dsl.datasets import load
from treeopt_dsl.defaults import SOLVER
from treeopt_dsl.errors import DataError, OptionError
from treeopt_dsl.io import atomic_binary
from treeopt_dsl.models.metrics import balanced_accuracy, roc_auc
from treeopt_dsl.numeric import jsonable

__all__ = ["PARAMS", "load_regression", "parse_params", "run"]


def _int(text: str) -> int:
    return int(text)


def _float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise ValueError("must be finite")
    return v


def _bool(text: str) -> bool:
    v = text.strip().lower()
    if v not in ("true", "false", "1", "0", "yes", "no"):
        raise ValueError("must be true or false")
    return v in ("true", "1", "yes")


def _optional(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def inner(text: str) -> Any:
        return None if text.strip().lower() in ("none", "") else parse(text)
    return inner


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.replace(";", ",").split(",") if v.strip())


def _choice(*options: str) -> Callable[[str], str]:
    def inner(text: str) -> str:
        if text not in options:
            raise ValueError(f"choose one of {', '.join(options)}")
        return text
    return inner


#: the ``--param`` keys (the estimators' parameters) and how their values are read
PARAMS: dict[str, Callable[[str], Any]] = {
    "n_trees": _int, "max_depth": _optional(_int), "depths": _ints, "method": _choice("reinforce", "supervised"),
    "hidden": _int, "dropout": _float, "learning_rate": _float, "entropy_weight": _float,
    "entropy": _choice("sampled", "full"), "epochs": _int, "batch_size": _int, "patience": _int,
    "validation_fraction": _float, "time_limit": _optional(_float), "n_threads": _int, "fallback": _bool,
    "fallback_z": _float,
}


def parse_params(items: list[str], formulation: str) -> dict[str, Any]:
    """``["KEY=VALUE", ...]`` as estimator parameters (:data:`PARAMS`); an error (exit 2) names the allowed keys."""
    return parse_param_items(items, PARAMS, formulation)


# ---------------------------------------------------------------------------------------------- data
def _rows(read: int, used: int, sampling: str = "uniform") -> dict[str, Any]:
    """:func:`~treeopt_dsl.cli.common.rows_report` of a regression set: no row is dropped (missing values are an
    error) and ``--sample`` draws rows uniformly."""
    return {"read": int(read), "dropped_missing": 0, "filtered_out": 0, "loaded": int(read),
            "sampled": int(used) if used != read else None, "used": int(used), "sampling": sampling}


def load_regression(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, list[str], str, dict[str, Any]]:
    """``--data friedman`` (scikit-learn's make_friedman1, 5000 x 20 as the thesis' Table 5.2, noise 0, seeded by
    ``--seed``; ``--sample N`` rows) or a CSV file with a numeric ``--label`` column (text feature columns are
    one-hot encoded; missing values are an error). Returns ``X, y``, the feature names, the data's name and where
    the rows went (:func:`~treeopt_dsl.cli.common.rows_report`)."""
    if args.data == "friedman":
        n = int(args.sample) if args.sample is not None else 5000
        if n < 20:
            raise DataError("--sample needs at least 20 rows for friedman")
        X, y = make_friedman1(n_samples=n, n_features=20, random_state=args.seed)
        return X, y, [f"x{j}" for j in range(20)], "friedman", _rows(n, n)
    path = Path(args.data).expanduser()
    if not path.is_file():
        raise DataError(f"crt takes --data friedman or a CSV file with a numeric --label column; {args.data!r} is "
                        "neither (the MANIFEST.toml datasets are classification sets: use cct)")
    if args.label is None:
        raise DataError(f"crt needs --label: the numeric target column of {path.name}")
    import pandas as pd

    try:
        df = pd.read_csv(path)
    except (ValueError, OSError) as exc:
        raise DataError(f"{path}: not a readable CSV file ({exc})") from None
    if args.label not in df.columns:
        raise DataError(f"{path}: no column {args.label!r} (columns: {', '.join(map(str, df.columns))})")
    y = pd.to_numeric(df[args.label], errors="coerce").to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise DataError(f"{path}: the target {args.label!r} must be numeric and complete "
                        f"({int((~np.isfinite(y)).sum())} non-numeric or missing values)")
    feats = pd.get_dummies(df.drop(columns=[args.label]), dtype=np.float64)
    if feats.shape[1] == 0:
        raise DataError(f"{path}: no feature columns besides {args.label!r}")
    X = feats.to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise DataError(f"{path}: the features hold missing or infinite values: drop or impute them first")
    n_read = X.shape[0]
    if args.sample is not None:
        if args.sample < 20:
            raise DataError("--sample needs at least 20 rows")
        keep = np.sort(np.random.default_rng(args.seed).choice(X.shape[0], min(args.sample, X.shape[0]),
                                                               replace=False))
        X, y = X[keep], y[keep]
    return X, y, [str(c) for c in feats.columns], path.stem, _rows(n_read, X.shape[0])


def _load_classification(args: argparse.Namespace
                         ) -> tuple[np.ndarray, np.ndarray, list[str], str, list[Any], dict[str, Any]]:
    d = load(args.data, data_dir=args.data_dir, label=args.label, positive=args.positive, variant=args.variant,
             multiclass=args.positive is None)
    d = dataclasses.replace(d, meta={**d.meta, "n_rows_loaded": d.n_samples})  # before --sample: rows_report
    if args.sample is not None:
        if args.sample < 20:
            raise DataError("--sample needs at least 20 rows")
        d = d.subsample(args.sample, seed=args.seed)
    return d.X, np.asarray(d.labels_of(d.y)), list(d.feature_names), d.name, list(d.classes), rows_report(d)


# ---------------------------------------------------------------------------------------------- metrics
def _metrics_classification(model: Any, X: np.ndarray, y: np.ndarray) -> dict[str, float]:
    pred = model.predict(X)
    out = {"accuracy": float(np.mean(pred == y)), "balanced_accuracy": balanced_accuracy(y, pred)}
    classes = np.asarray(model.classes_)
    if classes.size == 2 and np.unique(y).size == 2:
        out["auc"] = roc_auc(y == classes[1], model.predict_proba(X)[:, 1])
    return out


def _metrics_regression(model: Any, X: np.ndarray, y: np.ndarray) -> dict[str, float]:
    pred = model.predict(X)
    err = pred - y
    ss = float(np.sum((y - y.mean()) ** 2))
    return {"rmse": float(np.sqrt(np.mean(err ** 2))), "mae": float(np.mean(np.abs(err))),
            "r2": float(1.0 - np.sum(err ** 2) / ss) if ss > 0 else float("nan")}


# ---------------------------------------------------------------------------------------------- command
def _reject_solver_options(args: argparse.Namespace) -> None:
    name = args.formulation
    solver = getattr(args, "solver", None)
    for opt, value in (("--solver", None if solver == SOLVER else solver),
                       ("--backend", getattr(args, "backend", None)), ("--gap", getattr(args, "gap", None)),
                       ("--log", getattr(args, "log", None))):
        if value is not None:
            raise OptionError(f"{name} has no solver: {opt} does not apply (a forest and a policy network are "
                              "trained; see `treeopt fit {name} --help` and --param)".replace("{name}", name))
    if getattr(args, "warm_start", "auto") not in ("auto", None):
        raise OptionError(f"{name} takes no --warm-start")
    if getattr(args, "refine", False):
        raise OptionError(f"{name} takes no --refine (it refits the last layer of a logistic tree: olct)")
    out = getattr(args, "output", None)
    if out and not str(out).lower().endswith(".json"):
        raise OptionError(f"--output of {name} writes the trees it uses as JSON: give a FILE.json, got {out!r}")
    check_writable_options(args, output="the trees")  # before the training, not after it


def run(args: argparse.Namespace) -> int:
    """``treeopt fit cct|crt``: split 64/16/20, fit, print metrics of the contextual tree, CART and the forest
    on the training, validation and test parts, the selection histogram and an explained test row (or one
    JSON document with ``--json``); returns the exit status (0)."""
    name = args.formulation
    regression = name == "crt"
    if not 0 < float(args.test_size) < 1:
        raise OptionError(f"--test-size must be in (0, 1), got {args.test_size}")
    _reject_solver_options(args)
    params = parse_params(args.param, name)
    if args.depth is not None:
        params["max_depth"] = int(args.depth)
    if getattr(args, "threads", None) is not None and "n_threads" not in params:
        params["n_threads"] = int(args.threads) or (os.cpu_count() or 1)
    if "time_limit" not in params:
        params["time_limit"] = time_left(args, getattr(args, "time_limit", None))  # the command's clock
    params["random_state"] = int(args.seed)
    params["verbose"] = bool(getattr(args, "verbose", False)) and not args.json
    model = (ContextualTreeRegressor if regression else ContextualTreeClassifier)(**params)
    try:
        model._check_params()
    except ValueError as exc:
        raise OptionError(f"{name}: {exc}") from None
    if regression:
        if args.positive is not None or args.variant is not None:
            raise OptionError("crt is a regression: --positive and --variant do not apply")
        X, y, names, data_name, rows = load_regression(args)
        classes: list[Any] = []
        strat_all = None
    else:
        X, y, names, data_name, classes, rows = _load_classification(args)
        strat_all = y
    try:
        X_rest, X_te, y_rest, y_te = train_test_split(X, y, test_size=float(args.test_size), random_state=args.seed,
                                                      stratify=strat_all)
        X_tr, X_val, y_tr, y_val = train_test_split(X_rest, y_rest, test_size=model.validation_fraction or 0.2,
                                                    random_state=args.seed,
                                                    stratify=None if regression else y_rest)
    except ValueError as exc:
        raise DataError(f"{data_name}: cannot split {X.shape[0]} rows 64/16/20 ({exc}); use more rows") from None
    import pandas as pd

    frame = pd.DataFrame(X_tr, columns=names) if len(set(names)) == len(names) else X_tr
    if isinstance(frame, pd.DataFrame):
        model.fit(frame, y_tr, eval_set=(pd.DataFrame(X_val, columns=names), y_val))

        def as_input(A: np.ndarray) -> Any:
            return pd.DataFrame(A, columns=names)
    else:
        model.fit(frame, y_tr, eval_set=(X_val, y_val))

        def as_input(A: np.ndarray) -> Any:
            return A
    parts = {"train": (X_tr, y_tr), "validation": (X_val, y_val), "test": (X_te, y_te)}
    measure = _metrics_regression if regression else _metrics_classification
    metrics = {part: measure(model, as_input(A), b) for part, (A, b) in parts.items()}
    baselines = {"cart": {part: measure(model.cart_, A, b) for part, (A, b) in parts.items()},
                 "forest": {part: measure(model.forest_, A, b) for part, (A, b) in parts.items()}}
    hist_test = model.selection_histogram(as_input(X_te))
    used = np.flatnonzero(hist_test).tolist()
    out: dict[str, Any] = {
        "formulation": name, "params": {k: v for k, v in model.get_params().items() if k != "verbose"},
        "data": {"name": data_name, "n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
                 **({"classes": classes} if not regression else {}), "rows": rows},
        "n_train": int(X_tr.shape[0]), "n_val": int(X_val.shape[0]), "n_test": int(X_te.shape[0]),
        "n_trees": model.n_trees_, "depth": model.depth_, "depth_scores": model.depth_scores_,
        "method": model.method, "epochs": model.n_epochs_, "best_epoch": model.best_epoch_ + 1,
        "stopped": model.stopped_, "selected": model.selected_, "fallback_stats": model.fallback_stats_,
        "time_s": round(model.fit_time_, 4), "train_time_s": round(model.train_time_, 4),
        "time_per_epoch_s": round(model.time_per_epoch_, 6), "precompute_s": round(model.precompute_time_, 6),
        "metrics": metrics, "baselines": baselines,
        "selection_histogram": {"train": model.selection_histogram(), "test": hist_test}, "trees_used": used,
    }
    if args.output:
        doc = {"formulation": name, "data": data_name, "depth": model.depth_, "selection_histogram_test": hist_test,
               "trees": {str(k): model.tree(k).to_dict() for k in used}}
        try:
            with atomic_binary(Path(args.output)) as fh:  # an interrupted write keeps the old file
                fh.write(json.dumps(jsonable(doc)).encode("utf-8"))
        except OSError as exc:
            raise OptionError(f"cannot write --output {args.output!r}: {exc.strerror or exc}") from None
        out["output"] = str(args.output)
    if args.json:
        print(json.dumps(jsonable(out), allow_nan=False))
        return 0
    _print_text(model, out, regression, X_te, as_input, quiet=bool(args.quiet))
    return 0


def _print_text(model: Any, out: dict[str, Any], regression: bool, X_te: np.ndarray,
                as_input: Callable[[np.ndarray], Any], quiet: bool = False) -> None:
    d = out["data"]
    what = "RMSE" if regression else "accuracy"
    scores = ", ".join(f"{k} {v:.4f}" for k, v in out["depth_scores"].items())
    print(rows_text(d["name"], d["rows"], d["n_features"]))
    print(f"{out['formulation']}: {d['name']}, {d['n_samples']} rows x {d['n_features']} features"
          + ("" if regression else f", {len(d['classes'])} classes")
          + f"; train {out['n_train']} / validation {out['n_val']} / test {out['n_test']}")
    print(f"forest      {out['n_trees']} trees of depth {out['depth']}"
          + (f" (CART's validation {'MSE' if regression else 'accuracy'} by depth: {scores})" if scores else ""))
    print(f"policy      {out['method']}, {out['epochs']} epochs (best {out['best_epoch']}, {out['stopped']}), "
          f"{out['train_time_s']:.2f} s ({1000 * out['time_per_epoch_s']:.1f} ms per epoch); the forest's "
          f"predictions computed once in {out['precompute_s']:.3f} s")
    fs = out["fallback_stats"]
    single = "CART" if fs["single"] == "cart" else f"tree {fs['single_tree']}"
    print(f"predicts    {'the policy' if out['selected'] == 'policy' else single + ' (fallback)'}: on validation "
          f"the policy {fs['policy_val']:.4f}, its best single tree ({single}) {fs['single_val']:.4f}")
    key = "rmse" if regression else "accuracy"
    print(f"{'':<11} {out['formulation'].upper() + ' ' + what:>16} {'CART':>8} {'forest':>8}")
    for part in ("train", "validation", "test"):
        print(f"{part:<11} {out['metrics'][part][key]:16.4f} {out['baselines']['cart'][part][key]:8.4f} "
              f"{out['baselines']['forest'][part][key]:8.4f}")
    hist = np.asarray(out["selection_histogram"]["test"])
    order = np.argsort(-hist)[: min(8, len(out["trees_used"]))]
    total = max(int(hist.sum()), 1)
    shown = ", ".join(f"tree {k}: {int(hist[k])} ({100 * hist[k] / total:.1f}%)" for k in order)
    print(f"selection   (test) {shown}" + (" ..." if len(out["trees_used"]) > 8 else "")
          + f"; {len(out['trees_used'])} of {out['n_trees']} trees used")
    if "output" in out:
        print(f"wrote the {len(out['trees_used'])} trees used to {out['output']}")
    if not quiet and X_te.shape[0]:
        e = model.explain(as_input(X_te[:1]))[0]
        shown = f"{float(e.prediction):.4g}" if regression else str(e.prediction)
        print(f"example     the first test row goes to tree {e.tree} and gets {shown}:")
        print(e.path)
    sys.stdout.flush()
