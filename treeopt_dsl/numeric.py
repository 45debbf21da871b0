"""Numeric helpers shared by every layer: the logistic function, BLAS threads for small products, the pairs a
cut cannot separate, values as JSON, and the check that an option is a finite real number.

Example:

    >>> import numpy as np
    >>> jsonable({"a": np.float64(1.5), "b": np.array([1.0, np.nan]), 3: (np.int64(2), None)})
    {'a': 1.5, 'b': [1.0, None], '3': [2, None]}
    >>> import json
    >>> json.dumps({"x": np.arange(2)}, default=json_default)
    '{"x": [0, 1]}'
    >>> sigmoid(np.array([0.0])).tolist(), logistic_cdf(np.array([-1.0, 1.0]), np.inf).tolist()
    ([0.5], [0.0, 1.0])
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["cut_text", "finite_real", "hyperplane_scores", "json_default", "jsonable", "leaf_probabilities",
           "logistic_cdf", "one_blas_thread", "sigmoid", "unseparable_pairs"]


def finite_real(v: Any) -> bool:
    """A real number (not a bool) that is finite."""
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) and bool(np.isfinite(float(v)))


def sigmoid(v: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-v))``, overflow-free (``tanh``)."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(v, dtype=float)))


def logistic_cdf(v: np.ndarray, gamma: float) -> np.ndarray:
    """``F(v) = 1 / (1 + exp(-gamma v))`` ([blanquero-2020-sorct] line 397), overflow-free; ``gamma = inf`` gives
    ``v >= 0``."""
    v = np.asarray(v, dtype=float)
    if np.isinf(gamma):
        return (v >= 0).astype(float)
    return 0.5 * (1.0 + np.tanh(0.5 * gamma * v))


def leaf_probabilities(p_left: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``P[i, l] = prod_{t in N_L(l)} p[i, t] prod_{t in N_R(l)} (1 - p[i, t])`` with numpy
    ([blanquero-2020-sorct] line 110): ``p_left`` is samples x nodes, ``left`` / ``right`` the leaves x nodes
    masks of the nodes whose left / right branch leads to each leaf."""
    factor = 1.0 - left + (left.astype(float) - right)[None] * p_left[:, None, :]
    return np.prod(factor, axis=2)


def unseparable_pairs(X: np.ndarray, gap: float) -> np.ndarray:
    """Per column of ``X``, how many pairs of consecutive distinct values lie closer than ``gap`` (the smallest
    gap a split with margin ``eps`` and ``|w| <= w_bound`` can put a cut into: ``eps / w_bound``).

    >>> unseparable_pairs(np.array([[0.0, 1.0], [1e-9, 2.0], [1.0, 2.0]]), 1e-6).tolist()
    [1, 0]
    """
    if X.size == 0:
        return np.zeros(X.shape[1] if X.ndim == 2 else 0, dtype=np.int64)
    d = np.diff(np.sort(X, axis=0), axis=0)
    return np.count_nonzero((d > 0) & (d < gap), axis=0)


def hyperplane_scores(X: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``X @ W.T + b`` (sample x hyperplane). When every row of ``W`` has at most one nonzero (axis-aligned splits,
    constant nodes) the one column each row reads is gathered instead: the same numbers (the other terms are exact
    zeros), without a product over every feature (mushrooms, 8,124 x 112 against three splits: 4 ms a product,
    as long as the exact route's whole search at depth 2).

    >>> X = np.array([[1.0, 2.0], [3.0, -4.0]])
    >>> W, b = np.array([[0.0, 2.0], [0.0, 0.0]]), np.array([1.0, -1.0])
    >>> hyperplane_scores(X, W, b).tolist() == (X @ W.T + b).tolist()
    True
    """
    if W.size == 0 or np.count_nonzero(W, axis=1).max() > 1:
        return X @ W.T + b
    j = np.argmax(W != 0, axis=1)
    return X[:, j] * W[np.arange(W.shape[0]), j] + b


#: the BLAS libraries' thread controls (threadpoolctl's), found once per process
_BLAS: list[list[Any]] = []


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """A context in which BLAS runs on one thread (threadpoolctl).

    The library's own products are small (a data matrix against a few hyperplanes, count tables of 0/1 columns),
    and OpenBLAS' worker threads spin against any other busy core: measured here, a 435 x 48 product took 0.03 ms
    on one thread and 12-16 ms on two while the other core was busy. The BLAS libraries are looked up once per
    process; entering sets their threads to one and leaving restores them (``ThreadpoolController.limit`` looks
    every library up again: about 1 ms per call, as long as the exact route's whole answer on small binary data).

    >>> with one_blas_thread():
    ...     float((np.ones((3, 2)) @ np.ones(2)).sum())
    6.0
    """
    if not _BLAS:
        # a third-party import paid by the first small product only
        from threadpoolctl import ThreadpoolController

        _BLAS.append([lib for lib in ThreadpoolController().lib_controllers if lib.user_api == "blas"])
    libs = _BLAS[0]
    before = [lib.get_num_threads() for lib in libs]
    try:
        for lib in libs:
            lib.set_num_threads(1)
        yield
    finally:
        for lib, n in zip(libs, before, strict=True):
            lib.set_num_threads(n)


def jsonable(o: Any) -> Any:
    """``o`` with dict keys as strings, tuples as lists, numpy scalars and arrays as Python values, non-finite
    floats as ``None`` (strict JSON: ``json.dumps(..., allow_nan=False)`` takes it) and anything else as its
    ``str``: one place for what the command line prints, the experiment store keeps and the runner's workers send
    back."""
    if isinstance(o, dict):
        return {str(k): jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [jsonable(v) for v in o]
    if isinstance(o, np.ndarray):
        return jsonable(o.tolist())
    if isinstance(o, np.generic):
        return jsonable(o.item())
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, (str, int, float, bool)) or o is None:
        return o
    return str(o)


def json_default(o: Any) -> Any:
    """The ``default=`` of :func:`json.dumps` for rows that are JSON apart from numpy values (non-finite floats
    are left to ``json``): numpy scalars and arrays as Python values, anything else as its ``str``."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def cut_text(t: float, lower: float, upper: float, at_least: bool = False) -> str:
    """The shortest text (at least 6 significant digits) of a cut ``x > c`` that keeps the training values on
    their sides: ``lower <= c < upper``; ``at_least=True``: of a cut ``x >= c``, ``lower < c <= upper``.
    A side without training values is ``-inf`` / ``inf``.

    >>> cut_text(2.0 / 3.0, 0.5, 1.0, at_least=True), cut_text(60.50000001, 60.0, 61.0)
    ('0.666667', '60.5')
    """
    for digits in range(6, 18):
        text = f"{t:.{digits}g}"
        c = float(text)
        if (lower < c <= upper) if at_least else (lower <= c < upper):
            return text
    return repr(float(t))


def node_sample(rows: np.ndarray, y: np.ndarray, sw: np.ndarray, cap: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows a node's problem is solved on: all of ``rows`` (a mask or indices) when at most ``cap`` reach the
    node, else a stratified sample of ``cap`` of them (each class in its share, at least one row each; drawn with
    ``seed``), their weights scaled so that the sample weighs what the node's rows weigh (the loss keeps its
    balance against the penalty on ``w``). Returns ``(indices, weights)``.

    >>> idx, w = node_sample(np.ones(10, bool), np.r_[np.ones(8), -np.ones(2)], np.ones(10), 5, 0)
    >>> idx.size, float(w.sum())
    (5, 10.0)
    """
    idx = np.flatnonzero(rows) if rows.dtype == bool else np.asarray(rows, dtype=np.int64)
    if idx.size <= cap:
        return idx, sw[idx]
    rng = np.random.default_rng(seed)
    labels, counts = np.unique(y[idx], return_counts=True)
    picks = [rng.choice(idx[y[idx] == label], size=min(int(count), max(1, round(cap * count / idx.size))),
                        replace=False) for label, count in zip(labels, counts, strict=True)]
    pick = np.sort(np.concatenate(picks))
    return pick, sw[pick] * (sw[idx].sum() / sw[pick].sum())


def clear_gap(v: np.ndarray, side: np.ndarray, node_thr: float, eps: float) -> float:
    """A bias shift that keeps every sample of the node on its side and outside the band
    ``(node_thr - eps/2, node_thr + eps/2)`` that the MILP formulations keep empty, when one exists (else 0).

    >>> round(clear_gap(np.array([-1.0, 4e-6, 6e-5]), np.array([False, False, True]), 5e-6, 1e-5), 12)
    -2.7e-05
    """
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
