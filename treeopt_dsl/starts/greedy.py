"""The papers' greedy start and CART, as hyperplane trees ``(W, b)`` of a built formulation.

* :func:`greedy_tree`: from the root, each node a classifier fitted on the training samples that reach it
  ([aldinucci-thesis-2024] lines 657-663, 713-715, 723): l1-logistic regression for logistic losses, a linear SVM
  for the hinge, a CART stump for the 0-1 loss; with an l0 budget ``k`` only the ``k`` largest weights are kept and
  the classifier is refitted on them (:func:`descend` is the descent, shared with ``greedy_lp``);
* :func:`cart_tree`: a scikit-learn CART tree of the same depth, converted node by node.

scikit-learn is imported inside the functions that fit (0.5 s, paid only by a start that uses it).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from treeopt_dsl.blocks import L1, HingeLoss, TangentLogisticLoss, ZeroOneLoss
from treeopt_dsl.defaults import NODE_ROWS
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Built
from treeopt_dsl.models.embed import fill_constant, split_budget
from treeopt_dsl.numeric import node_sample


def loss_kind(built: Built) -> str:
    loss = built.ctx.roles.get("loss")
    if isinstance(loss, TangentLogisticLoss):
        return "logistic"
    if isinstance(loss, HingeLoss):
        return "hinge"
    if isinstance(loss, ZeroOneLoss):
        return "zero_one"
    return "zero_one"


def level_weight(built: Built, level: int) -> float:
    """The loss weight ``C_h`` of tree level ``level`` (1 = the root's; a scalar ``C`` serves every level)."""
    loss = built.ctx.roles.get("loss")
    C = np.atleast_1d(np.asarray(getattr(loss, "C", 1.0), dtype=float))
    return float(C[0] if C.size == 1 else C[level - 1])


def l1_weight(built: Built) -> float:
    """The weight of ``||w_t||_1`` in the built objective (the :class:`~treeopt_dsl.blocks.L1` blocks on ``w``; 0
    without one, as OLCT with ``l1 = 0``, thesis Figures 3.7-3.8). A weight per node or feature is refused: the
    greedy start and the refinement (Remark 1) fit each node with one scalar weight."""
    total = 0.0
    for block in built.formulation.blocks:
        if isinstance(block, L1) and block.of == "w":
            weight = np.asarray(block.weight, dtype=float)
            if weight.ndim:
                raise FormulationError("the greedy start and the refinement take one l1 weight for every node; "
                                       f"this formulation's L1 block has {weight.size} weights")
            total += float(weight)
    return total


def fit_node(X: np.ndarray, y: np.ndarray, kind: str, C: float = 1.0, budget: int | None = None,
             seed: int = 0, l1: float = 1.0) -> tuple[np.ndarray, float]:
    """A linear classifier ``(w, b)`` for one node ("right/positive iff w·x + b > 0"); for the logistic loss it
    minimizes ``C sum_i log(1 + exp(-y_i (w·x_i + b))) + l1 ||w||_1`` (``l1 = 0``: plain logistic regression)."""
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
    w, b = _linear(X[:, cols], y, kind, C, seed, l1)
    if budget is not None and budget < len(cols) and np.count_nonzero(w) > budget:
        keep = np.argsort(-np.abs(w))[:budget]
        cols = [cols[k] for k in keep]
        w, b = _linear(X[:, cols], y, kind, C, seed, l1)
    full = np.zeros(p)
    full[cols] = w
    return full, b


def _linear(X: np.ndarray, y: np.ndarray, kind: str, C: float, seed: int, l1: float = 1.0
            ) -> tuple[np.ndarray, float]:
    """A node's classifier for the greedy start. liblinear stopping at its iteration cap is not an error here:
    the start is only a candidate, scored in the formulation's own objective, so its warning is not shown.
    The logistic node objective ``C loss + l1 ||w||_1`` is scikit-learn's with ``C / l1`` (``l1 = 0``: no
    penalty, L-BFGS)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if kind == "hinge":
            from sklearn.svm import LinearSVC

            m = LinearSVC(C=C, loss="hinge", dual=True, max_iter=20000, random_state=seed).fit(X, y)
        else:
            from sklearn.linear_model import LogisticRegression

            if l1 > 0:
                m = LogisticRegression(l1_ratio=1.0, C=C / l1, solver="liblinear", max_iter=2000,
                                       random_state=seed).fit(X, y)
            else:
                m = LogisticRegression(C=np.inf, max_iter=2000).fit(X, y)
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


def greedy_tree(built: Built, deadline: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Greedy top-down tree: each node's classifier fitted on the samples that reach it, at most
    :data:`~treeopt_dsl.defaults.NODE_ROWS` of them for a linear classifier (:func:`node_sample`, its ``C`` scaled
    by the node's rows over the sample's: the loss keeps its weight against the penalty). A start's work is bounded
    by rows, not seconds: MARGOT's linear SVMs on adult's 45,222 rows took 62 s of a 60 s call.

    ``deadline`` (a :func:`time.perf_counter` instant: the end of the starts' share of a call's time limit): the
    nodes reached after it get CART's stump (one exact split, milliseconds) instead of a linear classifier, so the
    start is still a whole tree (OLCT on adult at depth 3: the per-node fits took 12 s of a 6 s share)."""
    X, y = built.ctx.data.X, built.ctx.data.y
    kind, budget, l1 = loss_kind(built), split_budget(built), l1_weight(built)
    ones = np.ones(y.shape[0])

    def fit(h: int, t: int, rows: np.ndarray) -> tuple[np.ndarray, float]:
        late = deadline is not None and time.perf_counter() > deadline
        if kind == "zero_one" or budget == 1 or late:  # a stump: CART's exact split, fast on any number of rows
            return fit_node(X[rows], y[rows], "zero_one" if late else kind, level_weight(built, h),
                            1 if late else budget, l1=l1)
        idx, w = node_sample(rows, y, ones, NODE_ROWS, seed=t)
        scale = float(w[0]) if idx.size else 1.0  # the node's rows over the sample's
        return fit_node(X[idx], y[idx], kind, scale * level_weight(built, h), budget, l1=l1)

    return descend(built, fit)


def cart_tree(built: Built) -> tuple[np.ndarray, np.ndarray]:
    """A scikit-learn CART tree of the same depth, as hyperplanes ``±(x_j - threshold)``."""
    from sklearn.tree import DecisionTreeClassifier

    ctx = built.ctx
    topo, X, y = ctx.topo, ctx.data.X, ctx.data.y
    cart = DecisionTreeClassifier(max_depth=topo.depth, random_state=0).fit(X, y)
    tr = cart.tree_
    W = np.zeros((topo.n_nodes, X.shape[1]))
    b = np.zeros(topo.n_nodes)
    # each node's class: +1 where the positive rows weigh at least as much; by classes_, which holds only the
    # classes present (one, when the data lack the other: then every node predicts it)
    counts = tr.value[:, 0, :]
    positive = counts[:, cart.classes_ > 0].sum(axis=1) >= counts[:, cart.classes_ <= 0].sum(axis=1)
    node_class = np.where(positive, 1.0, -1.0)

    def majority(node: int) -> float:
        return float(node_class[node])

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
            fill_constant(topo, 2 * t + 2, b, majority(node))
            return
        j, thr = int(tr.feature[node]), float(tr.threshold[node])
        W[t, j], b[t] = 1.0, -thr  # CART: left iff x_j <= thr; ours: right iff x_j - thr > eps/2
        visit(2 * t + 1, tr.children_left[node])
        visit(2 * t + 2, tr.children_right[node])

    visit(0, 0)
    return W, b
