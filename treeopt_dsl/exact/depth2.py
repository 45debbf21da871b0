"""Optimal trees of depth 1 and 2 over 0/1 columns by counting: the DP's last two levels in closed form.

A tree of depth at most 2 on 0/1 columns is a root split ``j`` (or a leaf) whose two sides are each a leaf or a
split ``k``. Every cell of such a tree is an intersection of at most two columns (or their complements), so its
weighted class masses follow from three tables (``A[i, c] = w_i [y_i = c]``):

    T[c] = sum_i A[i, c],   S[j, c] = sum_i Z[i, j] A[i, c],   P[c, j, k] = sum_i Z[i, j] Z[i, k] A[i, c]

The side ``Z_j = 1`` split on ``k`` has the cells ``P[j, k]`` and ``S[j] - P[j, k]``; the side ``Z_j = 0`` has
``S[k] - P[j, k]`` and ``T - S[j] - S[k] + P[j, k]``. A cell's errors are its mass less its largest class mass,
and the optimum of

    C * errors + alpha * (number of splits)

(OCT's objective, Bertsimas & Dunn 2017, (3.9) and the split penalty of (3.14)) is the minimum over ``j`` of the
two sides' best choices, each the smaller of a leaf and the best ``k``: an exhaustive search, so the tree is
proven optimal over the given columns. This is the computation of STreeD's specialised depth-2 solver
[van-der-linden-2023-streed], after MurTree's [demirovic-2022-murtree]. Deeper trees go to STreeD.

``P`` comes from one of two places:

* **products**, ``Z^T diag(A[:, c]) Z`` per class (BLAS): on 0/1 data, where a feature is one column;
* **rank histograms**, when the columns are threshold columns ``[x_j > c]`` stored by feature with ascending
  thresholds (``groups``): a feature's columns are nested, so a sample's *rank* (how many of them are 1)
  says all of them, and the block of two features is a 2-D cumulative histogram of their ranks, ``O(n + n_j
  n_k)`` instead of the product's ``O(n n_j n_k)``.

With ``groups``, a child split (whose children are leaves) only uses **boundary cuts**: cuts whose two adjacent
value groups are not both of one and the same class (weighted mass). Reading of the classical result
([fayyad-irani-1992] for one split; [elomaa-rousu-1999] for the training error): moving a child's cut across a run of
values that all belong to class ``c`` changes each of its two leaves' errors by a minimum of functions linear in
the number of class-``c`` samples moved (one per label), a concave function, so the best cut is at an end of
the run, a boundary. The root's cut is not restricted (its subtrees route the moved samples by other features,
where that argument does not hold). On the thesis' continuous datasets this keeps 25-90% of the cuts as child
cuts, and every cut at the root.

Measured (``docs/benchmarks.md``): faster than calling STreeD or DL8.5 from Python on the 0/1 benchmark sets;
the exact depth-2 optimum over every midpoint of the thesis' continuous datasets in about a second or two, where
STreeD needs a minute on breast-cancer's 15,310 threshold columns.

Ties prefer fewer splits, then the lower column index.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from treeopt_dsl.errors import OptionError
from treeopt_dsl.numeric import one_blas_thread

#: the largest depth this module solves
MAX_DEPTH = 2
#: bytes of the ``P`` tables computed at once (root columns are taken in blocks of this size)
BLOCK_BYTES = 64 * 2**20
#: the rank histograms replace the products from this many threshold columns per feature on (a binary feature
#: has one: the products win on 0/1 data; the histograms on continuous features)
RANKS_FROM = 4


@dataclass
class Node:
    """A node in the interface of pystreed's tree nodes (what :func:`treeopt_dsl.exact.dp._embed` reads): a leaf
    with ``label`` (a class code), or a split on column ``feature`` whose ``left_child`` takes ``Z[:, feature] ==
    0`` and ``right_child`` ``Z[:, feature] == 1``."""

    label: int = 0
    feature: int = -1
    left_child: Node | None = None
    right_child: Node | None = None

    def is_leaf_node(self) -> bool:
        return self.feature < 0


class Solved(NamedTuple):
    """The best tree found, its objective, and whether every root column was searched (``False`` only when
    ``time_limit`` stopped the search: the tree is then the best over the columns searched, not proven)."""

    node: Node
    objective: float
    complete: bool = True


def _errors(mass: np.ndarray) -> np.ndarray:
    """Errors of a leaf of each cell: its mass less its largest class mass (classes on the last axis)."""
    return mass.sum(-1) - mass.max(-1)


@dataclass
class Layout:
    """Threshold columns grouped by feature (the rank histograms' input): each sample's rank per feature (``R``,
    n x p), where each feature's columns start in ``Z`` and how many there are, the columns a child split may use
    (``child``: boundary cuts), each sample's rank among its feature's child cuts (``Rc``, n x p) and where each
    feature's child cuts start in ``child`` (``child_at``, p + 1 entries)."""

    R: np.ndarray
    start: np.ndarray
    count: np.ndarray
    child: np.ndarray
    Rc: np.ndarray
    child_at: np.ndarray

    @classmethod
    def of(cls, Z: np.ndarray, groups: np.ndarray, A: np.ndarray) -> Layout:
        groups = np.asarray(groups)
        _, start, count = np.unique(groups, return_index=True, return_counts=True)
        R = np.add.reduceat(Z, start, axis=1).astype(np.int64) if Z.shape[1] else np.zeros((Z.shape[0], 0), int)
        K = A.shape[1]
        code, mass = np.argmax(A, axis=1), A.sum(1)
        keep = np.ones(Z.shape[1], dtype=bool)
        for g in range(start.size):  # a cut between two value groups of one and the same class is never needed
            M = np.bincount(R[:, g] * K + code, weights=mass, minlength=(count[g] + 1) * K).reshape(-1, K)
            one = (np.count_nonzero(M > 0, axis=1) == 1)  # a value group with mass, all of one class
            same = one[:-1] & one[1:] & (np.argmax(M[:-1], 1) == np.argmax(M[1:], 1))
            keep[start[g]:start[g] + count[g]] = ~same
        child = np.flatnonzero(keep)
        at = np.append(np.searchsorted(child, start), child.size)
        Rc = np.zeros((Z.shape[0], start.size), dtype=np.int64)
        for g in range(start.size):  # the rank among the child cuts: how many of them the sample exceeds
            if at[g + 1] > at[g]:
                Rc[:, g] = np.searchsorted(child[at[g]:at[g + 1]] - start[g], R[:, g], side="left")
        return cls(R, start, count, child, Rc, at)


def solve(Z: np.ndarray, y: np.ndarray, depth: int, C: float = 1.0, alpha: float = 0.0,
          weights: np.ndarray | None = None, n_classes: int | None = None,
          groups: np.ndarray | None = None, time_limit: float | None = None) -> Solved:
    """The tree of depth at most ``depth`` (1 or 2) minimising ``C * errors + alpha * splits`` over the 0/1
    columns of ``Z``, and that objective (:class:`Solved`).

    ``y``: class codes ``0..K-1``; ``weights``: a mass per row (default 1; any non-negative numbers);
    ``groups``: the feature of every column when ``Z`` holds threshold columns by feature, thresholds ascending
    (:func:`~treeopt_dsl.exact.binarize.binarize`'s layout: ``groups = bz.feature``): then the rank histograms
    and the boundary cuts apply (module docstring). ``time_limit`` (seconds) stops the search between blocks of
    root columns (``complete`` is then ``False``).

    >>> import numpy as np
    >>> Z = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> node, obj, complete = solve(Z, np.array([0, 1, 1, 0]), depth=2)   # XOR: two levels, no error
    >>> obj, node.feature, complete
    (0.0, 0, True)
    """
    if depth not in (1, 2):
        raise OptionError(f"depth must be 1 or 2 here, got {depth!r}")
    Z = np.asarray(Z)
    y = np.asarray(y, dtype=np.int64)
    n = Z.shape[0]
    K = int(n_classes if n_classes is not None else (y.max() + 1 if y.size else 1))
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    A = np.zeros((n, K))
    A[np.arange(n), y] = w
    T = A.sum(0)  # (K,)
    # float32 sums integer masses exactly below 2**24; weights or more rows need float64
    exact32 = weights is None and n < 2**24
    dt = np.float32 if exact32 else np.float64
    layout = None
    if groups is not None and depth == 2:
        groups = np.asarray(groups)
        if groups.shape != (Z.shape[1],) or np.any(np.diff(groups) < 0):
            raise OptionError("groups must give every column's feature, each feature's columns together, in order")
        if Z.shape[1] >= RANKS_FROM * np.unique(groups).size:  # few columns per feature (0/1 data): the products
            layout = Layout.of(Z, groups, A)
    if layout is None and depth == 2:  # the products: each class's rows together (one product per class over them)
        order = np.argsort(y, kind="stable")
        Zf, As = Z.astype(dt)[order], A[order]
        at = np.searchsorted(y[order], np.arange(K + 1))
    else:
        Zf, As, at = Z.astype(dt), A, None
    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
    with one_blas_thread():  # small products: BLAS threads only contend (treeopt_dsl.numeric)
        return _solve(Z, Zf, A, As, at, T, depth, C, alpha, layout, deadline)


def _rank_tables(lay: Layout, A: np.ndarray, g: int, lo: int, hi: int, dtype: type) -> list[np.ndarray]:
    """``P[c][t - lo, i]`` for the root columns ``lo..hi`` (cuts of feature ``g``) against the child columns
    ``lay.child``: the class-``c`` mass with both columns 1, from the 2-D histogram of the root feature's ranks
    and the child feature's ranks among its child cuts, summed from the top (``Z[:, t] = 1`` iff rank > t)."""
    K = A.shape[1]
    t0, t1 = lo - int(lay.start[g]), hi - int(lay.start[g])  # the block's root cuts of feature g
    code, mass = np.argmax(A, axis=1), A.sum(1)  # each row's class and weight
    at = lay.child_at
    nc = np.diff(at)  # child cuts per feature (child ranks 0..nc)
    off = np.concatenate([[0], np.cumsum(nc + 1)])  # each feature's segment of the histogram's last axis
    W = int(off[-1])
    # root cut t (t0 <= t < t1) counts the root ranks >= t + 1: rows t0 + 1 .. t1 one each, the ranks above t1
    # in one last row, the ranks below t0 + 1 not at all (a block of root cuts needs a histogram of its size)
    rr = lay.R[:, g]
    take = rr >= t0 + 1
    row = np.minimum(rr[take], t1 + 1) - (t0 + 1)
    nr = t1 - t0 + 1
    # one histogram for every child feature at once: (class, root row, child feature's segment + child rank)
    cell = ((code[take] * nr + row) * W)[:, None] + off[:-1] + lay.Rc[take]
    H = np.bincount(cell.ravel(), weights=np.repeat(mass[take], nc.size), minlength=K * nr * W).reshape(K, nr, W)
    for r in range(nr - 2, -1, -1):  # sums from the top over root ranks, one row at a time (a cumsum across
        H[:, r] += H[:, r + 1]       # rows is 3x slower than these contiguous row additions)
    H = H[:, : t1 - t0].cumsum(2)  # then prefix sums along the child ranks (every segment at once)
    P = [np.empty((hi - lo, lay.child.size), dtype=dtype) for _ in range(K)]
    for h in np.flatnonzero(nc):  # child cut u of feature h: child rank >= u + 1 = segment total - prefix to u
        end = off[h] + nc[h]  # the segment's last entry (child rank nc): its prefix is the segment's total
        for c in range(K):
            np.subtract(H[c, :, end, None], H[c, :, off[h]:end], out=P[c][:, at[h]:at[h + 1]], casting="unsafe")
    return P


def _product_tables(Zf: np.ndarray, As: np.ndarray, at: np.ndarray, unit: bool, lo: int,
                    hi: int) -> list[np.ndarray]:
    """``P[c][t - lo, k] = sum_r A[r, c] Z[r, t] Z[r, k]`` for the root columns ``lo..hi`` against every column,
    on rows sorted by class (``Zf``, ``As``; class ``c``'s rows are ``at[c]:at[c + 1]``): one product per class over
    its own rows, so the products together cost one over every row (a symmetric product, half of that, when the
    block is the whole matrix and the weights are 1)."""
    P = []
    for c in range(As.shape[1]):
        Zc = Zf[at[c]:at[c + 1]]
        Zb = Zc[:, lo:hi] if unit else Zc[:, lo:hi] * As[at[c]:at[c + 1], c, None].astype(Zf.dtype)
        P.append(Zc.T @ Zc if unit and (lo, hi) == (0, Zf.shape[1]) else Zb.T @ Zc)
    return P


def _errors_of(cells: list[np.ndarray]) -> np.ndarray:
    """Errors of a leaf of each cell, classes given as a list of arrays: the mass less the largest class mass."""
    if len(cells) == 2:
        return np.minimum(cells[0], cells[1])
    return sum(cells[1:], cells[0].copy()) - np.maximum.reduce(cells)


def _side_errors(P: list[np.ndarray], Sj: np.ndarray, Sk: np.ndarray,
                 T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(er, el)``, both (root column, child column): the errors of the side ``Z_j = 1`` split on ``k`` (cells
    ``P`` and ``S_j - P``) and of the side ``Z_j = 0`` (cells ``S_k - P`` and ``T - S_j - S_k + P``)."""
    K = len(P)
    if K == 2:  # in place (P is consumed): the tables are the largest arrays of the solve
        P0, P1 = P
        er = np.minimum(P0, P1)
        a, b = Sj[:, 0, None] - P0, Sj[:, 1, None] - P1
        er += np.minimum(a, b, out=a)
        a = np.subtract(Sk[None, :, 0], P0, out=a)  # Z_j = 0, Z_k = 1
        b = np.subtract(Sk[None, :, 1], P1, out=b)
        el = np.minimum(a, b)
        P0 = np.subtract((T[0] - Sj[:, 0])[:, None], a, out=P0)  # Z_j = 0, Z_k = 0
        P1 = np.subtract((T[1] - Sj[:, 1])[:, None], b, out=P1)
        el += np.minimum(P0, P1, out=P0)
        return er, el
    er = _errors_of(P)
    er += _errors_of([Sj[:, c, None] - P[c] for c in range(K)])
    left_on = [Sk[None, :, c] - P[c] for c in range(K)]  # Z_j = 0, Z_k = 1
    el = _errors_of(left_on)
    el += _errors_of([(T[c] - Sj[:, c])[:, None] - left_on[c] for c in range(K)])  # Z_j = 0, Z_k = 0
    return er, el


def _blocks(m: int, n_child: int, K: int, lay: Layout | None) -> list[tuple[int, int, int]]:
    """Root-column blocks ``(feature, lo, hi)`` whose tables fit :data:`BLOCK_BYTES` (within one feature's
    columns for the rank histograms; ``feature`` is -1 for the products)."""
    size = max(1, int(BLOCK_BYTES // (8 * K * max(1, n_child) * 4)))  # the tables and ~3 temporaries as large
    if lay is None:
        return [(-1, lo, min(m, lo + size)) for lo in range(0, m, size)]
    return [(g, lo, min(int(lay.start[g] + lay.count[g]), lo + size))
            for g in range(lay.start.size) for lo in range(int(lay.start[g]), int(lay.start[g] + lay.count[g]), size)]


def _solve(Z: np.ndarray, Zf: np.ndarray, A: np.ndarray, As: np.ndarray, at: np.ndarray | None, T: np.ndarray,
           depth: int, C: float, alpha: float, lay: Layout | None = None, deadline: float | None = None) -> Solved:
    """The search on ``Z`` (rows as given, with their masses ``A``) and ``Zf``, ``As``: the same rows as floats, in
    class order when ``at`` (each class's first row) is given (the products), else as given."""
    m, K = Z.shape[1], A.shape[1]
    S = (Zf.T @ As.astype(Zf.dtype)).astype(np.float64)  # (m, K)
    best_obj, best = C * float(_errors(T)), Node(label=int(np.argmax(T)))
    if m == 0:
        return Solved(best, best_obj)
    right_mass, left_mass = S, T[None, :] - S  # (m, K): the two sides of each root column
    if depth == 1:
        cost = C * (_errors(right_mass) + _errors(left_mass)) + alpha
        j = int(np.argmin(cost))
        if cost[j] < best_obj:
            best_obj = float(cost[j])
            best = Node(feature=j, left_child=Node(label=int(np.argmax(left_mass[j]))),
                        right_child=Node(label=int(np.argmax(right_mass[j]))))
        return Solved(best, best_obj)
    leaf_r, leaf_l = C * _errors(right_mass), C * _errors(left_mass)  # (m,)
    unit = bool(np.all(As.sum(1) == 1))  # every row's weight 1
    child = np.arange(m) if lay is None else lay.child  # the products pair every column; the ranks boundary cuts
    # per root column j: the best child split of each side, in blocks of root columns
    split_r, split_l = np.full(m, np.inf), np.full(m, np.inf)
    k_r, k_l = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
    dt = Zf.dtype  # float32 counts are exact below 2**24 (solve chooses)
    Sd, Td = S.astype(dt), T.astype(dt)
    complete = True
    if child.size:
        for g, lo, hi in _blocks(m, child.size, K, lay):
            if deadline is not None and time.perf_counter() > deadline:
                complete = False  # the root columns from lo on: a leaf on each side (split cost inf), valid trees
                break
            P = (_rank_tables(lay, A, g, lo, hi, dt) if lay is not None
                 else _product_tables(Zf, As, at, unit, lo, hi))
            er, el = _side_errors(P, Sd[lo:hi], Sd[child], Td)
            ar, al = np.argmin(er, 1), np.argmin(el, 1)
            rows = np.arange(hi - lo)
            k_r[lo:hi], k_l[lo:hi] = child[ar], child[al]
            split_r[lo:hi] = C * er[rows, ar] + alpha
            split_l[lo:hi] = C * el[rows, al] + alpha
    use_r, use_l = split_r < leaf_r, split_l < leaf_l  # ties: the leaf (fewer splits)
    total = np.where(use_r, split_r, leaf_r) + np.where(use_l, split_l, leaf_l) + alpha
    j = int(np.argmin(total))
    if total[j] >= best_obj:
        return Solved(best, best_obj, complete)

    def side(ones: bool) -> Node:
        mass = right_mass[j] if ones else left_mass[j]
        if not (use_r[j] if ones else use_l[j]):
            return Node(label=int(np.argmax(mass)))
        k = int(k_r[j] if ones else k_l[j])
        at = (Z[:, j] == 1) if ones else (Z[:, j] == 0)
        on = at & (Z[:, k] == 1)
        m1 = A[on].sum(0)
        m0 = A[at & ~on].sum(0)
        return Node(feature=k, left_child=Node(label=int(np.argmax(m0))), right_child=Node(label=int(np.argmax(m1))))

    return Solved(Node(feature=j, left_child=side(False), right_child=side(True)), float(total[j]), complete)
