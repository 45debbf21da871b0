"""ConTree (Brița, van der Linden and Demirović, "Optimal Classification Trees for Continuous Feature Data Using
Dynamic Programming with Branch-and-Bound", AAAI-25; ``pycontree``) as an engine of OCT's exact route.

ConTree searches every threshold of continuous features directly (no binarization) by dynamic programming with
branch and bound: the optimum over every distinct cut, the same problem as :mod:`~treeopt_dsl.exact.dp` solves on
the exact binarization, and much faster where there are many distinct values (breast, 569 x 30 with 15,310 cuts:
depth 3 in 2.4 s, where STreeD cannot hold the binarization in memory). On binary features it is slower than the
depth-1/2 count and STreeD (mushrooms, depth 3: 58 s against 0.23 s), which the route choice measures
(:func:`treeopt_dsl.exact.route.plan`).

OCT's objective ``C sum_i w_i xi_i + alpha (splits)`` is ConTree's misclassification score plus its complexity cost
per branching node as a share of the rows: ``complexity_cost = alpha / (C n)``. ConTree counts rows and has no
sample weights: integer weights are repeated rows, other weights are refused (the count and the MILP take them).
Two classes or more (its labels are class codes). Optional: ``pip install treeopt-dsl[contree]``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from treeopt_dsl.defaults import DP_TIME_LIMIT
from treeopt_dsl.errors import CapabilityError, SolverNotAvailable
from treeopt_dsl.exact.binarize import two_valued
from treeopt_dsl.exact.dp import MAX_REPEATED_ROWS, DPTask, DPTree, compiled_core, embed_nodes

__all__ = ["INSTALL_HINT", "contree", "fit_contree", "precision_reason", "weights_reason"]

INSTALL_HINT = "install ConTree: pip install treeopt-dsl[contree] (or pip install pycontree)"


def contree() -> Any:
    """pycontree's compiled core (``pycontree.ccontree``: ``Config`` and ``solve``), or
    :class:`~treeopt_dsl.errors.SolverNotAvailable` with the install hint. The core is called directly: the
    scikit-learn wrapper ``ConTree.fit`` validates its parameters and data on every call (about 10 ms, 15x
    ConTree's own time on haberman at depth 2), which :func:`fit_contree` has already done."""
    try:
        return compiled_core("pycontree", "ccontree")  # without the wrapper's import of scikit-learn
    except ImportError:
        raise SolverNotAvailable(f"the contree solver needs pycontree: {INSTALL_HINT}") from None


def precision_reason(X: np.ndarray) -> str | None:
    """Why ConTree cannot search every distinct cut of ``X`` (``None``: it can). ConTree compares features in single
    precision: two distinct values that round to the same ``float32`` cannot be split apart (measured: ``2.0`` and
    ``2.0 + 1e-7`` stay together, ``0`` and ``1e-7`` do not), so on such data its optimum is not the optimum over
    every distinct cut."""
    if X.size == 0:
        return None
    mn, mx, two = two_valued(X)  # a feature of two values: its two values alone, without a sort
    merged = int(np.count_nonzero(two & (mx > mn) & (mx.astype(np.float32) <= mn.astype(np.float32))))
    rest = np.flatnonzero(~two)
    if rest.size:
        S = np.array(X[:, rest].T, order="C")  # each feature's values contiguous: a faster sort
        S.sort(axis=1)
        distinct = np.diff(S, axis=1) > 0
        single = np.diff(S.astype(np.float32), axis=1) > 0
        merged += int(np.count_nonzero(distinct & ~single))
    if merged:
        return (f"{merged} pair(s) of distinct feature values are equal in single precision, which ConTree compares "
                "in: it cannot put a cut between them (the count and STreeD can)")
    return None


def weights_reason(data: Any) -> str | None:
    """Why ConTree cannot take ``data``'s sample weights (``None``: it can): it counts rows, so integer weights
    are repeated rows (up to :data:`~treeopt_dsl.exact.dp.MAX_REPEATED_ROWS`) and other weights are refused."""
    if not data.weighted:
        return None
    w = data.weights
    if not np.all(w == np.round(w)):
        return "ConTree counts misclassified rows and takes no fractional sample weights (the count and the MILP do)"
    if float(w.sum()) > MAX_REPEATED_ROWS:
        return f"the integer sample weights sum to {w.sum():.0f} rows, above {MAX_REPEATED_ROWS} (memory)"
    return None


class _Node:
    """A ConTree node in the shape :func:`~treeopt_dsl.exact.dp.embed_nodes` reads."""

    __slots__ = ("feature", "label", "left_child", "right_child", "threshold")

    def __init__(self, tree: Any) -> None:
        if tree.is_leaf_node():
            self.label, self.feature, self.threshold = int(tree.get_label()), -1, 0.0
            self.left_child = self.right_child = None
        else:
            self.label = -1
            self.feature, self.threshold = int(tree.get_split_feature()), float(tree.get_split_threshold())
            self.left_child, self.right_child = _Node(tree.get_left()), _Node(tree.get_right())

    def is_leaf_node(self) -> bool:
        return self.left_child is None


def _predict(node: _Node, X: np.ndarray) -> np.ndarray:
    """Class codes of ``node``'s tree on ``X`` (left iff ``x_j <= thr``), by node masks."""
    out = np.zeros(X.shape[0], dtype=np.int64)
    stack = [(node, np.ones(X.shape[0], dtype=bool))]
    while stack:  # one numpy op per tree node
        nd, at = stack.pop()
        if nd.is_leaf_node():
            out[at] = nd.label
            continue
        right = X[:, nd.feature] > nd.threshold
        stack += [(nd.left_child, at & ~right), (nd.right_child, at & right)]
    return out


#: ``fit_contree(reason=...)`` left out: the weights and precision are checked here
_CHECK = "check"


def fit_contree(data: Any, task: DPTask, b_cap: float = 1.0, time_limit: float | None = None,
                reason: str | None = _CHECK) -> DPTree:
    """The optimal tree of ``task`` on ``data`` (scaled training data) over every distinct cut, by ConTree, in the
    library's layout (:class:`~treeopt_dsl.exact.dp.DPTree`; ``optimal`` when ConTree ended within its time
    limit, i.e. its search finished). ``reason``: what :func:`weights_reason` or :func:`precision_reason` said
    of these data when the caller has asked already (``None``: nothing), else they are asked here."""
    t0 = time.perf_counter()
    if reason == _CHECK:
        reason = weights_reason(data) or precision_reason(data.X)
    if reason is not None:
        raise CapabilityError(f"contree cannot solve this: {reason}")
    core = contree()
    X, y, w = data.X, data.class_index, data.weights
    K, multiclass = data.n_classes, data.n_classes > 2
    rep = np.round(w).astype(np.int64)
    Xr, yr = (X, y) if not data.weighted else (np.repeat(X, rep, axis=0), np.repeat(y, rep))
    n = yr.size
    mass = np.bincount(y, weights=w, minlength=K)
    majority = float(np.argmax(mass)) if multiclass else (1.0 if mass[1] >= mass[0] else -1.0)
    cost = task.alpha / (task.C * n) if task.C > 0 else np.inf
    limit = DP_TIME_LIMIT if time_limit is None else float(time_limit)
    if int(np.count_nonzero(mass)) <= 1 or cost >= 1.0:  # one class, or a split costs more than every row
        node, optimal = None, True
        pred = np.full(y.size, int(np.argmax(mass)))
    else:
        config = core.Config()  # ConTree's defaults but max_gap = 0: the exact search
        config.max_depth, config.complexity_cost = int(task.depth), float(cost)
        config.max_gap, config.max_gap_decay, config.use_upper_bound, config.sort_gini = 0, 0.1, True, True
        config.verbose = False
        tree = core.solve(np.ascontiguousarray(Xr, dtype=np.float64), np.ascontiguousarray(yr, dtype=np.intc),
                          config, max(limit, 1e-3))
        optimal = bool(config.is_within_time_limit())
        node = _Node(tree)
        pred = _predict(node, X)
    W, b = embed_nodes(node, majority, task, X.shape[1], b_cap, multiclass,
                       cut=lambda nd: (nd.feature, nd.threshold))
    n_splits = int(np.count_nonzero(np.abs(W).sum(1)))
    errors = float(np.sum(w * (pred != y)))
    errors = int(errors) if errors == int(errors) else errors
    return DPTree(W=W, b=b, errors=errors, n_splits=n_splits, objective=task.C * errors + task.alpha * n_splits,
                  optimal=optimal, runtime_s=time.perf_counter() - t0,
                  predictions=pred if multiclass else np.where(pred == 1, 1, -1), n_columns=0, runs=1,
                  engine="contree")
