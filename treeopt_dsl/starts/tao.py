"""Tree Alternating Optimization (TAO) on the library's balanced trees.

Carreira-Perpiñán, M. A. and Tavallali, P. (2018). *Alternating optimization of decision trees, with
application to learning sparse oblique trees.* Advances in Neural Information Processing Systems 31
(NeurIPS 2018), 1211-1221. TMO, the thesis' seed system (§3.3), uses TAO to improve a CART start.

The tree is the library's layout (:class:`~treeopt_dsl.models.tree.TreeModel`): a hyperplane
``(W[t], b[t])`` at every node of a complete tree of depth ``d``, node-major, children of ``t`` are
``2t+1`` (left) and ``2t+2`` (right). A sample goes right at an inner node iff ``w·x + b > eps/2``; a
last-layer node predicts +1 iff its score passes the leaf rule of :meth:`TreeModel.predict`
(``v > leaf_threshold`` if ``leaf_threshold > 0``, else ``v >= 0``). So the last-layer nodes are
classifiers whose two (implicit) children are the classes: "left" = predict -1, "right" = predict +1.

TAO visits the depths from the deepest to the root (reverse breadth-first); the nodes of one depth
have disjoint sample sets and disjoint subtrees, so they are optimized independently. At node ``t`` the
*care set* is the samples reaching ``t`` for which exactly one of the two subtrees below ``t`` (kept
fixed) classifies them correctly; each is labelled with that side. For a last-layer node it is every
sample reaching the node, labelled by its class. Every other sample is classified the same whichever
way ``t`` sends it, and samples not reaching ``t`` are unaffected, so

    change of the tree's training error = change of the node's care-set error        (*)

when only node ``t`` changes. Refitting the node to reduce its care-set error therefore reduces the
training error by the same amount; TAO accepts a new split only when it does not increase the
care-set error (axis-aligned: only when it strictly decreases it), so the training error never
increases, pass after pass (the ``history`` returned is non-increasing).

Node refits:

* axis-aligned (``oblique=False``): an exact search over every feature, every threshold (midpoints
  between consecutive distinct values among the samples reaching the node) and both orientations,
  plus the two constant splits; one sort per column and node and cumulative sums of the care
  weights, no loop over samples or thresholds;
* oblique (``oblique=True``): an l1-regularized logistic regression (scikit-learn, ``liblinear``)
  on the weighted care set, TAO's sparse oblique variant.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import DataError
from ..models.tree import TreeModel
from ..topology import Topology

#: offset of a constant split's bias from the node's threshold (``W[t] = 0``)
CONSTANT_OFFSET = 1.0


# --------------------------------------------------------------------------- tree evaluation
def _side(v: np.ndarray, threshold: float, leaf: bool, leaf_threshold: float) -> np.ndarray:
    """Right (inner node) / +1 (last-layer node) for scores ``v``: the rules of :class:`TreeModel`."""
    if leaf:
        return v > leaf_threshold if leaf_threshold > 0 else v >= 0.0
    return v > threshold


def _sides(V: np.ndarray, topo: Topology, threshold: float, leaf_threshold: float) -> np.ndarray:
    """``S[i, t]``: sample ``i`` goes right at inner node ``t`` / is predicted +1 at last-layer node ``t``."""
    S = V > threshold
    last = topo.last
    S[:, last] = _side(V[:, last], threshold, True, leaf_threshold)
    return S


def _subtree_predictions(S: np.ndarray, topo: Topology) -> np.ndarray:
    """``P[i, t]``: the subtree rooted at ``t`` predicts +1 for sample ``i`` (bottom-up, one step per level)."""
    P = S.copy()
    for h in range(topo.depth - 1, 0, -1):
        at = topo.nodes[topo.level == h]
        P[:, at] = np.where(S[:, at], P[:, 2 * at + 2], P[:, 2 * at + 1])
    return P


def _reach(S: np.ndarray, topo: Topology) -> np.ndarray:
    """``R[i, t]``: sample ``i`` reaches node ``t`` (top-down, one step per level)."""
    R = np.zeros(S.shape, dtype=bool)
    R[:, 0] = True
    for h in range(1, topo.depth):
        at = topo.nodes[topo.level == h]
        R[:, 2 * at + 1] = R[:, at] & ~S[:, at]
        R[:, 2 * at + 2] = R[:, at] & S[:, at]
    return R


def _thresholds(eps: float, leaf_threshold: float | None) -> tuple[float, float]:
    return eps / 2.0, (eps / 2.0 if leaf_threshold is None else float(leaf_threshold))


def training_error(X: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, topology: Topology | int, *,
                   eps: float = 0.0, leaf_threshold: float | None = None,
                   sample_weight: np.ndarray | None = None) -> float:
    """Weighted number of training samples the tree ``(W, b)`` misclassifies (the count without weights).

    ``leaf_threshold`` defaults to ``eps / 2`` (the 0-1 loss' rule); 0 gives the ``v >= 0`` rule."""
    topo = topology if isinstance(topology, Topology) else Topology(int(topology))
    X, y, sw = _check(X, y, sample_weight)
    thr, lt = _thresholds(eps, leaf_threshold)
    P = _subtree_predictions(_sides(X @ np.asarray(W, float).T + np.asarray(b, float), topo, thr, lt), topo)
    return float(sw[P[:, 0] != (y > 0)].sum())


def _check(X: Any, y: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise DataError(f"X must be (n, p) and y (n,), got {X.shape} and {y.shape}")
    if not np.all(np.isin(y, (-1, 1))):
        raise DataError("TAO takes labels y in {-1, +1}")
    if sample_weight is None:
        sw = np.ones(X.shape[0])
    else:
        sw = np.asarray(sample_weight, dtype=float)
        if sw.shape != y.shape or not np.all(np.isfinite(sw)) or np.any(sw < 0):
            raise DataError("sample_weight must be n finite non-negative numbers")
    return X, y.astype(int), sw


# --------------------------------------------------------------------------- node refits
def _best_axis_split(Xt: np.ndarray, target: np.ndarray, wt: np.ndarray, node_thr: float,
                     min_gap: float) -> tuple[np.ndarray, float]:
    """The axis-aligned split (or constant) with the least weighted care error, exactly.

    ``target[i]``: sample ``i`` should go right; ``wt[i]``: its weight (0 outside the care set).
    Splitting feature ``j`` between the ``k``-th and ``k+1``-th smallest values sends the first ``k``
    left ("right iff x_j > theta") or right ("right iff x_j < theta"); both errors are read off one
    cumulative sum of the signed care weights in sorted order. Only cuts between values more than
    ``min_gap`` apart are candidates (``eps``: a unit-weight hyperplane keeps every sample outside the
    forwarding gap ``(0, eps)`` of the MILP formulations).
    """
    m, p = Xt.shape
    signed = np.where(target, wt, -wt)  # right-labelled minus left-labelled weight
    tot_r = float(wt[target].sum())
    tot_l = float(wt.sum()) - tot_r
    # constants first: all left errs on the right-labelled weight, all right on the left-labelled
    best_err, best = (tot_r, (np.zeros(p), node_thr - CONSTANT_OFFSET))
    if tot_l < best_err:
        best_err, best = tot_l, (np.zeros(p), node_thr + CONSTANT_OFFSET)
    if m < 2 or p == 0:
        return best
    Xc = np.ascontiguousarray(Xt.T)  # feature x sample: sorts and sums run along contiguous rows
    order = np.argsort(Xc, axis=1, kind="stable")
    xs = np.take_along_axis(Xc, order, axis=1)
    # D[j, k-1] = (right - left)-labelled weight among the k smallest values of feature j; sending them left
    # ("right iff x_j > theta") errs on tot_l + D, sending them right ("right iff x_j < theta") on tot_r - D
    D = np.cumsum(signed[order], axis=1)[:, :-1]
    invalid = (xs[:, 1:] - xs[:, :-1]) <= min_gap
    D[invalid] = np.nan
    if np.all(invalid):
        return best
    lo, hi = int(np.nanargmin(D)), int(np.nanargmax(D))
    err_pos, err_neg = tot_l + D.flat[lo], tot_r - D.flat[hi]
    orient, flat = (0, lo) if err_pos <= err_neg else (1, hi)
    if not min(err_pos, err_neg) < best_err:  # ties keep the constant (fewer features)
        return best
    j, k = np.unravel_index(flat, D.shape)
    theta = 0.5 * (xs[j, k] + xs[j, k + 1])
    w = np.zeros(p)
    if orient == 0:  # w x + b - node_thr = x - theta: centred between the two values
        w[j] = 1.0
        return w, node_thr - theta
    w[j] = -1.0
    return w, node_thr + theta


def _logistic_split(Xc: np.ndarray, zc: np.ndarray, wc: np.ndarray, node_thr: float, C: float,
                    seed: int) -> tuple[np.ndarray, float]:
    """l1-regularized logistic regression on the care set (TAO's sparse oblique node), as ``(w, b)``."""
    p = Xc.shape[1]
    pos = zc > 0
    if pos.all() or not pos.any() or np.unique(pos[wc > 0]).size < 2:
        right = float(wc[pos].sum()) >= float(wc[~pos].sum())
        return np.zeros(p), node_thr + (CONSTANT_OFFSET if right else -CONSTANT_OFFSET)
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(l1_ratio=1.0, C=C, solver="liblinear", max_iter=2000, random_state=seed)
    lr.fit(Xc, zc, sample_weight=wc)
    w = lr.coef_.ravel().astype(float)
    return w, float(lr.intercept_[0]) + node_thr  # right iff w x + b0 > 0


def _clear_gap(v: np.ndarray, side: np.ndarray, node_thr: float, eps: float) -> float:
    """A bias shift that keeps every sample of the node on its side and outside the band
    ``(node_thr - eps/2, node_thr + eps/2)`` that the MILP formulations keep empty, when one exists (else 0)."""
    if eps <= 0 or v.size == 0:
        return 0.0
    lo_band, hi_band = node_thr - eps / 2, node_thr + eps / 2
    lo = float(v[~side].max()) if (~side).any() else -np.inf
    hi = float(v[side].min()) if side.any() else np.inf
    if lo <= lo_band and hi >= hi_band:
        return 0.0
    if np.isfinite(lo) and np.isfinite(hi):
        return node_thr - 0.5 * (lo + hi) if hi - lo > eps else 0.0
    return hi_band - hi if np.isfinite(hi) else lo_band - lo


def _refit_node(Xt: np.ndarray, target: np.ndarray, care: np.ndarray, wt: np.ndarray, w_cur: np.ndarray,
                b_cur: float, *, leaf: bool, threshold: float, leaf_threshold: float, eps: float, oblique: bool,
                C: float, seed: int) -> tuple[np.ndarray, float] | None:
    """A new ``(w, b)`` for one node, or ``None`` to keep the current one.

    Both candidates are judged on their actual decisions (scores and the model's rule), so the
    acceptance test, not the construction, guarantees that the care error does not increase."""
    node_thr = leaf_threshold if leaf else threshold
    if oblique:
        w, b = _logistic_split(Xt[care], np.where(target[care], 1, -1), wt[care], node_thr, C, seed)
        v = Xt @ w + b
        b += _clear_gap(v, _side(v, threshold, leaf, leaf_threshold), node_thr, eps)
    else:
        w, b = _best_axis_split(Xt, target, wt, node_thr, max(eps, 0.0))

    def care_error(w_: np.ndarray, b_: float) -> float:
        return float(wt[_side(Xt @ w_ + b_, threshold, leaf, leaf_threshold) != target].sum())

    new, cur = care_error(w, b), care_error(w_cur, b_cur)
    if oblique:
        accept = new <= cur and not (np.array_equal(w, w_cur) and b == b_cur)
    else:
        accept = new < cur - 1e-12 * float(wt.sum())
    return (w, b) if accept else None


# --------------------------------------------------------------------------- TAO
def tao(X: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, topology: Topology | int, *,
        oblique: bool = False, max_iter: int = 20, C: float = 1.0, sample_weight: np.ndarray | None = None,
        eps: float = 0.0, seed: int = 0, leaf_threshold: float | None = None
        ) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Improve the tree ``(W, b)`` by Tree Alternating Optimization (Carreira-Perpiñán & Tavallali, NeurIPS 2018).

    ``X`` (n x p) are the *scaled* features, ``y`` the labels in {-1, +1}; ``W`` (node x p) and ``b``
    (node) a tree in the library layout (see the module docstring) on ``topology`` (a :class:`Topology`
    or its depth). Up to ``max_iter`` passes, each from the deepest level to the root; a node with no
    samples or an empty care set is left as is. Axis-aligned refits (``oblique=False``) replace a split
    only by a strictly better one (care-set error); oblique refits (``oblique=True``, l1-logistic with
    inverse regularization ``C``) are accepted when they do not increase it. Stops after a pass that
    changes nothing, or that returns to the tree of an earlier pass (accepted ties can cycle).

    ``eps``: inner nodes send a sample right iff ``w·x + b > eps/2`` (the MILP formulations' decoded
    rule); ``leaf_threshold`` (default ``eps/2``) is the last layer's rule as in :class:`TreeModel`.
    With ``eps > 0`` new splits keep the node's samples outside the MILP's forwarding gap ``(0, eps)``
    (axis-aligned cuts only between values more than ``eps`` apart), so the result is a feasible start.

    Returns ``(W, b, history)``: the new arrays (the inputs are not modified) and the weighted training
    error after each pass (non-increasing; its length is the number of passes made).
    """
    topo = topology if isinstance(topology, Topology) else Topology(int(topology))
    X, y, sw = _check(X, y, sample_weight)
    W = np.array(W, dtype=float, copy=True)
    b = np.array(b, dtype=float, copy=True)
    if W.shape != (topo.n_nodes, X.shape[1]) or b.shape != (topo.n_nodes,):
        raise DataError(f"W must be {(topo.n_nodes, X.shape[1])} and b {(topo.n_nodes,)}, got {W.shape} and {b.shape}")
    if max_iter < 0:
        raise DataError(f"max_iter must be >= 0, got {max_iter}")
    thr, lt = _thresholds(eps, leaf_threshold)
    pos = y > 0
    history: list[float] = []
    seen = {W.tobytes() + b.tobytes()}
    # a node's care set depends only on the other nodes (its ancestors route, its descendants classify):
    # when no node has changed since its last refit, refitting it again would change nothing
    version, refitted_at = 0, np.full(topo.n_nodes, -1)
    for _ in range(max_iter):
        changed = False
        for h in range(topo.depth, 0, -1):  # reverse breadth-first: one depth's nodes are independent
            S = _sides(X @ W.T + b, topo, thr, lt)
            P, R = _subtree_predictions(S, topo), _reach(S, topo)
            leaf = h == topo.depth
            for t in topo.nodes[topo.level == h]:
                if refitted_at[t] == version:
                    continue
                refitted_at[t] = version
                rows = np.flatnonzero(R[:, t])
                if rows.size == 0:
                    continue
                if leaf:  # the children are the classes
                    target, care = pos[rows], np.ones(rows.size, dtype=bool)
                else:
                    ok_left = P[rows, 2 * t + 1] == pos[rows]
                    target = P[rows, 2 * t + 2] == pos[rows]  # right is correct
                    care = ok_left != target
                wt = np.where(care, sw[rows], 0.0)
                if not np.any(wt > 0):
                    continue
                new = _refit_node(X[rows], target, care, wt, W[t], float(b[t]), leaf=leaf, threshold=thr,
                                  leaf_threshold=lt, eps=eps, oblique=oblique, C=C, seed=seed)
                if new is not None:
                    W[t], b[t] = new
                    changed = True
                    version += 1
                    refitted_at[t] = version
        history.append(training_error(X, y, W, b, topo, eps=eps, leaf_threshold=lt, sample_weight=sw))
        state = W.tobytes() + b.tobytes()
        if not changed or state in seen:  # oblique ties can cycle through equally good trees
            break
        seen.add(state)
    return W, b, history


def tao_tree(model: TreeModel, X_raw: Any, y: Any, **kw: Any) -> TreeModel:
    """TAO on a fitted :class:`TreeModel`: ``X_raw`` is scaled with ``model.scaler``, ``y`` holds the
    model's classes (or -1/+1), and the tree's own rules (``threshold = eps/2``, ``leaf_threshold``) are
    used unless ``kw`` overrides them; other ``kw`` go to :func:`tao`. Returns a new model with the
    optimized ``W``, ``b`` (Carreira-Perpiñán & Tavallali, NeurIPS 2018)."""
    Xs = model._scaled(X_raw)
    y = np.asarray(y)
    classes = np.asarray(model.classes, dtype=object)
    if np.all(np.isin(y.astype(object), classes)):
        yy = np.where(y.astype(object) == classes[1], 1, -1)
    elif np.all(np.isin(y, (-1, 1))):
        yy = y.astype(int)
    else:
        raise DataError(f"y must hold the model's classes {model.classes!r} (or -1/+1)")
    params = {"eps": 2.0 * float(model.threshold), "leaf_threshold": float(model.leaf_threshold), **kw}
    W, b, _ = tao(Xs, yy, model.W, model.b, model.topology, **params)
    return replace(model, W=W, b=b, X_train=Xs)


# --------------------------------------------------------------------------- CART conversion
def from_sklearn(tree: Any, topology_depth: int, n_features: int, *, eps: float = 0.0,
                 leaf_threshold: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A scikit-learn ``DecisionTreeClassifier`` (fitted on labels -1/+1, depth ``<= topology_depth``) as
    ``(W, b)`` in the library layout, predicting as scikit-learn does (the conversion of
    :func:`treeopt_dsl.warmstart.cart_tree`, with thresholds exact for the rules of ``eps`` and
    ``leaf_threshold``): CART's "left iff x_j <= c" becomes "right iff x_j - c + eps/2 > eps/2"; a leaf
    above the last layer sends everything left and its class is repeated below. A bare ``tree_`` is
    read with classes ``[-1, +1]``. Used to start :func:`tao` (Carreira-Perpiñán & Tavallali, 2018)."""
    tr = getattr(tree, "tree_", tree)
    classes = np.asarray(getattr(tree, "classes_", np.array([-1, 1])))
    if not np.all(np.isin(classes, (-1, 1))):
        raise DataError(f"the CART tree must be fitted on labels -1/+1, its classes are {classes.tolist()}")
    topo = Topology(int(topology_depth))
    if int(tr.max_depth) > topo.depth:
        raise DataError(f"a depth-{int(tr.max_depth)} CART tree does not fit in depth {topo.depth}")
    thr, lt = _thresholds(eps, leaf_threshold)
    W = np.zeros((topo.n_nodes, int(n_features)))
    b = np.zeros(topo.n_nodes)

    def positive(node: int) -> bool:  # scikit-learn predicts the first class of largest value
        return bool(classes[int(np.argmax(tr.value[node][0]))] > 0)

    def fill(t: int, pos: bool) -> None:  # the subtree of t predicts one class: left all the way
        if topo.level[t] == topo.depth:
            b[t] = lt + (CONSTANT_OFFSET if pos else -CONSTANT_OFFSET)
            return
        b[t] = thr - CONSTANT_OFFSET
        fill(2 * t + 1, pos)
        fill(2 * t + 2, pos)

    def visit(t: int, node: int) -> None:
        if tr.children_left[node] == -1:
            fill(t, positive(node))
            return
        j, c = int(tr.feature[node]), float(tr.threshold[node])
        if topo.level[t] < topo.depth:
            W[t, j], b[t] = 1.0, thr - c  # right iff x_j > c
            visit(2 * t + 1, int(tr.children_left[node]))
            visit(2 * t + 2, int(tr.children_right[node]))
            return
        left, right = positive(int(tr.children_left[node])), positive(int(tr.children_right[node]))
        if left == right:
            b[t] = lt + (CONSTANT_OFFSET if right else -CONSTANT_OFFSET)
        elif right:  # +1 iff x_j > c
            W[t, j] = 1.0
            b[t] = lt - c if lt > 0 else -float(np.nextafter(c, np.inf))  # "v >= 0" needs x_j >= next(c)
        else:  # +1 iff x_j <= c
            W[t, j] = -1.0
            b[t] = lt + float(np.nextafter(c, np.inf)) if lt > 0 else c

    visit(0, 0)
    return W, b
