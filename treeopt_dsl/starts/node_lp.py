"""A greedy start whose nodes solve their own part of the formulation's objective exactly (an LP).

The thesis starts OLCT from a greedy tree of l1-logistic regressions ([aldinucci-thesis-2024] lines 657-663:
``warm_start="greedy"``). The MILP's objective is not the logistic loss, though: it is the tangent
under-estimator (3.15) of it (with V0, ``max(0, -m, log 2 - m/2)``: a hinge-like loss), weighted by ``C_h`` per
level, plus ``||w_t||_1`` (3.16), the objective of lines 612-616. Given the samples that reach a node ``t`` at
level ``h``, the node's part of that objective,

    min_{w, b}  C_h sum_{i at t} w_i max_k (a_k y_i (w·x_i + b) + c_k)  +  ||w||_1,   w, b within their bounds,

is a linear program (``xi_i >= a_k u_i + c_k`` for every non-flat piece, the margin ``u_i = y_i (w·x_i + b)`` a
column, ``w = w+ - w-``), solved here by HiGHS through :func:`scipy.optimize.linprog`, on at most
:data:`~treeopt_dsl.defaults.NODE_ROWS` of the node's rows (a stratified sample: a start's work is bounded by
rows, not seconds). :func:`greedy_lp_tree` solves it from the root down, routing the samples by each solved
split as the greedy start does (``warm_start="greedy_lp"``, a candidate of
``"auto"``); the root, which also routes, is tried at a few weights of its own term (:data:`ROOT_SCALES`).

It applies to trees whose loss is a slack loss with pieces (:class:`~treeopt_dsl.blocks.TangentLogisticLoss`,
:class:`~treeopt_dsl.blocks.HingeLoss`) at every level and whose only regularizer of ``w`` is a scalar-weighted
:class:`~treeopt_dsl.blocks.L1` without a ball: OLCT. MARGOT's nodes (hinge and squared l2) are already solved
exactly by the greedy start's linear SVM.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy import sparse

from treeopt_dsl.blocks import L0, L1, LInf, SlackLoss, SquaredL2
from treeopt_dsl.defaults import NODE_ROWS
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Built
from treeopt_dsl.models.embed import feasible_start
from treeopt_dsl.starts.greedy import descend, level_weight, node_sample


def node_lp(X: np.ndarray, y: np.ndarray, sw: np.ndarray, a: np.ndarray, c: np.ndarray, C: float, l1: float,
            w_bounds: tuple[np.ndarray, np.ndarray], b_bounds: tuple[float, float]) -> tuple[np.ndarray, float]:
    """``(w, b)`` minimizing ``C sum_i sw_i max_k (a_k y_i (w·x_i + b) + c_k) + l1 ||w||_1`` over the box
    ``w_bounds`` x ``b_bounds`` (module docstring). A node no sample reaches, or one class only, gets ``w = 0`` and
    the intercept of that class (its loss is then at its floor, or nothing)."""
    from scipy.optimize import linprog

    n, p = X.shape
    if n == 0 or np.unique(y).size < 2:
        return np.zeros(p), float(np.clip(1.0 if n and y[0] > 0 else -1.0, *b_bounds))
    flat = a == 0.0
    floor = float(c[flat].max()) if flat.any() else -np.inf
    a, c = a[~flat], c[~flat]
    K = a.size
    # columns: w+ (p), w- (p), b, the margins u_i = y_i (w·x_i + b) (n), xi (n); the margin is a column tied by
    # one row per sample, so each of the K piece rows holds two entries (u_i, xi_i) instead of 2p + 2
    Xy = X * y[:, None]
    eye = sparse.identity(n, format="csr")
    tie = sparse.hstack([sparse.csr_matrix(Xy), sparse.csr_matrix(-Xy), sparse.csr_matrix(y[:, None]), -eye,
                         sparse.csr_matrix((n, n))], format="csr")
    piece = sparse.hstack([sparse.csr_matrix((n * K, 2 * p + 1)), sparse.kron(eye, a[:, None]),
                           -sparse.kron(eye, np.ones((K, 1)))], format="csr")
    lo, hi = np.asarray(w_bounds[0], dtype=float), np.asarray(w_bounds[1], dtype=float)
    lower = np.r_[np.zeros(2 * p), b_bounds[0], np.full(n, -np.inf), np.full(n, floor)]
    upper = np.r_[np.maximum(hi, 0.0), np.maximum(-lo, 0.0), b_bounds[1], np.full(2 * n, np.inf)]
    bounds = np.column_stack([lower, upper])
    cost = np.r_[np.full(2 * p, float(l1)), 0.0, np.zeros(n), float(C) * sw]
    res = linprog(cost, A_ub=piece, b_ub=-np.tile(c, n), A_eq=tie, b_eq=np.zeros(n), bounds=bounds, method="highs")
    if res.status != 0:
        raise FormulationError(f"a node's LP of the greedy_lp start ended with {res.message!r}")
    z = res.x
    return z[:p] - z[p:2 * p], float(z[2 * p])


#: the root's loss weight ``C_1`` is multiplied by each of these in turn (module docstring): the root is a router too
ROOT_SCALES = (1.0, 0.5, 2.0, 4.0)


class NodeProblems:
    """The node problems of a built tree whose objective :func:`node_lp` solves (module docstring): the scaled data,
    the loss pieces, the ``l1`` weight and the split bounds, read once from the built model.
    :class:`FormulationError` when the composition is not one the node LP solves (a slack loss with pieces at every
    level and one scalar-weighted ``||w||_1`` as the only regularizer of ``w``)."""

    def __init__(self, built: Built) -> None:
        ctx = built.ctx
        loss = ctx.roles.get("loss")
        if not isinstance(loss, SlackLoss) or not hasattr(loss, "pieces") or loss.on != "tree" or loss.levels != "all":
            raise FormulationError("greedy_lp needs a slack loss (tangent-logistic or hinge) at every level of a tree")
        l1s = [blk for blk in built.formulation.blocks if isinstance(blk, L1) and blk.of == "w"]
        others = [blk for blk in built.formulation.blocks if isinstance(blk, (L0, LInf, SquaredL2))]
        if len(l1s) > 1 or any(b.bound is not None or np.ndim(b.weight) != 0 for b in l1s) or others:
            raise FormulationError("greedy_lp needs ||w||_1 (one scalar-weighted L1 on w, or none: OLCT with l1 = 0) "
                                   "as the only regularizer")
        self.built, self.loss = built, loss
        self.a, self.c = loss.pieces()
        self.l1 = float(l1s[0].weight) if l1s else 0.0
        self.X, self.y, self.sw = ctx.data.X, np.asarray(ctx.data.y, dtype=float), ctx.data.weights
        w_fam, b_fam = ctx["w"], ctx["b"]
        self.w_lo, self.w_hi = np.broadcast_to(w_fam.lower, w_fam.shape), np.broadcast_to(w_fam.upper, w_fam.shape)
        self.b_lo, self.b_hi = np.broadcast_to(b_fam.lower, b_fam.shape), np.broadcast_to(b_fam.upper, b_fam.shape)

    def weight(self, level: int) -> float:
        """``C_h`` of tree level ``level`` (1 = the root's)."""
        return level_weight(self.built, level)

    def solve(self, level: int, node: int, rows: np.ndarray, scale: float = 1.0) -> tuple[np.ndarray, float]:
        """Node ``node``'s split minimizing its term over the samples ``rows`` (at most :data:`NODE_ROWS` of
        them, :func:`node_sample`), the loss weighed ``scale * C_h``."""
        idx, sw = node_sample(rows, self.y, self.sw, NODE_ROWS, seed=node)
        return node_lp(self.X[idx], self.y[idx], sw, self.a, self.c, scale * self.weight(level),
                       self.l1, (self.w_lo[node], self.w_hi[node]), (float(self.b_lo[node]), float(self.b_hi[node])))

    def value(self, level: int, rows: np.ndarray, w: np.ndarray, b: float) -> float:
        """The node's term ``C_h sum_{i in rows} sw_i max_k (a_k y_i (w·x_i + b) + c_k) + l1 ||w||_1``."""
        loss = self.loss.surrogate(self.y[rows] * (self.X[rows] @ w + b))
        return float(self.weight(level) * np.sum(self.sw[rows] * loss) + self.l1 * np.abs(w).sum())


def greedy_lp_tree(built: Built, root_scales: tuple[float, ...] = ROOT_SCALES,
                   deadline: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The greedy tree of :func:`node_lp` nodes, from the root down (module docstring); ``(W, b)`` in the layout
    of :func:`treeopt_dsl.starts.resolver.start_point`. :class:`FormulationError` when the composition is not one the
    node LP solves (it is then reported as "not used" by the automatic start).

    The root's split is both a classifier (its level's loss) and the router of every sample below it, so the root
    that minimizes its own term alone is not always the best one: below depth 1 the descent is run with the root's
    ``C_1`` scaled by each of ``root_scales`` (the other nodes exact), and the tree of the lowest objective of the
    whole model wins (each descent is a few small LPs).

    ``deadline`` (a :func:`time.perf_counter` instant: the end of the starts' share of a call's time limit): no
    further descent starts when the time the first one took would carry past it, and no node LP of the first
    descent starts past it (:class:`FormulationError`: the start is then "not used"). The work of each descent is
    bounded by rows (:data:`~treeopt_dsl.defaults.NODE_ROWS`), so within the deadline the start is the same on any
    machine; past it, fewer root weights are tried (at least the first, ``C_1`` itself)."""
    nodes = NodeProblems(built)

    def node(scale: float, first: bool) -> Any:
        def solve(h: int, t: int, rows: np.ndarray) -> tuple[np.ndarray, float]:
            if first and deadline is not None and time.perf_counter() > deadline:
                raise FormulationError("greedy_lp: the starts' share of the time limit was spent before its first "
                                       "tree was complete")
            return nodes.solve(h, t, rows, scale if h == 1 else 1.0)
        return solve

    scales = root_scales if built.ctx.topo.depth > 1 else (1.0,)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    failed: FormulationError | None = None
    took = 0.0
    for k, scale in enumerate(scales):
        if k and deadline is not None and time.perf_counter() + took > deadline:
            break  # another descent would end past the starts' share: keep the best so far
        t = time.perf_counter()
        W, b = descend(built, node(scale, k == 0))  # the root's loss weighed scale * C_1
        took = max(took, time.perf_counter() - t)
        if len(scales) == 1:
            return W, b
        try:
            obj = float(built.model.objective_value(feasible_start(built, W, b)))
        except FormulationError as exc:  # this root routes a sample into the gap the big-M rows keep empty
            failed = exc
            continue
        if best is None or obj < best[0]:
            best = (obj, W, b)
    if best is None:
        if failed is None:
            raise FormulationError("greedy_lp: the starts' share of the time limit was spent before a tree was "
                                   "complete")
        raise failed
    return best[1], best[2]
