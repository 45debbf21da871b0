"""Multistart solves and warm-chained regularization paths for the (nonconvex) NLP formulations.

S-ORCT is solved by a local NLP solver, so the paper repeats every solve from 20 random initial
points and keeps the best ([blanquero-2020-sorct] lines 357-360), and walks a grid of ``(lambda_L, lambda_G)``
feeding each pair with the 20 solutions of the pair solved before it (lines 397-406).

>>> import numpy as np
>>> from treeopt_dsl.data import Dataset
>>> from treeopt_dsl.formulations import get_formulation
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(size=(40, 2)); y = np.where(X[:, 0] > 0.5, 1, 0)
>>> res = get_formulation("sorct", depth=1, gamma=32, n_starts=3).solve(Dataset.from_arrays(X, y), seed=0)
>>> res.status.value, len(res.starts), bool(res.model.predict(X[:5]).size == 5)
('local_optimum', 3, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from treeopt_dsl.backends.dialects import dialect
from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import SolveError, TreeoptError
from treeopt_dsl.formulation import Built
from treeopt_dsl.models.embed import point_of
from treeopt_dsl.models.randomized import COARSE_ZERO_TOL
from treeopt_dsl.result import SolveResult, Status
from treeopt_dsl.solve import solve_built


def random_start(built: Built, rng: np.random.Generator) -> np.ndarray:
    """One random initial point: every decision family uniform within its bounds (standard normal
    where a bound is infinite); the other columns completed by the blocks."""
    model = built.model
    x = np.full(model.n_vars, np.nan)
    for name in built.formulation.decisions:
        fam = model.variables[name]
        lo, up = np.broadcast_to(fam.lower, fam.shape), np.broadcast_to(fam.upper, fam.shape)
        finite = np.isfinite(lo) & np.isfinite(up)
        draw = np.where(finite, rng.uniform(np.where(finite, lo, 0.0), np.where(finite, up, 1.0)),
                        rng.standard_normal(fam.shape))
        x[fam.ids] = np.clip(draw, lo, up)
    return built.complete(x)


def decisions_of(built: Built, x: np.ndarray) -> dict[str, np.ndarray]:
    """The decision families' values of ``x`` (what carries a solution to a model of another structure)."""
    return {name: built.model.variables[name].values(x) for name in built.formulation.decisions}


#: the statuses that say a signal stopped a solve: the multistart and the path stop there
INTERRUPTED = (Status.INTERRUPTED, Status.INTERRUPTED_NO_SOLUTION)

#: Ipopt's settings for a start that is a solution (:attr:`~treeopt_dsl.backends.dialects.Dialect.warm`)
WARM_IPOPT: dict[str, Any] = dict(dialect("ipopt").warm)


def multistart(built: Built, n_starts: int = 20, seed: int | None = 0, starts: Sequence[Any] | None = None,
               solver: str = "ipopt", backend: str | None = None,
               on_start: Callable[[int, SolveResult], None] | None = None, **options: Any) -> SolveResult:
    """Solve ``built`` from ``n_starts`` random points drawn with ``seed`` (or from ``starts``: vectors
    or dicts of the decisions) and return the best result; every start's status, objective and
    runtime are in ``result.starts`` (:func:`solve_from` also returns every start's solution)."""
    best, _ = solve_from(built, n_starts=n_starts, seed=seed, starts=starts, solver=solver, backend=backend,
                         on_start=on_start, **options)
    return best


def solve_from(built: Built, n_starts: int = 20, seed: Any = 0, starts: Sequence[Any] | None = None,
               solver: str = "ipopt", backend: str | None = None,
               on_start: Callable[[int, SolveResult], None] | None = None, fresh: int = 0,
               **options: Any) -> tuple[SolveResult, list[np.ndarray]]:
    """:func:`multistart` that also returns the final point of every start that found a solution, best
    objective first (ties in the order solved).

    Without ``starts``: ``n_starts`` random points drawn with ``seed``. With ``starts`` (vectors or dicts
    of the decisions, e.g. the previous pair's solutions on a path): those, solved with Ipopt's warm-start
    settings (:data:`WARM_IPOPT`, unless ``options`` set them), then ``fresh`` random points drawn with
    ``seed``. The best objective wins among the certified ends; an ``uncertified`` end (a point the decoded model
    does not reproduce: Ipopt's point can be infeasible, its objective below any feasible one) wins only where
    no start is certified, and is chained after the certified ones. ``result.starts`` lists every start with its
    ``origin``
    (``"given"`` or ``"random"``), and ``result.won`` names the winner (``"given 3"``, ``"random 0"``).
    Each start's result is never worse than the start itself (:func:`treeopt_dsl.solve.solve_built`
    keeps a start the solver ends worse than), so the best is never worse than any start tried.
    """
    if fresh < 0:
        raise SolveError(f"fresh must be at least 0, got {fresh}")
    if starts is None:
        if n_starts < 1:
            raise SolveError(f"n_starts must be at least 1, got {n_starts}")
        fresh, given = n_starts, []
    else:  # vectors or dicts of the decisions, completed by the blocks
        given = [point_of(built, x0) for x0 in starts]
    rng = np.random.default_rng(seed)
    plan = [("given", k, x0) for k, x0 in enumerate(given)] + [
        ("random", k, random_start(built, rng)) for k in range(fresh)]
    if not plan:
        raise SolveError("no start to solve from: give starts or fresh > 0")
    options.pop("warm_start", None)
    warm = {k: v for k, v in dialect(solver).warm.items() if k not in options}
    best: SolveResult | None = None
    won = ""
    record, solutions = [], []
    stopped = None
    for n, (origin, k, x0) in enumerate(plan):
        extra = warm if origin == "given" else {}
        try:
            res = solve_built(built, solver=solver, backend=backend, warm_start=x0, **extra, **options)
        except KeyboardInterrupt as exc:  # a route that cannot stop with its incumbent: the starts so far count
            if best is None:
                raise
            stopped = f"{exc or 'interrupted'} during start {n + 1} of {len(plan)}"
            break
        record.append({"start": k, "origin": origin, "status": res.status.value, "objective": res.objective,
                       "runtime_s": round(res.runtime_s, 4), "iterations": res.iterations})
        if on_start is not None:
            on_start(n, res)
        if res.status.has_solution and res.x is not None:
            solutions.append((*_rank(res), n, res.x))
            if best is None or not best.status.has_solution or _rank(res) < _rank(best):
                best, won = res, f"{origin} {k}"
        elif best is None:
            best, won = res, f"{origin} {k}"
        log = options.get("log_callback")
        if log is not None:
            shown = "-" if res.objective is None else f"{res.objective:.8g}"
            top = "-" if best.objective is None else f"{best.objective:.8g}"
            log(f"treeopt multistart: start {n + 1}/{len(plan)} {res.status.value} objective {shown} best {top} "
                f"time {res.runtime_s:.2f}s")
        if res.status in INTERRUPTED:  # the first signal ends the multistart, not only this start
            stopped = f"interrupted during start {n + 1} of {len(plan)}"
            break
    assert best is not None
    if stopped is not None:  # the best of the starts that finished, said to be interrupted
        best.status = Status.INTERRUPTED if best.status.has_solution else Status.INTERRUPTED_NO_SOLUTION
        best.message = f"{stopped}; the best of {len(record)} start(s) solved; {best.message}".rstrip("; ")
    if starts is None:  # random points are the method's own, not a start the user gave
        best.warm_start_accepted = None
    best.starts = record
    best.won = won
    best.runtime_s = float(sum(r["runtime_s"] for r in record))
    return best, [t[3] for t in sorted(solutions, key=lambda t: t[:3])]


def _rank(res: SolveResult) -> tuple[bool, float]:
    """How a start's end ranks (smaller is better): certified before uncertified, then by objective."""
    return res.status is Status.UNCERTIFIED, float(res.objective)  # type: ignore[arg-type]


@dataclass
class PathPoint:
    """One ``(lambda_L, lambda_G)`` of a path: the best result of its starts and its measures."""

    lambda_l: float
    lambda_g: float
    result: SolveResult = field(repr=False)
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def model(self) -> Any:
        return self.result.model

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        times = [s["runtime_s"] for s in r.starts]
        out = {"lambda_l": self.lambda_l, "lambda_g": self.lambda_g, "status": r.status.value,
               "objective": r.objective, "n_starts": len(r.starts), "won": r.won,
               "time_per_start_s": float(np.mean(times)) if times else None}
        for origin, key in (("given", "best_chained"), ("random", "best_random")):
            objs = [s["objective"] for s in r.starts if s.get("origin") == origin and s["objective"] is not None]
            if objs:
                out[key] = float(min(objs))
        return {**out, **self.metrics}


def regularization_path(make: Callable[[float, float], Any], data: Dataset, lambdas_l: Sequence[float],
                        lambdas_g: Sequence[float] = (0.0,), n_starts: int = 20, seed: int | None = 0,
                        test: Dataset | None = None, solver: str = "ipopt", backend: str | None = None,
                        on_point: Callable[[PathPoint], None] | None = None, fresh: int | None = None,
                        **options: Any) -> list[PathPoint]:
    """Solve the grid as [blanquero-2020-sorct] lines 397-406: ``lambda_L`` outer, ``lambda_G`` inner, the first pair
    from ``n_starts`` random points, every later pair from the solutions of the pair solved just before
    it (in this order; a new ``lambda_L`` continues from the last ``lambda_G`` of the previous one, the
    literal reading of "the previous pair"), warm-started as :data:`WARM_IPOPT` says.

    Beyond the paper: every later pair *also* runs ``fresh`` new random points (default ``n_starts``;
    0 is the paper's chain alone), drawn with ``(seed, pair index)``, and keeps the best of all. A chain
    that reached the empty tree (a stationary point for every lambda > 0) cannot leave it; the fresh
    points can. The ``n_starts`` best solutions of a pair (chained or fresh) feed the next pair. Each
    point reports which start won (``won``: ``"given k"`` is the chain) and the best
    objective of each kind (``best_chained``, ``best_random``); the point's objective is never worse
    than any start it tried.

    ``make(lambda_l, lambda_g)`` returns the formulation spec of a pair (e.g.
    ``lambda l, g: get_formulation("sorct", depth=1, lambda_l=l, lambda_g=g)``). Each point records
    the objective, the sparsity ``delta_L`` / ``delta_G`` and the accuracy on ``data`` (and ``test``).
    """
    fresh = n_starts if fresh is None else int(fresh)
    path: list[PathPoint] = []
    previous: list[dict[str, np.ndarray]] | None = None
    index = 0
    for lam_l in lambdas_l:
        for lam_g in lambdas_g:
            spec = make(float(lam_l), float(lam_g))
            built = spec.build(data)
            t0 = time.perf_counter()
            point_seed = seed if previous is None or seed is None else (seed, index)
            best, sols = solve_from(built, n_starts=n_starts, seed=point_seed, starts=previous, solver=solver,
                                    backend=backend, fresh=0 if previous is None else fresh, **options)
            point = PathPoint(float(lam_l), float(lam_g), best, {"wall_s": round(time.perf_counter() - t0, 3)})
            if best.model is not None:
                point.metrics.update(model_metrics(best.model, data, "train"))
                if test is not None:
                    point.metrics.update(model_metrics(best.model, test, "test"))
            previous = [decisions_of(built, x) for x in sols[:n_starts]] or previous
            path.append(point)
            index += 1
            if on_point is not None:
                on_point(point)
            if best.status in INTERRUPTED:  # a signal ends the path, not only this point
                return path
    return path


#: the exponents r of the paper's grid 2^r (x its unit), [blanquero-2020-sorct] line 398
PAPER_EXPONENTS = tuple(range(-12, 4))
#: the labels of the paper's 17 points in its Tables 3-5 (``"0"``, ``"2^-12"`` ... ``"2^3"``), in path order: the
#: ``point`` column of ``experiments/papers/sorct_tables3_5.csv``
PAPER_GRID_LABELS = ("0", *(f"2^{r}" for r in PAPER_EXPONENTS))


def paper_grid(kind: str, n_features: int, depth: int = 1) -> list[float]:
    """The paper's grid ([blanquero-2020-sorct] line 398): 0, then ``2^r / (p |tau_B|)`` for ``lambda_L`` (``kind="l"``)
    or ``2^r / p`` for ``lambda_G`` (``kind="g"``), r = -12..3; ``|tau_B| = 2^depth - 1`` branch nodes."""
    if kind not in ("l", "g"):
        raise SolveError(f"kind must be 'l' or 'g', got {kind!r}")
    scale = n_features * (2 ** int(depth) - 1) if kind == "l" else n_features
    return [0.0] + [2.0**r / scale for r in PAPER_EXPONENTS]


#: the grids a path may name instead of listing its values: ``"paper"`` (:func:`paper_grid`, 17 points) and
#: ``"paper-ends"``, its first and last points (0 and ``2^3 / ...``): a lambda_G row cut to its two ends, so that a
#: lambda_L path walks the paper's pair order (each lambda_L point started from the end of the row before,
#: [blanquero-2020-sorct] lines 404-406) at 2 points a row instead of 17
NAMED_GRIDS = ("paper", "paper-ends")


def lambda_l_column(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The points of a stored path (``PathPoint.to_dict()`` rows) along its ``lambda_G = 0`` column when the path
    walks both lambdas (rows of lambda_G: ``lambda_g = "paper"`` or ``"paper-ends"``, the paper's pair order): the
    lambda_L path of Table 4. A path of one lambda, or points without lambdas, are returned as they are.

    >>> pts = [{"lambda_l": l, "lambda_g": g} for l in (0.0, 0.1) for g in (0.0, 2.0)]
    >>> [q["lambda_l"] for q in lambda_l_column(pts)]
    [0.0, 0.1]
    """
    if not all("lambda_l" in q and "lambda_g" in q for q in points):
        return points
    if len({q["lambda_l"] for q in points}) > 1 and len({q["lambda_g"] for q in points}) > 1:
        return [q for q in points if q["lambda_g"] == 0]
    return points


def named_grid(name: str, kind: str, n_features: int, depth: int = 1) -> list[float]:
    """The values of a grid named in :data:`NAMED_GRIDS`.

    >>> named_grid("paper-ends", "g", 4)
    [0.0, 2.0]
    """
    if name not in NAMED_GRIDS:
        raise SolveError(f"a lambda grid is a list of values or one of {', '.join(NAMED_GRIDS)}, got {name!r}")
    grid = paper_grid(kind, n_features, depth)
    return grid if name == "paper" else [grid[0], grid[-1]]


def model_metrics(model: Any, data: Dataset, prefix: str) -> dict[str, float]:
    """Accuracy of ``model`` on ``data`` and, for randomized trees, the randomized classifier's expected accuracy
    (``{prefix}_expected_accuracy``, :meth:`RandomizedTreeModel.expected_accuracy`) and the sparsity measures
    (percent): ``delta_l`` and ``delta_g`` at the model's ``zero_tol``, ``delta_l_1e3`` and ``delta_g_1e3`` at
    ``COARSE_ZERO_TOL``."""
    labels = data.labels_of(data.y)
    pred = model.predict(data.X)
    out = {f"{prefix}_accuracy": float(np.mean(pred == labels))}
    if hasattr(model, "expected_accuracy"):
        out[f"{prefix}_expected_accuracy"] = model.expected_accuracy(data.X, labels)
    if hasattr(model, "local_sparsity"):
        out["delta_l"] = model.local_sparsity()
        out["delta_g"] = model.global_sparsity()
        out["delta_l_1e3"] = model.local_sparsity(COARSE_ZERO_TOL)
        out["delta_g_1e3"] = model.global_sparsity(COARSE_ZERO_TOL)
    return out


def plot_path(path: Sequence[PathPoint], over: str = "lambda_l", ax: Any = None) -> Any:
    """Sparsity (``delta_L``, ``delta_G``) and accuracy along a path against ``over``, as the paper's
    Figures 2-3. Needs matplotlib (``pip install treeopt-dsl[plot]``). Returns the figure."""
    try:
        import matplotlib.pyplot as plt  # matplotlib's own backend: never switched here (a notebook's stays inline)
    except ImportError:
        raise TreeoptError("plotting needs matplotlib: `pip install treeopt-dsl[plot]`") from None
    rows = [p.to_dict() for p in path]
    xs = np.array([r[over] for r in rows])
    shown = np.where(xs > 0, xs, np.nan)
    fig, axes = (plt.subplots(1, 2, figsize=(9, 3.4)) if ax is None else (ax[0].figure, ax))
    for key, label in (("delta_l", "local sparsity δL (%)"), ("delta_g", "global sparsity δG (%)")):
        axes[0].plot(shown, [r.get(key, np.nan) for r in rows], marker="o", label=label)
    for key in ("train_accuracy", "test_accuracy", "test_expected_accuracy"):
        if key in rows[0]:
            axes[1].plot(shown, [100 * r[key] for r in rows], marker="o", label=key.replace("_", " ") + " (%)",
                         linestyle=":" if "expected" in key else "-")
    for a in axes:
        a.set_xscale("log")
        a.set_xlabel(over.replace("lambda_", "λ") + " (λ = 0 not shown)")
        a.legend(fontsize=8)
        a.grid(alpha=0.3)
    fig.tight_layout()
    return fig
