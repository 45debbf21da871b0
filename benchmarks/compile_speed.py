"""Compile-speed benchmark: OLCT depth 2 from data to a HiGHS-ready model (no solve).

The model is the thesis' OLCT (3.17) with the paper's settings (seed 000 lines 386-560, 610) and its row layout
(``split_columns=False``: the split repeated in every row, as every peer here writes it):
routing (3.6), big-M forwarding (3.7) with ``M = 100`` and ``eps = 1e-5``, the tangent-logistic
slack (3.15) with the tangent set ``V0`` at every level, the l1 split (3.16) and the objective
``sum_h sum_i xi[i, h] + sum_t 1'(w_t+ + w_t-)``. Data: synthetic, standardized, ``N`` samples and
``p`` features; ``N (8 p + 26)`` nonzeros (2.13 M at ``N = 5000``, ``p = 50``).

Tools, each measured in its own fresh interpreter (``--in-process`` for quick runs):

* ``floor``  -- the same CSR written directly with numpy index arithmetic, handed to
  ``highspy.Highs.passModel`` as flat arrays: the cost of the data movement alone;
* ``dsl``    -- ``get_formulation("olct", depth=2).build(dataset)``, ``.compile()``,
  ``HighsBackend.load(sf)`` (split times reported);
* ``linopy`` -- ``linopy.Model`` with labeled expressions, ``to_highspy(set_names=False)``;
* ``pyomo``  -- ``ConcreteModel`` with indexed ``Var``/``Constraint`` rules, loaded into HiGHS by
  ``pyomo.contrib.appsi.solvers.Highs().set_instance(model)`` (loads, does not solve);
* ``mip``    -- python-mip rows with ``xsum`` into CBC (python-mip has no HiGHS handoff: the time is
  building the CBC model).

Per tool: wall seconds (``--repeats`` runs after a small warm-up, median and min-max), peak memory
as the rise of the process' resident set during the first run (Linux ``VmHWM`` after resetting it
through ``/proc/self/clear_refs``; this sees the C/C++ allocations of HiGHS and CBC, which
``tracemalloc`` cannot) and, in a separate untimed run, the ``tracemalloc`` peak (Python objects
and numpy buffers only). Every tool's rows/columns/nonzeros are checked against the floor outside the
timed region, and the floor's whole model (matrix, bounds, costs, integrality) is compared with the
DSL's once per size. LP and MPS writing is timed on a built model: DSL ``treeopt_dsl.io``, linopy
``to_file``, pyomo ``model.write`` and, as a reference, HiGHS' own ``writeModel`` on the floor model.

Usage::

    .venv/bin/python benchmarks/compile_speed.py [--sizes 1000 5000 20000] [--p 50] [--quick]
        [--skip pyomo] [--max-pyomo 5000] [--repeats 3] [--no-write] [--json out.json]
    .venv/bin/python benchmarks/compile_speed.py --profile 5000   # cProfile of the DSL pipeline
    .venv/bin/python benchmarks/compile_speed.py --sizes 5000 --skip linopy mip pyomo --steady-heap

``--steady-heap`` runs the workers with glibc told to keep freed memory (``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_``): after the first run no build touches a fresh page. Without it, which
tool pays for page faults (zeroing fresh pages, about a quarter of the HiGHS hand-off at N = 5000)
depends on what the allocator happened to return to the kernel before, and the DSL/floor ratio at
N = 5000 swings between 0.6 and 1.7 from one fresh interpreter to the next on identical work.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

TOOLS = ("floor", "dsl", "linopy", "mip", "pyomo")
HANDOFF = {
    "floor": "numpy CSR -> Highs.passModel",
    "dsl": "build + compile -> HighsBackend.load",
    "linopy": "linopy.Model -> to_highspy(set_names=False)",
    "mip": "python-mip rows -> CBC (no HiGHS handoff)",
    "pyomo": "ConcreteModel -> appsi Highs.set_instance",
}
M_BIG, EPS = 100.0, 1e-5
#: V0 = {0, +-inf} (seed 000 line 503): tangents a*m + c; the zero-slope piece (+inf) is xi >= 0
SLOPES = np.array([-1.0, -0.5])
INTERCEPTS = np.array([0.0, float(np.log(2.0))])
NODES, LAST = 3, 2  # depth 2: root 0, last layer {1, 2}
LEVEL_OF = np.array([0, 1, 1])  # level index of each node
REACH = np.array([[1, 1], [1, 0], [0, 1]], dtype=bool)  # T_d(t): last-layer descendants of t


# ---------------------------------------------------------------------------------------------- data
def make_data(n: int, p: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Raw features with feature-wise shifts and scales, and 0/1 labels from a noisy hyperplane."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * rng.uniform(0.5, 3.0, p) + rng.uniform(-2.0, 2.0, p)
    y = ((X - X.mean(0)) @ rng.standard_normal(p) + rng.standard_normal(n) > 0).astype(np.int64)
    return X, y


def standardize(X: np.ndarray) -> np.ndarray:
    """Zero mean, unit variance per feature (the same arithmetic as ``treeopt_dsl.Scaler``)."""
    shift, scale = X.mean(0), X.std(0)
    return (X - shift) / np.where(scale > 1e-12, scale, 1.0)


def signed_labels(y: np.ndarray) -> np.ndarray:
    return np.where(y == y.max(), 1.0, -1.0)


# ---------------------------------------------------------------------------------------------- floor
@dataclass
class FloorModel:
    """The hand-written standard form, in the DSL's row and column order (rows: route, forward_left,
    forward_right, loss by level then (sample, node, piece), l1 split; columns: w, b, z, xi, w_pos, w_neg)."""

    n: int
    p: int
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    cost: np.ndarray
    integrality: np.ndarray

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.indptr.size - 1, self.cost.size, int(self.indptr[-1])


def floor_model(X: np.ndarray, y: np.ndarray) -> FloorModel:
    """OLCT depth 2 as CSR arrays by index arithmetic (no IR, no per-row Python).

    Each row family is one dense ``(rows, terms)`` block of column indices and values, written
    column-slice by column-slice; the loss rows of one sample and level (2 pieces x the level's nodes)
    form one line of an ``(n, terms)`` block, so the flattened blocks are already in CSR order.
    """
    Xs = standardize(X)
    ys = signed_labels(y)
    n, p = Xs.shape
    i32 = np.int32
    w0, b0 = 0, NODES * p
    z0 = b0 + NODES
    xi0 = z0 + LAST * n
    wp0 = xi0 + 2 * n
    wn0 = wp0 + NODES * p
    n_cols = wn0 + NODES * p
    two_i = 2 * np.arange(n, dtype=i32)
    wcols = np.arange(p, dtype=i32)
    idx_parts: list[np.ndarray] = []
    val_parts: list[np.ndarray] = []
    len_parts: list[np.ndarray] = []
    lo_parts: list[np.ndarray] = []
    up_parts: list[np.ndarray] = []

    def block(idx: np.ndarray, val: np.ndarray, lengths: Sequence[int], lo: Sequence[float],
              up: Sequence[float]) -> None:
        """Rows of ``len(lengths)`` per line of ``idx``/``val``, with their bounds."""
        reps = idx.shape[0]
        idx_parts.append(idx.ravel())
        val_parts.append(val.ravel())
        len_parts.append(np.tile(np.asarray(lengths, dtype=i32), reps))
        lo_parts.append(np.tile(np.asarray(lo, dtype=float), reps))
        up_parts.append(np.tile(np.asarray(up, dtype=float), reps))

    # (3.6a) z[i, 0] + z[i, 1] = 1
    block((z0 + two_i)[:, None] + np.arange(2, dtype=i32), np.ones((n, 2)), [2], [1.0], [1.0])
    # (3.7a) v[i, 0] + M z[i, left] <= M ;  (3.7b) v[i, 0] - M z[i, right] >= eps - M
    for side, sign, lo, up in ((0, 1.0, -np.inf, M_BIG), (1, -1.0, EPS - M_BIG, np.inf)):
        idx = np.empty((n, p + 2), dtype=i32)
        val = np.empty((n, p + 2))
        idx[:, :p] = w0 + wcols
        idx[:, p] = b0
        idx[:, p + 1] = z0 + two_i + side
        val[:, :p] = Xs
        val[:, p] = 1.0
        val[:, p + 1] = sign * M_BIG
        block(idx, val, [p + 2], [lo], [up])
    # (3.15) a_k y_i (w_t.x_i + b_t) + M reach[i, t] - xi[i, h(t)] <= M - c_k, t in T, k in V0 \ {+inf};
    # one block per level (rows by sample, node, piece), as the DSL orders them
    for level in range(LEVEL_OF.max() + 1):
        nodes = np.flatnonzero(LEVEL_OF == level)
        lengths = [p + 2 + int(REACH[t].sum()) for t in nodes for _ in SLOPES]
        idx = np.empty((n, sum(lengths)), dtype=i32)
        val = np.empty((n, sum(lengths)))
        at, ups = 0, []
        for t in nodes:
            reach = np.flatnonzero(REACH[t]).astype(i32)
            for a, c in zip(SLOPES, INTERCEPTS, strict=True):
                ay = a * ys
                idx[:, at:at + p] = w0 + t * p + wcols
                np.multiply(Xs, ay[:, None], out=val[:, at:at + p])
                idx[:, at + p] = b0 + t
                val[:, at + p] = ay
                idx[:, at + p + 1:at + p + 1 + reach.size] = (z0 + two_i)[:, None] + reach
                val[:, at + p + 1:at + p + 1 + reach.size] = M_BIG
                idx[:, at + p + 1 + reach.size] = xi0 + two_i + level
                val[:, at + p + 1 + reach.size] = -1.0
                at += p + 2 + reach.size
                ups.append(M_BIG - c)
        block(idx, val, lengths, [-np.inf] * len(ups), ups)
    # (3.16a) w - w_pos + w_neg = 0
    k = np.arange(NODES * p, dtype=i32)
    block(np.stack([w0 + k, wp0 + k, wn0 + k], axis=1), np.tile([1.0, -1.0, 1.0], (NODES * p, 1)), [3], [0.0], [0.0])

    row_len = np.concatenate(len_parts)
    indptr = np.zeros(row_len.size + 1, dtype=i32)
    np.cumsum(row_len, out=indptr[1:])
    col_lower = np.zeros(n_cols)
    col_lower[:z0] = -np.inf  # w, b free (3.16b), (3.17d)
    col_upper = np.full(n_cols, np.inf)
    col_upper[z0:xi0] = 1.0
    integrality = np.zeros(n_cols, dtype=i32)
    integrality[z0:xi0] = 1
    cost = np.zeros(n_cols)
    cost[xi0:] = 1.0  # C = 1 on xi, weight 1 on w_pos + w_neg
    return FloorModel(n, p, indptr, np.concatenate(idx_parts), np.concatenate(val_parts),
                      np.concatenate(lo_parts), np.concatenate(up_parts), col_lower, col_upper, cost, integrality)


def floor_to_highs(fm: FloorModel) -> Any:
    """``Highs.passModel`` with the flat CSR arrays (row-wise, minimize)."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    inf = h.inf
    n_rows, n_cols, nnz = fm.shape
    status = h.passModel(n_cols, n_rows, nnz, 2, 1, 0.0, fm.cost, np.clip(fm.col_lower, -inf, inf),
                         np.clip(fm.col_upper, -inf, inf), np.clip(fm.row_lower, -inf, inf),
                         np.clip(fm.row_upper, -inf, inf), fm.indptr[:-1], fm.indices, fm.data, fm.integrality)
    if status == highspy.HighsStatus.kError:
        raise RuntimeError("HiGHS rejected the floor model")
    return h


def check_floor_equals_dsl(X: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Assert that the floor and the DSL build the same model: rows/columns/nonzeros, and beyond
    that the same CSR arrays entry by entry, bounds, costs and integrality."""
    fm = floor_model(X, y)
    sf = dsl_standard_form(X, y)
    n_rows, n_cols, nnz = fm.shape
    assert (n_rows, n_cols, nnz) == (sf.n_rows, sf.n_cols, sf.nnz), (
        f"floor rows/cols/nnz {(n_rows, n_cols, nnz)} != DSL {(sf.n_rows, sf.n_cols, sf.nnz)}")
    assert np.array_equal(fm.indptr, sf.A.indptr), "floor and DSL rows have different lengths"
    assert np.array_equal(fm.indices, sf.A.indices), "floor and DSL rows reference different columns"
    err = float(np.max(np.abs(fm.data - sf.A.data))) if nnz else 0.0
    assert err <= 1e-12, f"floor and DSL coefficients differ by {err:g}"
    for name, a, b in (("row_lower", fm.row_lower, sf.row_lower), ("row_upper", fm.row_upper, sf.row_upper),
                       ("col_lower", fm.col_lower, sf.col_lower), ("col_upper", fm.col_upper, sf.col_upper),
                       ("cost", fm.cost, sf.c)):
        assert np.array_equal(a, b) or np.allclose(a, b, rtol=0, atol=1e-12), f"{name} differs"
    assert np.array_equal(fm.integrality, sf.integrality.astype(np.int32)), "integrality differs"
    assert sf.c0 == 0.0 and not sf.is_quadratic
    return {"rows": n_rows, "cols": n_cols, "nnz": nnz, "max_coef_diff": err}


# ---------------------------------------------------------------------------------------------- dsl
def dsl_standard_form(X: np.ndarray, y: np.ndarray) -> Any:
    from treeopt_dsl.data import Dataset
    from treeopt_dsl.formulations import get_formulation

    return get_formulation("olct", depth=2, big_m=M_BIG, eps=EPS, tangents="V0", split_columns=False).build(
        Dataset.from_arrays(X, y)).compile()


def dsl_pipeline(X: np.ndarray, y: np.ndarray) -> tuple[Any, dict[str, float]]:
    """Data -> Dataset -> Built -> StandardForm -> Highs; returns ((sf, highs), split seconds)."""
    from treeopt_dsl.backends.highs import HighsBackend
    from treeopt_dsl.data import Dataset
    from treeopt_dsl.formulations import get_formulation

    t0 = time.perf_counter()
    built = get_formulation("olct", depth=2, big_m=M_BIG, eps=EPS, tangents="V0", split_columns=False).build(
        Dataset.from_arrays(X, y))
    t1 = time.perf_counter()
    sf = built.compile()
    t2 = time.perf_counter()
    h = HighsBackend.load(sf)
    t3 = time.perf_counter()
    return (sf, h), {"build": t1 - t0, "compile": t2 - t1, "pass": t3 - t2}


# ---------------------------------------------------------------------------------------------- linopy
def linopy_model(X: np.ndarray, y: np.ndarray) -> Any:
    """OLCT depth 2 in linopy: labeled variables, one constraint family per equation and node."""
    import linopy
    import pandas as pd
    import xarray as xr

    Xs = standardize(X)
    n, p = Xs.shape
    sample, feature = pd.RangeIndex(n, name="sample"), pd.RangeIndex(p, name="feature")
    node, last = pd.RangeIndex(NODES, name="node"), pd.Index([1, 2], name="last")
    level, piece = pd.RangeIndex(2, name="level"), pd.RangeIndex(SLOPES.size, name="piece")
    m = linopy.Model()
    w = m.add_variables(coords=[node, feature], name="w")
    b = m.add_variables(coords=[node], name="b")
    z = m.add_variables(coords=[sample, last], name="z", binary=True)
    xi = m.add_variables(lower=0, coords=[sample, level], name="xi")
    wp = m.add_variables(lower=0, coords=[node, feature], name="w_pos")
    wn = m.add_variables(lower=0, coords=[node, feature], name="w_neg")
    v = (w * xr.DataArray(Xs, coords=[sample, feature])).sum("feature") + b  # (node, sample)
    ys = xr.DataArray(signed_labels(y), coords=[sample])
    a = xr.DataArray(SLOPES, coords=[piece])
    c = xr.DataArray(INTERCEPTS, coords=[piece])
    m.add_constraints(z.sum("last") == 1, name="route")  # (3.6a)
    m.add_constraints(v.sel(node=0) + M_BIG * z.sel(last=1) <= M_BIG, name="forward_left")  # (3.7a)
    m.add_constraints(v.sel(node=0) - M_BIG * z.sel(last=2) >= EPS - M_BIG, name="forward_right")  # (3.7b)
    reach = {0: z.sum("last"), 1: z.sel(last=1), 2: z.sel(last=2)}
    for t in range(NODES):  # (3.15)
        lhs = xi.sel(level=int(LEVEL_OF[t])) - (v.sel(node=t) * ys) * a - M_BIG * reach[t]
        m.add_constraints(lhs >= c - M_BIG, name=f"loss_{t}")
    m.add_constraints(w - wp + wn == 0, name="l1_split")  # (3.16a)
    m.add_objective(xi.sum() + wp.sum() + wn.sum())
    return m


def linopy_pipeline(X: np.ndarray, y: np.ndarray) -> Any:
    m = linopy_model(X, y)
    return m, m.to_highspy(set_names=False)


# ---------------------------------------------------------------------------------------------- pyomo
def pyomo_model(X: np.ndarray, y: np.ndarray) -> Any:
    """OLCT depth 2 in pyomo: indexed Var / Constraint with rules, written as a modeller would."""
    import pyomo.environ as pyo

    Xs = standardize(X).tolist()
    ys = signed_labels(y).tolist()
    n, p = len(Xs), len(Xs[0])
    m = pyo.ConcreteModel()
    m.I, m.J, m.T = pyo.RangeSet(0, n - 1), pyo.RangeSet(0, p - 1), pyo.RangeSet(0, NODES - 1)
    m.L, m.H, m.K = pyo.Set(initialize=[1, 2]), pyo.RangeSet(0, 1), pyo.RangeSet(0, SLOPES.size - 1)
    m.w = pyo.Var(m.T, m.J)
    m.b = pyo.Var(m.T)
    m.z = pyo.Var(m.I, m.L, within=pyo.Binary)
    m.xi = pyo.Var(m.I, m.H, within=pyo.NonNegativeReals)
    m.w_pos = pyo.Var(m.T, m.J, within=pyo.NonNegativeReals)
    m.w_neg = pyo.Var(m.T, m.J, within=pyo.NonNegativeReals)
    reach = {0: (1, 2), 1: (1,), 2: (2,)}
    a, c = SLOPES.tolist(), INTERCEPTS.tolist()

    def v(m: Any, i: int, t: int) -> Any:
        row = Xs[i]
        return sum(row[j] * m.w[t, j] for j in m.J) + m.b[t]

    m.route = pyo.Constraint(m.I, rule=lambda m, i: sum(m.z[i, s] for s in m.L) == 1)
    m.forward_left = pyo.Constraint(m.I, rule=lambda m, i: v(m, i, 0) <= M_BIG * (1 - m.z[i, 1]))
    m.forward_right = pyo.Constraint(m.I, rule=lambda m, i: v(m, i, 0) >= EPS - M_BIG * (1 - m.z[i, 2]))

    def loss(m: Any, i: int, t: int, k: int) -> Any:
        off = 1 - sum(m.z[i, s] for s in reach[t])
        return m.xi[i, int(LEVEL_OF[t])] >= a[k] * ys[i] * v(m, i, t) + c[k] - M_BIG * off

    m.loss = pyo.Constraint(m.I, m.T, m.K, rule=loss)
    m.l1_split = pyo.Constraint(m.T, m.J, rule=lambda m, t, j: m.w[t, j] == m.w_pos[t, j] - m.w_neg[t, j])
    m.obj = pyo.Objective(expr=sum(m.xi[i, h] for i in m.I for h in m.H)
                          + sum(m.w_pos[t, j] + m.w_neg[t, j] for t in m.T for j in m.J))
    return m


def pyomo_pipeline(X: np.ndarray, y: np.ndarray) -> Any:
    from pyomo.contrib.appsi.solvers.highs import Highs

    m = pyomo_model(X, y)
    opt = Highs()
    opt.set_instance(m)  # builds the highspy model, does not solve
    return m, opt


# ---------------------------------------------------------------------------------------------- python-mip
def mip_pipeline(X: np.ndarray, y: np.ndarray) -> Any:
    """OLCT depth 2 in python-mip, rows with ``xsum`` into a CBC model."""
    import mip

    Xs = standardize(X).tolist()
    ys = signed_labels(y).tolist()
    n, p = len(Xs), len(Xs[0])
    a, c = SLOPES.tolist(), INTERCEPTS.tolist()
    m = mip.Model(solver_name=mip.CBC)
    m.verbose = 0
    w = [[m.add_var(lb=-mip.INF) for _ in range(p)] for _ in range(NODES)]
    b = [m.add_var(lb=-mip.INF) for _ in range(NODES)]
    z = [[m.add_var(var_type=mip.BINARY) for _ in range(LAST)] for _ in range(n)]
    xi = [[m.add_var(lb=0.0) for _ in range(2)] for _ in range(n)]
    wp = [[m.add_var(lb=0.0) for _ in range(p)] for _ in range(NODES)]
    wn = [[m.add_var(lb=0.0) for _ in range(p)] for _ in range(NODES)]
    reach = {0: (0, 1), 1: (0,), 2: (1,)}
    for i in range(n):
        m += z[i][0] + z[i][1] == 1  # (3.6a)
    for i in range(n):
        v0 = mip.xsum(Xs[i][j] * w[0][j] for j in range(p)) + b[0]
        m += v0 + M_BIG * z[i][0] <= M_BIG  # (3.7a)
        m += v0 - M_BIG * z[i][1] >= EPS - M_BIG  # (3.7b)
    for i in range(n):
        for t in range(NODES):
            v = mip.xsum(Xs[i][j] * w[t][j] for j in range(p)) + b[t]
            off = 1 - mip.xsum(z[i][s] for s in reach[t])
            for k in range(SLOPES.size):  # (3.15)
                m += xi[i][int(LEVEL_OF[t])] >= a[k] * ys[i] * v + c[k] - M_BIG * off
    for t in range(NODES):
        for j in range(p):
            m += w[t][j] == wp[t][j] - wn[t][j]  # (3.16a)
    m.objective = mip.minimize(mip.xsum(xi[i][h] for i in range(n) for h in range(2))
                               + mip.xsum(wp[t][j] + wn[t][j] for t in range(NODES) for j in range(p)))
    return m


# ---------------------------------------------------------------------------------------------- per tool
def _highs_shape(h: Any) -> tuple[int, int, int]:
    return int(h.getNumRow()), int(h.getNumCol()), int(h.getNumNz())


def run_once(tool: str, X: np.ndarray, y: np.ndarray) -> tuple[Any, dict[str, float]]:
    """Build ``tool``'s model from the raw data to its solver handoff; returns (handle, split times)."""
    if tool == "floor":
        t0 = time.perf_counter()
        fm = floor_model(X, y)
        t1 = time.perf_counter()
        h = floor_to_highs(fm)
        return (fm, h), {"build": t1 - t0, "pass": time.perf_counter() - t1}
    if tool == "dsl":
        return dsl_pipeline(X, y)
    if tool == "linopy":
        return linopy_pipeline(X, y), {}
    if tool == "pyomo":
        return pyomo_pipeline(X, y), {}
    if tool == "mip":
        return mip_pipeline(X, y), {}
    raise ValueError(f"unknown tool {tool!r}; choose from {TOOLS}")


def shape_of(tool: str, handle: Any) -> tuple[int, int, int]:
    """(rows, columns, nonzeros) of the model as the solver received it."""
    if tool in ("floor", "dsl", "linopy"):
        return _highs_shape(handle[1])
    if tool == "pyomo":
        return _highs_shape(handle[1]._solver_model)
    if tool == "mip":
        return int(handle.num_rows), int(handle.num_cols), int(handle.num_nz)
    raise ValueError(tool)


def writers(tool: str, handle: Any) -> dict[str, Callable[[Path], None]]:
    """LP and MPS writers of ``tool`` given its built model."""
    if tool == "dsl":
        try:
            from treeopt_dsl import io as dsl_io
        except ImportError:
            return {}
        sf = handle[0]
        out = {}
        for fmt in ("lp", "mps"):
            fn = getattr(dsl_io, f"write_{fmt}", None)
            if fn is not None:
                out[fmt] = (lambda f: lambda path: f(sf, path))(fn)
        return out
    if tool == "floor":  # HiGHS' own writer: a reference, not part of the floor's build
        h = handle[1]
        return {fmt: (lambda path: h.writeModel(str(path))) for fmt in ("lp", "mps")}
    if tool == "linopy":
        m = handle[0]
        return {fmt: (lambda path: m.to_file(path)) for fmt in ("lp", "mps")}
    if tool == "pyomo":
        m = handle[0]
        return {fmt: (lambda path: m.write(str(path))) for fmt in ("lp", "mps")}
    return {}  # python-mip: not asked for (and CBC gzips its MPS output, so it would not compare)


def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak_rss() -> bool:
    """Reset the kernel's resident-set high-water mark (Linux >= 4.0) so VmHWM covers one run."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def measure_tool(tool: str, n: int, p: int, repeats: int, seed: int = 0, write: bool = True,
                 trace: bool = True, warmup: int = 50) -> dict[str, Any]:
    """Warm up, then time ``repeats`` builds; memory on the first; tracemalloc; shape; writers."""
    X, y = make_data(n, p, seed)
    if warmup:  # lazy imports and first-call caches are not part of a build
        run_once(tool, *make_data(min(warmup, n), p, seed + 1))
    gc.collect()
    res: dict[str, Any] = {"tool": tool, "n": n, "p": p, "times": [], "split": {},
                           "steady_heap": steady_heap_active()}
    handle = None
    for r in range(repeats):
        handle = None
        gc.collect()
        if r == 0:
            reset = _reset_peak_rss()
            rss0 = _status_kb("VmRSS")
        t0 = time.perf_counter()
        handle, split = run_once(tool, X, y)
        res["times"].append(time.perf_counter() - t0)
        for k, v in split.items():
            res["split"].setdefault(k, []).append(v)
        if r == 0:
            peak = _status_kb("VmHWM")
            if reset and peak is not None and rss0 is not None:
                res["rss_peak_mb"] = (peak - rss0) / 1024
                res["rss_note"] = "VmHWM - VmRSS before (clear_refs reset)"
            else:
                res["rss_peak_mb"] = None
                res["rss_note"] = "unavailable (no /proc/self/clear_refs)"
    res["shape"] = shape_of(tool, handle)
    if tool == "floor":
        res["check"] = check_floor_equals_dsl(X, y)
    if write:
        res["write"], res["file_mb"] = {}, {}
        with tempfile.TemporaryDirectory(prefix="treeopt-bench-") as tmp:
            for fmt, fn in writers(tool, handle).items():
                path = Path(tmp) / f"model.{fmt}"
                ts = []
                for _ in range(repeats):
                    if path.exists():
                        path.unlink()
                    t0 = time.perf_counter()
                    fn(path)
                    ts.append(time.perf_counter() - t0)
                res["write"][fmt] = ts
                res["file_mb"][fmt] = path.stat().st_size / 2**20 if path.exists() else None
    handle = None
    gc.collect()
    if trace:
        tracemalloc.start()
        handle = run_once(tool, X, y)[0]
        res["trace_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        handle = None
    return res


STEADY_HEAP_ENV = {"MALLOC_MMAP_THRESHOLD_": str(1 << 34), "MALLOC_TRIM_THRESHOLD_": str(1 << 36),
                   "MALLOC_TOP_PAD_": "0"}
"""glibc tunables that keep freed memory in the process (no fresh pages, no page faults, after a warm-up)."""


def steady_heap_active() -> bool:
    """Whether this interpreter started with :data:`STEADY_HEAP_ENV` (glibc reads it at start only)."""
    return all(os.environ.get(k) == v for k, v in STEADY_HEAP_ENV.items())


def worker_env(steady_heap: bool) -> dict[str, str]:
    """The environment of a worker interpreter: this one's, plus :data:`STEADY_HEAP_ENV` on request."""
    return {**os.environ, **(STEADY_HEAP_ENV if steady_heap else {})}


def run_worker(tool: str, n: int, p: int, repeats: int, write: bool, trace: bool, in_process: bool,
               steady_heap: bool = False) -> dict:
    if in_process:
        return measure_tool(tool, n, p, repeats, write=write, trace=trace)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", tool, "--sizes", str(n), "--p", str(p),
           "--repeats", str(repeats)] + ([] if write else ["--no-write"]) + ([] if trace else ["--no-tracemalloc"])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=worker_env(steady_heap))
    if proc.returncode != 0:
        return {"tool": tool, "n": n, "error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------- report
def _med(xs: Sequence[float]) -> float:
    return float(statistics.median(xs))


def _fmt_t(xs: Sequence[float] | None) -> str:
    if not xs:
        return "n/a"
    if len(xs) == 1:
        return f"{xs[0]:.3g}"
    return f"{_med(xs):.3g} [{min(xs):.3g}-{max(xs):.3g}]"


def _fmt_mb(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0f}"


def table(results: list[dict], skipped: dict[str, str]) -> str:
    """Markdown tables for one size: build to solver handoff, then LP/MPS writing."""
    ok = {r["tool"]: r for r in results if "error" not in r}
    floor = _med(ok["floor"]["times"]) if "floor" in ok else None
    dsl = _med(ok["dsl"]["times"]) if "dsl" in ok else None
    ref = ok.get("floor", {}).get("shape")
    n = results[0]["n"]
    lines = [f"N = {n}, p = {results[0].get('p', '?')}" + (f": {ref[0]} rows, {ref[1]} columns, {ref[2]} nonzeros"
                                                             if ref else ""), "",
             "| tool | handoff | seconds, median [min-max] | x floor | tool / DSL | RSS peak MB | tracemalloc MB "
             "| rows/cols/nnz = floor |",
             "|---|---|---|---|---|---|---|---|"]
    for tool in TOOLS:
        if tool in skipped:
            lines.append(f"| {tool} | {HANDOFF[tool]} | skipped ({skipped[tool]}) | | | | | |")
            continue
        r = next((r for r in results if r["tool"] == tool), None)
        if r is None:
            continue
        if "error" in r:
            lines.append(f"| {tool} | {HANDOFF[tool]} | error: {r['error'][:80]} | | | | | |")
            continue
        t = _med(r["times"])
        same = "yes" if ref is not None and tuple(r["shape"]) == tuple(ref) else f"no {tuple(r['shape'])}"
        lines.append(f"| {tool} | {HANDOFF[tool]} | {_fmt_t(r['times'])} | {t / floor:.2f} | "
                     f"{t / dsl:.2f} | {_fmt_mb(r.get('rss_peak_mb'))} | {_fmt_mb(r.get('trace_peak_mb'))} | {same} |"
                     if floor and dsl else f"| {tool} | {HANDOFF[tool]} | {_fmt_t(r['times'])} | | | | | {same} |")
    for tool in ("dsl", "floor"):
        if tool in ok and ok[tool]["split"]:
            parts = ", ".join(f"{k} {_fmt_t(v)}" for k, v in ok[tool]["split"].items())
            lines.append(f"\n{tool} split (s): {parts}")
    if any(r.get("write") for r in ok.values()):
        dw = ok.get("dsl", {}).get("write", {})
        lines += ["", "| writer | LP s, median [min-max] | LP MB | LP tool / DSL | MPS s, median [min-max] | MPS MB "
                  "| MPS tool / DSL |", "|---|---|---|---|---|---|---|"]
        label = {"floor": "HiGHS writeModel (floor model)", "dsl": "DSL treeopt_dsl.io", "linopy": "linopy to_file",
                 "pyomo": "pyomo model.write"}
        for tool in TOOLS:
            if tool not in ok:
                continue
            wr, mb = ok[tool].get("write", {}), ok[tool].get("file_mb", {})
            if not wr:
                if tool == "dsl":
                    lines.append("| DSL treeopt_dsl.io | n/a (write_lp/write_mps not importable) | | | | | |")
                continue
            cells = []
            for fmt in ("lp", "mps"):
                ratio = f"{_med(wr[fmt]) / _med(dw[fmt]):.2f}" if fmt in wr and dw.get(fmt) else ""
                size = mb.get(fmt)
                cells += [_fmt_t(wr.get(fmt)), "n/a" if size is None else f"{size:.3g}", ratio]
            lines.append(f"| {label[tool]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def machine() -> str:
    model = "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), "?")
    except OSError:
        pass
    vers = []
    for mod in ("numpy", "scipy", "xarray", "highspy", "linopy", "pyomo", "mip"):
        try:
            from importlib.metadata import version

            vers.append(f"{mod} {version(mod)}")
        except Exception:  # a missing package is just not listed
            pass
    return (f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}; " + ", ".join(vers))


def profile_dsl(n: int, p: int, top: int = 30) -> None:
    """cProfile of the DSL pipeline (build + compile + load) at size ``n``, after a warm-up."""
    import cProfile
    import pstats

    X, y = make_data(n, p)
    dsl_pipeline(*make_data(50, p, 1))
    prof = cProfile.Profile()
    prof.enable()
    _, split = dsl_pipeline(X, y)
    prof.disable()
    print(f"DSL split at N={n}, p={p} (under cProfile): " + ", ".join(f"{k} {v:.3f}s" for k, v in split.items()))
    stats = pstats.Stats(prof).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def main(argv: Sequence[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--p", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="only the first size (1000 unless --sizes is given)")
    ap.add_argument("--skip", nargs="*", default=[], choices=TOOLS)
    ap.add_argument("--max-pyomo", type=int, default=5000, help="largest N for pyomo (minutes at N=20000)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-write", action="store_true", help="skip LP/MPS writing")
    ap.add_argument("--no-tracemalloc", action="store_true", help="skip the tracemalloc run")
    ap.add_argument("--in-process", action="store_true", help="no fresh interpreter per tool (for tests)")
    ap.add_argument("--steady-heap", action="store_true",
                    help="workers keep freed memory (glibc MALLOC_* tunables): no page-fault noise")
    ap.add_argument("--json", type=Path, help="write the raw measurements here")
    ap.add_argument("--profile", type=int, metavar="N", help="profile the DSL pipeline at N samples and exit")
    ap.add_argument("--worker", choices=TOOLS, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.json is not None and (args.json.is_dir() or not args.json.parent.is_dir()
                                  or not os.access(args.json.parent, os.W_OK)):  # not after the whole benchmark
        ap.error(f"--json {args.json}: cannot be written (give a file name in an existing, writable directory)")
    if args.profile:
        profile_dsl(args.profile, args.p)
        return []
    if args.worker:
        res = measure_tool(args.worker, args.sizes[0], args.p, args.repeats, write=not args.no_write,
                           trace=not args.no_tracemalloc)
        print(json.dumps(res))
        return [res]
    sizes = args.sizes[:1] if args.quick else args.sizes
    print(f"# OLCT depth 2 compile speed ({machine()})")
    if args.steady_heap and args.in_process:
        ap.error("--steady-heap needs fresh interpreters (drop --in-process)")
    tunables = " ".join(f"{k}={v}" for k, v in STEADY_HEAP_ENV.items())
    heap = f"; steady heap ({tunables})" if args.steady_heap else ""
    print(f"repeats {args.repeats}, each tool in {'this process' if args.in_process else 'a fresh interpreter'}{heap}; "
          "RSS peak = rise of the resident set (VmHWM) during the first timed run, tracemalloc = Python/numpy "
          "heap peak in a separate untimed run (C/C++ allocations of HiGHS and CBC are invisible to it)\n")
    allres: list[dict] = []
    for n in sizes:
        skipped = {t: "--skip" for t in args.skip}
        if "pyomo" not in skipped and n > args.max_pyomo:
            skipped["pyomo"] = f"N > --max-pyomo {args.max_pyomo}"
        results = []
        for tool in TOOLS:
            if tool in skipped:
                continue
            r = run_worker(tool, n, args.p, args.repeats, not args.no_write, not args.no_tracemalloc, args.in_process,
                           args.steady_heap)
            results.append(r)
        print(table(results, skipped), end="\n\n", flush=True)
        if skipped:
            print("skipped: " + ", ".join(f"{t} ({why})" for t, why in skipped.items()) + "\n")
        allres += results
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "steady_heap": args.steady_heap, "results": allres},
                                        indent=1))
    return allres


if __name__ == "__main__":
    main()
