"""The experiment grid: a TOML description, validated up front, with errors that name the line and key.

A grid has four kinds of tables::

    [experiment]                 # name, defaults for every method, retries
    name = "tiny"
    time_limit = 5.0             # seconds per solve (a method may override)
    memory_mb = 4096             # address-space limit of each task's process
    threads = 1
    solver = "highs"
    retries = 2                  # a task whose worker dies is run again up to this many times
    metrics = ["accuracy", "balanced_accuracy", "auc"]   # and "logloss" (risk scores: the exact log-loss),
                                 # "tpr", "tnr" (two classes: sensitivity and specificity of the positive class)

    [data]
    datasets = ["haberman", "heart", { name = "pima", sample = 200 }]   # names, CSV paths or tables
    # a table: name or path, positive, variant, label, multiclass, sample, rows = N (the first N rows, before
    # any split or sample: e.g. { name = "a2a", rows = 2265 }, the LIBSVM training file of a stacked set),
    # roll = N (the rows rolled by N places first, numpy.roll: { name = "spectf", roll = -80 } puts its 80
    # training-file rows after its 187 test-file rows, the order of another copy's file),
    # one_hot = [integer columns to one-hot encode], one_hot_drop = "first" or "last" (that level of every
    # one-hot attribute dropped: e.g. { name = "balance", one_hot = ["left-weight", ...], one_hot_drop = "first" }),
    # drop_classes = [labels] (their rows left out before the labels are mapped: the thesis' balance without "B"),
    # file = "NAME" (only that one of a manifest set's files: e.g. { name = "monks-1", file = "monks-1.test" }),
    # params = { ... } (formulation parameters for this dataset's tasks, given to every method whose formulation
    # takes them: e.g. { name = "fico-heloc", params = { preselect_min_groups = 4 } }, Günlük et al. §5.7)
    seeds = [0, 1]
    test_size = 0.2              # or folds = 5 (k-fold: one task per fold and seed)
    validation_size = 0.0        # a validation part of the training rows (metrics recorded as val_*)
    split = "stratified"         # or "sklearn": scikit-learn's stratified train_test_split, test part then
                                 # validation part drawn from one numpy RandomState(seed), whose stream the
                                 # estimators' random_state continues (the author's code of seed 004 and the thesis)
    sample = 0                   # stratified subsample of every dataset first (0: all rows)
    train_sample = 0             # at most this many training rows, drawn after the split (0: all)

    [[method]]                   # one per formulation or estimator
    name = "olct"                # the label in reports (default: the formulation's name)
    formulation = "olct"         # or estimator = "tmo" | "tao" | "cart" | "rpart" | "optimal_tree" | "risk_score" |
                                 # "sleep"
    params = { depth = 2 }
    grid = { C = [0.1, 1.0] }    # one task per combination
    cv = { folds = 4, grid = { C = [0.01, 1, 100] }, metric = "balanced_accuracy" }   # selection inside a task
    # folds = 0: hold-out selection on [data]'s validation part (validation_size > 0): each combination fitted
    # on the training part and scored on the validation part; the best one's model is the task's (no refit)
    # subsample = 600, repeats = 5: where the training part (before train_sample) has more than 600 rows, 5 random
    # stratified draws of 600 rows each, scored on the rest of it, instead of the folds (Günlük et al. §5.6)
    scale = { alpha = "baseline_errors" }   # multiply a parameter by a statistic of the rows it is fitted on
    path = { lambda_l = "paper", lambda_g = [0.0], n_starts = 20, fresh = 20 }   # a regularization path
    datasets = ["haberman"]      # only these datasets of [data] (default: all)
    solver = "scip"
    time_limit = 10.0
    warm_start = "auto"          # or "none", "cart", "greedy", ...
    refine = true                # olct, olct_univariate: refit the last layer after each solve (thesis Remark 1)
    start_only = true            # the warm start's model alone, no solver run (thesis Fig. 3.8's OLCT-W)
    references = ["cart", "greedy"]   # record these starts' objectives beside the solver's
    train_sample = 600           # this method's own [data] train_sample (0: the whole training part)

``scale`` names: ``baseline_errors`` (the errors of predicting the majority class on the training rows: the
minority-class count of two classes; Bertsimas and Dunn's alpha is per baseline error) and ``n_train`` (the
number of training rows). With ``cv`` the scale is taken on the rows each fit sees.

``path``: the task walks a formulation's ``(lambda_l, lambda_g)`` grid (values, or ``"paper"``: S-ORCT's 0 and
2^r / (p |tau_B|), r = -12..3; ``"paper-ends"``: its two ends, a lambda_G row walked at 2 points) with chained warm
starts (:func:`treeopt_dsl.formulations.sorct.run_path`): the first
point from ``n_starts`` random points, every later one from the previous point's solutions plus ``fresh``
new random points; ``time_limit`` is per start. The row carries ``points``: one dict per point (lambda_l,
lambda_g, status, objective, won, time_per_start_s, wall_s, train/test accuracy, delta_l, delta_g, and both deltas
at the coarser threshold 1e-3: delta_l_1e3, delta_g_1e3). A path splits the data itself (``test_size`` > 0; no
folds, validation part, ``train_sample``, ``cv`` or ``scale``).

A formulation solved by HiGHS also records ``nodes`` (branch-and-bound nodes) and ``lp_iterations`` (from
HiGHS' closing report in its log) when the solve reports them.

Example:

    >>> g = parse_grid('[experiment]\\nname = "x"\\n[data]\\ndatasets = ["haberman"]\\n'
    ...                '[[method]]\\nformulation = "olct"\\n')
    >>> g.name, g.methods[0].name
    ('x', 'olct')
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from treeopt_dsl.backends import AUTO, BACKENDS, KNOWN_SOLVERS, engines
from treeopt_dsl.datasets import check_dataset
from treeopt_dsl.datasets.onehot import DROPS as ONE_HOT_DROPS
from treeopt_dsl.defaults import GRID_TIME_LIMIT
from treeopt_dsl.errors import DataError, TreeoptError
from treeopt_dsl.formulations import REGISTRY, get_formulation
from treeopt_dsl.registry import RISK_STARTS, TREE_STARTS, WARM_STARTS
from treeopt_dsl.starts.multistart import NAMED_GRIDS
from treeopt_dsl.starts.refine import check_refinable
from treeopt_dsl.topology import Topology

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["ESTIMATORS", "METRICS", "SCALES", "DataSpec", "Grid", "GridError", "MethodSpec", "load_grid", "parse_grid",
           "resolve_path", "toml_value"]

#: what ``estimator = ...`` may name (``sleep`` is a diagnostic task that only waits: the runner's overhead; its
#: params: ``seconds``, ``until_file`` (end early once that file exists), ``allocate_mb``)
ESTIMATORS = ("tmo", "tao", "cart", "rpart", "optimal_tree", "risk_score", "sleep")
#: the parameters of ``estimator = "rpart"`` (:func:`~treeopt_dsl.models.subset_cart.fit_subset_cart`)
RPART_PARAMS = ("max_depth", "min_split", "min_leaf", "cp", "categorical", "n_bins")
#: what ``scale = { param = ... }`` may multiply a parameter by (see :func:`~.worker.scale_factor`)
SCALES = ("baseline_errors", "n_train")
#: the metrics a task may record on every part (train / validation / test)
METRICS = ("accuracy", "balanced_accuracy", "auc", "logloss", "tpr", "tnr")
_CV_METRICS = ("accuracy", "balanced_accuracy", "auc")
#: what ``references = [...]`` may name: the starts made by name (``warm_start = ...`` may name
#: :data:`treeopt_dsl.registry.WARM_STARTS`)
REFERENCES = (*TREE_STARTS, *RISK_STARTS)
#: estimators whose ``depth`` parameter is a tree depth (checked against :class:`~treeopt_dsl.topology.Topology`)
_DEPTH_ESTIMATORS = ("tmo", "tao", "optimal_tree")


def solver_names() -> list[str]:
    """What ``solver = ...`` may name: ``auto``, the MILP/NLP solvers and the exact engines of the route registry."""
    return list(dict.fromkeys([AUTO, *KNOWN_SOLVERS, *engines()]))


class GridError(TreeoptError, ValueError):
    """The grid file is not valid: the message names the file, line and key."""


_EXPERIMENT_KEYS = {"name", "description", "time_limit", "memory_mb", "threads", "solver", "backend", "retries",
                    "metrics", "warm_start", "task_timeout", "paper"}
_DATA_KEYS = {"datasets", "seeds", "test_size", "validation_size", "folds", "sample", "data_dir", "train_sample",
              "split"}
#: ``[data] split``: this library's stratified split (each part seeded by the seed) or scikit-learn's from one stream
SPLITS = ("stratified", "sklearn")
#: dataset keys whose 0 (or False) is a value (class 0 the positive one, column 0 the label), not "unset"
_ZERO_IS_A_VALUE = {"positive", "label"}
_DATASET_KEYS = {"name", "path", "positive", "variant", "label", "sample", "multiclass", "rows", "roll", "one_hot",
                 "one_hot_drop", "file", "drop_classes", "params"}
_METHOD_KEYS = {"name", "formulation", "estimator", "params", "grid", "cv", "solver", "backend", "time_limit",
                "warm_start", "threads", "memory_mb", "task_timeout", "references", "datasets", "train_sample",
                "refine", "start_only", "scale", "path"}
_CV_KEYS = {"folds", "grid", "metric", "time_limit", "subsample", "repeats"}
_PATH_KEYS = {"lambda_l", "lambda_g", "n_starts", "fresh"}


@dataclass(frozen=True)
class DataSpec:
    """One dataset of the grid: a manifest/bundled name or a CSV path, and how to read it."""

    name: str
    path: str | None = None
    positive: Any = None
    variant: str | None = None
    label: Any = None
    sample: int = 0
    multiclass: bool = False
    #: only the first ``rows`` rows of the loaded dataset (before any split or sample; 0: all)
    rows: int = 0
    #: the rows rolled by this many places first (``numpy.roll``: -80 moves the first 80 rows to the end; 0: as read)
    roll: int = 0
    #: integer columns one-hot encoded by the loader (:func:`~treeopt_dsl.datasets.onehot.one_hot_columns`)
    one_hot: tuple[str, ...] | None = None
    #: ``"first"`` (``"last"``): the first (last) level of every one-hot attribute dropped (``None``: every level kept)
    one_hot_drop: str | None = None
    #: only this one of the manifest set's ``parse`` files (``None``: all of them, stacked)
    file: str | None = None
    #: the rows of these classes left out before the labels are mapped (:func:`treeopt_dsl.datasets.load`)
    drop_classes: tuple[Any, ...] | None = None
    #: formulation parameters of this dataset's tasks, for every method whose formulation takes them
    params: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """How to read the data (a task's ``dataset``); ``params`` go to the tasks' parameters instead, so that a
        method that does not take them keeps its task ids."""
        def given(k: str, v: Any) -> bool:
            return k == "name" or (v is not None if k in _ZERO_IS_A_VALUE else v not in (None, 0, False))

        return {k: v for k, v in self.__dict__.items() if k != "params" and given(k, v)}


def _param_names(form: str) -> set[str]:
    """The parameter names of the registered formulation ``form``."""
    return {p["name"] for p in REGISTRY[form].describe()["params"]}


@dataclass(frozen=True)
class MethodSpec:
    """One formulation or estimator of the grid, with its fixed parameters and grids."""

    name: str
    formulation: str | None
    estimator: str | None
    params: dict[str, Any]
    grid: dict[str, list[Any]]
    cv: dict[str, Any] | None
    solver: str
    backend: str | None
    time_limit: float
    warm_start: Any
    threads: int
    memory_mb: int
    task_timeout: float | None
    #: starts whose objective (in this formulation's own objective) each row records, e.g. ``["cart", "greedy"]``
    references: list[str] | None = None
    #: the names of the grid's datasets this method runs on (``None``: all)
    datasets: list[str] | None = None
    #: at most this many training rows (a stratified subsample of the training part, after the split; 0: all)
    train_sample: int = 0
    #: parameter -> a name of :data:`SCALES`: the parameter is multiplied by that statistic of the training rows
    scale: dict[str, str] | None = None
    #: a regularization path task: ``lambda_l``, ``lambda_g`` ("paper" or values), ``n_starts``, ``fresh``
    path: dict[str, Any] | None = None
    #: refit the last layer of each logistic tree solved (Remark 1, :func:`~treeopt_dsl.starts.refine.refine_result`)
    refine: bool = False
    #: the ``warm_start``'s model alone, no solver run (:meth:`~formulations.spec.FormulationSpec.start`)
    start_only: bool = False

    def takes(self, key: str) -> bool:
        """Whether this method's formulation has the parameter ``key`` (an estimator's never: a dataset's
        ``params`` are formulation parameters)."""
        return self.formulation is not None and key in _param_names(self.formulation)

    def params_for(self, data: DataSpec) -> dict[str, Any]:
        """The parameters of this method's tasks on ``data``: the method's, then those of the dataset's ``params``
        its formulation takes (a grid point's, from ``grid``, go on top)."""
        return {**self.params, **{k: v for k, v in (data.params or {}).items() if self.takes(k)}}


@dataclass
class Grid:
    """A validated grid (see the module doc); :func:`~treeopt_dsl.experiments.tasks.expand` makes its tasks."""

    name: str
    description: str
    datasets: list[DataSpec]
    seeds: list[int]
    test_size: float
    validation_size: float
    folds: int
    sample: int
    data_dir: str | None
    methods: list[MethodSpec]
    retries: int
    metrics: list[str]
    path: str | None = None
    paper: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    #: the directory relative CSV paths and ``data_dir`` are read against (the grid file's; ``None``: the working
    #: directory of whoever loads the data). Not part of a task's id: the same grid elsewhere gives the same ids
    base_dir: str | None = None
    #: how each seed splits the rows (:data:`SPLITS`)
    split: str = "stratified"


class _Lines:
    """Where each table and key sits in the TOML text (tomllib keeps no positions)."""

    _header = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\" ]+?)\s*\]\]?")
    _key = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")

    def __init__(self, text: str) -> None:
        self.tables: dict[tuple[str, int], int] = {}
        self.keys: dict[tuple[str, int, str], int] = {}
        counts: dict[str, int] = {}
        current, index = "", 0
        for lineno, line in enumerate(text.splitlines(), 1):
            m = self._header.match(line)
            if m:
                current = m.group(2).replace('"', "").strip()
                index = counts.get(current, -1) + 1 if m.group(1) == "[[" else 0
                counts[current] = index
                self.tables[(current, index)] = lineno
                continue
            k = self._key.match(line)
            if k:
                self.keys.setdefault((current, index, k.group(1).strip('"')), lineno)

    def line(self, table: str, index: int = 0, key: str | None = None) -> int | None:
        if key is not None and (table, index, key) in self.keys:
            return self.keys[(table, index, key)]
        return self.tables.get((table, index))


class _Checker:
    def __init__(self, text: str, source: str) -> None:
        self.lines = _Lines(text)
        self.source = source

    def fail(self, table: str, key: str | None, message: str, index: int = 0) -> GridError:
        line = self.lines.line(table, index, key.split(".")[0] if key else None)
        where = f"{self.source}" + (f", line {line}" if line else "")
        label = (f"[[{table}]] #{index + 1}" if table == "method" else f"[{table}]") + (f" key {key!r}" if key else "")
        return GridError(f"{where}: {label}: {message}")

    def unknown(self, table: str, got: dict[str, Any], allowed: set[str], index: int = 0) -> None:
        for k in got:
            if k not in allowed:
                raise self.fail(table, k, f"unknown key (allowed: {', '.join(sorted(allowed))})", index)

    def number(self, table: str, key: str, value: Any, *, lo: float | None = None, hi: float | None = None,
               integer: bool = False, index: int = 0, strict_lo: bool = False) -> Any:
        kinds = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise self.fail(table, key, f"expected {'an integer' if integer else 'a number'}, got {value!r}", index)
        if lo is not None and (value < lo or (strict_lo and value == lo)):
            raise self.fail(table, key, f"must be {'>' if strict_lo else '>='} {lo:g}, got {value!r}", index)
        if hi is not None and value > hi:
            raise self.fail(table, key, f"must be <= {hi:g}, got {value!r}", index)
        return value


def resolve_path(path: str | Path, base_dir: str | Path | None) -> Path:
    """``path`` as the runner reads it: ``~`` expanded; a relative path is taken relative to ``base_dir`` (the grid
    file's directory), or to the working directory when there is none.

    >>> str(resolve_path("data/my.csv", "/exp")), str(resolve_path("/abs/my.csv", "/exp"))
    ('/exp/data/my.csv', '/abs/my.csv')
    """
    p = Path(path).expanduser()
    return p if p.is_absolute() or base_dir is None else Path(base_dir) / p


def parse_grid(text: str, source: str = "<grid>", base_dir: str | Path | None = None) -> Grid:
    """Validate TOML text as a grid; raises :class:`GridError` naming the line and key of the first problem.

    ``base_dir``: the directory relative paths of the grid (CSV files of ``datasets``, ``data_dir``) are read
    against; :func:`load_grid` gives the grid file's directory, text grids default to the working directory. Every
    such path is checked here, before anything runs.

    Example:

        >>> parse_grid('[experiment]\\nname = "x"\\ntime_limit = -1\\n')
        Traceback (most recent call last):
        ...
        treeopt_dsl.experiments.grid.GridError: <grid>, line 3: [experiment] key 'time_limit': must be > 0, got -1
    """
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"{source}: not valid TOML: {exc}") from None
    ck = _Checker(text, source)
    for k in raw:
        if k not in ("experiment", "data", "method"):
            raise ck.fail(k, None, "unknown table (allowed: [experiment], [data], [[method]])")
    exp = raw.get("experiment", {})
    if not isinstance(exp, dict):
        raise ck.fail("experiment", None, "must be a table [experiment]")
    ck.unknown("experiment", exp, _EXPERIMENT_KEYS)
    name = exp.get("name", Path(source).stem if source != "<grid>" else "experiment")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
        raise ck.fail("experiment", "name", f"must be letters, digits, '_', '-', '.', got {name!r}")
    time_limit = ck.number("experiment", "time_limit", exp.get("time_limit", GRID_TIME_LIMIT), lo=0, strict_lo=True)
    memory_mb = ck.number("experiment", "memory_mb", exp.get("memory_mb", 8192), lo=64, integer=True)
    threads = ck.number("experiment", "threads", exp.get("threads", 1), lo=1, integer=True)
    retries = ck.number("experiment", "retries", exp.get("retries", 2), lo=0, integer=True)
    task_timeout = exp.get("task_timeout")
    if task_timeout is not None:
        ck.number("experiment", "task_timeout", task_timeout, lo=0, strict_lo=True)
    solver = exp.get("solver", "highs")
    _check_route(ck, "experiment", 0, solver, exp.get("backend"), exp.get("warm_start", "auto"))
    metrics = exp.get("metrics", ["accuracy", "balanced_accuracy", "auc"])
    if not isinstance(metrics, list) or any(m not in METRICS for m in metrics):
        raise ck.fail("experiment", "metrics", f"a list of {', '.join(METRICS)}; got {metrics!r}")

    data = raw.get("data")
    if not isinstance(data, dict):
        raise ck.fail("data", None, "missing: a [data] table with datasets = [...] is required")
    ck.unknown("data", data, _DATA_KEYS)
    ds = data.get("datasets")
    if not isinstance(ds, list) or not ds:
        raise ck.fail("data", "datasets", "expected a non-empty list of names, CSV paths or tables")
    datasets = []
    for i, d in enumerate(ds):
        if isinstance(d, str):
            datasets.append(DataSpec(name=Path(d).stem if d.endswith(".csv") else d,
                                     path=d if d.endswith(".csv") else None))
        elif isinstance(d, dict):
            bad = [k for k in d if k not in _DATASET_KEYS]
            if bad:
                raise ck.fail("data", "datasets", f"entry {i + 1}: unknown key {bad[0]!r} "
                                                  f"(allowed: {', '.join(sorted(_DATASET_KEYS))})")
            if "name" not in d and "path" not in d:
                raise ck.fail("data", "datasets", f"entry {i + 1}: needs name or path")
            for key in ("sample", "rows"):
                v = d.get(key, 0)
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    raise ck.fail("data", "datasets", f"entry {i + 1}: {key} must be an integer >= 0, got {v!r}")
            if isinstance(d.get("roll", 0), bool) or not isinstance(d.get("roll", 0), int):
                raise ck.fail("data", "datasets", f"entry {i + 1}: roll must be an integer (places, either sign), "
                                                  f"got {d['roll']!r}")
            one_hot = d.get("one_hot")
            if isinstance(one_hot, str):
                one_hot = [one_hot]
            if one_hot is not None and (not isinstance(one_hot, list) or not one_hot
                                        or not all(isinstance(c, str) for c in one_hot)):
                raise ck.fail("data", "datasets", f"entry {i + 1}: one_hot must be a non-empty list of column names, "
                                                  f"got {d.get('one_hot')!r}")
            if d.get("file") is not None and (not isinstance(d["file"], str) or not d["file"] or "path" in d):
                raise ck.fail("data", "datasets", f"entry {i + 1}: file must be the name of one of a manifest "
                                                  f"dataset's files (not with path), got {d['file']!r}")
            drop = d.get("drop_classes")
            if isinstance(drop, (str, int)) and not isinstance(drop, bool):
                drop = [drop]
            if drop is not None and (not isinstance(drop, list) or not drop
                                     or not all(isinstance(c, (str, int)) and not isinstance(c, bool) for c in drop)):
                raise ck.fail("data", "datasets", f"entry {i + 1}: drop_classes must be a class label or a non-empty "
                                                  f"list of them, got {d.get('drop_classes')!r}")
            if d.get("one_hot_drop") not in ONE_HOT_DROPS:
                raise ck.fail("data", "datasets", f"entry {i + 1}: one_hot_drop must be \"first\" or \"last\" (or left "
                                                  f"out: every level kept), got {d.get('one_hot_drop')!r}")
            datasets.append(DataSpec(name=str(d.get("name", Path(str(d.get("path"))).stem)), path=d.get("path"),
                                     positive=d.get("positive"), variant=d.get("variant"), label=d.get("label"),
                                     sample=d.get("sample", 0), multiclass=bool(d.get("multiclass", False)),
                                     rows=d.get("rows", 0), roll=d.get("roll", 0),
                                     one_hot=None if one_hot is None else tuple(one_hot),
                                     one_hot_drop=d.get("one_hot_drop"), file=d.get("file"),
                                     drop_classes=None if drop is None else tuple(drop), params=d.get("params")))
            if d.get("params") is not None and (not isinstance(d["params"], dict) or not d["params"]):
                raise ck.fail("data", "datasets", f"entry {i + 1}: params must be a non-empty table of formulation "
                                                  f"parameters, got {d['params']!r}")
        else:
            raise ck.fail("data", "datasets", f"entry {i + 1}: expected a name or a table, got {d!r}")
    names = [d.name for d in datasets]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ck.fail("data", "datasets", f"dataset {dup[0]!r} appears twice (give one a different name)")
    seeds = data.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise ck.fail("data", "seeds", f"expected a non-empty list of integers, got {seeds!r}")
    folds = ck.number("data", "folds", data.get("folds", 0), lo=0, integer=True)
    if folds == 1:
        raise ck.fail("data", "folds", "k-fold needs folds >= 2 (or 0 for a train/test split)")
    if folds and "test_size" in data:
        raise ck.fail("data", "folds", "give either folds (k-fold) or test_size (a split), not both")
    test_size = ck.number("data", "test_size", data.get("test_size", 0.2), lo=0, hi=0.9)  # 0: no test part
    validation_size = ck.number("data", "validation_size", data.get("validation_size", 0.0), lo=0, hi=0.9)
    sample = ck.number("data", "sample", data.get("sample", 0), lo=0, integer=True)
    split = data.get("split", "stratified")
    if split not in SPLITS:
        raise ck.fail("data", "split", f"expected one of {', '.join(map(repr, SPLITS))}, got {split!r}")
    if split != "stratified" and (folds or not test_size):
        raise ck.fail("data", "split", f"split = {split!r} draws a test part: give test_size > 0 (not folds)")
    train_sample = ck.number("data", "train_sample", data.get("train_sample", 0), lo=0, integer=True)
    data_dir = data.get("data_dir")
    base = None if base_dir is None else str(Path(base_dir).expanduser().resolve())
    if data_dir is not None:
        if not isinstance(data_dir, str) or not data_dir:
            raise ck.fail("data", "data_dir", f"expected a directory path (text), got {data_dir!r}")
        where = resolve_path(data_dir, base)
        if not where.is_dir():
            raise ck.fail("data", "data_dir", f"no directory {data_dir!r}" + _relative_note(data_dir, base))

    ms = raw.get("method")
    if not isinstance(ms, list) or not ms:
        raise ck.fail("method", None, "missing: at least one [[method]] table is required")
    methods = []
    for i, m in enumerate(ms):
        methods.append(_method(ck, m, i, time_limit=time_limit, solver=solver, threads=threads, memory_mb=memory_mb,
                               warm_start=exp.get("warm_start", "auto"), backend=exp.get("backend"),
                               task_timeout=task_timeout, dataset_names=names, train_sample=train_sample,
                               folds=folds, test_size=test_size, validation_size=validation_size))
    labels = [m.name for m in methods]
    dup = sorted({n for n in labels if labels.count(n) > 1})
    if dup:
        idx = len(labels) - 1 - labels[::-1].index(dup[0])
        raise ck.fail("method", "name", f"two methods are named {dup[0]!r} (names label the reports)", idx)
    _check_datasets(ck, datasets, methods, data_dir, base)
    _check_dataset_params(ck, datasets, methods)
    return Grid(name=name, description=str(exp.get("description", "")), datasets=datasets, seeds=list(seeds),
                test_size=float(test_size), validation_size=float(validation_size), folds=int(folds),
                sample=int(sample), data_dir=data_dir, methods=methods, retries=int(retries), metrics=list(metrics),
                path=None if source == "<grid>" else source, paper=exp.get("paper"), raw=raw, base_dir=base,
                split=split)


def _check_dataset_params(ck: _Checker, datasets: list[DataSpec], methods: list[MethodSpec]) -> None:
    """A dataset's ``params``: each taken by at least one formulation method run on it, and valid there."""
    for k, d in enumerate(datasets):
        runs = [m for m in methods if m.datasets is None or d.name in m.datasets]
        for key in d.params or {}:
            if not any(m.takes(key) for m in runs):
                raise ck.fail("data", "datasets", f"entry {k + 1}: params: {key!r} is not a parameter of any "
                                                  f"formulation run on {d.name!r}")
        for m in runs:
            if any(m.takes(key) for key in d.params or {}):
                try:
                    get_formulation(m.formulation, **m.params_for(d)).topology()
                except (TreeoptError, TypeError, ValueError) as exc:
                    raise ck.fail("data", "datasets", f"entry {k + 1}: params, with method {m.name!r}'s: {exc}"
                                  ) from None


def _method(ck: _Checker, m: Any, i: int, **defaults: Any) -> MethodSpec:
    if not isinstance(m, dict):
        raise ck.fail("method", None, "must be a table", i)
    ck.unknown("method", m, _METHOD_KEYS, i)
    form, est = m.get("formulation"), m.get("estimator")
    if (form is None) == (est is None):
        raise ck.fail("method", None, "give exactly one of formulation = ... or estimator = ...", i)
    if form is not None and form not in REGISTRY:
        raise ck.fail("method", "formulation", f"unknown formulation {form!r} (known: {', '.join(REGISTRY)})", i)
    if est is not None and est not in ESTIMATORS:
        raise ck.fail("method", "estimator", f"unknown estimator {est!r} (known: {', '.join(ESTIMATORS)})", i)
    params = m.get("params", {})
    if not isinstance(params, dict):
        raise ck.fail("method", "params", f"expected a table of parameters, got {params!r}", i)
    grid = m.get("grid", {})
    if not isinstance(grid, dict) or any(not isinstance(v, list) or not v for v in grid.values()):
        raise ck.fail("method", "grid", "expected a table of non-empty lists, e.g. grid = { C = [0.1, 1] }", i)
    clash = sorted(set(grid) & set(params))
    if clash:
        raise ck.fail("method", "grid", f"{clash[0]!r} is both in params and in grid", i)
    cv = m.get("cv")
    if cv is not None:
        if not isinstance(cv, dict):
            raise ck.fail("method", "cv", "expected a table { folds = 4, grid = {...}, metric = ... }", i)
        bad = [k for k in cv if k not in _CV_KEYS]
        if bad:
            raise ck.fail("method", "cv", f"unknown key {bad[0]!r} (allowed: {', '.join(sorted(_CV_KEYS))})", i)
        f = cv.get("folds", 4)
        if isinstance(f, bool) or not isinstance(f, int) or f < 0 or f == 1:
            raise ck.fail("method", "cv", f"folds must be an integer >= 2 (or 0: the validation part), got {f!r}",
                          i)
        if f == 0 and not defaults["validation_size"]:
            raise ck.fail("method", "cv", "folds = 0 selects on the validation part: give [data] validation_size > 0",
                          i)
        g = cv.get("grid")
        if not isinstance(g, dict) or not g or any(not isinstance(v, list) or not v for v in g.values()):
            raise ck.fail("method", "cv", "grid must be a table of non-empty lists", i)
        if cv.get("metric", "balanced_accuracy") not in _CV_METRICS:
            raise ck.fail("method", "cv", f"metric must be one of {', '.join(_CV_METRICS)}", i)
        draws = {}
        if "subsample" in cv or "repeats" in cv:
            sub, rep = cv.get("subsample"), cv.get("repeats", 5)
            if isinstance(sub, bool) or not isinstance(sub, int) or sub < 2:
                raise ck.fail("method", "cv", f"subsample must be an integer >= 2 (rows per draw), got {sub!r}", i)
            if isinstance(rep, bool) or not isinstance(rep, int) or rep < 1:
                raise ck.fail("method", "cv", f"repeats must be an integer >= 1 (draws of subsample rows), got "
                                              f"{rep!r}", i)
            if f == 0:
                raise ck.fail("method", "cv", "subsample draws from the training part: not with folds = 0", i)
            draws = {"subsample": sub, "repeats": rep}
        cv = {"folds": f, "grid": g, "metric": cv.get("metric", "balanced_accuracy"), **draws,
              **({"time_limit": cv["time_limit"]} if "time_limit" in cv else {})}
    grids = {"grid": grid, "cv": cv["grid"] if cv else {}}
    first = {**params, **{k: v[0] for g in grids.values() for k, v in g.items()}}
    if form is not None:  # every value of every grid, each beside the first values of the others
        _check_params(ck, i, form, first)
        for where, g in grids.items():
            for k, values in g.items():
                for v in values[1:]:
                    _check_params(ck, i, form, {**first, k: v}, where=where)
    elif est == "rpart":
        for where, g in (("params", params), *grids.items()):
            bad = sorted(set(g) - set(RPART_PARAMS))
            if bad:
                raise ck.fail("method", where, f"rpart takes {', '.join(RPART_PARAMS)}; not {', '.join(bad)}", i)
    elif est in _DEPTH_ESTIMATORS:
        for where, g in (("params", {k: [v] for k, v in params.items()}), *grids.items()):
            for v in g.get("depth", []):
                try:
                    Topology(v)
                except TreeoptError as exc:
                    raise ck.fail("method", where, f"{est}: {exc}", i) from None
    _check_route(ck, "method", i, m.get("solver", defaults["solver"]), m.get("backend", defaults["backend"]),
                 m.get("warm_start", defaults["warm_start"]))
    scale = _scale(ck, i, m.get("scale"), {*params, *grid, *(cv["grid"] if cv else ())})
    path = _path(ck, i, m, form, cv, scale, defaults)
    tl = ck.number("method", "time_limit", m.get("time_limit", defaults["time_limit"]), lo=0, strict_lo=True,
                   index=i)
    threads = ck.number("method", "threads", m.get("threads", defaults["threads"]), lo=1, integer=True, index=i)
    mem = ck.number("method", "memory_mb", m.get("memory_mb", defaults["memory_mb"]), lo=64, integer=True, index=i)
    tt = m.get("task_timeout", defaults["task_timeout"])
    if tt is not None:
        ck.number("method", "task_timeout", tt, lo=0, strict_lo=True, index=i)
    refs = m.get("references")
    if refs is not None and (form is None or not isinstance(refs, list) or not all(r in REFERENCES for r in refs)):
        raise ck.fail("method", "references", f"a list of start names ({', '.join(REFERENCES)}) of a formulation; "
                                              f"got {refs!r}", i)
    ws = m.get("warm_start", defaults["warm_start"])
    ts = ck.number("method", "train_sample", m.get("train_sample", defaults["train_sample"]), lo=0, integer=True,
                   index=i)
    only = m.get("datasets")
    if only is not None:
        known = defaults["dataset_names"]
        if not isinstance(only, list) or not only or any(d not in known for d in only):
            bad = next((d for d in (only if isinstance(only, list) else [only]) if d not in known), only)
            raise ck.fail("method", "datasets", f"{bad!r} is not a dataset of [data] (known: {', '.join(known)})", i)
    refine = _refine(ck, i, m, form, est, first, path)
    start_only = _start_only(ck, i, m, form, ws, path)
    name = m.get("name", form or est)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.+\-]+", name):
        raise ck.fail("method", "name", f"must be letters, digits, '_', '-', '+', '.', got {name!r}", i)
    return MethodSpec(name=name, formulation=form, estimator=est, params=dict(params), grid=dict(grid), cv=cv,
                      solver=str(m.get("solver", defaults["solver"])), backend=m.get("backend", defaults["backend"]),
                      time_limit=float(tl), warm_start=ws, threads=int(threads), memory_mb=int(mem),
                      task_timeout=None if tt is None else float(tt), references=refs,
                      datasets=None if only is None else list(only), train_sample=int(ts), scale=scale, path=path,
                      refine=refine, start_only=start_only)


def _formulation_flag(ck: _Checker, i: int, m: dict[str, Any], key: str, form: str | None, path: Any,
                      not_estimator: str, not_path: str) -> bool:
    """A method's ``key = true | false`` that applies to a formulation's solves, not to an estimator or a path."""
    value = m.get(key, False)
    if not isinstance(value, bool):
        raise ck.fail("method", key, f"must be true or false, got {value!r}", i)
    if not value:
        return False
    if form is None:
        raise ck.fail("method", key, not_estimator, i)
    if path is not None:
        raise ck.fail("method", key, f"{not_path}: leave {key} out", i)
    return True


def _refine(ck: _Checker, i: int, m: dict[str, Any], form: str | None, est: str | None, first: dict[str, Any],
            path: Any) -> bool:
    """``refine = true``: a logistic tree formulation's method (olct, olct_univariate), not a path."""
    hint = " (optimal_tree: params = { refine = true })" if est == "optimal_tree" else ""
    if not _formulation_flag(ck, i, m, "refine", form, path,
                             f"applies to a formulation = ... method, not estimator {est!r}{hint}",
                             "a path task keeps its solves as they are"):
        return False
    try:
        check_refinable(get_formulation(form, **first))
    except TreeoptError as exc:
        raise ck.fail("method", "refine", str(exc), i) from None
    return True


def _start_only(ck: _Checker, i: int, m: dict[str, Any], form: str | None, ws: Any, path: Any) -> bool:
    """``start_only = true``: a formulation's method whose ``warm_start`` names a start (its model is the row's)."""
    if not _formulation_flag(ck, i, m, "start_only", form, path,
                             "applies to a formulation = ... method (its warm start's model)",
                             "a path task solves every point"):
        return False
    if ws is None or ws == "none":
        raise ck.fail("method", "start_only", 'names no start: give warm_start = "greedy" (or "cart", "auto", ...)',
                      i)
    return True


def _scale(ck: _Checker, i: int, scale: Any, known: set[str]) -> dict[str, str] | None:
    """``scale = { param = "baseline_errors" }``: each key a parameter of the method, each value in SCALES."""
    if scale is None:
        return None
    if not isinstance(scale, dict) or not scale:
        raise ck.fail("method", "scale", 'expected a table, e.g. scale = { alpha = "baseline_errors" }', i)
    for k, v in scale.items():
        if k not in known:
            raise ck.fail("method", "scale", f"{k!r} is not a parameter of this method (params, grid or cv grid)", i)
        if v not in SCALES:
            raise ck.fail("method", "scale", f"{k}: unknown scale {v!r} (known: {', '.join(SCALES)})", i)
    return dict(scale)


def _path(ck: _Checker, i: int, m: dict[str, Any], form: str | None, cv: Any, scale: Any,
          defaults: dict[str, Any]) -> dict[str, Any] | None:
    """``path = { lambda_l = "paper", lambda_g = [0.0], n_starts = 20, fresh = 20 }`` of a formulation that has
    ``lambda_l`` and ``lambda_g``; a path splits the data itself (train/test only)."""
    path = m.get("path")
    if path is None:
        return None
    if not isinstance(path, dict):
        raise ck.fail("method", "path", 'expected a table { lambda_l = "paper", lambda_g = [0.0], n_starts = 20 }', i)
    bad = [k for k in path if k not in _PATH_KEYS]
    if bad:
        raise ck.fail("method", "path", f"unknown key {bad[0]!r} (allowed: {', '.join(sorted(_PATH_KEYS))})", i)
    if form is None:
        raise ck.fail("method", "path", "a path walks a formulation's lambda grid: give formulation = ...", i)

    if not {"lambda_l", "lambda_g"} <= _param_names(form):
        raise ck.fail("method", "path", f"{form} has no lambda_l / lambda_g parameters", i)
    for key in ("lambda_l", "lambda_g"):
        v = path.get(key, [0.0])
        if v not in NAMED_GRIDS and (not isinstance(v, list) or not v or any(
                isinstance(x, bool) or not isinstance(x, (int, float)) or x < 0 for x in v)):
            raise ck.fail("method", "path", f'{key} must be "paper", "paper-ends" or a non-empty list of numbers >= 0, '
                                            f"got {v!r}", i)
    for key, lo in (("n_starts", 1), ("fresh", 0)):
        v = path.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < lo):
            raise ck.fail("method", "path", f"{key} must be an integer >= {lo}, got {v!r}", i)
    clash = next((why for why, bad in (("cv", cv), ("scale", scale), ("[data] folds", defaults["folds"]),
                                       ("[data] validation_size", defaults["validation_size"]),
                                       ("train_sample", m.get("train_sample", defaults["train_sample"])),
                                       ("[data] test_size = 0", not defaults["test_size"])) if bad), None)
    if clash:
        raise ck.fail("method", "path", f"a path splits train/test itself: it does not take {clash}", i)
    return {"lambda_l": path.get("lambda_l", [0.0]), "lambda_g": path.get("lambda_g", [0.0]),
            "n_starts": int(path.get("n_starts", 20)),
            **({"fresh": int(path["fresh"])} if path.get("fresh") is not None else {})}


def _check_params(ck: _Checker, i: int, form: str, params: dict[str, Any], where: str = "params") -> None:
    """Build the formulation's spec and its topology (no data) so that a misspelled or out-of-range parameter (a
    depth the topology does not take) fails here; ``where`` is the key named (params, grid or cv)."""
    try:
        get_formulation(form, **params).topology()
    except (TreeoptError, TypeError, ValueError) as exc:
        known = _param_names(form)
        unknown = [k for k in params if k not in known]
        key = unknown[0] if unknown else next((k for k in params if f"'{k}'" in str(exc) or f"{k}=" in str(exc)
                                               or str(exc).startswith(f"{k} ")), None)
        raise ck.fail("method", where, f"{form}: {exc}" + (f" (key {key!r})" if key else ""), i) from None


def _check_route(ck: _Checker, table: str, i: int, solver: Any, backend: Any, warm_start: Any) -> None:
    """``solver``, ``backend`` and ``warm_start`` of a table against the route and starts registries."""
    known = solver_names()
    if not isinstance(solver, str) or solver.lower() not in known:
        raise ck.fail(table, "solver", f"unknown solver {solver!r} (known: {', '.join(known)})", i)
    backends = sorted({b.name for b in BACKENDS})
    if backend is not None and backend not in backends:
        raise ck.fail(table, "backend", f"unknown backend {backend!r} (known: {', '.join(backends)})", i)
    if isinstance(warm_start, str) and warm_start not in WARM_STARTS:
        raise ck.fail(table, "warm_start", f"unknown warm start {warm_start!r} (known: {', '.join(WARM_STARTS)})", i)


def _relative_note(path: str, base: str | None) -> str:
    """The words that say where a relative path of the grid was looked for."""
    if Path(path).expanduser().is_absolute():
        return ""
    where = str(resolve_path(path, base if base is not None else Path.cwd()))
    return (f" (looked for at {where!r}: relative paths are read against the grid file's directory)"
            if base is not None else f" (looked for at {where!r}: relative to the working directory)")


def _check_datasets(ck: _Checker, datasets: list[DataSpec], methods: list[MethodSpec], data_dir: Any,
                    base: str | None) -> None:
    """Each dataset a method loads (every method but ``sleep``) is a known name, variant or an existing file; a
    relative CSV path and ``data_dir`` are read against ``base`` (:func:`resolve_path`)."""
    directory = None if data_dir is None else resolve_path(data_dir, base)
    for k, d in enumerate(datasets):
        if all(m.estimator == "sleep" or (m.datasets is not None and d.name not in m.datasets) for m in methods):
            continue
        if d.path is not None:
            if not resolve_path(d.path, base).is_file():
                raise ck.fail("data", "datasets", f"entry {k + 1}: no data file {d.path!r}"
                              + _relative_note(d.path, base))
        try:
            check_dataset(resolve_path(d.path, base) if d.path else d.name, data_dir=directory, variant=d.variant,
                          file=d.file)
        except DataError as exc:
            raise ck.fail("data", "datasets", f"entry {k + 1}: {exc}") from None


def load_grid(path: str | Path) -> Grid:
    """Read and validate a grid file (see :func:`parse_grid`); its relative paths are read against the file's
    directory, wherever the command runs."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise GridError(f"cannot read the grid {p}: {exc.strerror or exc}") from None
    return parse_grid(text, source=str(p), base_dir=p.parent)


def toml_value(v: Any, indent: int | None = None, width: int = 116) -> str:
    """``v`` (a number, string, boolean, list or dict) as a TOML value: what grid-writing scripts put after ``=``.

    ``indent``: a list longer than ``width`` wraps between its items, later lines indented so many columns (the
    column after ``key = [``).

        >>> toml_value({"depth": 2, "alpha": [0.001, 1.0], "name": "a2a", "multiclass": True})
        '{ depth = 2, alpha = [0.001, 1.0], name = "a2a", multiclass = true }'
        >>> print(toml_value(["haberman", "heart", "wholesale"], indent=12, width=36))
        ["haberman", "heart",
                    "wholesale"]
    """
    import json

    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        items = [toml_value(x) for x in v]
        if indent is None:
            return "[" + ", ".join(items) + "]"
        lines = [""]
        for item in items:  # greedy: an inline table must stay on one line
            if lines[-1] and indent + len(lines[-1]) + len(item) + 2 > width:
                lines.append("")
            lines[-1] += (", " if lines[-1] else "") + item
        return "[" + (",\n" + " " * indent).join(lines) + "]"
    if v is None:
        raise TypeError("TOML has no null")
    return json.dumps(v)
