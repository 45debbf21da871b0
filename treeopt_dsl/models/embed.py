"""A fitted model or values as a point of a built formulation: the inverse of decoding.

A start is given as the *decisions* of a model (a tree's ``w``, ``b``; a card's scores) and completed to a full
point by the blocks' ``complete`` methods (routing, slacks, indicators computed from it), exactly as the
certificate does: :func:`point_of` takes a full column vector (NaN: to be completed), a dict of decision values, a
:class:`~treeopt_dsl.models.tree.TreeModel` (embedded in a deeper tree with the same predictions) or a
:class:`~treeopt_dsl.models.decision_tree.DecisionTree` (or a fitted :class:`sklearn.tree.DecisionTreeClassifier`,
read by :meth:`~treeopt_dsl.models.decision_tree.DecisionTree.from_sklearn`) on the raw features (its splits
mapped through the formulation's scaling, :func:`tree_decisions`). If the completed point violates a bound or a
big-M row (a constant M is a model restriction), every hyperplane is scaled down (routing and predictions are
scale-invariant) until it is feasible (:func:`feasible_start`). Named starts (``"greedy"``, ``"auto"``, ...) are
the starts package's (:mod:`treeopt_dsl.starts`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treeopt_dsl.blocks import L0, IntegerScores
from treeopt_dsl.blocks.regularizers import ZERO_TOL
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Built
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.models.tree import TreeModel, constant_subtree, flow_decisions
from treeopt_dsl.numeric import clear_gap

FEASIBILITY_TOL = 1e-7


def is_tree(built: Built) -> bool:
    """Whether ``built`` is a tree whose starts are axis-aligned or oblique hyperplane trees: decisions ``w`` and
    ``b`` (big-M routing), or the binary splits and leaf classes of the flow routings (:func:`is_flow`)."""
    ctx = built.ctx
    return ctx.topology is not None and (("w" in ctx and "b" in ctx) or is_flow(built))


def is_flow(built: Built) -> bool:
    """Whether ``built`` routes by flows on binary splits (:class:`~treeopt_dsl.blocks.BinarySplits`)."""
    return "select" in built.ctx and "leaf_class" in built.ctx


def is_risk_score(built: Built) -> bool:
    """Whether ``built`` is a risk score on integer points per feature (it has an IntegerScores block)."""
    return any(isinstance(b, IntegerScores) for b in built.formulation.blocks)


def from_decisions(built: Built, values: dict[str, Any]) -> np.ndarray:
    """A full point from the values of decision families (``{"s": ..., "beta": ...}``), completed by the blocks."""
    x = np.full(built.model.n_vars, np.nan)
    for name, v in values.items():
        if name not in built.model.variables:
            raise FormulationError(f"{built.formulation.name} has no variable family {name!r}; "
                                   f"its decisions are {list(built.formulation.decisions)}")
        fam = built.model.variables[name]
        x[fam.ids] = np.broadcast_to(np.asarray(v, dtype=float), fam.shape)
    return built.complete(x)


def feasible_start(built: Built, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The model's full point for the tree ``(W, b)`` (splits in the layout of :func:`start_point`): every other
    column completed by the blocks, the splits scaled into their bounds where that keeps the routing."""
    model, ctx = built.model, built.ctx
    if is_flow(built):  # binary splits: the same tree as splits and leaf classes (predictions unchanged)

        half = ctx.numerics.eps / 2
        S, C = flow_decisions(ctx.topo, np.asarray(W, dtype=float), np.asarray(b, dtype=float), half, half)
        return from_decisions(built, {"select": S, "leaf_class": C})
    w_fam, b_fam = ctx["w"], ctx["b"]
    if W.shape != w_fam.shape or b.shape != b_fam.shape:
        raise FormulationError(f"warm start shapes {W.shape}/{b.shape} do not match w {w_fam.shape} / b {b_fam.shape}")
    budget = split_budget(built)
    if budget is not None:  # scaling cannot repair an l0 budget (3.14): refuse, do not shrink to a constant

        used = (np.abs(W) > ZERO_TOL).sum(1)
        if np.any(used > budget):
            t = int(np.argmax(used))
            raise FormulationError(f"the warm start uses {int(used[t])} features at node {t}; "
                                   f"{built.formulation.name} allows {budget} per node (||w_t||_0 budget, (3.14))")
    eps = float(built.ctx.numerics.eps)
    thr = eps / 2
    b = clear_inner_gaps(ctx.topo, ctx.data.X, np.asarray(W, dtype=float), np.asarray(b, dtype=float), eps)
    routing = ctx.topo.route((ctx.data.X @ W.T + b) > thr)
    # fit the box bounds first: one positive factor per node keeps every decision the same
    room_w = np.minimum(np.abs(w_fam.upper), np.abs(w_fam.lower))
    room_b = np.minimum(np.abs(b_fam.upper), np.abs(b_fam.lower))
    cap_w = np.where(np.abs(W) > 0, room_w / np.maximum(np.abs(W), 1e-300), np.inf).min(1)
    cap_b = np.where(np.abs(b) > 0, room_b / np.maximum(np.abs(b), 1e-300), np.inf)
    s = np.minimum(1.0, np.minimum(cap_w, cap_b))
    W, b = W * s[:, None], b * s
    x = np.full(model.n_vars, np.nan)
    for _ in range(40):
        if not np.array_equal(ctx.topo.route((ctx.data.X @ W.T + b) > thr), routing):
            break  # scaled down this far the start would route samples differently: it is no longer the start
        x[:] = np.nan
        x[w_fam.ids] = W
        x[b_fam.ids] = b
        x = built.complete(x)
        if built.max_violation(x) <= FEASIBILITY_TOL:
            return x
        W, b = W * 0.5, b * 0.5
    raise FormulationError("could not make the warm start feasible for this model without changing how it routes "
                           "the training samples (check bounds and big-M)")


def clear_inner_gaps(topo: Any, X: np.ndarray, W: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """``b`` with each routing node's intercept shifted so that no sample reaching it scores inside the band
    ``(0, eps)`` the forwarding rows (3.7) keep empty (beyond :data:`FEASIBILITY_TOL`: a solver's own point, on the
    band's edges, is left as it is), where the node's two sides leave room (more than ``eps``
    between its highest left and lowest right score; :func:`~treeopt_dsl.numeric.clear_gap`); the routing is
    unchanged. A greedy split fitted on a sample can leave a training row a hair above 0 (adult: one row at
    4.4e-6 with ``eps = 1e-5``), which no scaling of ``(w, b)`` repairs.

    >>> from treeopt_dsl.topology import Topology
    >>> X = np.array([[-1.0], [4e-6], [6e-5]])
    >>> round(float(clear_inner_gaps(Topology(2), X, np.array([[1.0], [1.0], [1.0]]), np.zeros(3), 1e-5)[0]), 12)
    -2.7e-05
    """
    b = np.array(b, dtype=float, copy=True)
    reach = np.zeros((X.shape[0], topo.n_nodes), dtype=bool)
    reach[:, 0] = True
    for t in topo.inner:  # breadth-first: a node's reach is known before its children's
        v = X[reach[:, t]] @ W[t] + b[t]
        if np.any((v > FEASIBILITY_TOL) & (v < eps - FEASIBILITY_TOL)):  # a sample inside the band, beyond the
            b[t] += clear_gap(v, v > eps / 2, eps / 2, eps)  # tolerance (a solver's point sits on its edges)
        right = X @ W[t] + b[t] > eps / 2
        reach[:, 2 * t + 1] = reach[:, t] & ~right
        reach[:, 2 * t + 2] = reach[:, t] & right
    return b


def split_budget(built: Built) -> int | None:
    if is_flow(built):
        return 1  # one binary column per split

    for blk in built.formulation.blocks:
        if isinstance(blk, L0) and blk.budget is not None and np.ndim(blk.budget) == 0:
            return int(blk.budget)
    return None


def fill_constant(topo: Any, t: int, b: np.ndarray, value: float) -> None:
    """The subtree of ``t`` predicts the class of ``value`` (+-1): :func:`~treeopt_dsl.starts.tao.constant_subtree`
    with the unit offsets of these starts (inner nodes ``b = -1``, last layer ``b = value``)."""
    constant_subtree(b, topo, t, value > 0, 0.0, 0.0)


def tree_decisions(built: Built, tree: DecisionTree) -> tuple[np.ndarray, np.ndarray]:
    """A :class:`DecisionTree` (raw features; leaves labelled with the data's classes, or -1/+1) as the decisions
    ``(W, b)`` of ``built``'s complete tree: each split "``x_j <= c`` goes left" becomes ``w_t = e_j``,
    ``b_t = -c'`` with ``c'`` the threshold in the formulation's scaled units (with ``cuts="all"``: the cut
    column of feature ``j`` that routes the training samples as ``c`` does); a last-layer split classifies
    (``w_t = ±e_j``) and a leaf above the last layer sends everything left with its class repeated below, as
    :func:`cart_tree` does. Raises :class:`FormulationError` when the tree does not fit (depth, features,
    classes, a cut no column reproduces)."""
    ctx = built.ctx
    topo, data = ctx.topo, ctx.data
    if tree.depth > topo.depth:
        raise FormulationError(f"a depth-{tree.depth} tree cannot start a depth-{topo.depth} model")
    scaler = data.meta.get("scaler")
    cuts = getattr(scaler, "kind", None) == "cuts"  # oct with cuts="all": the columns are 0/1 cuts of the features
    if not cuts and int(tree.n_features or 0) != data.n_features:
        raise FormulationError(f"the warm-start tree has {tree.n_features} features, the data {data.n_features}")
    assert tree.classes is not None
    labels = list(tree.classes)
    if all(any(str(c) == str(k) for k in data.classes) for c in labels):
        positive = [str(c) == str(data.classes[1]) for c in labels]
    elif all(c in (-1, 1) for c in labels):
        positive = [c == 1 for c in labels]
    else:
        raise FormulationError(f"the warm-start tree's classes {labels} are not the data's {list(data.classes)}")

    def split(j: int, c: float) -> tuple[int, float]:
        """Feature and threshold of "x_j <= c" in the formulation's columns."""
        if cuts:  # the column whose cut lies in the same gap between training values as c: Z > 0.5 iff x_j > c
            bz = scaler.bz
            same = np.flatnonzero((bz.feature == j) & (bz.lower <= c) & (c < bz.upper))
            if same.size == 0:
                raise FormulationError(f"no cut column reproduces the split x{j} <= {c:g} on the training data")
            return int(same[0]), 0.5
        if scaler is None:
            return j, c
        return j, float((c - scaler.shift_[j]) / scaler.scale_[j])

    W = np.zeros((topo.n_nodes, data.n_features))
    b = np.zeros(topo.n_nodes)

    def sign(node: int) -> float:
        return 1.0 if positive[int(tree.value[node])] else -1.0

    def visit(t: int, node: int) -> None:
        if tree.left[node] < 0:  # a leaf: one class below t
            if topo.level[t] == topo.depth:
                b[t] = sign(node)
                return
            b[t] = -1.0
            visit(2 * t + 1, node)
            fill_constant(topo, 2 * t + 2, b, sign(node))
            return
        j, c = split(int(tree.feature[node]), float(tree.threshold[node]))
        lo, hi = int(tree.left[node]), int(tree.right[node])
        if topo.level[t] == topo.depth:  # last layer: both children are leaves (depth checked)
            left, right = sign(lo), sign(hi)
            if left == right:
                b[t] = left
            else:
                W[t, j], b[t] = right, -right * c
            return
        W[t, j], b[t] = 1.0, -c  # right iff x_j - c > eps/2
        visit(2 * t + 1, lo)
        visit(2 * t + 2, hi)

    visit(0, 0)
    return W, b


def embed_tree(built: Built, tree: TreeModel) -> tuple[np.ndarray, np.ndarray]:
    """A fitted tree of depth ``<= d`` as a start for depth ``d`` (same predictions)."""
    topo = built.ctx.topo
    if tree.W.shape[1] != built.ctx.data.n_features:
        raise FormulationError("the warm-start tree was fitted on a different number of features")
    if tree.topology.depth > topo.depth:
        raise FormulationError(f"a depth-{tree.topology.depth} tree cannot start a depth-{topo.depth} model")
    W = np.zeros((topo.n_nodes, tree.W.shape[1]))
    b = np.zeros(topo.n_nodes)
    k = tree.topology.n_nodes
    W[:k], b[:k] = tree.W, tree.b
    for t in range(k, topo.n_nodes):  # children repeat their parent's hyperplane
        parent = (t - 1) // 2
        W[t], b[t] = W[parent], b[parent]
    return W, b


def point_of(built: Built, start: Any) -> np.ndarray:
    """A full, feasible column vector of ``built`` from a start given as values (the module docstring): a column
    vector of the model's size (NaN: completed by the blocks), a dict of decision values, a
    :class:`~treeopt_dsl.models.tree.TreeModel`, a :class:`~treeopt_dsl.models.decision_tree.DecisionTree` or a
    fitted :class:`sklearn.tree.DecisionTreeClassifier` (tree formulations). Raises
    :class:`~treeopt_dsl.errors.FormulationError` naming what the formulation takes."""
    if isinstance(start, np.ndarray) and start.ndim == 1 and start.size == built.model.n_vars:
        return built.complete(start)
    if not is_tree(built):  # not a tree: risk scores and the like take their decisions
        if isinstance(start, dict):
            return from_decisions(built, start)
        raise FormulationError(f"{built.formulation.name} takes a warm start as a dict of its decisions "
                               f"{list(built.formulation.decisions)}")
    if isinstance(start, TreeModel):
        W, b = embed_tree(built, start)
    elif isinstance(start, DecisionTree):
        W, b = tree_decisions(built, start)
    elif hasattr(getattr(start, "tree_", None), "children_left"):  # a fitted scikit-learn DecisionTreeClassifier
        W, b = tree_decisions(built, DecisionTree.from_sklearn(start))
    elif isinstance(start, dict) and is_flow(built) and "select" in start:
        return from_decisions(built, start)
    elif isinstance(start, dict):
        try:
            W, b = np.asarray(start["w"], dtype=float), np.asarray(start["b"], dtype=float)
        except KeyError as exc:
            raise FormulationError(f"a warm start dict needs 'w' and 'b', missing {exc.args[0]!r}") from None
    else:
        raise FormulationError(f"cannot use {type(start).__name__} as a warm start")
    return feasible_start(built, W, b)
