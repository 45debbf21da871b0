"""One warm-start API for every tree formulation (``warm_start=`` in Python, ``--warm-start`` on the CLI).

A start is given as the *decisions* of a tree (``w``, ``b``) and completed to a full point by the
blocks' ``complete`` methods (routing, slacks, indicators computed from it), exactly as the
certificate does. Accepted forms:

* ``"greedy"``: from the root, each node a classifier fitted on the training samples that reach it
  ([aldinucci-thesis-2024] lines 657-663, 713-715, 723): l1-logistic regression for logistic losses, a linear SVM for
  the hinge, a CART stump for the 0-1 loss; with an l0 budget ``k`` only the ``k`` largest weights
  are kept and the classifier is refitted on them;
* ``"greedy_lp"``: the same greedy descent, each node solving its own part of the formulation's objective exactly
  (an LP: the loss' tangent pieces and ``||w||_1``; OLCT, :mod:`treeopt_dsl.starts.node_lp`);
* ``"cart"``: a scikit-learn CART tree of the same depth, converted node by node;
* ``"tao"``: CART improved by Tree Alternating Optimization; ``"tmo"``: the memetic tree of [aldinucci-memetic]
  (:mod:`treeopt_dsl.memetic`, the paper's k = 100 trees and 5 generations), both axis-aligned;
* a :class:`~treeopt_dsl.models.decision_tree.DecisionTree` of depth ``<= d`` on the raw features and the
  data's labels (the trees of ``TMOClassifier``, ``TAOClassifier``, ``BornAgainClassifier``, a contextual
  tree's ``tree(k)``, ``DecisionTree.from_sklearn(cart)``): its splits are mapped through the formulation's
  scaling (:func:`tree_decisions`);
* a :class:`~treeopt_dsl.models.tree.TreeModel` (for instance the optimum at depth ``d - 1``: its
  last-layer classifiers become splits whose children repeat them, so predictions are unchanged);
* ``{"w": array, "b": array}`` or a full column vector (NaN = to be completed).

If the completed point violates a bound or a big-M row (a constant M is a model restriction), every
hyperplane is scaled down (routing and predictions are scale-invariant) until it is feasible.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from treeopt_dsl.errors import FormulationError
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.models.tree import TreeModel

if TYPE_CHECKING:
    from treeopt_dsl.formulation import Built

FEASIBILITY_TOL = 1e-7
STRATEGIES = ("greedy", "greedy_lp", "cart", "tao", "tmo")
#: starts by name for risk scores (formulations with an IntegerScores block, ``ors``): "beam" is the sparse
#: beam search of :func:`treeopt_dsl.starts.risk.risk_score_start` (FasterRisk-style); also the auto start
RISK_STRATEGIES = ("beam",)
#: what ``warm_start="auto"`` tries, in this order (the best in the formulation's own objective wins);
#: "tmo" is a short memetic run (:data:`AUTO_TMO`), "tao" improves the best of the others by Tree Alternating
#: Optimization; neither runs once a start is proven optimal
AUTO_CANDIDATES = ("cart", "greedy", "greedy_lp", "dp", "tmo", "tao")
#: TMO as a candidate of the automatic start: a budget that keeps the start within about a second
#: (``warm_start="tmo"`` runs the paper's k = 100, n_gen = 5)
AUTO_TMO: dict[str, Any] = {"n_trees": 20, "n_generations": 2, "time_limit": 1.0}


def auto_start(built: Built) -> tuple[np.ndarray | None, dict[str, Any]]:
    """``warm_start="auto"``: every start that applies to ``built`` (:data:`AUTO_CANDIDATES`: CART, the
    papers' greedy per-node start, ``greedy_lp`` (OLCT: each node's part of the objective as an LP), the exact DP
    tree when a DP solver is installed, a short TMO run, then TAO from the best of them), each completed to a
    feasible point and scored in the formulation's own objective; the best one, and a report
    ``{"chosen", "objective", "proven", "candidates": {name: objective or the reason it does not apply},
    "time_s"}`` (``proven``: the chosen start is the formulation's proven optimum, e.g. the exact DP tree
    of ``oct``; the MILP is then not run).

    Risk scores (an :class:`~treeopt_dsl.blocks.IntegerScores` block, ``ors``) get the sparse beam-search
    start (candidate ``"beam"``, :func:`treeopt_dsl.starts.risk.risk_score_start`). Any other formulation
    without tree decisions (``ogrs``, categorical trees) has no automatic start (``(None, {"chosen": None,
    ...})``); they take their own (``"greedy"``) when asked by name.
    """
    import time

    t0 = time.perf_counter()
    report: dict[str, Any] = {"chosen": None, "objective": None, "candidates": {}}
    if _is_risk_score(built):  # risk scores: one candidate, the beam search
        names: tuple[str, ...] = RISK_STRATEGIES
    elif not is_tree(built):
        report["candidates"] = {"auto": "not a tree formulation with hyperplane decisions (w, b)"}
        report["time_s"] = time.perf_counter() - t0
        return None, report
    else:
        names = AUTO_CANDIDATES
    best: np.ndarray | None = None
    report["proven"] = False
    for name in names:
        if name in ("tao", "tmo") and (best is None or report["proven"]):
            continue  # TAO improves the best start, TMO searches for a better one: a proven optimum needs neither
        try:
            x, proven = _candidate(built, name) if name != "tao" else (_tao_from(built, best), False)
        except (FormulationError, ImportError, ValueError) as exc:
            report["candidates"][name] = f"not used: {exc}"
            continue
        except KeyboardInterrupt:  # Ctrl-C while the starts are computed: keep the best one so far
            report["candidates"][name] = "not used: interrupted"
            report["interrupted"] = True
            break
        if x is None:
            report["candidates"][name] = "not used: no DP solver installed (pip install treeopt-dsl[dp])"
            continue
        obj = built.model.objective_value(x)
        report["candidates"][name] = obj
        best_obj = report["objective"]
        tie = best_obj is not None and obj <= best_obj + 1e-9 * max(1.0, abs(best_obj))
        if best_obj is None or obj < best_obj - 1e-9 or (tie and proven and not report["proven"]):
            best, report["chosen"], report["objective"], report["proven"] = x, name, obj, proven
    report["time_s"] = time.perf_counter() - t0
    return best, report


def is_tree(built: Built) -> bool:
    """Whether ``built`` is a tree whose starts are axis-aligned or oblique hyperplane trees: decisions ``w`` and
    ``b`` (big-M routing), or the binary splits and leaf classes of the flow routings (:func:`is_flow`)."""
    ctx = built.ctx
    return ctx.topology is not None and (("w" in ctx and "b" in ctx) or is_flow(built))


def is_flow(built: Built) -> bool:
    """Whether ``built`` routes by flows on binary splits (:class:`~treeopt_dsl.blocks.BinarySplits`)."""
    return "select" in built.ctx and "leaf_class" in built.ctx


def _is_risk_score(built: Built) -> bool:
    """Whether ``built`` is a risk score on integer points per feature (it has an IntegerScores block)."""
    from treeopt_dsl.blocks import IntegerScores

    return any(isinstance(b, IntegerScores) for b in built.formulation.blocks)


def tao_start(built: Built, W: np.ndarray, b: np.ndarray, max_iter: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """TAO (Carreira-Perpinan & Tavallali 2018; :mod:`treeopt_dsl.starts.tao`) from ``(W, b)`` on the
    formulation's scaled training data: axis-aligned node refits when the formulation allows one feature
    per split (an l0 budget of 1), sparse oblique ones otherwise; the training error never increases."""
    from treeopt_dsl.starts.tao import tao

    ctx = built.ctx
    loss = ctx.roles.get("loss")
    leaf = float(loss.leaf_threshold(ctx)) if hasattr(loss, "leaf_threshold") else 0.0
    W2, b2, _ = tao(ctx.data.X, np.asarray(ctx.data.y), W, b, ctx.topo, oblique=_budget(built) != 1,
                    max_iter=max_iter, eps=float(ctx.numerics.eps), leaf_threshold=leaf)
    return W2, b2


def tmo_start(built: Built, **kw: Any) -> tuple[np.ndarray, np.ndarray]:
    """TMO ([aldinucci-memetic], :func:`treeopt_dsl.memetic.tmo.tmo`) on the formulation's scaled training data with its
    decision rules (``eps``, the loss' leaf threshold): an axis-aligned tree, a start for the axis-aligned
    and the oblique formulations alike. ``kw`` go to :func:`~treeopt_dsl.memetic.tmo.tmo` (default: the
    paper's k = 100, n_gen = 5, CR = 0.75, seed 0)."""
    from treeopt_dsl.memetic.tmo import tmo

    ctx = built.ctx
    loss = ctx.roles.get("loss")
    leaf = float(loss.leaf_threshold(ctx)) if hasattr(loss, "leaf_threshold") else 0.0
    res = tmo(ctx.data.X, np.asarray(ctx.data.y), ctx.topo.depth, eps=float(ctx.numerics.eps), leaf_threshold=leaf,
              **kw)
    if res.stopped == "interrupted":  # TMO keeps its best tree on Ctrl-C; a start must pass the interrupt on
        raise KeyboardInterrupt("interrupted while TMO computed a warm start")
    return res.W, res.b


def _tao_from(built: Built, x: np.ndarray) -> np.ndarray:
    """The completed point of TAO started from the decisions of the point ``x``."""
    tree = built.decode(built.polish(x))
    return feasible_start(built, *tao_start(built, tree.W.copy(), tree.b.copy()))


def _candidate(built: Built, name: str) -> tuple[np.ndarray | None, bool]:
    """The completed point of one automatic start (``None``: not available here) and whether it is the
    formulation's proven optimum (the exact DP tree of a composition the DP solves)."""
    if name == "dp":
        try:
            from treeopt_dsl.exact.dp import dp_candidate
        except ImportError:
            return None, False
        return dp_candidate(built)
    if name == "tmo":
        return feasible_start(built, *tmo_start(built, **AUTO_TMO)), False
    return start_point(built, name), False


def start_point(built: Built, start: Any) -> np.ndarray:
    """A full, feasible column vector for ``built`` from any accepted start."""
    model = built.model
    if isinstance(start, np.ndarray) and start.ndim == 1 and start.size == model.n_vars:
        x = built.complete(start)
        return x
    if not is_tree(built):  # not a tree: risk scores take their decisions, or a strategy of their own
        if start == "greedy" and "a_rule" in built.ctx:
            from treeopt_dsl.risk_start import rule_by_rule

            start = rule_by_rule(built)
        risk = _is_risk_score(built)
        if isinstance(start, str) and start in RISK_STRATEGIES and risk:  # "beam": sparse beam search
            from treeopt_dsl.starts.risk import risk_score_start

            start = risk_score_start(built)
        if isinstance(start, dict):
            return from_decisions(built, start)
        raise FormulationError(f"{built.formulation.name} takes a warm start as a dict of its decisions "
                               f"{list(built.formulation.decisions)}" + (" or 'greedy'" if "a_rule" in built.ctx
                                                                           else "")
                               + (f" or one of {RISK_STRATEGIES}" if risk else ""))
    if isinstance(start, str):
        if start not in STRATEGIES:
            raise FormulationError(f"unknown warm start {start!r}; use one of {STRATEGIES}, a TreeModel or values")
        from treeopt_dsl.starts.node_lp import greedy_lp_tree

        W, b = {"greedy": greedy_tree, "greedy_lp": greedy_lp_tree, "cart": cart_tree,
                "tao": lambda bt: tao_start(bt, *cart_tree(bt)), "tmo": tmo_start}[start](built)
    elif isinstance(start, TreeModel):
        W, b = embed_tree(built, start)
    elif isinstance(start, DecisionTree):
        W, b = tree_decisions(built, start)
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
        from treeopt_dsl.models.tree import flow_decisions

        half = ctx.numerics.eps / 2
        S, C = flow_decisions(ctx.topo, np.asarray(W, dtype=float), np.asarray(b, dtype=float), half, half)
        return from_decisions(built, {"select": S, "leaf_class": C})
    w_fam, b_fam = ctx["w"], ctx["b"]
    if W.shape != w_fam.shape or b.shape != b_fam.shape:
        raise FormulationError(f"warm start shapes {W.shape}/{b.shape} do not match w {w_fam.shape} / b {b_fam.shape}")
    budget = _budget(built)
    if budget is not None:  # scaling cannot repair an l0 budget (3.14): refuse, do not shrink to a constant
        from treeopt_dsl.blocks.regularizers import ZERO_TOL

        used = (np.abs(W) > ZERO_TOL).sum(1)
        if np.any(used > budget):
            t = int(np.argmax(used))
            raise FormulationError(f"the warm start uses {int(used[t])} features at node {t}; "
                                   f"{built.formulation.name} allows {budget} per node (||w_t||_0 budget, (3.14))")
    thr = built.ctx.numerics.eps / 2
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
        if model.max_violation(x) <= FEASIBILITY_TOL:
            return x
        W, b = W * 0.5, b * 0.5
    raise FormulationError("could not make the warm start feasible for this model without changing how it routes "
                           "the training samples (check bounds and big-M)")


# --------------------------------------------------------------------------- strategies
def _loss_kind(built: Built) -> str:
    from treeopt_dsl.blocks import HingeLoss, TangentLogisticLoss, ZeroOneLoss

    loss = built.ctx.roles.get("loss")
    if isinstance(loss, TangentLogisticLoss):
        return "logistic"
    if isinstance(loss, HingeLoss):
        return "hinge"
    if isinstance(loss, ZeroOneLoss):
        return "zero_one"
    return "zero_one"


def _budget(built: Built) -> int | None:
    from treeopt_dsl.blocks import L0

    if is_flow(built):
        return 1  # one binary column per split

    for blk in built.formulation.blocks:
        if isinstance(blk, L0) and blk.budget is not None and np.ndim(blk.budget) == 0:
            return int(blk.budget)
    return None


def level_weight(built: Built, level: int) -> float:
    """The loss weight ``C_h`` of tree level ``level`` (1 = the root's; a scalar ``C`` serves every level)."""
    loss = built.ctx.roles.get("loss")
    C = np.atleast_1d(np.asarray(getattr(loss, "C", 1.0), dtype=float))
    return float(C[0] if C.size == 1 else C[level - 1])


def fit_node(X: np.ndarray, y: np.ndarray, kind: str, C: float = 1.0, budget: int | None = None,
             seed: int = 0) -> tuple[np.ndarray, float]:
    """A linear classifier ``(w, b)`` for one node ("right/positive iff w·x + b > 0")."""
    p = X.shape[1]
    if y.size == 0 or np.unique(y).size < 2:
        sign = 1.0 if y.size and y[0] > 0 else -1.0
        return np.zeros(p), sign
    if kind == "zero_one" or budget == 1:
        from sklearn.tree import DecisionTreeClassifier

        st = DecisionTreeClassifier(max_depth=1, random_state=seed).fit(X, y)
        tr = st.tree_
        if tr.node_count < 3:
            return np.zeros(p), 1.0 if np.mean(y > 0) >= 0.5 else -1.0
        j, thr = int(tr.feature[0]), float(tr.threshold[0])
        right_pos = st.classes_[np.argmax(tr.value[2][0])] > 0
        left_pos = st.classes_[np.argmax(tr.value[1][0])] > 0
        if kind == "zero_one" and left_pos == right_pos:  # the best split leaves one class on both sides:
            return np.zeros(p), 1.0 if right_pos else -1.0  # as a classifier the stump is a constant
        w = np.zeros(p)
        if kind == "zero_one":
            w[j] = 1.0 if right_pos else -1.0
            return w, (-thr if right_pos else thr)
        cols = [j]
    else:
        cols = list(range(p))
    w, b = _linear(X[:, cols], y, kind, C, seed)
    if budget is not None and budget < len(cols) and np.count_nonzero(w) > budget:
        keep = np.argsort(-np.abs(w))[:budget]
        cols = [cols[k] for k in keep]
        w, b = _linear(X[:, cols], y, kind, C, seed)
    full = np.zeros(p)
    full[cols] = w
    return full, b


def _linear(X: np.ndarray, y: np.ndarray, kind: str, C: float, seed: int) -> tuple[np.ndarray, float]:
    """A node's classifier for the greedy start. liblinear stopping at its iteration cap is not an error here:
    the start is only a candidate, scored in the formulation's own objective, so its warning is not shown."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if kind == "hinge":
            from sklearn.svm import LinearSVC

            m = LinearSVC(C=C, loss="hinge", dual=True, max_iter=20000, random_state=seed).fit(X, y)
        else:
            from sklearn.linear_model import LogisticRegression

            m = LogisticRegression(l1_ratio=1.0, C=C, solver="liblinear", max_iter=2000, random_state=seed).fit(X, y)
    return m.coef_.ravel().astype(float), float(m.intercept_[0])


def descend(built: Built, fit: Callable[[int, int, np.ndarray], tuple[np.ndarray, float]]
            ) -> tuple[np.ndarray, np.ndarray]:
    """A greedy top-down tree ``(W, b)``: ``fit(level, node, rows)`` gives the split of each node from the mask
    of the training samples that reach it, level by level, each split routing its samples to the next level
    ("right iff w·x + b > eps/2", the side the big-M rows leave open)."""
    ctx = built.ctx
    topo, X = ctx.topo, ctx.data.X
    eps = ctx.numerics.eps
    W = np.zeros((topo.n_nodes, X.shape[1]))
    b = np.zeros(topo.n_nodes)
    at = np.zeros(X.shape[0], dtype=np.int64)  # node each sample is at, level by level
    for h in range(1, topo.depth + 1):
        for t in topo.nodes[topo.level == h]:
            W[t], b[t] = fit(h, int(t), at == t)
        if h < topo.depth:
            v = np.einsum("ij,ij->i", X, W[at]) + b[at]
            at = 2 * at + 1 + (v > eps / 2)
    return W, b


def greedy_tree(built: Built) -> tuple[np.ndarray, np.ndarray]:
    """Greedy top-down tree: each node's classifier fitted on the samples that reach it."""
    X, y = built.ctx.data.X, built.ctx.data.y
    kind, budget = _loss_kind(built), _budget(built)
    return descend(built, lambda h, t, rows: fit_node(X[rows], y[rows], kind, level_weight(built, h), budget))


def cart_tree(built: Built) -> tuple[np.ndarray, np.ndarray]:
    """A scikit-learn CART tree of the same depth, as hyperplanes ``±(x_j - threshold)``."""
    from sklearn.tree import DecisionTreeClassifier

    ctx = built.ctx
    topo, X, y = ctx.topo, ctx.data.X, ctx.data.y
    tr = DecisionTreeClassifier(max_depth=topo.depth, random_state=0).fit(X, y).tree_
    W = np.zeros((topo.n_nodes, X.shape[1]))
    b = np.zeros(topo.n_nodes)

    def majority(node: int) -> float:
        return 1.0 if tr.value[node][0][1] >= tr.value[node][0][0] else -1.0  # classes_ = [-1, 1]

    def visit(t: int, node: int) -> None:
        leaf = tr.children_left[node] == -1
        if topo.level[t] == topo.depth:  # last layer: classify
            if leaf:
                b[t] = majority(node)
                return
            j, thr = int(tr.feature[node]), float(tr.threshold[node])
            left, right = majority(tr.children_left[node]), majority(tr.children_right[node])
            if left == right:
                b[t] = left
            else:
                W[t, j] = right
                b[t] = -right * thr
            return
        if leaf:  # CART stopped early: send everything left, repeat the class below
            b[t] = -1.0
            visit(2 * t + 1, node)
            b[2 * t + 2] = majority(node)
            _fill_constant(topo, 2 * t + 2, b, majority(node))
            return
        j, thr = int(tr.feature[node]), float(tr.threshold[node])
        W[t, j], b[t] = 1.0, -thr  # CART: left iff x_j <= thr; ours: right iff x_j - thr > eps/2
        visit(2 * t + 1, tr.children_left[node])
        visit(2 * t + 2, tr.children_right[node])

    visit(0, 0)
    return W, b


def _fill_constant(topo: Any, t: int, b: np.ndarray, value: float) -> None:
    """The subtree of ``t`` predicts the class of ``value`` (+-1): :func:`~treeopt_dsl.starts.tao.constant_subtree`
    with the unit offsets of these starts (inner nodes ``b = -1``, last layer ``b = value``)."""
    from treeopt_dsl.starts.tao import constant_subtree

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
            _fill_constant(topo, 2 * t + 2, b, sign(node))
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
