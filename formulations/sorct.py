"""S-ORCT, the sparse optimal randomized classification tree ([blanquero-2020-sorct], lines 63-200; FORMULATIONS.md D).

The smooth NLP (9)-(16): expected misclassification cost (1) + ``lambda_L`` times the l1 norm of
every cut (local sparsity, the split ``a = a+ - a-`` of (13)) + ``lambda_G`` times the l_inf norm of
every feature's coefficients across nodes (global sparsity, ``beta_j`` of (12)/(17)-(18)), with (2)-(6)
and optionally the class performance constraints (8). The regularizers are the tree family's
:class:`~treeopt_dsl.blocks.L1` and :class:`~treeopt_dsl.blocks.LInf` blocks, added only when their
weight is positive (the paper's remark after (16): without local sparsity ``a`` is not split).

Solved by Ipopt (``--solver ipopt``) from ``n_starts`` random initial points [20], best kept
(lines 357-360); :func:`treeopt_dsl.starts.multistart.regularization_path` walks the paper's grid.
Features are scaled to [0, 1] on the training data (line 67), ``gamma = 512`` (line 397) and
``W = 0.5`` off the diagonal (line 390) by default. ``rho`` (the experiments use 0.1, line 396) is
off by default: give ``--param rho=0.1`` to reproduce the paper's runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from treeopt_dsl import blocks as B
from treeopt_dsl.blocks.randomized import cost_matrix
from treeopt_dsl.data import Dataset
from treeopt_dsl.defaults import SOLVER, TEST_SIZE
from treeopt_dsl.errors import DataError, SolveError
from treeopt_dsl.formulation import Formulation
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.formulations.spec import FormulationSpec, Param, callers_time_off, floats, optional_float
from treeopt_dsl.models.randomized import decode_randomized
from treeopt_dsl.numeric import logistic_cdf
from treeopt_dsl.result import SolveResult
from treeopt_dsl.starts.multistart import PathPoint, multistart, named_grid, regularization_path
from treeopt_dsl.topology import MAX_DEPTH


def _rho(text: str) -> Any:
    return None if text.lower() in ("none", "") else floats(text)


class SORCT(FormulationSpec):
    name = "sorct"
    summary = "S-ORCT: randomized tree (NLP, Ipopt), expected misclassification (1) + l1 local / linf global sparsity"
    scaling = "minmax"
    multiclass = True
    default_solver = "ipopt"
    params = (
        Param("depth", 1, int, "depth D (the paper: 1 for two classes, 2 for three or four)", minimum=1,
              maximum=MAX_DEPTH),
        Param("gamma", 512.0, float, "slope of the logistic CDF F (line 397)", minimum=0.0, exclusive=True),
        Param("lambda_l", 0.0, float, "local sparsity weight lambda_L (l1 of every cut)", minimum=0.0),
        Param("lambda_g", 0.0, float, "global sparsity weight lambda_G (l_inf of every feature across nodes)",
              minimum=0.0),
        Param("cost", 0.5, float, "misclassification cost W off the diagonal (line 390)", minimum=0.0,
              exclusive=True),
        Param("rho", None, _rho, "class performance (8): rho_k, one number or one per class (none: off)"),
        Param("n_starts", 20, int, "random initial points of the multistart (lines 357-360)", minimum=1),
        Param("max_iter", None, optional_float, "Ipopt iteration limit per start (none: 3000)", minimum=1),
        Param("scaling", "minmax", str, "feature scaling fitted on training data (the paper: [0, 1])"),
    )

    def formulation(self) -> Formulation:
        v = self.values
        blocks: list[B.Block] = [B.RandomizedSplit(gamma=float(v["gamma"]))]
        if float(v["lambda_l"]) > 0:
            blocks.append(B.L1(of="a", weight=float(v["lambda_l"])))
        if float(v["lambda_g"]) > 0:
            blocks.append(B.LInf(of="a", over="node", weight=float(v["lambda_g"])))
        blocks += [B.LeafProbabilities(), B.LeafClasses(), B.ExpectedMisclassification(cost=float(v["cost"]))]
        if v["rho"] is not None:
            blocks.append(B.ClassPerformance(rho=v["rho"]))
        return Formulation(self.name, blocks, decoder=decode_randomized, decisions=("a", "mu", "C"))

    def solve(self, data: Dataset, solver: str = SOLVER, backend: str | None = None, **options: Any) -> SolveResult:
        """Multistart solve: ``n_starts`` random points drawn with ``seed`` (a warm start, e.g. a fitted
        model's decisions as a dict, replaces them), the best result returned. ``solver="auto"``: Ipopt (no exact
        engine takes a randomized tree)."""
        solver = nlp_solver(solver)
        callers_time_off(options)  # the caller's clock (``started``): what it spent is off the time limit
        built = self.build(data)
        if self.values["max_iter"] is not None:
            options.setdefault("max_iter", int(self.values["max_iter"]))
        seed = options.pop("seed", 0)
        warm = options.pop("warm_start", None)
        if isinstance(warm, str) and warm in ("auto", "none"):  # the multistart's random points are its start
            warm = None
        starts = None if warm is None else [warm]
        return multistart(built, n_starts=int(self.values["n_starts"]), seed=seed, starts=starts, solver=solver,
                          backend=backend, **options)


def nlp_solver(solver: str | None) -> str:
    """The NLP solver a multistart uses: ``solver``, or Ipopt for ``None`` / ``"auto"``."""
    return SORCT.default_solver if solver is None or solver.lower() == SOLVER else solver


def lambda_l_threshold(data: Dataset, cost: Any = 0.5, gamma: float = 512.0) -> float:
    """Theorem 3 ([blanquero-2020-sorct], (21)): for depth 1 and two classes, ``a = 0`` is a stationary point of
    S-ORCT once ``lambda_L`` reaches this value. ``data`` must be the *scaled* training data (the
    formulation's ``prepare``), ``W`` the cost matrix.

    Reading chosen: the bound as the proof derives it (lines 330-350),
    ``1/(N p) max_{mu in {-1, 1}} f(-mu) max_j |W_12 sum_{I_1} x_ij - W_21 sum_{I_2} x_ij|``; the
    displayed (21) drops the ``1/p`` that the cut ``a·x / p`` puts into every derivative, which
    makes it ``p`` times larger (still valid, not tight). ``f(v) = gamma F(v)(1 - F(v))`` is the
    density of the logistic CDF of slope ``gamma``; it is symmetric, so ``f(-mu) = f(mu)``. The
    test suite checks that this value equals the largest ``||grad_a g(0, mu, C)||_inf`` computed by
    automatic differentiation over ``mu in {-1, 1}`` and the two feasible ``C``.
    """
    if data.n_classes != 2:
        raise DataError(f"Theorem 3 is stated for two classes; the data has {data.n_classes}")
    W = cost_matrix(2, cost)
    k = data.class_index
    X = data.X
    s1, s2 = X[k == 0].sum(0), X[k == 1].sum(0)
    F = logistic_cdf(1.0, gamma)
    f = gamma * F * (1.0 - F)
    return float(f * np.max(np.abs(W[0, 1] * s1 - W[1, 0] * s2)) / (data.n_samples * data.n_features))


def run_path(formulation: str, data: Dataset, lambdas_l: Sequence[float] | str,
             lambdas_g: Sequence[float] | str = (0.0,), *, params: dict[str, Any] | None = None,
             test_size: float = TEST_SIZE, seed: int = 0, n_starts: int = 20, fresh: int | None = None,
             solver: str = SOLVER, backend: str | None = None,
             on_point: Callable[[PathPoint], None] | None = None,
             **options: Any) -> tuple[list[PathPoint], Dataset, Dataset]:
    """The path of ``treeopt path`` and of ``benchmarks/sorct_path.py``, one code path: ``data`` split
    ``test_size`` / rest with ``seed`` (stratified), the grid (values, or a name of
    :func:`~treeopt_dsl.starts.multistart.named_grid`: ``"paper"``, the paper's 17 points; ``"paper-ends"``, its
    two ends) walked by :func:`regularization_path` from ``n_starts`` random points drawn with ``seed``.

    >>> from treeopt_dsl.datasets import load
    >>> path, train, test = run_path("sorct", load("iris", multiclass=True), [0.0, 0.05],
    ...                              params={"depth": 2, "gamma": 32}, n_starts=2, fresh=1)
    >>> [p.to_dict()["n_starts"] for p in path], train.n_samples + test.n_samples
    ([2, 3], 150)
    """
    params = dict(params or {})
    spec = get_formulation(formulation, **params)
    if not {"lambda_l", "lambda_g"} <= set(spec.values):
        raise SolveError(f"{spec.name} has no lambda_l / lambda_g parameters: a path walks S-ORCT's grid")
    depth = int(spec.values.get("depth", 1))
    grid_l = named_grid(lambdas_l, "l", data.n_features, depth) if isinstance(lambdas_l, str) else list(lambdas_l)
    grid_g = named_grid(lambdas_g, "g", data.n_features, depth) if isinstance(lambdas_g, str) else list(lambdas_g)
    train, test = data.split(test_size, seed=seed)

    def make(lam_l: float, lam_g: float) -> Any:
        return get_formulation(spec.name, **{**params, "lambda_l": lam_l, "lambda_g": lam_g})

    path = regularization_path(make, train, grid_l, grid_g, n_starts=n_starts, seed=seed, test=test,
                               solver=nlp_solver(solver),
                               backend=backend, on_point=on_point, fresh=fresh, **options)
    return path, train, test
