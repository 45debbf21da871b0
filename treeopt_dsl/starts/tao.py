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

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.models.tree import CONSTANT_OFFSET, TreeModel, constant_subtree
from treeopt_dsl.numeric import clear_gap, node_sample
from treeopt_dsl.topology import Topology


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


def _subtree_classes(S: np.ndarray, topo: Topology, leaves: np.ndarray) -> np.ndarray:
    """``Q[i, t]``: the class code the subtree rooted at ``t`` predicts for sample ``i`` when the last-layer node
    ``t`` (the ``j``-th of ``T_d``) sends left to leaf ``2j`` and right to leaf ``2j + 1`` of class ``leaves[2j]``,
    ``leaves[2j + 1]`` (bottom-up, one step per level; ``leaves = [0, 1, 0, 1, ...]`` is the binary layout)."""
    Q = np.zeros(S.shape, dtype=np.intp)
    last = topo.last
    j = last - last[0]
    Q[:, last] = leaves[2 * j + S[:, last]]
    for h in range(topo.depth - 1, 0, -1):
        at = topo.nodes[topo.level == h]
        Q[:, at] = np.where(S[:, at], Q[:, 2 * at + 2], Q[:, 2 * at + 1])
    return Q


def _leaf_of(S: np.ndarray, topo: Topology) -> np.ndarray:
    """The leaf (``2j`` or ``2j + 1`` below the ``j``-th last-layer node) each sample reaches."""
    t = np.zeros(S.shape[0], dtype=np.intp)
    rows = np.arange(S.shape[0])
    for _ in range(topo.depth - 1):
        t = 2 * t + 1 + S[rows, t]
    return 2 * (t - topo.last[0]) + S[rows, t]


def _reach(S: np.ndarray, topo: Topology) -> np.ndarray:
    """``R[i, t]``: sample ``i`` reaches node ``t`` (top-down, one step per level)."""
    R = np.zeros(S.shape, dtype=bool)
    R[:, 0] = True
    for h in range(1, topo.depth):
        at = topo.nodes[topo.level == h]
        R[:, 2 * at + 1] = R[:, at] & ~S[:, at]
        R[:, 2 * at + 2] = R[:, at] & S[:, at]
    return R


def scores(X: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``X @ W.T + b``; for an axis-aligned tree (at most one feature per node) one column gather per node
    instead of the dense product (exactly the same numbers: the product only adds zeros)."""
    nz = W != 0
    if np.all(nz.sum(axis=1) <= 1):
        f = np.argmax(nz, axis=1)
        w = W[np.arange(W.shape[0]), f]
        return X[:, f] * w + b
    return X @ W.T + b




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
    P = _subtree_predictions(_sides(scores(X, np.asarray(W, float), np.asarray(b, float)), topo, thr, lt), topo)
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
@dataclass(frozen=True)
class AxisBins:
    """Every feature's distinct values, computed once per data matrix and shared by all node refits.

    ``index[i, j]`` is the *bin* of ``X[i, j]``: bins are numbered feature by feature, ascending in value
    within a feature (``values[k]`` is bin ``k``'s value, ``feature[k]`` its feature, ``start[j]`` feature
    ``j``'s first bin). A node's exact threshold search then needs no sort: one ``bincount`` of its samples'
    bins gives every feature's value histogram at once (:func:`_best_axis_split`). Build it with
    :meth:`of`; :func:`tao` does when it is not given one, and TMO builds it once for all its TAO runs.
    """

    index: np.ndarray
    values: np.ndarray
    feature: np.ndarray
    start: np.ndarray

    @classmethod
    def of(cls, X: np.ndarray) -> AxisBins:
        X = np.asarray(X, dtype=float)
        n, p = X.shape
        order = np.argsort(X, axis=0, kind="stable")
        xs = np.take_along_axis(X, order, axis=0)
        new = np.ones(xs.shape, dtype=bool)
        new[1:] = xs[1:] != xs[:-1]
        counts = new.sum(axis=0)
        start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.intp)
        rank = np.cumsum(new, axis=0) - 1 + start
        index = np.empty((n, p), dtype=np.intp)
        np.put_along_axis(index, order, rank, axis=0)
        return cls(index=index, values=xs.T[new.T], feature=np.repeat(np.arange(p), counts), start=start)

    @property
    def n_bins(self) -> int:
        return int(self.values.size)


def _best_axis_split(idx: np.ndarray, target: np.ndarray, wt: np.ndarray, bins: AxisBins, node_thr: float,
                     min_gap: float) -> tuple[np.ndarray, float]:
    """The axis-aligned split (or constant) with the least weighted care error, exactly.

    ``idx`` (m x p): the node's samples' bins (rows of :attr:`AxisBins.index`); ``target[i]``: sample ``i``
    should go right; ``wt[i]``: its weight (0 outside the care set). Cutting feature ``j`` between two
    values present at the node sends the samples up to the lower one left ("right iff x_j > theta") or
    right ("right iff x_j < theta"); both errors are read off one cumulative sum, over the feature's
    bins, of the signed care weights (one ``bincount`` for all features). Only cuts between consecutive
    present values more than ``min_gap`` apart are candidates (``eps``: a unit-weight hyperplane keeps
    every sample outside the forwarding gap ``(0, eps)`` of the MILP formulations). Ties go to the
    lowest (feature, value), as a scan of the features in order would choose.
    """
    m, p = idx.shape
    signed = np.where(target, wt, -wt)  # right-labelled minus left-labelled weight
    tot_r = float(wt[target].sum())
    tot_l = float(wt.sum()) - tot_r
    # constants first: all left errs on the right-labelled weight, all right on the left-labelled
    best_err, best = (tot_r, (np.zeros(p), node_thr - CONSTANT_OFFSET))
    if tot_l < best_err:
        best_err, best = tot_l, (np.zeros(p), node_thr + CONSTANT_OFFSET)
    if m < 2 or p == 0:
        return best
    present = np.zeros(bins.n_bins, dtype=bool)
    present[idx.ravel()] = True
    care = wt > 0  # only the care set weighs; every sample reaching the node places the cuts
    cum = np.cumsum(np.bincount(idx[care].ravel(), weights=np.repeat(signed[care], p), minlength=bins.n_bins))
    before = np.where(bins.start > 0, cum[bins.start - 1], 0.0)  # cumulative weight before each feature
    P = np.flatnonzero(present)
    f = bins.feature[P]
    pair = (f[:-1] == f[1:]) & (bins.values[P[1:]] - bins.values[P[:-1]] > min_gap)
    if not pair.any():
        return best
    lo_bin, hi_bin = P[:-1][pair], P[1:][pair]
    # D[c] = (right - left)-labelled weight at or below the cut's lower value: sending those left errs on
    # tot_l + D, sending them right on tot_r - D
    D = cum[lo_bin] - before[bins.feature[lo_bin]]
    lo, hi = int(np.argmin(D)), int(np.argmax(D))
    err_pos, err_neg = tot_l + D[lo], tot_r - D[hi]
    orient, c = (0, lo) if err_pos <= err_neg else (1, hi)
    if not min(err_pos, err_neg) < best_err:  # ties keep the constant (fewer features)
        return best
    j = int(bins.feature[lo_bin[c]])
    theta = 0.5 * (bins.values[lo_bin[c]] + bins.values[hi_bin[c]])
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


def _refit_node(X: np.ndarray, rows: np.ndarray, v_cur: np.ndarray, target: np.ndarray, care: np.ndarray,
                wt: np.ndarray, w_cur: np.ndarray, b_cur: float, *, leaf: bool, threshold: float,
                leaf_threshold: float, eps: float, oblique: bool, C: float, seed: int,
                bins: AxisBins | None, fit_rows: int | None = None) -> tuple[np.ndarray, float] | None:
    """A new ``(w, b)`` for node ``t``, or ``None`` to keep the current one.

    ``rows``: the samples reaching ``t``; ``v_cur``: their current scores ``w_t x + b_t``. Both candidates
    are judged on their actual decisions (scores and the model's rule), so the acceptance test, not the
    construction, guarantees that the care error does not increase. ``fit_rows``: an oblique split is fitted on at
    most this many care-set samples (:func:`~treeopt_dsl.numeric.node_sample`; judged on all of them)."""
    node_thr = leaf_threshold if leaf else threshold
    if oblique:
        Xt = X[rows]
        ci = np.flatnonzero(care)
        zc, wc = np.where(target[ci], 1, -1), wt[ci]
        if fit_rows is not None and ci.size > fit_rows:
            pick, wc = node_sample(np.arange(ci.size), zc, wc, fit_rows, seed)
            ci, zc = ci[pick], zc[pick]
        w, b = _logistic_split(Xt[ci], zc, wc, node_thr, C, seed)
        v = Xt @ w + b
        b += clear_gap(v, _side(v, threshold, leaf, leaf_threshold), node_thr, eps)
        v = Xt @ w + b
    else:
        assert bins is not None
        w, b = _best_axis_split(bins.index[rows], target, wt, bins, node_thr, max(eps, 0.0))
        j = np.flatnonzero(w)
        v = X[rows, j[0]] * w[j[0]] + b if j.size else np.full(rows.size, b)

    def care_error(v_: np.ndarray) -> float:
        return float(wt[_side(v_, threshold, leaf, leaf_threshold) != target].sum())

    new, cur = care_error(v), care_error(v_cur)
    if oblique:
        accept = new <= cur and not (np.array_equal(w, w_cur) and b == b_cur)
    else:
        accept = new < cur - 1e-12 * float(wt.sum())
    return (w, b) if accept else None


# --------------------------------------------------------------------------- TAO
def tao(X: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, topology: Topology | int, *,
        oblique: bool = False, max_iter: int = 20, C: float = 1.0, sample_weight: np.ndarray | None = None,
        eps: float = 0.0, seed: int = 0, leaf_threshold: float | None = None, bins: AxisBins | None = None,
        deadline: float | None = None, fit_rows: int | None = None) -> tuple[np.ndarray, np.ndarray, list[float]]:
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
    ``bins``: :meth:`AxisBins.of(X) <AxisBins.of>` when the caller runs TAO many times on the same ``X``
    (built here otherwise; axis-aligned refits only). ``deadline`` (a :func:`time.perf_counter` instant, e.g. the
    end of the starts' share of a time limit): no node is refitted past it; the tree so far is returned (each
    accepted refit keeps the error from increasing, so any point of a pass is as good as the pass' start).
    ``fit_rows``: each oblique refit is fitted on at most this many of its care set's samples (a stratified
    sample, weights scaled to the care set's; the acceptance test still counts every sample), so that a refit's
    work is bounded by rows (the formulations' start: :data:`~treeopt_dsl.defaults.NODE_ROWS`); ``None``: all.

    Returns ``(W, b, history)``: the new arrays (the inputs are not modified) and the weighted training
    error after each pass (non-increasing; its length is the number of passes made).
    """
    topo = topology if isinstance(topology, Topology) else Topology(int(topology))
    X, y, sw = _check(X, y, sample_weight)
    binary = np.tile(np.array([0, 1], dtype=np.intp), topo.n_nodes + 1)[:topo.n_leaves]
    W, b, _, history = _tao(X, (y > 0).astype(np.intp), W, b, binary, topo, relabel=False, oblique=oblique,
                            max_iter=max_iter, C=C, sw=sw, eps=eps, seed=seed, leaf_threshold=leaf_threshold,
                            bins=bins, deadline=deadline, fit_rows=fit_rows)
    return W, b, history


def tao_multiclass(X: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, leaf_classes: np.ndarray,
                   topology: Topology | int, *, oblique: bool = False, max_iter: int = 20, C: float = 1.0,
                   sample_weight: np.ndarray | None = None, eps: float = 0.0, seed: int = 0,
                   leaf_threshold: float | None = None, bins: AxisBins | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[float]]:
    """:func:`tao` with class labels at the leaves: any number of classes (Carreira-Perpiñán & Tavallali's TAO is
    stated for ``K`` classes, §3: a leaf holds a class, a decision node a binary split).

    ``y`` holds class codes ``0 .. K-1``; the last-layer node ``t`` (the ``j``-th of ``T_d``) sends a sample left
    to leaf ``2j`` of class ``leaf_classes[2j]`` and right to leaf ``2j + 1`` of class ``leaf_classes[2j + 1]``
    (``leaf_classes``, shape ``(2**depth,)``; the layout of :class:`~treeopt_dsl.models.tree.TreeModel`'s
    ``leaf_classes``). Every pass first relabels each leaf with the weighted majority class of the samples reaching
    it (TAO's leaf step, exact; an empty leaf or a tie keeps its label), then refits the decision nodes from the
    deepest to the root on their care sets: the samples for which exactly one side leads to a correct class; a last
    relabelling ends the run, so every non-empty leaf holds a majority class of its samples. Both steps never
    increase the weighted training error, so ``history`` is non-increasing. With ``K = 2`` and
    ``leaf_classes = [0, 1, 0, 1, ...]`` kept fixed this is :func:`tao`.

    Returns ``(W, b, leaf_classes, history)`` (new arrays; the inputs are not modified).

    Example::

        >>> from sklearn.datasets import load_wine
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> X, y = load_wine(return_X_y=True)
        >>> cart = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
        >>> W, b, leaves, hist = tao_multiclass(X, y, *from_sklearn_multiclass(cart, 3, X.shape[1]), 3)
        >>> int((cart.predict(X) != y).sum()), hist
        (4, [3.0, 3.0])
    """
    topo = topology if isinstance(topology, Topology) else Topology(int(topology))
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise DataError(f"X must be (n, p) and y (n,), got {X.shape} and {y.shape}")
    if y.size and (not np.issubdtype(y.dtype, np.integer) or y.min() < 0):
        raise DataError("tao_multiclass takes class codes 0 .. K-1 in y (e.g. np.unique(labels, return_inverse=True))")
    leaves = np.asarray(leaf_classes)
    if leaves.shape != (topo.n_leaves,) or not np.issubdtype(leaves.dtype, np.integer) or np.any(leaves < 0):
        raise DataError(f"leaf_classes must be {topo.n_leaves} class codes >= 0 (2**depth), got {leaves!r}")
    _, _, sw = _check(X, np.ones(y.shape[0]), sample_weight)
    return _tao(X, y.astype(np.intp), W, b, leaves.astype(np.intp), topo, relabel=True, oblique=oblique,
                max_iter=max_iter, C=C, sw=sw, eps=eps, seed=seed, leaf_threshold=leaf_threshold, bins=bins)


def class_error(X: np.ndarray, codes: np.ndarray, W: np.ndarray, b: np.ndarray, leaf_classes: np.ndarray,
                topology: Topology | int, *, eps: float = 0.0, leaf_threshold: float | None = None,
                sample_weight: np.ndarray | None = None) -> float:
    """Weighted number of samples whose class code the tree ``(W, b, leaf_classes)`` gets wrong
    (:func:`tao_multiclass`'s layout; :func:`training_error` for the binary one)."""
    topo = topology if isinstance(topology, Topology) else Topology(int(topology))
    thr, lt = _thresholds(eps, leaf_threshold)
    sw = np.ones(len(codes)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    Q = _subtree_classes(_sides(scores(np.asarray(X, float), np.asarray(W, float), np.asarray(b, float)), topo, thr,
                                lt), topo, np.asarray(leaf_classes, dtype=np.intp))
    return float(sw[Q[:, 0] != np.asarray(codes)].sum())


def _relabel(S: np.ndarray, topo: Topology, codes: np.ndarray, sw: np.ndarray, leaves: np.ndarray) -> np.ndarray:
    """Every leaf's weighted majority class (TAO's leaf step); an empty leaf, or one whose label ties the
    majority, keeps its label."""
    K = int(max(codes.max(initial=0), leaves.max(initial=0))) + 1
    counts = np.bincount(_leaf_of(S, topo) * K + codes, weights=sw, minlength=leaves.size * K).reshape(-1, K)
    best = counts.max(axis=1)
    keep = counts[np.arange(leaves.size), leaves] >= best
    return np.where(keep, leaves, np.argmax(counts, axis=1))


def _tao(X: np.ndarray, codes: np.ndarray, W: np.ndarray, b: np.ndarray, leaves: np.ndarray, topo: Topology, *,
         relabel: bool, oblique: bool, max_iter: int, C: float, sw: np.ndarray, eps: float, seed: int,
         leaf_threshold: float | None, bins: AxisBins | None, deadline: float | None = None,
         fit_rows: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[float]]:
    """TAO on class codes with leaf classes ``leaves`` (relabelled each pass when ``relabel``): :func:`tao` and
    :func:`tao_multiclass`; past ``deadline`` no node is refitted (:func:`tao`)."""
    W = np.array(W, dtype=float, copy=True)
    b = np.array(b, dtype=float, copy=True)
    leaves = np.array(leaves, dtype=np.intp, copy=True)
    if W.shape != (topo.n_nodes, X.shape[1]) or b.shape != (topo.n_nodes,):
        raise DataError(f"W must be {(topo.n_nodes, X.shape[1])} and b {(topo.n_nodes,)}, got {W.shape} and {b.shape}")
    if max_iter < 0:
        raise DataError(f"max_iter must be >= 0, got {max_iter}")
    if not oblique:
        if bins is None:
            bins = AxisBins.of(X)
        elif bins.index.shape != X.shape:
            raise DataError(f"bins were built for a {bins.index.shape} matrix, X is {X.shape}")
    thr, lt = _thresholds(eps, leaf_threshold)
    last0 = int(topo.last[0])
    history: list[float] = []
    seen = {W.tobytes() + b.tobytes() + leaves.tobytes()}
    # a node's care set depends only on the other nodes (its ancestors route, its descendants classify):
    # when no node has changed since its last refit, refitting it again would change nothing
    version, refitted_at = 0, np.full(topo.n_nodes, -1)
    late = False
    for _ in range(max_iter):
        changed = False
        if relabel:  # the leaves first: each the weighted majority of the samples reaching it
            new_leaves = _relabel(_sides(scores(X, W, b), topo, thr, lt), topo, codes, sw, leaves)
            if not np.array_equal(new_leaves, leaves):
                leaves, changed = new_leaves, True
                version += 1
        for h in range(topo.depth, 0, -1):  # reverse breadth-first: one depth's nodes are independent
            V = scores(X, W, b)
            S = _sides(V, topo, thr, lt)
            Q, R = _subtree_classes(S, topo, leaves), _reach(S, topo)
            leaf = h == topo.depth
            for t in topo.nodes[topo.level == h]:
                late = late or (deadline is not None and time.perf_counter() > deadline)
                if late or refitted_at[t] == version:
                    continue
                refitted_at[t] = version
                rows = np.flatnonzero(R[:, t])
                if rows.size == 0:
                    continue
                yr = codes[rows]
                if leaf:  # the children are the leaves 2j, 2j + 1 and their classes
                    j = t - last0
                    ok_left, target = leaves[2 * j] == yr, leaves[2 * j + 1] == yr
                else:
                    ok_left, target = Q[rows, 2 * t + 1] == yr, Q[rows, 2 * t + 2] == yr  # right is correct
                care = ok_left != target
                wt = np.where(care, sw[rows], 0.0)
                if not np.any(wt > 0):
                    continue
                new = _refit_node(X, rows, V[rows, t], target, care, wt, W[t], float(b[t]), leaf=leaf,
                                  threshold=thr, leaf_threshold=lt, eps=eps, oblique=oblique, C=C, seed=seed,
                                  bins=bins, fit_rows=fit_rows)
                if new is not None:
                    W[t], b[t] = new
                    changed = True
                    version += 1
                    refitted_at[t] = version
        history.append(class_error(X, codes, W, b, leaves, topo, eps=eps, leaf_threshold=lt, sample_weight=sw))
        state = W.tobytes() + b.tobytes() + leaves.tobytes()
        if late or not changed or state in seen:  # oblique ties can cycle through equally good trees
            break
        seen.add(state)
    if relabel and history:  # the splits of the last pass may have moved samples: majority leaves again
        leaves = _relabel(_sides(scores(X, W, b), topo, thr, lt), topo, codes, sw, leaves)
        history[-1] = class_error(X, codes, W, b, leaves, topo, eps=eps, leaf_threshold=lt, sample_weight=sw)
    return W, b, leaves, history


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
def _cart_frame(tr: Any, topology_depth: int, n_features: int, eps: float, leaf_threshold: float | None
                ) -> tuple[Topology, float, float, np.ndarray, np.ndarray]:
    """The topology a CART tree ``tr`` is converted into (refused when CART is deeper), the split and leaf
    thresholds of ``eps`` / ``leaf_threshold`` and the empty ``(W, b)``."""
    topo = Topology(int(topology_depth))
    if int(tr.max_depth) > topo.depth:
        raise DataError(f"a depth-{int(tr.max_depth)} CART tree does not fit in depth {topo.depth}")
    thr, lt = _thresholds(eps, leaf_threshold)
    return topo, thr, lt, np.zeros((topo.n_nodes, int(n_features))), np.zeros(topo.n_nodes)


def _walk_cart(tr: Any, topo: Topology, W: np.ndarray, b: np.ndarray, thr: float,
               leaf: Callable[[int, int], None], last_split: Callable[[int, int, int, float], None]) -> None:
    """CART's nodes laid onto ``topo`` from the root: a split above the last layer becomes "right iff x_j > c";
    ``leaf(t, node)`` fills a CART leaf met at tree node ``t``, ``last_split(t, node, j, c)`` a split at the last
    layer (the two conversions differ only there)."""
    def visit(t: int, node: int) -> None:
        if tr.children_left[node] == -1:
            leaf(t, node)
            return
        j, c = int(tr.feature[node]), float(tr.threshold[node])
        if topo.level[t] < topo.depth:
            W[t, j], b[t] = 1.0, thr - c  # right iff x_j > c
            visit(2 * t + 1, int(tr.children_left[node]))
            visit(2 * t + 2, int(tr.children_right[node]))
            return
        last_split(t, node, j, c)

    visit(0, 0)


def from_sklearn(tree: Any, topology_depth: int, n_features: int, *, eps: float = 0.0,
                 leaf_threshold: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A scikit-learn ``DecisionTreeClassifier`` (fitted on labels -1/+1, depth ``<= topology_depth``) as
    ``(W, b)`` in the library layout, predicting as scikit-learn does (the conversion of
    :func:`treeopt_dsl.starts.resolver.cart_tree`, with thresholds exact for the rules of ``eps`` and
    ``leaf_threshold``): CART's "left iff x_j <= c" becomes "right iff x_j - c + eps/2 > eps/2"; a leaf
    above the last layer sends everything left and its class is repeated below. A bare ``tree_`` is
    read with classes ``[-1, +1]``. Used to start :func:`tao` (Carreira-Perpiñán & Tavallali, 2018)."""
    tr = getattr(tree, "tree_", tree)
    classes = np.asarray(getattr(tree, "classes_", np.array([-1, 1])))
    if not np.all(np.isin(classes, (-1, 1))):
        raise DataError(f"the CART tree must be fitted on labels -1/+1, its classes are {classes.tolist()}")
    topo, thr, lt, W, b = _cart_frame(tr, topology_depth, n_features, eps, leaf_threshold)

    def positive(node: int) -> bool:  # scikit-learn predicts the first class of largest value
        return bool(classes[int(np.argmax(tr.value[node][0]))] > 0)

    def leaf(t: int, node: int) -> None:
        constant_subtree(b, topo, t, positive(node), thr, lt)

    def last_split(t: int, node: int, j: int, c: float) -> None:
        left, right = positive(int(tr.children_left[node])), positive(int(tr.children_right[node]))
        if left == right:
            b[t] = lt + (CONSTANT_OFFSET if right else -CONSTANT_OFFSET)
        elif right:  # +1 iff x_j > c
            W[t, j] = 1.0
            b[t] = lt - c if lt > 0 else -float(np.nextafter(c, np.inf))  # "v >= 0" needs x_j >= next(c)
        else:  # +1 iff x_j <= c
            W[t, j] = -1.0
            b[t] = lt + float(np.nextafter(c, np.inf)) if lt > 0 else c

    _walk_cart(tr, topo, W, b, thr, leaf, last_split)
    return W, b


def from_sklearn_multiclass(tree: Any, topology_depth: int, n_features: int, *, eps: float = 0.0,
                            leaf_threshold: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A scikit-learn ``DecisionTreeClassifier`` fitted on class codes ``0 .. K-1`` (depth ``<= topology_depth``)
    as ``(W, b, leaf_classes)`` in :func:`tao_multiclass`'s layout, predicting as scikit-learn does: CART's
    "left iff x_j <= c" becomes "right iff x_j > c"; a leaf above the last layer sends everything left and every
    leaf below it gets its class; a split at the last layer gives its two leaves the classes of CART's children."""
    tr = getattr(tree, "tree_", tree)
    classes = np.asarray(getattr(tree, "classes_", np.arange(tr.value.shape[2]))).astype(np.intp)
    topo, thr, lt, W, b = _cart_frame(tr, topology_depth, n_features, eps, leaf_threshold)
    leaves = np.zeros(topo.n_leaves, dtype=np.intp)

    def code(node: int) -> int:  # scikit-learn predicts the first class of largest value
        return int(classes[int(np.argmax(tr.value[node][0]))])

    def leaf(t: int, node: int) -> None:
        constant_subtree(b, topo, t, False, thr, lt)
        js = np.flatnonzero(topo.desc[t])
        leaves[2 * js] = leaves[2 * js + 1] = code(node)

    def last_split(t: int, node: int, j: int, c: float) -> None:
        k = t - int(topo.last[0])
        W[t, j] = 1.0  # the right leaf iff x_j > c
        b[t] = lt - c if lt > 0 else -float(np.nextafter(c, np.inf))  # "v >= 0" needs x_j >= next(c)
        leaves[2 * k], leaves[2 * k + 1] = code(int(tr.children_left[node])), code(int(tr.children_right[node]))

    _walk_cart(tr, topo, W, b, thr, leaf, last_split)
    return W, b, leaves


def to_decision_tree(W: np.ndarray, b: np.ndarray, topology: Topology | int, *, eps: float = 0.0,
                     leaf_threshold: float | None = None, classes: Any = (-1, 1),
                     feature_names: Any = None, leaf_classes: Any = None) -> DecisionTree:
    """An axis-aligned tree ``(W, b)`` in the library layout as a
    :class:`~treeopt_dsl.models.decision_tree.DecisionTree` (unbalanced: a constant inner node is replaced by
    the child it sends everything to, a constant last-layer node is a leaf, and a split whose two sides
    predict the same class is a leaf).

    ``classes[0]`` is predicted for -1 and ``classes[1]`` for +1; with ``leaf_classes`` (:func:`tao_multiclass`'s
    layout) the last-layer node ``j`` predicts ``classes[leaf_classes[2j]]`` on its left and
    ``classes[leaf_classes[2j + 1]]`` on its right. With ``eps = 0`` and unit weights the
    thresholds are exact: ``x > theta`` is ``x - theta > 0`` in floating point, and the last layer's
    ``x - theta >= 0`` becomes ``x <= nextafter(theta, -inf)`` on the left; so the tree predicts
    exactly as the hyperplanes do (the estimators of :mod:`treeopt_dsl.starts.memetic` rely on it). A node with
    more than one feature raises :class:`DataError` (oblique splits have no such form).
    """
    topo = topology if isinstance(topology, Topology) else Topology(int(topology))
    W, b = np.asarray(W, dtype=float), np.asarray(b, dtype=float)
    thr, lt = _thresholds(eps, leaf_threshold)
    used = (W != 0).sum(axis=1)
    if np.any(used > 1):
        raise DataError(f"node {int(np.argmax(used))} uses {int(used.max())} features: not an axis-aligned tree")
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[int] = []

    def new(f: int = -1, c: float = 0.0, v: int = -1) -> int:
        feature.append(f)
        threshold.append(c)
        left.append(-1)
        right.append(-1)
        value.append(v)
        return len(feature) - 1

    def split(f: int, c: float, lo: Any, hi: Any) -> int:
        """``x_f <= c`` goes to ``lo`` (a class index or a library node to expand), else to ``hi``."""
        k = new(f, c)
        lk, rk = lo(), hi()
        if left_leaf_same(lk, rk):
            v = value[lk]
            del feature[k + 1:], threshold[k + 1:], left[k + 1:], right[k + 1:], value[k + 1:]
            feature[k], value[k] = -1, v
            return k
        left[k], right[k] = lk, rk
        return k

    def left_leaf_same(lk: int, rk: int) -> bool:
        return feature[lk] == -1 and left[lk] == -1 and feature[rk] == -1 and left[rk] == -1 and value[lk] == value[rk]

    last0 = int(topo.last[0])
    lc = None if leaf_classes is None else np.asarray(leaf_classes, dtype=np.intp)

    def code(t: int, pos: bool) -> int:  # the class index of last-layer node t's right (pos) or left leaf
        return int(pos) if lc is None else int(lc[2 * (t - last0) + int(pos)])

    def leaf(t: int, pos: bool) -> Any:
        return lambda: new(v=code(t, pos))

    def visit(t: int) -> int:
        j = np.flatnonzero(W[t])
        last = topo.level[t] == topo.depth
        if j.size == 0:
            if last:
                return new(v=code(t, bool(_side(np.array([b[t]]), thr, True, lt)[0])))
            return visit(2 * t + 2 if b[t] > thr else 2 * t + 1)
        f, w = int(j[0]), float(W[t, j[0]])
        if last:  # +1 iff w x + b (> lt | >= 0)
            strict = lt > 0
            c = (lt - b[t]) / w
            if w > 0:  # +1 iff x > c (strict) or x >= c
                cut = c if strict else float(np.nextafter(c, -np.inf))
                return split(f, cut, leaf(t, False), leaf(t, True))
            cut = float(np.nextafter(c, -np.inf)) if strict else c  # +1 iff x < c (strict) or x <= c
            return split(f, cut, leaf(t, True), leaf(t, False))
        c = (thr - b[t]) / w
        if w > 0:  # right iff x > c
            return split(f, c, lambda: visit(2 * t + 1), lambda: visit(2 * t + 2))
        return split(f, float(np.nextafter(c, -np.inf)), lambda: visit(2 * t + 2), lambda: visit(2 * t + 1))

    visit(0)
    cls = np.asarray(classes)
    return DecisionTree(feature=feature, threshold=threshold, left=left, right=right, value=value, classes=cls,
                        n_features=W.shape[1], feature_names=feature_names)
