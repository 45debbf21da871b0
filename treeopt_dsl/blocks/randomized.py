"""Blocks of the sparse optimal randomized classification tree, S-ORCT ([blanquero-2020-sorct], lines 63-200).

A sample goes left at branch node ``t`` with probability ``p_it = F(a_t·x_i / p - mu_t)``, ``F`` the
logistic CDF with slope ``gamma`` (line 397); it reaches leaf ``t`` with the product of those
probabilities along the path, ``P_it`` (line 110); every leaf holds class probabilities ``C_kt``
(2)-(3), and the objective is the expected misclassification cost ``g`` (1). The sparsity terms of
(1) in their smooth form (9)-(18) are the tree family's :class:`~treeopt_dsl.blocks.L1` (local,
``a = a+ - a-``, (13)) and :class:`~treeopt_dsl.blocks.LInf` (global, ``beta_j >= |a_jt|`` as
(17)-(18)) blocks attached to ``a``; (12) ``beta_j >= a+_jt + a-_jt`` and (17)-(18) coincide at every
optimum with ``lambda_L > 0`` (then ``a+ a- = 0``), so LInf's rows serve for both.

Every expression here is a labeled array expression (IR nonlinear nodes over ``sample``, ``node``,
``leaf``, ``class``): nothing loops over samples.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from treeopt_dsl.blocks.splits import FEATURE, SAMPLE
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Block, BuildContext
from treeopt_dsl.ir import affine
from treeopt_dsl.ir import nonlinear as nl
from treeopt_dsl.topology import NODE

LEAF, CLASS = "leaf", "class"


class RandomizedSplit(Block):
    """Oblique cuts ``a_t`` in ``[-1, 1]^p`` (4) and locations ``mu_t`` in ``[-1, 1]`` (5), and the
    probability of going left ``p_it = F(a_t·x_i / p - mu_t)`` with ``F`` the logistic CDF of slope
    ``gamma`` [512] (lines 100-110, 397). Provides ``a`` (node x feature), ``mu`` (node) and
    ``p_left`` (a nonlinear expression over sample x node) and ``gamma``. Features should lie in ``[0, 1]`` (the
    formulation scales them, as the paper assumes, line 67)."""

    provides = ("a", "mu", "p_left", "gamma")

    def __init__(self, gamma: float = 512.0) -> None:
        if not (np.isfinite(gamma) and gamma > 0):
            raise FormulationError(f"gamma must be a positive number, got {gamma!r}")
        self.gamma = float(gamma)

    def build(self, ctx: BuildContext) -> None:
        topo, data, m = ctx.topo, ctx.data, ctx.model
        p = data.n_features
        coords = {NODE: topo.nodes, FEATURE: np.arange(p)}
        a = m.add_variables("a", (NODE, FEATURE), coords, lower=-1.0, upper=1.0)
        mu = m.add_variables("mu", (NODE,), coords, lower=-1.0, upper=1.0)
        v = affine(a, xr.DataArray(data.X / p, dims=(SAMPLE, FEATURE)), FEATURE) - mu  # sample x node
        for role, val in (("a", a), ("mu", mu), ("p_left", nl.logistic(v * self.gamma)), ("gamma", self.gamma)):
            ctx.provide(role, val, "RandomizedSplit")


class LeafProbabilities(Block):
    """``P_it``, the probability that sample ``i`` falls into leaf ``t`` (line 110): the product over
    the path of ``p`` (left branches, ``N_L(t)``) and ``1 - p`` (right branches, ``N_R(t)``), written
    as one product over all branch nodes of ``1 - L + (L - R) p`` (off-path nodes contribute 1)."""

    requires = ("p_left",)
    provides = ("leaf_prob",)

    def build(self, ctx: BuildContext) -> None:
        topo = ctx.topo
        left, right = topo.leaf_paths
        coords = {LEAF: np.arange(topo.n_leaves), NODE: topo.nodes}
        one_minus_l = xr.DataArray(1.0 - left, dims=(LEAF, NODE), coords=coords)
        slope = xr.DataArray(left.astype(float) - right, dims=(LEAF, NODE), coords=coords)
        factor = ctx["p_left"] * slope + one_minus_l
        ctx.provide("leaf_prob", nl.prod(factor, NODE), "LeafProbabilities")


class LeafClasses(Block):
    """Class probabilities ``C_kt`` in ``[0, 1]`` (6) of every leaf, with (2) ``sum_k C_kt = 1`` and (3)
    ``sum_t C_kt >= 1`` (every class labels some leaf). Theorem 1: some optimum has ``C`` integral;
    the decoder reads the class of each leaf as ``argmax_k C_kt``."""

    provides = ("C",)

    def build(self, ctx: BuildContext) -> None:
        topo, K, m = ctx.topo, ctx.data.n_classes, ctx.model
        if topo.n_leaves < K:
            raise FormulationError(f"(3) asks every one of the {K} classes to label a leaf, but depth "
                                   f"{topo.depth} has {topo.n_leaves} leaves: use depth >= {int(np.ceil(np.log2(K)))}")
        C = m.add_variables("C", (CLASS, LEAF), {CLASS: np.arange(K), LEAF: np.arange(topo.n_leaves)},
                            lower=0.0, upper=1.0)
        m.add_constraints("leaf_one_class", C.sum(CLASS) == 1.0)  # (2)
        m.add_constraints("class_on_some_leaf", C.sum(LEAF) >= 1.0)  # (3)
        ctx.provide("C", C, "LeafClasses")

    def project(self, ctx: BuildContext, x: np.ndarray) -> None:
        """A start's ``C`` made feasible for (2), (3) and (6): :func:`project_leaf_classes` (a random start draws
        every ``C_kt`` uniformly in [0, 1], far from (2); Ipopt keeps a start it ends worse than)."""
        fam = ctx.model.variables["C"]
        C = fam.values(x)
        if np.all(np.isfinite(C)):
            x[fam.ids] = project_leaf_classes(C)


def project_leaf_classes(C: np.ndarray, iterations: int = 500, tol: float = 1e-12) -> np.ndarray:
    """``C`` (class x leaf) moved onto S-ORCT's constraints on the leaves' class probabilities: every column on the
    probability simplex (2) and (6), every class with total probability at least 1 over the leaves (3).

    The Euclidean projection onto the intersection, by Dykstra's alternating projections between the columns'
    simplices (``max(c - tau, 0)``, ``tau`` from the sorted column) and the classes' rows (``min(max(c + sigma, 0),
    1)``, the least ``sigma >= 0`` that gives the row a total of 1, by bisection): at most ``iterations`` rounds,
    until a round moves no entry by more than ``tol``. The columns are projected last, so (2) holds to round-off;
    a class still short of 1 by more than 1e-9 then is lifted by the least blend towards the uniform ``1/K``,
    which keeps (2) and (6) and meets (3) as there are at least as many leaves as classes. A feasible ``C`` (within
    1e-9) comes back unchanged.

    >>> C = np.array([[0.9, 0.8, 0.7, 0.6], [0.05, 0.05, 0.05, 0.05]])   # leaves sum to 0.95 ... 0.65
    >>> P = project_leaf_classes(C)                                       # class 1 would total 0.6 on the simplex
    >>> np.round(P, 3).tolist()
    [[0.825, 0.775, 0.725, 0.675], [0.175, 0.225, 0.275, 0.325]]
    >>> np.round(P.sum(axis=0), 12).tolist(), np.round(P.sum(axis=1), 9).tolist()
    ([1.0, 1.0, 1.0, 1.0], [3.0, 1.0])
    """
    C = np.asarray(C, dtype=float)
    K, L = C.shape
    if (C.min() >= 0.0 and C.max() <= 1.0 and np.abs(C.sum(axis=0) - 1.0).max() <= 1e-9
            and C.sum(axis=1).min() >= 1.0 - 1e-9):
        return C.copy()  # feasible already (a solver's point, a projected start): left as it is
    x, p, q = C.copy(), np.zeros_like(C), np.zeros_like(C)
    for _ in range(iterations):
        y = _columns_on_simplex(x + p)
        p = x + p - y
        x_new = _rows_at_least_one(y + q)
        q = y + q - x_new
        done = np.max(np.abs(x_new - x)) <= tol
        x = x_new
        if done:
            break
    S = _columns_on_simplex(x)
    rows = S.sum(axis=1)
    short = rows < 1.0 - 1e-9  # Dykstra's round-off is left (with K = L the blend below would be the uniform C)
    if short.any() and L >= K:
        # (1 - theta) r_k + theta L / K >= 1 for every class k; L / K >= 1 > r_k on the short ones
        theta = float(np.max((1.0 - rows[short]) / (L / K - rows[short])))
        S = (1.0 - theta) * S + theta / K
    return S


def _columns_on_simplex(C: np.ndarray) -> np.ndarray:
    """Every column of ``C`` projected onto the probability simplex (Euclidean)."""
    K, L = C.shape
    u = -np.sort(-C, axis=0)  # every column in decreasing order
    css = np.cumsum(u, axis=0) - 1.0
    rho = np.sum(u - css / np.arange(1, K + 1)[:, None] > 0, axis=0)  # entries kept positive, per column (>= 1)
    tau = css[rho - 1, np.arange(L)] / rho
    return np.maximum(C - tau, 0.0)


def _rows_at_least_one(C: np.ndarray) -> np.ndarray:
    """Every row of ``C`` projected onto ``{v in [0, 1]^L: sum v >= 1}`` (Euclidean): clipped to the box, and where
    that sums below 1, shifted up by the ``sigma`` (bisection) at which the clipped row sums to 1."""
    box = np.clip(C, 0.0, 1.0)
    short = box.sum(axis=1) < 1.0
    if not short.any():
        return box
    R = C[short]
    lo, hi = np.zeros(R.shape[0]), 1.0 - R.min(axis=1)  # at hi every entry is 1 (and L >= 1)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = np.clip(R + mid[:, None], 0.0, 1.0).sum(axis=1) < 1.0
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    box[short] = np.clip(R + hi[:, None], 0.0, 1.0)
    return box


def cost_matrix(K: int, cost: Any = 0.5) -> np.ndarray:
    """``W`` (K x K): a number is the cost of every error (0 on the diagonal; the paper uses 0.5,
    line 390), or a full matrix ``W[y, k]`` (cost of predicting ``k`` for class ``y``)."""
    W = np.asarray(cost, dtype=float)
    if W.ndim == 0:
        return float(W) * (1.0 - np.eye(K))
    if W.shape != (K, K) or not np.all(np.isfinite(W)):
        raise FormulationError(f"the cost matrix must be {K} x {K} and finite, got shape {W.shape}")
    return W


class ExpectedMisclassification(Block):
    """The expected misclassification cost over the training sample (line 112), the first term of (1)
    and (9): ``g = 1/N sum_i sum_t P_it sum_k W_{y_i k} C_kt``.

    With sample weights ``w_i`` (``Dataset.sample_weight``): ``g = 1/sum_i w_i sum_i w_i sum_t P_it sum_k W_{y_i k}
    C_kt``, the weighted mean (``N = sum_i w_i`` without weights): an integer weight is a repeated row."""

    requires = ("leaf_prob", "C")
    provides = ("loss",)

    def __init__(self, cost: Any = 0.5) -> None:
        self.cost = cost

    def build(self, ctx: BuildContext) -> None:
        data = ctx.data
        W = cost_matrix(data.n_classes, self.cost)
        w = data.weights
        Wy = xr.DataArray(W[data.class_index] * w[:, None], dims=(SAMPLE, CLASS))  # w_i W_{y_i k}
        expected = ctx["C"].dot(Wy, CLASS)  # sum_k w_i W_{y_i k} C_kt over (leaf, sample)
        g = nl.nlsum(ctx["leaf_prob"] * expected) * (1.0 / float(w.sum()))
        ctx.model.add_objective(g, "misclassification")
        ctx.provide("loss", g, "ExpectedMisclassification")


class ClassPerformance(Block):
    """Expected correct classification of each controlled class (8):
    ``sum_{i in I_k} sum_t P_it C_kt >= rho_k |I_k|`` (lines 146-150; ``rho_k = 0.1`` in the
    experiments, line 396). ``rho`` is one number for every class or one per class. With sample weights, the
    sums are weighted: ``sum_{i in I_k} w_i sum_t P_it C_kt >= rho_k sum_{i in I_k} w_i``."""

    requires = ("leaf_prob", "C")
    provides = ("class_performance",)

    def __init__(self, rho: Any = 0.1) -> None:
        self.rho = rho

    def build(self, ctx: BuildContext) -> None:
        data = ctx.data
        K = data.n_classes
        rho = np.broadcast_to(np.asarray(self.rho, dtype=float), (K,))
        if np.any((rho < 0) | (rho > 1)):
            raise FormulationError(f"rho must lie in [0, 1], got {self.rho!r}")
        w = data.weights
        member = xr.DataArray((data.class_index[:, None] == np.arange(K)[None]) * w[:, None],
                              dims=(SAMPLE, CLASS), coords={CLASS: np.arange(K)})
        correct = nl.nlsum(nl.nlsum(ctx["leaf_prob"] * ctx["C"] * member, SAMPLE), LEAF)
        counts = np.bincount(data.class_index, weights=w, minlength=K).astype(float)
        row = ctx.model.add_constraints("class_performance", correct >= xr.DataArray(rho * counts, dims=(CLASS,),
                                                                                      coords={CLASS: np.arange(K)}))
        ctx.provide("class_performance", row, "ClassPerformance")
