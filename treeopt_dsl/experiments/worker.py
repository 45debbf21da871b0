"""One task in its own process, with its own time and memory limit; the row it records.

:func:`run_task` computes a task in the current process (load, split, optional cross-validation, the
final solve or fit, metrics) and returns its row. :func:`run_isolated` runs it in a child process: a
fork of a pre-loaded fork server (a few milliseconds; the library is imported once), or, inside a
daemonic process such as a Dask worker, a fresh ``python -m treeopt_dsl.experiments.worker``. The child
sets ``RLIMIT_AS`` (the task's ``memory_mb``) and starts its own session, so a Ctrl-C at the terminal
reaches only the runner, which then ends its children. A child that dies (SIGKILL, the kernel's OOM
killer, a segfault) gives a failed row with the reason and ``retryable = True``.

Test hooks (environment variables read by the child): ``TREEOPT_EXPERIMENT_TEST_KILL="substr:n"`` makes a
task whose id contains ``substr`` SIGKILL itself on its first ``n`` attempts; ``TREEOPT_EXPERIMENT_TEST_LOG``
names a file that gets one line per computed task (to count solves). The runner reads them where it runs
and passes them on inside the task (:func:`with_hooks`).

Example:

    >>> row = run_isolated({"id": "t", "estimator": "sleep", "params": {"seconds": 0.0}, "time_limit": 1,
    ...                     "memory_mb": 4096, "threads": 1})
    >>> row["ok"], row["status"]
    (True, 'done')
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit, train_test_split
from sklearn.tree import DecisionTreeClassifier, export_text

from treeopt_dsl import __version__
from treeopt_dsl.datasets import load
from treeopt_dsl.errors import OptionError
from treeopt_dsl.estimator import OptimalTreeClassifier, RiskScoreClassifier
from treeopt_dsl.estimator.memetic import TAOClassifier, TMOClassifier
from treeopt_dsl.experiments.grid import SCALES, resolve_path
from treeopt_dsl.experiments.tasks import _combos
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.formulations.categorical import SELECTION_ROWS
from treeopt_dsl.formulations.sorct import run_path
from treeopt_dsl.models.metrics import balanced_accuracy, metrics, rates
from treeopt_dsl.models.sklearn_tree import prune_misclassification
from treeopt_dsl.models.subset_cart import fit_subset_cart
from treeopt_dsl.numeric import json_default
from treeopt_dsl.starts.multistart import named_grid
from treeopt_dsl.starts.refine import is_logistic, refine_result, result_exact_objective
from treeopt_dsl.starts.resolver import start_point

__all__ = ["HOOK_VARS", "cv_parts", "n_leaves", "run_isolated", "run_task", "source_stamp", "wall_timeout",
           "with_hooks"]

_SOLVER_PACKAGES = {"highs": "highspy", "scip": "PySCIPOpt", "gurobi": "gurobipy", "cbc": "mip", "ipopt": "casadi",
                    "streed": "pystreed"}
_PRELOAD = ["treeopt_dsl.experiments.worker", "treeopt_dsl.formulations", "treeopt_dsl.datasets",
            "treeopt_dsl.models.metrics", "sklearn.metrics", "sklearn.model_selection", "highspy"]
_FORKSERVER: Any = None
#: the library's own packages, whose files the fork server loaded when it started (:func:`source_stamp`); the
#: repository's ``formulations/`` and ``backends/`` install as these two names (pyproject's package-dir), never as
#: top-level packages: those import only from the repository's root
_PACKAGES = ("treeopt_dsl", "treeopt_dsl.formulations", "treeopt_dsl.backends")
#: :func:`source_stamp` when the fork server was made (``None`` before)
_STAMP: tuple[float, str] | None = None


# ----------------------------------------------------------------------------------------------- the task
def _versions(solver: str | None) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    import numpy

    out = {"treeopt_dsl": __version__, "python": platform.python_version(), "numpy": numpy.__version__}
    for pkg in ("scikit-learn", _SOLVER_PACKAGES.get(solver or "", "")):
        if pkg:
            try:
                out[pkg] = version(pkg)
            except PackageNotFoundError:
                out[pkg] = "not installed"
    return out


def load_task(task: dict[str, Any]) -> Any:
    """The task's data set as the grid names it (its loader options, ``roll``, first ``rows``, ``sample``), before
    any split; with :func:`split_task`, :func:`fit_task` and :func:`task_metrics` a task's fit outside the runner
    (a probe that changes one step, ``benchmarks/reproduction_causes.py --probe-selection``)."""
    d = task["dataset"]
    kw = {k: d[k] for k in ("positive", "variant", "label", "multiclass", "one_hot", "one_hot_drop", "file",
                            "drop_classes") if d.get(k) is not None}
    base = task.get("base_dir")  # relative paths of the grid are read against the grid file's directory
    data_dir = None if task.get("data_dir") is None else resolve_path(task["data_dir"], base)
    data = load(resolve_path(d["path"], base) if d.get("path") else d["name"], data_dir=data_dir, **kw)
    if d.get("roll"):  # the rows in another copy's order (a split by seed draws by position)
        data = data.take(np.roll(np.arange(data.n_samples), int(d["roll"])))
    if d.get("rows"):  # the first rows (e.g. the LIBSVM training file of a set stored stacked with its test file)
        data = data.take(np.arange(min(int(d["rows"]), data.n_samples)))
    if task.get("sample"):
        data = data.subsample(int(task["sample"]), seed=int(task["seed"]))
    return data


def sklearn_split(data: Any, test_size: float, validation_size: float, seed: int
                  ) -> tuple[Any, Any, Any, np.random.RandomState]:
    """Train, validation (or ``None``) and test parts as the author's code of seed 004 and of the thesis draws them
    (``np.random.seed(seed)``, then scikit-learn's stratified ``train_test_split`` without a ``random_state``: the
    test part, then the validation part of the rest), and the stream after them, which their estimators continue.

    Each part lists its rows in scikit-learn's order, as the author's estimators saw them. A seed gives the same
    parts as ``np.random.seed(seed)`` followed by the author's two ``train_test_split`` calls:

        >>> from sklearn.model_selection import train_test_split
        >>> from treeopt_dsl.data import Dataset
        >>> d = Dataset.from_arrays(np.arange(40.0)[:, None], [0] * 25 + [1] * 15)
        >>> train, val, test, _ = sklearn_split(d, 0.2, 0.2, seed=42)
        >>> np.random.seed(42)
        >>> rest, te = train_test_split(np.arange(40), test_size=0.2, stratify=d.y)
        >>> tr, va = train_test_split(rest, test_size=0.2, stratify=d.y[rest])
        >>> bool((test.X.ravel() == te).all() and (val.X.ravel() == va).all() and (train.X.ravel() == tr).all())
        True
    """
    rs = np.random.RandomState(seed)
    rest, test = train_test_split(np.arange(data.n_samples), test_size=test_size, stratify=data.y, random_state=rs)
    val = None
    if validation_size:
        rest, val = train_test_split(rest, test_size=validation_size, stratify=data.y[rest], random_state=rs)
    return data.take(rest), None if val is None else data.take(val), data.take(test), rs


def split_task(task: dict[str, Any], data: Any) -> tuple[Any, Any, Any, Any]:
    """Train, validation (or ``None``) and test parts of ``data`` for this task's seed (and fold), and the training
    part before ``train_sample`` (what ``cv``'s ``subsample`` draws from).

    ``split = "sklearn"`` (:func:`sklearn_split`): the training part carries the stream after the split
    (``meta[SPLIT_STREAM]``), which the estimators' ``random_state`` continues (:func:`fit_task`)."""
    seed = int(task["seed"])
    val = None
    if task.get("split") == "sklearn":
        train, val, test, rs = sklearn_split(data, float(task["test_size"]), float(task.get("validation_size", 0)),
                                             seed)
        train = replace(train, meta={**train.meta, SPLIT_STREAM: rs})
    else:
        if task.get("folds"):
            skf = StratifiedKFold(n_splits=int(task["folds"]), shuffle=True, random_state=seed)
            tr, te = list(skf.split(np.zeros(data.n_samples), data.y))[int(task["fold"])]
            train, test = data.take(tr), data.take(te)
        elif float(task.get("test_size", 0.2)) > 0:
            train, test = data.split(float(task.get("test_size", 0.2)), seed=seed)
        else:  # no test part: train on every row
            train, test = data, None
        if task.get("validation_size"):
            train, val = train.split(float(task["validation_size"]), seed=seed)
    pool = train
    if task.get("train_sample"):
        train = train.subsample(int(task["train_sample"]), seed=seed)
        if train.n_samples < pool.n_samples:  # Günlük et al.'s selection (§5.1) fits its CART on the whole part
            train = replace(train, meta={**train.meta, SELECTION_ROWS: pool})
    return train, val, test, pool


def scale_factor(name: str, train: Any) -> float:
    """The statistic of the training rows that ``scale = { param = name }`` multiplies a parameter by.

    ``baseline_errors``: the errors of predicting the majority class (the minority-class count of two
    classes); ``n_train``: the number of rows.

        >>> from treeopt_dsl.data import Dataset
        >>> import numpy as np
        >>> d = Dataset.from_arrays(np.zeros((5, 1)), np.array([1, 1, 1, 0, 0]))
        >>> scale_factor("baseline_errors", d), scale_factor("n_train", d)
        (2.0, 5.0)
    """
    if name == "baseline_errors":
        return float(train.n_samples - np.unique(np.asarray(train.y), return_counts=True)[1].max())
    if name == "n_train":
        return float(train.n_samples)
    raise OptionError(f"scale must be one of {', '.join(SCALES)}, got {name!r}")


#: ``meta`` key of a training part drawn by :func:`sklearn_split`: the numpy ``RandomState`` after the split
SPLIT_STREAM = "split_stream"
#: per solver, the statistics read from its log: (row key, pattern of the last matching line's number)
_LOG_STATS = {"highs": (("nodes", re.compile(r"^\s*Nodes\s+(\d+)", re.M)),
                        ("lp_iterations", re.compile(r"^\s*LP iterations\s+(\d+)", re.M)))}


def log_stats(solver: str, lines: list[str]) -> dict[str, int]:
    """Branch-and-bound nodes and LP iterations from the solver's closing report (the last one in the log).

        >>> log_stats("highs", ["  Nodes             12", "  LP iterations     345 (total)"])
        {'nodes': 12, 'lp_iterations': 345}
    """
    text = "\n".join(lines)
    out = {}
    for key, pattern in _LOG_STATS.get(solver, ()):
        found = pattern.findall(text)
        if found:
            out[key] = int(found[-1])
    return out


def fit_task(task: dict[str, Any], params: dict[str, Any], train: Any, time_limit: float) -> tuple[Any, dict[str, Any]]:
    """The fitted model and what its solve says (status, objective, bound, gap, certificate, ...)."""
    seed, threads = int(task["seed"]), int(task.get("threads", 1))
    scaled = {k: params[k] * scale_factor(how, train) for k, how in (task.get("scale") or {}).items()}
    params = {**params, **scaled}
    model, out = _fit_scaled(task, params, train, time_limit, seed, threads)
    return model, ({**out, "scaled_params": scaled} if scaled else out)


def _fit_scaled(task: dict[str, Any], params: dict[str, Any], train: Any, time_limit: float, seed: int,
                threads: int) -> tuple[Any, dict[str, Any]]:
    """:func:`fit_task` with the parameters as solved (a HiGHS solve's log gives its nodes and LP iterations)."""
    if task.get("formulation"):
        spec = get_formulation(task["formulation"], **params)
        ws, solver = task.get("warm_start", "auto"), task.get("solver", "highs")
        lines: list[str] = []
        if task.get("start_only"):  # the warm start's model alone (thesis Fig. 3.8's OLCT-W)
            res = spec.start(train, ws, seed=seed, time_budget=time_limit)
        else:
            res = spec.solve(train, solver=solver, backend=task.get("backend"), time_limit=time_limit,
                             threads=threads, seed=seed, warm_start=None if ws == "none" else ws,
                             **({"log_callback": lines.append} if solver in _LOG_STATS else {}))
        if task.get("refine"):
            res = refine_result(res)
        out = {**res.to_dict(), **log_stats(solver, lines)}
        if is_logistic(spec) and res.model is not None:  # the thesis compares logistic trees in the true log-loss
            out["exact_objective"] = result_exact_objective(res)
        if task.get("references") and res.built is not None:
            out["references"] = _references(res.built, task["references"])
        return res.model, out
    est = task["estimator"]
    X, y = train.X, train.labels_of(train.y)
    state = train.meta.get(SPLIT_STREAM, seed)  # split = "sklearn": the estimators continue the split's stream
    t0 = time.perf_counter()
    if est == "cart":  # cp: rpart's complexity pruning of the grown tree (prune_misclassification)
        grow = {k: v for k, v in params.items() if k != "cp"}
        model = DecisionTreeClassifier(**{"random_state": state, **grow}).fit(X, y)
        if params.get("cp") is not None:
            model = prune_misclassification(model, params["cp"])
        return model, _fitted(t0)
    if est == "rpart":  # rpart's CART: subset splits of a factor, its minsplit / minbucket / cp defaults
        model = fit_subset_cart(train, **params)
        return model, _fitted(t0)
    if est in ("tmo", "tao"):
        cls = TMOClassifier if est == "tmo" else TAOClassifier
        extra = {"time_limit": time_limit} if est == "tmo" and "time_limit" not in params else {}
        model = cls(**{"random_state": state, **extra, **params}).fit(X, y)
        return model, _fitted(t0)

    cls = OptimalTreeClassifier if est == "optimal_tree" else RiskScoreClassifier
    model = cls(**{"solver": task.get("solver", "highs"), "time_limit": time_limit, "threads": threads,
                   "random_state": seed, **params}).fit(X, y)
    return model, model.result_.to_dict()


def _fitted(t0: float) -> dict[str, Any]:
    """The result of a heuristic estimator's fit (no objective, no bound): its status and time since ``t0``."""
    return {"status": "fitted", "objective": None, "bound": None, "gap": None,
            "runtime_s": round(time.perf_counter() - t0, 4)}


def _references(built: Any, names: list[str]) -> dict[str, Any]:
    """Each named start's objective in the formulation's own objective (a yardstick for the solver's answer)."""
    sf = built.compile()
    out: dict[str, Any] = {}
    for name in names:
        try:
            out[name] = float(sf.objective(start_point(built, name)))
        except Exception as exc:  # a start that does not fit this model: said, not hidden
            out[name] = f"n/a: {exc}"
    return out


def task_metrics(model: Any, data: Any, names: list[str]) -> dict[str, float]:
    """The measures ``names`` of ``model`` on ``data`` (accuracy and balanced accuracy even where probabilities
    cannot be scored; the exact log-loss of a score model)."""
    try:
        m = metrics(model, data)
    except ValueError:  # probabilities that cannot be scored (the positive label not among the model's classes)
        y, p = data.labels_of(data.y), model.predict(data.X)
        m = {"accuracy": float(np.mean(p == y)), "balanced_accuracy": balanced_accuracy(y, p)}
        if data.n_classes == 2:
            m.update(rates(y, p, np.asarray(data.y) > 0))
    if "logloss" in names and hasattr(model, "decision_function"):  # the exact log-loss of a score (risk scores)
        v = np.asarray(model.decision_function(data.X), dtype=float)
        m["logloss"] = float(np.mean(np.logaddexp(0.0, -data.y * v)))
    return {k: v for k, v in m.items() if k in names}


def _model_text(model: Any, estimator: str | None) -> str:
    if estimator == "cart":
        return export_text(model)
    if estimator in ("optimal_tree", "risk_score"):
        return str(model.model_)
    return str(getattr(model, "tree_", model))


def n_leaves(model: Any) -> int | None:
    """The leaves of a fitted tree (``None`` for other models): ``get_n_leaves()`` (scikit-learn's trees and ours),
    a fixed topology's leaves (a categorical tree's :class:`~treeopt_dsl.topology.shapes.Shape`: Günlük et al.'s
    Table 13 counts the topology chosen), or the model's ``n_leaves``.

        >>> from sklearn.tree import DecisionTreeClassifier
        >>> n_leaves(DecisionTreeClassifier(max_depth=1).fit([[0.0], [1.0]], [0, 1])), n_leaves(object())
        (2, None)
    """
    for obj in (model, getattr(model, "model_", None)):
        if obj is None:
            continue
        if hasattr(obj, "get_n_leaves"):
            return int(obj.get_n_leaves())
        shape = getattr(obj, "shape", None)
        if isinstance(getattr(shape, "n_leaves", None), (int, np.integer)):
            return int(shape.n_leaves)
        if isinstance(getattr(obj, "n_leaves", None), (int, np.integer)):
            return int(obj.n_leaves)
    return None


def _features_per_node(model: Any) -> float | None:
    """The thesis' sparsity: the mean number of features with a nonzero weight at each split."""
    inner = getattr(model, "model_", model)
    if hasattr(inner, "n_features_used"):
        return float(np.mean(inner.n_features_used()))
    if hasattr(model, "W_"):
        return float(np.mean((np.abs(np.asarray(model.W_)) > 1e-8).sum(1)))
    return None


def cv_parts(cv: dict[str, Any], train: Any, pool: Any, seed: int) -> list[tuple[Any, Any]]:
    """The (fit, score) pairs a ``cv`` selection scores every combination on (``folds >= 2``).

    With ``subsample`` (Günlük et al. §5.6: "we randomly select 600 data points as the training set ... the
    remaining data is used as a validation set", 5 times): ``repeats`` stratified draws of ``subsample`` rows of
    ``pool`` (the training part before ``train_sample``), each scored on the rest of ``pool``, when ``pool`` has more
    than ``subsample`` rows and the rest holds every class; otherwise (and without ``subsample``) stratified
    ``folds``-fold CV on ``train``.

        >>> import numpy as np
        >>> from treeopt_dsl.data import Dataset
        >>> pool = Dataset.from_arrays(np.arange(40.0)[:, None], np.arange(40) % 2)
        >>> [(a.n_samples, b.n_samples) for a, b in cv_parts({"folds": 5, "subsample": 30, "repeats": 3}, pool,
        ...                                                   pool, seed=0)]
        [(30, 10), (30, 10), (30, 10)]
        >>> len(cv_parts({"folds": 5, "subsample": 60, "repeats": 3}, pool, pool, seed=0))   # too few rows: 5 folds
        5
    """
    sub = cv.get("subsample")
    n_classes = int(np.unique(np.asarray(pool.y)).size)
    if sub and pool.n_samples - int(sub) >= n_classes:
        sss = StratifiedShuffleSplit(n_splits=int(cv.get("repeats", 5)), train_size=int(sub),
                                     test_size=pool.n_samples - int(sub), random_state=seed)
        return [(pool.take(a), pool.take(b)) for a, b in sss.split(np.zeros(pool.n_samples), pool.y)]
    skf = StratifiedKFold(n_splits=int(cv["folds"]), shuffle=True, random_state=seed)
    own = replace(train, meta={k: v for k, v in train.meta.items() if k != SELECTION_ROWS})  # a fold selects on
    return [(own.take(tr), own.take(va)) for tr, va in skf.split(np.zeros(train.n_samples), train.y)]  # its rows


def _select(task: dict[str, Any], train: Any, val: Any, pool: Any) -> tuple[dict[str, Any], list[dict[str, Any]],
                                                                          Any]:
    """The best combination of ``task["cv"]["grid"]``, every score, and (hold-out) the best combination's fit.

    ``folds >= 2``: the parts of :func:`cv_parts` (k-fold CV on the training part, or ``subsample`` draws); the
    caller then fits the best combination on the whole training part (the third value is ``None``).
    ``folds = 0``: each combination fitted on the training part and scored on the validation part; the third value
    is the best one's ``(model, result)``, the task's model (a tie goes to the first combination, in the grid's
    order).
    """
    cv = task["cv"]
    holdout = int(cv["folds"]) == 0
    if holdout:
        parts = [(train, val)]
    else:
        parts = cv_parts(cv, train, pool, int(task["seed"]))
    tl = float(cv.get("time_limit", task["time_limit"]))
    scores, fits = [], []
    for combo in _combos(cv["grid"]):
        vals, status = [], []
        for fit_on, score_on in parts:
            try:
                model, res = fit_task(task, {**task["params"], **combo}, fit_on, tl)
                vals.append(task_metrics(model, score_on, [cv["metric"]]).get(cv["metric"], float("nan"))
                            if model is not None else float("nan"))
            except Exception as exc:  # a fold without a model scores nothing (the combination can win elsewhere)
                model, res = None, {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
                vals.append(float("nan"))
            status.append(res.get("status"))
        if holdout:
            fits.append((model, res))
        scores.append({"params": combo, "scores": vals, "status": status,
                       "mean": float(np.nanmean(vals)) if not np.all(np.isnan(vals)) else None})
    ok = [k for k, s in enumerate(scores) if s["mean"] is not None]
    best = max(ok, key=lambda k: scores[k]["mean"]) if ok else 0
    return scores[best]["params"], scores, fits[best] if holdout else None


def _run_path(task: dict[str, Any], data: Any) -> dict[str, Any]:
    """A regularization path (``task["path"]``): its points, each with its measures, and the split's sizes."""
    p = task["path"]
    points, train, test = run_path(task["formulation"], data, p["lambda_l"], p["lambda_g"], params=task["params"],
                                   test_size=float(task.get("test_size", 0.25)), seed=int(task["seed"]),
                                   n_starts=int(p.get("n_starts", 20)), fresh=p.get("fresh"),
                                   solver=task.get("solver", "ipopt"), backend=task.get("backend"),
                                   time_limit=float(task["time_limit"]))
    rows = [pt.to_dict() for pt in points]
    ok = bool(rows) and all("test_accuracy" in r for r in rows)
    return {"status": "path", "ok": ok, "points": rows, "n_train": train.n_samples, "n_test": test.n_samples,
            "n_features": train.n_features, "runtime_s": round(sum(pt.result.runtime_s for pt in points), 4),
            "params": task["params"], "versions": _versions(task.get("solver", "ipopt")),
            **({} if ok else {"reason": "no model at some point of the path"})}


#: test hooks: environment variables the runner reads where it runs and passes on with each task
HOOK_VARS = ("TREEOPT_EXPERIMENT_TEST_LOG", "TREEOPT_EXPERIMENT_TEST_KILL")


def with_hooks(task: dict[str, Any]) -> dict[str, Any]:
    """``task`` with the test-hook variables set here (a fork server or a Dask worker has its own environment)."""
    hooks = {k: os.environ[k] for k in HOOK_VARS if os.environ.get(k)}
    return {**task, "_hooks": hooks} if hooks else task


def _test_hooks(task: dict[str, Any], attempt: int) -> None:
    env = task.get("_hooks") or {}
    log = env.get("TREEOPT_EXPERIMENT_TEST_LOG")
    if log:
        with open(log, "a") as fh:
            fh.write(f"{task['id']}\n")
    kill = env.get("TREEOPT_EXPERIMENT_TEST_KILL")
    if kill:
        substr, _, n = kill.rpartition(":")
        if substr and substr in task["id"] and attempt <= int(n or 1):
            os.kill(os.getpid(), signal.SIGKILL)


def _wait(seconds: float, until_file: str | None = None) -> None:
    """The ``sleep`` task's wait: ``seconds``, or, with ``until_file``, until that file exists (at most ``seconds``):
    a test holds tasks running for as long as it needs, whatever the machine's load."""
    if until_file is None:
        time.sleep(seconds)
        return
    end = time.monotonic() + seconds
    while not os.path.exists(until_file) and time.monotonic() < end:
        time.sleep(0.05)


def run_task(task: dict[str, Any], attempt: int = 1) -> dict[str, Any]:
    """Compute ``task`` here and return its row (never raises for a task's own failure: ``ok`` is False).

    Example:

        >>> run_task({"id": "t", "estimator": "sleep", "params": {"seconds": 0.0}})["status"]
        'done'
    """
    t0 = time.perf_counter()
    row: dict[str, Any] = {"id": task["id"], "attempt": attempt, "ok": False, "retryable": False,
                           "host": socket.gethostname()}
    try:
        _test_hooks(task, attempt)
        if task.get("estimator") == "sleep":
            p = task.get("params", {})
            held = bytearray(int(float(p.get("allocate_mb", 0)) * 2**20))  # the memory-limit test's allocation
            _wait(float(p.get("seconds", 1.0)), p.get("until_file"))
            row.update(ok=True, status="done", allocated_mb=len(held) // 2**20)
            return row
        data = load_task(task)
        if task.get("path"):
            row.update(_run_path(task, data))
            return row
        train, val, test, pool = split_task(task, data)
        params = dict(task["params"])
        row.update(n_train=train.n_samples, n_test=None if test is None else test.n_samples,
                   n_features=train.n_features)
        fitted = None
        if task.get("cv"):
            tc = time.perf_counter()
            best, scores, fitted = _select(task, train, val, pool)
            params.update(best)
            row.update(cv_best=best, cv_scores=scores, cv_s=round(time.perf_counter() - tc, 4))
        if fitted is None:  # (hold-out selection keeps the best combination's fit)
            tf = time.perf_counter()
            fitted = fit_task(task, params, train, float(task["time_limit"]))
            row["fit_s"] = round(time.perf_counter() - tf, 4)
        model, res = fitted
        row.update(res)
        row["params"] = params
        row["versions"] = _versions(task.get("solver") if task.get("formulation") else None)
        if model is not None:
            names = task.get("metrics", ["accuracy", "balanced_accuracy", "auc"])
            unscored: set[str] = set()
            for part, d in (("train", train), ("val", val), ("test", test)):
                if d is not None:
                    got = task_metrics(model, d, names)
                    row.update({f"{part}_{k}": v for k, v in got.items()})
                    unscored.update(k for k in names if k not in got)
            if unscored:  # asked for and not defined here (tpr / tnr of more than two classes, auc without
                row["unscored"] = sorted(unscored)  # probabilities): said in the row, not left out silently
            row["model_text"] = _model_text(model, task.get("estimator"))
            row["features_per_node"] = _features_per_node(model)
            row["n_leaves"] = n_leaves(model)
        row["ok"] = model is not None and not str(row.get("status", "")).startswith("interrupted")
        if not row["ok"]:
            row["reason"] = f"no model: status {row.get('status')} {row.get('message', '')}".strip()
    except MemoryError:
        row.update(status="failed", reason="out of memory (MemoryError: the task's memory limit)", retryable=True)
    except Exception as exc:
        row.update(status="error", reason=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=8))
    finally:
        row["task_s"] = round(time.perf_counter() - t0, 4)
    return row


# ----------------------------------------------------------------------------------------------- isolation
#: seconds allowed per solve beyond its time limit (loading, the warm start, building and handing over the model): on
#: tic-tac-toe a SCIP solve of MARGOT limited to 1 s took about 10 s in all (its starts and the MPS hand-over)
SOLVE_OVERHEAD_S = 10.0


def _timeout_reason(timeout: float) -> str:
    return (f"task timeout: killed after {timeout:.0f} s (rerun it with --retry-failed --task-timeout SEC, or set "
            "task_timeout in the grid)")


def wall_timeout(task: dict[str, Any]) -> float:
    """Seconds after which the runner kills a task: ``task_timeout``, else 1.5 x its solves' limits, plus
    :data:`SOLVE_OVERHEAD_S` per solve, plus 120."""
    if task.get("task_timeout"):
        return float(task["task_timeout"])
    n = 1
    if task.get("cv"):
        folds = int(task["cv"]["folds"])  # 0: hold-out, one fit per combination and no refit
        parts = max(folds, int(task["cv"].get("repeats", 0)) if task["cv"].get("subsample") else 0) or 1
        n = parts * len(_combos(task["cv"]["grid"])) + (1 if folds else 0)
    if task.get("path"):  # the first point's starts, then each later point's chained and fresh starts
        p = task["path"]
        n_l, n_g = (len(named_grid(v, "l", 1)) if isinstance(v, str) else len(v)
                    for v in (p["lambda_l"], p["lambda_g"]))
        starts = int(p.get("n_starts", 20))
        n = starts + (n_l * n_g - 1) * (starts + int(p.get("fresh", starts)))
    tl = float(task.get("time_limit", 60.0))
    cv_tl = float(task["cv"].get("time_limit", tl)) if task.get("cv") else tl
    return 1.5 * (tl + (n - 1) * cv_tl) + SOLVE_OVERHEAD_S * n + 120.0


def _limit(memory_mb: int | None, threads: int) -> None:
    """In the child: its own session (no terminal Ctrl-C), the address-space limit, BLAS threads."""
    import resource

    try:
        os.setsid()
    except OSError:
        pass
    if memory_mb:
        limit = int(memory_mb) * 1024 * 1024
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)


#: the exit status of a task process whose runner went away (:func:`_die_with_the_runner`)
EXIT_ORPHANED = 75


def _die_with_the_runner(lifeline: Any) -> None:
    """In the child, a thread: wait on the lifeline, whose other end only the runner holds, and end the process at
    once when it closes (the runner gone, even by SIGKILL, or done with this task). The child holds the fork
    server's and the resource tracker's pipes, so a child left computing kept both alive too."""
    try:
        lifeline.recv()  # nothing is ever sent: returns by EOFError when the runner's end closes
    except (EOFError, OSError):
        pass
    os._exit(EXIT_ORPHANED)


def _child(task: dict[str, Any], attempt: int, conn: Any, lifeline: Any = None) -> None:
    if lifeline is not None:
        threading.Thread(target=_die_with_the_runner, args=(lifeline,), name="treeopt-lifeline", daemon=True).start()
    _limit(task.get("memory_mb"), int(task.get("threads", 1)))
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(int(task.get("threads", 1)))
    except Exception:
        pass
    row = run_task(task, attempt)
    conn.send(json.dumps(row, default=json_default))
    conn.close()


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def source_stamp() -> tuple[float, str]:
    """The newest modification time of the library's Python files (:data:`_PACKAGES`) and that file's path.

        >>> t, path = source_stamp()
        >>> t > 0 and path.endswith(".py")
        True
    """
    newest, where = 0.0, ""
    for name in _PACKAGES:
        module = sys.modules.get(name) or importlib.import_module(name)
        for root in getattr(module, "__path__", []):
            for path in Path(root).rglob("*.py"):
                t = path.stat().st_mtime
                if t > newest:
                    newest, where = t, str(path)
    return newest, where


def _changed_since_start() -> str:
    """Why a forked task may have died: the library's files changed after the fork server loaded them ("" if not)."""
    if _STAMP is None:
        return ""
    now, where = source_stamp()
    if now <= _STAMP[0]:
        return ""
    return (f"the library's files changed after this run's worker processes loaded them ({where}, "
            f"{time.strftime('%H:%M:%S', time.localtime(now))}): a task forked now mixes the modules loaded then with "
            "the files now; rerun with --retry-failed (or run from a copy of the code that does not change)")


def _died(task: dict[str, Any], attempt: int, code: int | None, t0: float, detail: str = "") -> dict[str, Any]:
    if code is not None and code < 0:
        name = _signal_name(code)
        why = " (out of memory: the kernel's OOM killer, or killed)" if name == "SIGKILL" else ""
        reason = f"worker killed by {name}{why}"
    else:
        reason = f"worker exited with code {code} before reporting"
        changed = _changed_since_start()
        detail = "; ".join(d for d in (detail, changed) if d)
    return {"id": task["id"], "attempt": attempt, "ok": False, "status": "failed", "retryable": True,
            "host": socket.gethostname(), "reason": reason + (f": {detail}" if detail else ""), "exitcode": code,
            "task_s": round(time.perf_counter() - t0, 4)}


def _forkserver() -> Any:
    global _FORKSERVER, _STAMP
    if _FORKSERVER is None:
        import multiprocessing as mp

        _STAMP = source_stamp()  # the files the fork server is about to load
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        _FORKSERVER = ctx
    return _FORKSERVER


def run_isolated(task: dict[str, Any], attempt: int = 1, *, timeout: float | None = None,
                 running: Any = None) -> dict[str, Any]:
    """Run ``task`` in a child process with its limits; the row (``ok`` False with ``reason`` if it died).

    ``running``: an optional ``set`` the child's handle joins while it runs (the runner kills them on Ctrl-C).
    """
    import multiprocessing as mp

    timeout = wall_timeout(task) if timeout is None else timeout
    t0 = time.perf_counter()
    if mp.current_process().daemon or sys.platform == "win32":
        return _run_subprocess(task, attempt, timeout, running, t0)
    ctx = _forkserver()
    recv, send = ctx.Pipe(duplex=False)
    life_r, life_w = ctx.Pipe(duplex=False)  # the child ends itself when life_w closes (this process gone)
    p = ctx.Process(target=_child, args=(task, attempt, send, life_r), daemon=True)
    p.start()
    send.close()
    life_r.close()
    if running is not None:
        running.add(p)
    try:
        from multiprocessing.connection import wait

        deadline = t0 + timeout
        while True:
            ready = wait([recv, p.sentinel], timeout=max(0.0, deadline - time.perf_counter()))
            if recv in ready or recv.poll():
                try:
                    row = json.loads(recv.recv())
                except EOFError:
                    p.join(5)
                    return _died(task, attempt, p.exitcode, t0)
                p.join(10)
                if p.exitcode is None:
                    p.kill()
                row["wall_s"] = round(time.perf_counter() - t0, 4)
                return row
            if p.sentinel in ready:
                p.join(1)
                return _died(task, attempt, p.exitcode, t0)
            if time.perf_counter() >= deadline:
                p.kill()
                p.join(5)
                row = _died(task, attempt, p.exitcode, t0)
                row.update(reason=_timeout_reason(timeout), retryable=False, status="timeout")
                return row
    finally:
        recv.close()
        if running is not None:
            running.discard(p)
        if p.is_alive():
            p.kill()
        life_w.close()


class _Popen:
    """A ``subprocess.Popen`` with the ``kill`` / ``is_alive`` the runner calls on its children."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc

    def kill(self) -> None:
        self.proc.kill()

    def is_alive(self) -> bool:
        return self.proc.poll() is None


def _run_subprocess(task: dict[str, Any], attempt: int, timeout: float, running: Any, t0: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="treeopt-task-") as tmp:
        inp, out = os.path.join(tmp, "task.json"), os.path.join(tmp, "row.json")
        with open(inp, "w") as fh:
            json.dump({"task": task, "attempt": attempt}, fh, default=json_default)
        mem, threads = task.get("memory_mb"), int(task.get("threads", 1))
        proc = subprocess.Popen([sys.executable, "-m", "treeopt_dsl.experiments.worker", inp, out],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=lambda: _limit(mem, threads))
        handle = _Popen(proc)
        if running is not None:
            running.add(handle)
        try:
            try:
                _, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                row = _died(task, attempt, proc.returncode, t0)
                row.update(reason=_timeout_reason(timeout), retryable=False, status="timeout")
                return row
        finally:
            if running is not None:
                running.discard(handle)
        if proc.returncode == 0 and os.path.exists(out):
            with open(out) as fh:
                row = json.load(fh)
            row["wall_s"] = round(time.perf_counter() - t0, 4)
            return row
        tail = err.decode(errors="replace").strip().splitlines()[-1:] if err else []
        return _died(task, attempt, proc.returncode, t0, tail[0] if tail else "")


def _main(argv: list[str]) -> int:
    """``python -m treeopt_dsl.experiments.worker TASK.json ROW.json``: one task, its row to a file."""
    with open(argv[0]) as fh:
        payload = json.load(fh)
    row = run_task(payload["task"], int(payload.get("attempt", 1)))
    tmp = argv[1] + ".part"
    with open(tmp, "w") as fh:
        json.dump(row, fh, default=json_default)
    os.replace(tmp, argv[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
