"""Named, parameterized formulations: what ``treeopt formulations`` lists and ``--param`` sets.

A :class:`FormulationSpec` turns user parameters into a :class:`~treeopt_dsl.formulation.Formulation`
(a list of blocks), scales the data as the paper does, and builds, solves and decodes.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from treeopt_dsl.backends import capable_solver, get_backend, get_engine, plan_route
from treeopt_dsl.data import Dataset, Scaler
from treeopt_dsl.defaults import (
    BUILD_BYTES_PER_CELL,
    SOLVER,
    START_SHARE,
    check_time_limit,
    finish_reserve,
    memory_budget,
)
from treeopt_dsl.errors import FormulationError, ModelTooLarge
from treeopt_dsl.formulation import Built, Formulation
from treeopt_dsl.registry import resolve_start
from treeopt_dsl.result import SolveResult, engine_timing
from treeopt_dsl.solve import start_answer
from treeopt_dsl.topology import Topology


@dataclass(frozen=True)
class Param:
    """One parameter: its name, default, a parser from text (for ``--param``), help, and the range of its numbers.

    ``minimum`` / ``maximum`` bound every number the parameter takes (each of a per-level list; ``None`` and words
    such as ``"derived"`` are not numbers), ``exclusive`` makes the minimum itself refused (a positive weight)::

        >>> Param("lambda_l", 0.0, float, "local sparsity weight", minimum=0.0).coerce("-1")
        Traceback (most recent call last):
        ...
        treeopt_dsl.errors.FormulationError: bad value -1.0 for parameter 'lambda_l': expected a number >= 0
    """

    name: str
    default: Any
    parse: Callable[[str], Any]
    help: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive: bool = False

    def range(self) -> str:
        """The allowed range in words (``"> 0"``, ``">= 1"``, ``"from 1 to 6"``), or ``""`` for any."""
        low = None if self.minimum is None else f"{'>' if self.exclusive else '>='} {self.minimum:g}"
        if self.maximum is None:
            return low or ""
        if low is None:
            return f"<= {self.maximum:g}"
        return f"from {self.minimum:g} to {self.maximum:g}" if not self.exclusive else f"{low} and <= {self.maximum:g}"

    def coerce(self, value: Any) -> Any:
        """``value`` checked (and parsed, when text) for this parameter, then held to its range (:meth:`range`)."""
        value = self._kind(value)
        if self.minimum is None and self.maximum is None:
            return value
        items = list(np.ravel(value)) if isinstance(value, (list, tuple, np.ndarray)) else [value]
        numbers_in = [v for v in items if _finite_number(v)]
        for v in numbers_in:
            if ((self.minimum is not None and (v < self.minimum or (self.exclusive and v == self.minimum)))
                    or (self.maximum is not None and v > self.maximum)):
                raise FormulationError(f"bad value {_shown(value)} for parameter {self.name!r}: expected "
                                       f"{_noun(self.parse, len(numbers_in))} {self.range()}")
        return value

    def _kind(self, value: Any) -> Any:
        """``value`` parsed, when text, and checked by kind.

        Text goes through ``parse``. Other values are checked by kind: the numeric parsers (``float``,
        ``int``, :func:`floats`, :func:`optional_float`, :func:`number_or`) take finite numbers only
        (``int`` a whole number), :func:`floats` also a list with one number per level, and
        :func:`optional_float` also ``None``; a bad value raises a :class:`FormulationError` that names
        the parameter, the value and what is allowed.
        """
        if isinstance(value, str):
            try:
                return self.parse(value)
            except (TypeError, ValueError) as exc:
                raise FormulationError(f"bad value {value!r} for parameter {self.name!r}: {exc}") from None
        allowed = _numeric_kind(self.parse)
        if allowed is None:
            return value
        if value is None and allowed in ("optional",):
            return value
        if allowed == "per_level" and isinstance(value, (list, tuple, np.ndarray)):
            items = list(np.asarray(value, dtype=object).ravel()) if isinstance(value, np.ndarray) else list(value)
            if items and all(_finite_number(v) for v in items):
                return value
        elif allowed == "integer":
            if _finite_number(value) and float(value).is_integer():
                return value
        elif _finite_number(value):
            return value
        what = {"integer": "a whole number", "number": "a finite number",
                "optional": "a finite number or None (no bound)",
                "per_level": "a finite number, or a list of finite numbers (one per level, e.g. [0.1, 1])",
                "words": "a finite number or one of " + ", ".join(repr(w) for w in getattr(self.parse, "words", ()))}
        raise FormulationError(f"bad value {value!r} for parameter {self.name!r}: expected {what[allowed]}")


def _noun(parse: Callable[[str], Any], count: int) -> str:
    """What a range error asks for: "a whole number" for ``int`` parameters, else "a number" ("numbers")."""
    if parse is int:
        return "a whole number"
    return "numbers" if count > 1 else "a number"


def _shown(value: Any) -> str:
    """``value`` as an error message shows it: numbers as floats or ints print, lists item by item."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_shown(v) for v in np.ravel(value)) + "]"
    return repr(float(value)) if isinstance(value, np.floating) else repr(value)


def _finite_number(v: Any) -> bool:
    """A real number (not a bool) that is finite."""
    return (isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
            and bool(np.isfinite(float(v))))


def _numeric_kind(parse: Callable[[str], Any]) -> str | None:
    """What a numeric parser allows for a non-text value (None: not a numeric parameter, anything goes)."""
    if parse is float:
        return "number"
    if parse is int:
        return "integer"
    if parse is floats:
        return "per_level"
    if parse is optional_float:
        return "optional"
    if getattr(parse, "words", None) is not None:
        return "words"
    return None


def number_or(*words: str) -> Callable[[str], Any]:
    """Parser for a float or one of ``words``."""

    def parse(text: str) -> Any:
        if text in words:
            return text
        return float(text)

    parse.words = words  # type: ignore[attr-defined]  # read by Param.coerce
    parse.__name__ = "number" + ("|" + "|".join(words) if words else "")
    return parse


def floats(text: str) -> Any:
    """``1`` or ``1,10,100`` (one value per level)."""
    parts = [float(t) for t in str(text).split(",")]
    return parts[0] if len(parts) == 1 else parts


def optional_float(text: str) -> float | None:
    return None if text.lower() in ("none", "") else float(text)


def boolean(text: str) -> bool:
    """``true/false``, ``yes/no``, ``on/off``, ``1/0``."""
    t = str(text).strip().lower()
    if t in ("true", "yes", "on", "1"):
        return True
    if t in ("false", "no", "off", "0"):
        return False
    raise ValueError("expected true or false")


#: the parameter of a formulation whose objective is ``sum_i w_i loss_i`` and whose rows treat identical samples
#: alike: identical samples are built as one row weighing their total (:meth:`Dataset.compressed`), the same optimum
COMPRESS = Param("compress", True, boolean, "build identical samples (features and label) as one weighted row: "
                 "the same optimum with fewer rows")


def callers_time_off(options: dict[str, Any]) -> tuple[float | None, float]:
    """Take the caller's time off ``options["time_limit"]`` (one clock per call): ``options["started"]`` (popped) is
    the :func:`time.perf_counter` instant the caller's clock started (the command line: the process' start).
    Returns the limit the caller asked for (``None``: none) and the seconds spent before the call.

    >>> opts = {"time_limit": 10.0, "started": time.perf_counter() - 4.0}
    >>> asked, before = callers_time_off(opts)
    >>> asked, 3.9 < before < 5.0, 5.0 < opts["time_limit"] < 6.1, "started" in opts
    (10.0, True, True, False)
    """
    started = options.pop("started", None)
    limit_asked = check_time_limit(options.get("time_limit"))
    before = 0.0 if started is None else max(0.0, time.perf_counter() - float(started))
    if limit_asked is not None and before:
        options["time_limit"] = max(0.0, limit_asked - before)
    return limit_asked, before


class FormulationSpec:
    """Base class of the registered formulations."""

    name: ClassVar[str]
    summary: ClassVar[str]
    params: ClassVar[tuple[Param, ...]]
    scaling: ClassVar[str] = "standard"
    #: whether the formulation handles more than two classes (S-ORCT); the others are binary
    multiclass: ClassVar[bool] = False
    #: the solver used when none is named (``treeopt ... --solver``)
    default_solver: ClassVar[str] = "highs"

    def __init__(self, **params: Any) -> None:
        known = {p.name: p for p in self.params}
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise FormulationError(
                f"{self.name} has no parameter(s) {unknown}; its parameters are {sorted(known)}")
        self.values = {n: p.coerce(params.get(n, p.default)) for n, p in known.items()}

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def formulation(self) -> Formulation:  # pragma: no cover - interface
        raise NotImplementedError

    def topology(self) -> Topology | None:
        return Topology(int(self.values["depth"])) if "depth" in self.values else None

    def prepare(self, data: Dataset) -> Dataset:
        """Fit the paper's scaling on ``data`` (training data) and keep the scaler for decoding."""
        if not self.multiclass:
            data.require_binary(self.name)
        self.check_data(data)
        scaler = Scaler(self.values.get("scaling", self.scaling))
        data = replace(data, X=scaler.fit_transform(data.X, data.feature_names), meta={**data.meta, "scaler": scaler})
        return data.compressed() if self.values.get("compress") else data  # COMPRESS, where declared

    def check_data(self, data: Dataset) -> None:
        """Refuse parameters the data cannot honour: ``T`` (features with points, rules) above the number
        of features, unless ``cardinality="at_most"`` makes it an upper bound."""
        T = self.values.get("T")
        if isinstance(T, numbers.Integral) and T > data.n_features and self.values.get("cardinality") != "at_most":
            raise FormulationError(
                f"{self.name}: T={T} exceeds the number of features (n_features={data.n_features}); T must be "
                f"from 1 to {data.n_features}" + (" (or use cardinality='at_most')" if "cardinality" in self.values
                                                 else ""))

    def build(self, data: Dataset) -> Built:
        return self.formulation().build(self.prepare(data), self.topology())

    def build_bytes(self, data: Dataset, depth: int | None = None) -> float | None:
        """The memory a build of this tree model on ``data`` is estimated to hold (``None``: not a tree):
        :data:`~treeopt_dsl.defaults.BUILD_BYTES_PER_CELL` per sample, feature and branch node (the routing rows
        carry each sample's features at each branch node)."""
        depth = int(self.values["depth"]) if depth is None and "depth" in self.values else depth
        if depth is None:
            return None
        return BUILD_BYTES_PER_CELL * data.n_samples * data.n_features * (2 ** depth - 1)

    def check_size(self, data: Dataset) -> None:
        """Refuse before any work a build that would not fit the memory budget
        (:func:`~treeopt_dsl.defaults.memory_budget`), naming what would fit: a lower depth or fewer rows."""
        need = self.build_bytes(data)
        if need is None:
            return
        budget = memory_budget()
        if need <= budget:
            return
        depth = int(self.values["depth"])
        fits = [d for d in range(depth - 1, 0, -1) if (self.build_bytes(data, d) or 0.0) <= budget]
        rows = int(budget / (BUILD_BYTES_PER_CELL * data.n_features * (2 ** depth - 1)))
        gib = 2.0 ** 30
        raise ModelTooLarge(
            f"{self.name} at depth {depth} on {data.n_samples:,} x {data.n_features} would hold about "
            f"{need / gib:.1f} GiB while it is built, above the memory budget of {budget / gib:.1f} GiB "
            f"(TREEOPT_MEMORY_LIMIT, else 75% of the memory available); what fits: "
            + (f"depth {fits[0]} ({(self.build_bytes(data, fits[0]) or 0.0) / gib:.1f} GiB), or " if fits else "")
            + f"at most {rows:,} rows at depth {depth} (--sample {rows}, a stratified subsample as the papers do)")

    def solve(self, data: Dataset, solver: str = SOLVER, backend: str | None = None, warm_start: Any = None,
              **options: Any) -> SolveResult:
        """Solve this formulation on ``data`` (training data: the paper's scaling is fitted on it) with ``solver``.

        ``solver="auto"`` (the default) lets the route registry choose before anything is built
        (:func:`treeopt_dsl.backends.plan_route`): the fastest exact engine that proves the composition (OCT's
        axis-aligned 0-1 trees: ``streed`` or ``contree``), else the formulation's own solver (:attr:`default_solver`,
        HiGHS or Ipopt); ``result.route`` says which and why. An engine answers a composition it recognizes from
        the blocks without building the model. Otherwise the model is built, ``warm_start`` (a name such as
        ``"auto"``, ``"greedy"``, ``"cart"``; a fitted tree; values) is made into values by
        :func:`treeopt_dsl.starts.resolve` (reached through :func:`treeopt_dsl.registry.resolve_start`: the starts
        are imported only when one is asked for) and the built model is solved (:func:`treeopt_dsl.solve.solve_built`).
        ``options``: ``time_limit``, ``gap``, ``threads``, ``seed``, ``progress``, ... and the solver's own
        option names; ``started``: the :func:`time.perf_counter` instant at which the caller's clock started (the
        command line: the process' start, so that reading the data is inside ``time_limit``; default: now): the
        time already spent is taken off ``time_limit`` before anything is built, and ``result.timing["before"]``
        says how much that was."""
        t_plan = time.perf_counter()
        limit_asked, before = callers_time_off(options)
        res = self._solve(data, solver, backend, warm_start, t_plan, **options)
        if limit_asked is not None and res.options is not None:
            res.options["time_limit"] = limit_asked
        if before and res.timing is not None:
            res.timing = {"before": before, **res.timing, "total": res.timing["total"] + before}
        return res

    def start(self, data: Dataset, warm_start: Any = "greedy", seed: int | None = None,
              time_budget: float | None = None) -> SolveResult:
        """The start alone as a fitted answer, no solver run (:func:`treeopt_dsl.solve.start_answer`).

        ``warm_start``: a start by name (``"greedy"``, ``"cart"``, ``"auto"``, ...), a fitted tree or values, as
        for :meth:`solve`; ``seed`` seeds the randomized starts; ``time_budget`` bounds ``"auto"``. The thesis'
        Figure 3.8 compares the MILP's tree with its greedy start alone (OLCT-W): this is that tree, decoded and
        certified in the formulation's own objective, with status ``feasible`` (``optimal`` only for a start that is
        itself proven, as ``oct``'s exact DP tree under ``"auto"``).

            >>> import numpy as np
            >>> from treeopt_dsl.data import Dataset
            >>> from treeopt_dsl.formulations import get_formulation
            >>> rng = np.random.default_rng(0)
            >>> X = rng.normal(size=(60, 3)); y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)
            >>> res = get_formulation("olct", depth=1).start(Dataset.from_arrays(X, y), "greedy")
            >>> res.status.value, res.solver, res.model is not None
            ('feasible', 'start', True)
        """
        if warm_start is None or (isinstance(warm_start, str) and warm_start == "none"):
            raise FormulationError(f"{self.name}.start: warm_start must name a start (e.g. 'greedy', 'cart', 'auto'), "
                                   f"a fitted model or values; got {warm_start!r}")
        t0 = time.perf_counter()
        self.check_size(data)
        built = self.build(data)
        t1 = time.perf_counter()
        start = resolve_start(built, warm_start, time_budget, seed=seed)
        if start is None or start.x is None:
            raise FormulationError(f"{self.name}: the {warm_start!r} start found no point on this data")
        start.report.setdefault("time_s", time.perf_counter() - t1)
        res = start_answer(built, start)
        res.timing = {"prepare_build": t1 - t0, "start": time.perf_counter() - t1, "solve": 0.0,
                      "total": time.perf_counter() - t0}
        return res

    def _solve(self, data: Dataset, solver: str, backend: str | None, warm_start: Any, t_plan: float,
               **options: Any) -> SolveResult:
        """:meth:`solve` once the caller's time is taken off ``time_limit``."""
        solver, route = plan_route(solver, self, data, fallback=self.default_solver, engines=backend is None)
        engine = get_engine(solver)
        if engine is not None:
            res = engine.solve_spec(self, data, backend=backend, warm_start=warm_start, **options)
            if res is None:
                res = engine.solve_built(self.build(data), **options)
            res.route = route
            res.timing = engine_timing(res.timing, res.runtime_s, time.perf_counter() - t_plan)
            return res
        t0 = time.perf_counter()
        self.check_size(data)  # a build that would not fit is refused before it starts
        built = self.build(data)
        if route is not None:  # auto: a solver that takes the built model's class (MARGOT's MIQP is not HiGHS')
            capable = capable_solver(built.model, solver)
            if capable != solver:
                route["chosen"], route["why"] = capable, (f"{capable}: {solver} cannot solve a "
                                                          f"{built.model.problem_class} model; {route['why']}")
                solver = capable
        else:
            get_backend(solver, backend, built.model)  # a solver that cannot take the model: said before the starts
        compile_s = 0.0
        if route is not None:  # auto chose a MILP/NLP solver: no engine proves this composition, so no start can
            tc = time.perf_counter()  # answer for the solver; its matrix, compiled now, checks the starts
            built.compile()  # (Built.max_violation: one sparse product per start)
            compile_s = time.perf_counter() - tc
        t1 = time.perf_counter()
        limit = check_time_limit(options.get("time_limit"))
        budget = None if limit is None else max(0.0, START_SHARE * limit - (t1 - t0))
        start = resolve_start(built, warm_start, budget, seed=options.get("seed"))
        t2 = time.perf_counter()
        if limit is not None:  # one clock: the solver gets what building and the starts left of the call's limit,
            # less a reserve for decoding and certifying its answer
            nodes = 1 if built.ctx.topology is None else built.ctx.topology.n_nodes
            reserve = finish_reserve(limit, *np.shape(built.ctx.data.X), nodes)
            options["time_limit"] = max(0.0, limit - reserve - (t2 - t0))
        res = built.solve(solver=solver, backend=backend, warm_start=start, **options)
        res.compile_s = (res.compile_s or 0.0) + compile_s  # the compile before the starts is the solve's
        if limit is not None:
            res.options["time_limit"] = limit
        t3 = time.perf_counter()
        res.route = route
        res.timing = {"prepare_build": t1 - t0, "start": t2 - t1, "solve": t3 - t2, "total": t3 - t0}
        return res

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {"name": cls.name, "summary": cls.summary,
                "params": [{"name": p.name, "default": p.default, "type": getattr(p.parse, "__name__", "str"),
                            "range": p.range(), "help": p.help} for p in cls.params]}
