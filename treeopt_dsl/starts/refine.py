"""Refinement of a logistic tree's last layer (thesis Remark 1, [aldinucci-thesis-2024] lines 551-555).

After the MILP, each last-layer node's hyperplane is refitted as an l1-regularized logistic
regression on the training samples that reach it (the intercept is not penalized, as in the MILP),
solved exactly and deterministically: L-BFGS-B on the split ``w = w+ - w-``, ``w+-, w- >= 0``, whose
objective ``C sum_i log(1 + exp(-y_i (w·x_i + b))) + 1ᵀ(w+ + w-)`` is smooth (scikit-learn's ``saga``
stops after a few epochs on small or imbalanced nodes and depends on a random state). The last
layer does not route, so the other levels' terms are unchanged and
the *exact* objective ``sum_h C_h sum_i log(1 + exp(-y_i v_i)) + sum_t ||w_t||_1`` can only decrease;
a node whose refit is not better (a single-class node, or a solver that stopped early) keeps its
hyperplane, which makes the guarantee hold whatever the numerical solver does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from treeopt_dsl.blocks import TangentLogisticLoss
from treeopt_dsl.blocks.losses import logistic_loss
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.models.tree import TreeModel


def exact_objective(tree: TreeModel, Xs: np.ndarray, y: np.ndarray, C: Any = 1.0) -> float:
    """``sum_h C_h sum_i log(1 + exp(-y_i v_i,t_h(i))) + sum_t ||w_t||_1`` on scaled data ``Xs``."""
    topo = tree.topology
    v = Xs @ tree.W.T + tree.b
    path = topo.path_nodes(topo.route(v > tree.threshold))
    Cs = np.broadcast_to(np.atleast_1d(np.asarray(C, dtype=float)), (topo.depth,))
    margins = y[:, None] * np.take_along_axis(v, path, axis=1)
    return float((logistic_loss(margins) * Cs).sum() + np.abs(tree.W).sum())


def _node_objective(w: np.ndarray, b: float, X: np.ndarray, y: np.ndarray, C: float) -> float:
    return float(C * logistic_loss(y * (X @ w + b)).sum() + np.abs(w).sum())


def l1_logistic(X: np.ndarray, y: np.ndarray, C: float, w0: np.ndarray | None = None, b0: float = 0.0,
                max_iter: int = 20000) -> tuple[np.ndarray, float]:
    """``argmin C sum_i log(1 + exp(-y_i (w·x_i + b))) + ||w||_1`` (``y`` in {-1, +1}), exact and
    deterministic: L-BFGS-B on ``(w+, w-, b)`` with ``w+-, w- >= 0``, started at ``(w0, b0)``."""
    from scipy.optimize import minimize

    p = X.shape[1]
    w0 = np.zeros(p) if w0 is None else np.asarray(w0, dtype=float)
    z0 = np.concatenate([np.maximum(w0, 0.0), np.maximum(-w0, 0.0), [b0]])

    def fun(z: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = z[:p] - z[p:2 * p], z[-1]
        m = y * (X @ w + b)
        loss = logistic_loss(m)
        dm = -C * y * 0.5 * (1.0 - np.tanh(0.5 * m))  # C d/dv log(1 + exp(-y v)) = -C y s(-y v)
        gw = X.T @ dm
        return float(C * loss.sum() + z[:2 * p].sum()), np.concatenate([gw + 1.0, -gw + 1.0, [dm.sum()]])

    bounds = [(0.0, None)] * (2 * p) + [(None, None)]
    res = minimize(fun, z0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": max_iter, "ftol": 1e-15, "gtol": 1e-10, "maxcor": 30})
    z = res.x
    return z[:p] - z[p:2 * p], float(z[-1])


def refine_last_layer(tree: TreeModel, Xs: np.ndarray, y: np.ndarray, C_last: float = 1.0,
                      max_iter: int = 20000) -> TreeModel:
    """A copy of ``tree`` whose last-layer classifiers are refitted (Remark 1). ``Xs`` is scaled."""
    if C_last <= 0:
        raise FormulationError("refinement needs a positive loss weight C")
    topo = tree.topology
    reach = topo.last[tree.apply(Xs, scaled=True)]
    W, b = tree.W.copy(), tree.b.copy()
    for t in topo.last:  # one fit per last-layer node (2^(d-1) of them)
        rows = reach == t
        Xt, yt = Xs[rows], y[rows]
        if np.unique(yt).size < 2:
            continue
        w_new, b_new = l1_logistic(Xt, yt.astype(float), C_last, W[t], float(b[t]), max_iter)
        if _node_objective(w_new, b_new, Xt, yt, C_last) < _node_objective(W[t], b[t], Xt, yt, C_last):
            W[t], b[t] = w_new, b_new
    return replace(tree, W=W, b=b)


def refine(result: Any) -> TreeModel:
    """Refine the tree of a solved logistic formulation, using its training data and ``C_d``."""
    built = result.built
    loss = built.ctx.roles.get("loss")
    if not isinstance(loss, TangentLogisticLoss):
        raise FormulationError("refinement applies to logistic trees (OLCT); this formulation has another loss")
    C = np.atleast_1d(np.asarray(loss.C, dtype=float))
    return refine_last_layer(result.model, built.ctx.data.X, built.ctx.data.y, float(C[-1]))
