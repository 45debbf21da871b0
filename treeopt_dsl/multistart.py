"""Multistart solves and warm-chained regularization paths for the (nonconvex) NLP formulations.

S-ORCT is solved by a local NLP solver, so the paper repeats every solve from 20 random initial
points and keeps the best (seed 001 lines 357-360), and walks a grid of ``(lambda_L, lambda_G)``
feeding each pair with the 20 solutions of the pair solved before it (lines 397-406).

>>> import numpy as np
>>> from treeopt_dsl.data import Dataset
>>> from treeopt_dsl.formulations import get_formulation
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(size=(40, 2)); y = np.where(X[:, 0] > 0.5, 1, 0)
>>> res = get_formulation("sorct", depth=1, gamma=32, n_starts=3).solve(Dataset.from_arrays(X, y), seed=0)
>>> res.status.value, len(res.starts), bool(res.model.predict(X[:5]).size == 5)
('optimal', 3, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .data import Dataset
from .errors import SolveError
from .formulation import Built
from .result import SolveResult


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


def multistart(built: Built, n_starts: int = 20, seed: int | None = 0, starts: Sequence[Any] | None = None,
               solver: str = "ipopt", backend: str | None = None,
               on_start: Callable[[int, SolveResult], None] | None = None, **options: Any) -> SolveResult:
    """Solve ``built`` from ``n_starts`` random points drawn with ``seed`` (or from ``starts``: vectors
    or dicts of the decisions) and return the best result; every start's status, objective and
    runtime are in ``result.starts`` (:func:`solve_from` also returns every start's solution)."""
    best, _ = solve_from(built, n_starts=n_starts, seed=seed, starts=starts, solver=solver, backend=backend,
                         on_start=on_start, **options)
    return best


def solve_from(built: Built, n_starts: int = 20, seed: int | None = 0, starts: Sequence[Any] | None = None,
               solver: str = "ipopt", backend: str | None = None,
               on_start: Callable[[int, SolveResult], None] | None = None,
               **options: Any) -> tuple[SolveResult, list[np.ndarray]]:
    """:func:`multistart` that also returns the final point of every start that found a solution."""
    from .solve import solve_built

    if starts is None:
        if n_starts < 1:
            raise SolveError(f"n_starts must be at least 1, got {n_starts}")
        rng = np.random.default_rng(seed)
        points = [random_start(built, rng) for _ in range(n_starts)]
    else:  # vectors or dicts of the decisions: solve_built completes them (warmstart.start_point)
        points = list(starts)
    options.pop("warm_start", None)
    best: SolveResult | None = None
    record, solutions = [], []
    for k, x0 in enumerate(points):
        res = solve_built(built, solver=solver, backend=backend, warm_start=x0, **options)
        record.append({"start": k, "status": res.status.value, "objective": res.objective,
                       "runtime_s": round(res.runtime_s, 4)})
        if on_start is not None:
            on_start(k, res)
        if res.status.has_solution and res.x is not None:
            solutions.append(res.x)
            if best is None or not best.status.has_solution or res.objective < best.objective:
                best = res
        elif best is None:
            best = res
        log = options.get("log_callback")
        if log is not None:
            shown = "-" if res.objective is None else f"{res.objective:.8g}"
            top = "-" if best.objective is None else f"{best.objective:.8g}"
            log(f"treeopt multistart: start {k + 1}/{len(points)} {res.status.value} objective {shown} best {top} "
                f"time {res.runtime_s:.2f}s")
    assert best is not None
    if starts is None:  # random points are the method's own, not a start the user gave
        best.warm_start_accepted = None
    best.starts = record
    best.runtime_s = float(sum(r["runtime_s"] for r in record))
    return best, solutions


@dataclass
class PathPoint:
    """One ``(lambda_L, lambda_G)`` of a path: the best result of its multistart and its measures."""

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
        return {"lambda_l": self.lambda_l, "lambda_g": self.lambda_g, "status": r.status.value,
                "objective": r.objective, "n_starts": len(r.starts),
                "time_per_start_s": float(np.mean(times)) if times else None, **self.metrics}


def regularization_path(make: Callable[[float, float], Any], data: Dataset, lambdas_l: Sequence[float],
                        lambdas_g: Sequence[float] = (0.0,), n_starts: int = 20, seed: int | None = 0,
                        test: Dataset | None = None, solver: str = "ipopt", backend: str | None = None,
                        on_point: Callable[[PathPoint], None] | None = None, **options: Any) -> list[PathPoint]:
    """Solve the grid exactly as seed 001 lines 397-406: ``lambda_L`` outer, ``lambda_G`` inner, the
    first pair from ``n_starts`` random points, every later pair from the solutions of the pair solved
    just before it (in this order; a new ``lambda_L`` continues from the last ``lambda_G`` of the
    previous one, the literal reading of "the previous pair").

    ``make(lambda_l, lambda_g)`` returns the formulation spec of a pair (e.g.
    ``lambda l, g: get_formulation("sorct", depth=1, lambda_l=l, lambda_g=g)``). Each point records
    the objective, the sparsity ``delta_L`` / ``delta_G`` and the accuracy on ``data`` (and ``test``).
    """
    path: list[PathPoint] = []
    previous: list[dict[str, np.ndarray]] | None = None
    for lam_l in lambdas_l:
        for lam_g in lambdas_g:
            spec = make(float(lam_l), float(lam_g))
            built = spec.build(data)
            t0 = time.perf_counter()
            best, sols = solve_from(built, n_starts=n_starts, seed=seed, starts=previous, solver=solver,
                                    backend=backend, **options)
            point = PathPoint(float(lam_l), float(lam_g), best, {"wall_s": round(time.perf_counter() - t0, 3)})
            if best.model is not None:
                point.metrics.update(model_metrics(best.model, data, "train"))
                if test is not None:
                    point.metrics.update(model_metrics(best.model, test, "test"))
            previous = [decisions_of(built, x) for x in sols] or previous
            path.append(point)
            if on_point is not None:
                on_point(point)
    return path


def model_metrics(model: Any, data: Dataset, prefix: str) -> dict[str, float]:
    """Accuracy of ``model`` on ``data`` and, for randomized trees, the sparsity measures (percent)."""
    pred = model.predict(data.X)
    out = {f"{prefix}_accuracy": float(np.mean(pred == data.labels_of(data.y)))}
    if hasattr(model, "local_sparsity"):
        out["delta_l"] = model.local_sparsity()
        out["delta_g"] = model.global_sparsity()
    return out


def plot_path(path: Sequence[PathPoint], over: str = "lambda_l", ax: Any = None) -> Any:
    """Sparsity (``delta_L``, ``delta_G``) and accuracy along a path against ``over``, as the paper's
    Figures 2-3. Needs matplotlib (``pip install treeopt-dsl[plot]``). Returns the figure."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        from .errors import TreeoptError

        raise TreeoptError("plotting needs matplotlib: `pip install treeopt-dsl[plot]`") from None
    rows = [p.to_dict() for p in path]
    xs = np.array([r[over] for r in rows])
    shown = np.where(xs > 0, xs, np.nan)
    fig, axes = (plt.subplots(1, 2, figsize=(9, 3.4)) if ax is None else (ax[0].figure, ax))
    for key, label in (("delta_l", "local sparsity δL (%)"), ("delta_g", "global sparsity δG (%)")):
        axes[0].plot(shown, [r.get(key, np.nan) for r in rows], marker="o", label=label)
    for key in ("train_accuracy", "test_accuracy"):
        if key in rows[0]:
            axes[1].plot(shown, [100 * r[key] for r in rows], marker="o", label=key.replace("_", " ") + " (%)")
    for a in axes:
        a.set_xscale("log")
        a.set_xlabel(over.replace("lambda_", "λ") + " (λ = 0 not shown)")
        a.legend(fontsize=8)
        a.grid(alpha=0.3)
    fig.tight_layout()
    return fig
