"""Optimal trees of depth 1 and 2 over 0/1 columns by counting: the DP's last two levels in closed form.

A tree of depth at most 2 on 0/1 columns is a root split ``j`` (or a leaf) whose two sides are each a leaf or a
split ``k``. Every cell of such a tree is an intersection of at most two columns (or their complements), so its
weighted class masses follow from three tables (``A[i, c] = w_i [y_i = c]``):

    T[c] = sum_i A[i, c],   S[j, c] = sum_i Z[i, j] A[i, c],   P[c, j, k] = sum_i Z[i, j] Z[i, k] A[i, c]

(``P`` is one matrix product ``Z^T diag(A[:, c]) Z`` per class). The side ``Z_j = 1`` split on ``k`` has the
cells ``P[j, k]`` and ``S[j] - P[j, k]``; the side ``Z_j = 0`` has ``S[k] - P[j, k]`` and
``T - S[j] - S[k] + P[j, k]``. A cell's errors are its mass less its largest class mass, and the optimum of

    C * errors + alpha * (number of splits)

(OCT's objective, Bertsimas & Dunn 2017, (3.9) and the split penalty of (3.14)) is the minimum over ``j`` of the
two sides' best choices, each the smaller of a leaf and the best ``k``: an exhaustive search, so the tree is
proven optimal over the given columns. This is the computation STreeD's specialised depth-2 solver performs
(van der Linden et al. 2023, Section 5, after Demirović et al.'s MurTree, 2022); here it is a few matrix
products, which on the small benchmark sets costs less than a call into a compiled solver's Python wrapper
(``docs/benchmarks.md``, the DP route against its peers). Deeper trees go to STreeD.

Ties prefer fewer splits, then the lower column index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..threads import one_blas_thread

#: the largest depth this module solves
MAX_DEPTH = 2
#: bytes of the ``P`` tables computed at once (root columns are taken in blocks of this size)
BLOCK_BYTES = 64 * 2**20


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


def _errors(mass: np.ndarray) -> np.ndarray:
    """Errors of a leaf of each cell: its mass less its largest class mass (classes on the last axis)."""
    return mass.sum(-1) - mass.max(-1)


def solve(Z: np.ndarray, y: np.ndarray, depth: int, C: float = 1.0, alpha: float = 0.0,
          weights: np.ndarray | None = None, n_classes: int | None = None) -> tuple[Node, float]:
    """The tree of depth at most ``depth`` (1 or 2) minimising ``C * errors + alpha * splits`` over the 0/1
    columns of ``Z``, and that objective.

    ``y``: class codes ``0..K-1``; ``weights``: a mass per row (default 1; any non-negative numbers).

    >>> import numpy as np
    >>> Z = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> node, obj = solve(Z, np.array([0, 1, 1, 0]), depth=2)   # XOR: two levels, no error
    >>> obj, node.feature
    (0.0, 0)
    """
    if depth not in (1, 2):
        raise ValueError(f"depth must be 1 or 2 here, got {depth}")
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
    Zf = Z.astype(np.float32 if exact32 else np.float64)
    with one_blas_thread():  # small products: BLAS threads only contend (treeopt_dsl.threads)
        return _solve(Z, Zf, A, T, depth, C, alpha)


def _solve(Z: np.ndarray, Zf: np.ndarray, A: np.ndarray, T: np.ndarray, depth: int, C: float,
           alpha: float) -> tuple[Node, float]:
    m, K = Z.shape[1], A.shape[1]
    S = Zf.T @ A.astype(Zf.dtype)  # (m, K)
    S = S.astype(np.float64)
    leaf_node = Node(label=int(np.argmax(T)))
    best_obj, best = C * float(_errors(T)), leaf_node
    if m == 0:
        return best, best_obj
    right_mass, left_mass = S, T[None, :] - S  # (m, K): the two sides of each root column
    if depth == 1:
        cost = C * (_errors(right_mass) + _errors(left_mass)) + alpha
        j = int(np.argmin(cost))
        if cost[j] < best_obj:
            best_obj = float(cost[j])
            best = Node(feature=j, left_child=Node(label=int(np.argmax(left_mass[j]))),
                        right_child=Node(label=int(np.argmax(right_mass[j]))))
        return best, best_obj
    leaf_r, leaf_l = C * _errors(right_mass), C * _errors(left_mass)  # (m,)
    mass = A.sum(1).astype(Zf.dtype)  # each row's weight
    unit = bool(np.all(mass == 1))
    # per root column j: the best split k of each side, in blocks of root columns (P is K x block x m)
    split_r = np.empty(m)
    split_l = np.empty(m)
    k_r = np.empty(m, dtype=np.int64)
    k_l = np.empty(m, dtype=np.int64)
    block = max(1, int(BLOCK_BYTES // (8 * K * m * 4)))
    for lo in range(0, m, block):
        hi = min(m, lo + block)
        Zb = Zf[:, lo:hi]
        if unit:  # every class at once (a symmetric product when whole)
            G = Zf.T @ Zf if (lo, hi) == (0, m) else Zb.T @ Zf
        else:
            G = (Zb * mass[:, None]).T @ Zf
        P = np.empty((hi - lo, m, K))
        for c in range(K - 1):  # the last class is the rest: one product fewer
            P[:, :, c] = (Zb * A[:, c, None].astype(Zf.dtype)).T @ Zf
        P[:, :, K - 1] = G - P[:, :, : K - 1].sum(-1)  # (block, m, K)
        Sj, Sk = S[lo:hi, None, :], S[None, :, :]
        er = _errors(P) + _errors(Sj - P)  # side Z_j = 1 split on k: cells Z_k = 1 and Z_k = 0
        el = _errors(Sk - P) + _errors(T - Sj - Sk + P)  # side Z_j = 0
        k_r[lo:hi], k_l[lo:hi] = np.argmin(er, 1), np.argmin(el, 1)
        rows = np.arange(hi - lo)
        split_r[lo:hi] = C * er[rows, k_r[lo:hi]] + alpha
        split_l[lo:hi] = C * el[rows, k_l[lo:hi]] + alpha
    use_r, use_l = split_r < leaf_r, split_l < leaf_l  # ties: the leaf (fewer splits)
    total = np.where(use_r, split_r, leaf_r) + np.where(use_l, split_l, leaf_l) + alpha
    j = int(np.argmin(total))
    if total[j] >= best_obj:
        return best, best_obj

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

    return Node(feature=j, left_child=side(False), right_child=side(True)), float(total[j])
