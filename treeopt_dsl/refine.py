"""Refinement of a logistic tree's last layer (thesis Remark 1, seed 000 lines 551-555).

After the MILP, each last-layer node's hyperplane is refitted as an l1-regularized logistic
regression (scikit-learn, ``saga``: the intercept is not penalized, as in the MILP) on the training
samples that reach it. The last layer does not route, so the other levels' terms are unchanged and
the *exact* objective ``sum_h C_h sum_i log(1 + exp(-y_i v_i)) + sum_t ||w_t||_1`` can only decrease;
a node whose refit is not better (a single-class node, or a solver that stopped early) keeps its
hyperplane, which makes the guarantee hold whatever the numerical solver does.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from .blocks.losses import logistic_loss
from .errors import FormulationError
from .models.tree import TreeModel


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


def refine_last_layer(tree: TreeModel, Xs: np.ndarray, y: np.ndarray, C_last: float = 1.0,
                      max_iter: int = 20000) -> TreeModel:
    """A copy of ``tree`` whose last-layer classifiers are refitted (Remark 1). ``Xs`` is scaled."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    if C_last <= 0:
        raise FormulationError("refinement needs a positive loss weight C")
    topo = tree.topology
    reach = topo.last[tree.apply(Xs, scaled=True)]
    W, b = tree.W.copy(), tree.b.copy()
    for t in topo.last:  # one scikit-learn fit per last-layer node (2^(d-1) of them)
        rows = reach == t
        Xt, yt = Xs[rows], y[rows]
        if np.unique(yt).size < 2:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            lr = LogisticRegression(l1_ratio=1.0, C=C_last, solver="saga", tol=1e-10, max_iter=max_iter)
            lr.fit(Xt, yt)
        w_new, b_new = lr.coef_.ravel(), float(lr.intercept_[0])
        if _node_objective(w_new, b_new, Xt, yt, C_last) < _node_objective(W[t], b[t], Xt, yt, C_last):
            W[t], b[t] = w_new, b_new
    return replace(tree, W=W, b=b)


def refine(result: Any) -> TreeModel:
    """Refine the tree of a solved logistic formulation, using its training data and ``C_d``."""
    from .blocks import TangentLogisticLoss

    built = result.built
    loss = built.ctx.roles.get("loss")
    if not isinstance(loss, TangentLogisticLoss):
        raise FormulationError("refinement applies to logistic trees (OLCT); this formulation has another loss")
    C = np.atleast_1d(np.asarray(loss.C, dtype=float))
    return refine_last_layer(result.model, built.ctx.data.X, built.ctx.data.y, float(C[-1]))
