"""Refinement of a logistic tree's last layer (thesis Remark 1, [aldinucci-thesis-2024] lines 551-555).

After the MILP, each last-layer node's hyperplane is refitted as an l1-regularized logistic
regression on the training samples that reach it (the intercept is not penalized, as in the MILP),
solved exactly and deterministically: L-BFGS-B on the split ``w = w+ - w-``, ``w+-, w- >= 0``, whose
objective ``C sum_i log(1 + exp(-y_i (w·x_i + b))) + l1 1ᵀ(w+ + w-)`` is smooth (scikit-learn's ``saga``
stops after a few epochs on small or imbalanced nodes and depends on a random state). The last
layer does not route, so the other levels' terms are unchanged and
the *exact* objective ``sum_h C_h sum_i log(1 + exp(-y_i v_i)) + l1 sum_t ||w_t||_1`` can only decrease;
a node whose refit is not better (a single-class node, or a solver that stopped early) keeps its
hyperplane, which makes the guarantee hold whatever the numerical solver does. Sample weights (the
MILP's ``sum_i w_i loss_i``) weigh every loss term here too.

``l1`` is the formulation's weight of the l1 term (OLCT's ``l1``, 1 by default). With ``l1 = 0`` (the thesis'
Figures 3.7-3.8, which drop the term) the refit is plain logistic regression, the reading that keeps Remark 1's
guarantee in the objective the tree was trained for; on a node whose samples are separable the loss has no
minimizer and the refit stops at L-BFGS-B's tolerances with large weights (its loss near 0).

:func:`refine_result` is the step as the faces run it (``treeopt fit/solve --refine``,
``OptimalTreeClassifier(refine=True)``, a grid's ``refine = true``): the result with the refined tree and a
``refinement`` record; :func:`check_refinable` refuses, before any solve, a formulation without the logistic loss.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from treeopt_dsl.blocks import TangentLogisticLoss
from treeopt_dsl.blocks.losses import logistic_loss
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.models.tree import TreeModel
from treeopt_dsl.result import SolveResult
from treeopt_dsl.starts.greedy import l1_weight


def exact_objective(tree: TreeModel, Xs: np.ndarray, y: np.ndarray, C: Any = 1.0,
                    sample_weight: np.ndarray | None = None, l1: float = 1.0) -> float:
    """``sum_h C_h sum_i s_i log(1 + exp(-y_i v_i,t_h(i))) + l1 sum_t ||w_t||_1`` on scaled data ``Xs`` (``s_i`` the
    sample weights, 1 when ``None``)."""
    topo = tree.topology
    v = Xs @ tree.W.T + tree.b
    path = topo.path_nodes(topo.route(v > tree.threshold))
    Cs = np.broadcast_to(np.atleast_1d(np.asarray(C, dtype=float)), (topo.depth,))
    margins = y[:, None] * np.take_along_axis(v, path, axis=1)
    sw = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    return float((logistic_loss(margins) * Cs * sw[:, None]).sum() + l1 * np.abs(tree.W).sum())


def _node_objective(w: np.ndarray, b: float, X: np.ndarray, y: np.ndarray, C: float, sw: np.ndarray,
                    l1: float) -> float:
    return float(C * (sw * logistic_loss(y * (X @ w + b))).sum() + l1 * np.abs(w).sum())


def l1_logistic(X: np.ndarray, y: np.ndarray, C: float, w0: np.ndarray | None = None, b0: float = 0.0,
                max_iter: int = 20000, sample_weight: np.ndarray | None = None, l1: float = 1.0
                ) -> tuple[np.ndarray, float]:
    """``argmin C sum_i s_i log(1 + exp(-y_i (w·x_i + b))) + l1 ||w||_1`` (``y`` in {-1, +1}, ``s`` the sample
    weights, 1 when ``None``), exact and deterministic: L-BFGS-B on ``(w+, w-, b)`` with ``w+-, w- >= 0``, started
    at ``(w0, b0)``."""
    from scipy.optimize import minimize

    p = X.shape[1]
    sw = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    Cs = C * sw
    w0 = np.zeros(p) if w0 is None else np.asarray(w0, dtype=float)
    z0 = np.concatenate([np.maximum(w0, 0.0), np.maximum(-w0, 0.0), [b0]])

    def fun(z: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = z[:p] - z[p:2 * p], z[-1]
        m = y * (X @ w + b)
        loss = logistic_loss(m)
        dm = -Cs * y * 0.5 * (1.0 - np.tanh(0.5 * m))  # C s_i d/dv log(1 + exp(-y v)) = -C s_i y s(-y v)
        gw = X.T @ dm
        return float((Cs * loss).sum() + l1 * z[:2 * p].sum()), np.concatenate([gw + l1, -gw + l1, [dm.sum()]])

    bounds = [(0.0, None)] * (2 * p) + [(None, None)]
    res = minimize(fun, z0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": max_iter, "ftol": 1e-15, "gtol": 1e-10, "maxcor": 30})
    z = res.x
    return z[:p] - z[p:2 * p], float(z[-1])


def refine_last_layer(tree: TreeModel, Xs: np.ndarray, y: np.ndarray, C_last: float = 1.0,
                      max_iter: int = 20000, sample_weight: np.ndarray | None = None, l1: float = 1.0) -> TreeModel:
    """A copy of ``tree`` whose last-layer classifiers are refitted (Remark 1). ``Xs`` is scaled; ``sample_weight``
    weighs each sample's loss (``None``: 1); ``l1`` the weight of ``||w_t||_1`` (0: plain logistic regression)."""
    if C_last <= 0:
        raise FormulationError("refinement needs a positive loss weight C")
    if l1 < 0:
        raise FormulationError(f"refinement needs an l1 weight >= 0; got {l1!r}")
    topo = tree.topology
    reach = topo.last[tree.apply(Xs, scaled=True)]
    W, b = tree.W.copy(), tree.b.copy()
    sw = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    for t in topo.last:  # one fit per last-layer node (2^(d-1) of them)
        rows = reach == t
        Xt, yt, st = Xs[rows], y[rows], sw[rows]
        if np.unique(yt[st > 0]).size < 2:
            continue
        w_new, b_new = l1_logistic(Xt, yt.astype(float), C_last, W[t], float(b[t]), max_iter, st, l1)
        if _node_objective(w_new, b_new, Xt, yt, C_last, st, l1) < _node_objective(W[t], b[t], Xt, yt, C_last, st, l1):
            W[t], b[t] = w_new, b_new
    return replace(tree, W=W, b=b)


def refine(result: Any) -> TreeModel:
    """Refine the tree of a solved logistic formulation, using its training data (and weights), ``C_d`` and its l1
    weight."""
    built = result.built
    loss = built.ctx.roles.get("loss")
    if not isinstance(loss, TangentLogisticLoss):
        raise FormulationError("refinement applies to logistic trees (OLCT); this formulation has another loss")
    C = np.atleast_1d(np.asarray(loss.C, dtype=float))
    data = built.ctx.data
    return refine_last_layer(result.model, data.X, data.y, float(C[-1]), sample_weight=data.sample_weight,
                             l1=l1_weight(built))


def is_logistic(spec: Any) -> bool:
    """Whether ``spec`` (a formulation spec) is a logistic tree: its loss is the tangent-logistic block (3.15)."""
    return any(isinstance(b, TangentLogisticLoss) for b in spec.formulation().blocks)


def result_exact_objective(result: SolveResult) -> float | None:
    """The exact objective (:func:`exact_objective`: the true log-loss in place of its tangents) of a logistic
    tree's fitted answer on its training data, ``None`` without a tree. The thesis compares trees by it (Figures
    3.7c and 3.8b: "the best (exact) loss attained on the training set").

    >>> from treeopt_dsl import Dataset
    >>> from treeopt_dsl.formulations import get_formulation
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> d = Dataset.from_arrays(X, np.where(X[:, 0] > 0, 1, -1))
    >>> r = get_formulation("olct", depth=1).start(d, "greedy")
    >>> bool(result_exact_objective(r) >= r.objective)  # the tangents (3.15) under-estimate the log-loss
    True
    """
    if result.model is None or result.built is None or not isinstance(result.model, TreeModel):
        return None  # (a generalized risk score's loss is tangent-logistic too, but it has no tree)
    loss = result.built.ctx.roles.get("loss")
    if not isinstance(loss, TangentLogisticLoss):
        raise FormulationError("the exact objective is a logistic tree's (olct); this formulation has another loss")
    data = result.built.ctx.data
    return exact_objective(result.model, data.X, data.y, loss.C, data.sample_weight, l1_weight(result.built))


def check_refinable(spec: Any) -> None:
    """Raise a :class:`~treeopt_dsl.errors.FormulationError` unless ``spec`` (a formulation spec) is a logistic tree:
    called before the solve by every face that takes ``refine``."""
    if not is_logistic(spec):
        raise FormulationError(f"refine (thesis Remark 1) refits the last layer of a logistic tree (olct, "
                               f"olct_univariate); {spec.name} has no logistic loss: leave refine off")


def refine_result(result: SolveResult) -> SolveResult:
    """``result`` with its tree refined (:func:`refine`) and ``result.refinement`` saying what changed: the exact
    objective (:func:`exact_objective`, the thesis' objective with the true log-loss) before and after and the
    last-layer nodes refitted. ``result.objective``, ``bound`` and ``certificate`` stay the MILP's: they are about
    the tree the solver returned. A result without a tree is returned as it is.

    >>> from treeopt_dsl import Dataset
    >>> from treeopt_dsl.formulations import get_formulation
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> d = Dataset.from_arrays(X, np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1, -1))
    >>> r = refine_result(get_formulation("olct", depth=1).solve(d, time_limit=10))
    >>> r.refinement["exact_objective"] <= r.refinement["exact_objective_before"]
    True
    """
    if result.model is None:
        return result
    if result.built is None:
        raise FormulationError(f"refine needs the solved MILP's model and data; the {result.solver} route returned "
                               "a tree without them: solve with a MILP solver (e.g. solver='highs')")
    tree = refine(result)
    built = result.built
    data = built.ctx.data
    C, l1 = built.ctx.roles["loss"].C, l1_weight(built)
    before = exact_objective(result.model, data.X, data.y, C, data.sample_weight, l1)
    after = exact_objective(tree, data.X, data.y, C, data.sample_weight, l1)
    last = tree.topology.last
    changed = int(np.sum(np.any(tree.W[last] != result.model.W[last], axis=1) | (tree.b[last] != result.model.b[last])))
    return replace(result, model=tree, refinement={"exact_objective_before": before, "exact_objective": after,
                                                  "nodes_refitted": changed, "nodes": int(last.size)})
