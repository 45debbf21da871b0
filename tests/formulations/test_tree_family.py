"""The tree family of thesis §3.2 (seed 000 lines 353-560) against independent references.

* OCT (0-1 loss (3.9), axis-aligned by (3.14) with budget 1) equals an exhaustive enumeration of
  axis-aligned trees;
* the loss plug-ins swap in one line and every objective equals the paper's objective evaluated
  with numpy on the decoded tree;
* hinge trees ((3.10) at the last level, (3.12)-(3.13) at every level, per-level ``C_h``) and MARGOT
  (squared l2, an MIQP solved by SCIP) equal an enumeration of the root's partition, each piece an
  LP (``scipy.optimize.linprog``) or a QP (gurobipy) written here from the equations;
* l0 by indicators (3.14), hard (HFS) and soft (SFS, lines 531-535), equals an enumeration of supports;
* axis-aligned trees (Remark 2) print their thresholds in original units;
* per-row derived big-M gives the constant-M optimum.

Warm starts are tested in test_warmstart.py, refinement (Remark 1) in test_refine.py.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from treeopt_dsl import Dataset, Formulation, Topology
from treeopt_dsl import blocks as B
from treeopt_dsl.data import Scaler
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.tree import decode_tree

EPS = 1e-5  # the paper's eps (seed 000 line 610) and every spec's default

# loss pieces max_k (a_k m + c_k) of the margin m = y (w.x + b), written from the paper
HINGE = (np.array([0.0, -1.0]), np.array([0.0, 1.0]))  # max(0, 1 - m), (3.10)


def tangent_pieces(points: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Tangents of f(m) = log(1 + exp(-m)) at ``points`` plus the asymptotes 0 (+inf) and -m (-inf), (3.15)."""
    v = np.asarray(points, dtype=float)
    f = np.log1p(np.exp(-v))
    df = -np.exp(-v) / (1.0 + np.exp(-v))
    return np.concatenate([df, [0.0, -1.0]]), np.concatenate([f - df * v, [0.0, 0.0]])


V0 = tangent_pieces((0.0,))
V2 = tangent_pieces((0.0, 1.9, -1.9, 0.89, -0.89, 3.55, -3.55))  # Sato et al. (seed 000 lines 503-505)


def scaled(X: np.ndarray) -> np.ndarray:
    """The thesis' standardization (line 610), computed here: zero mean, unit variance."""
    return (X - X.mean(0)) / X.std(0)


def scaled_data(X: np.ndarray, y: np.ndarray) -> Dataset:
    """A dataset standardized the way the specs do it, for compositions built by hand."""
    d = Dataset.from_arrays(X, y)
    s = Scaler("standard").fit(d.X)
    out = s.apply(d)
    out.meta["scaler"] = s
    return out


def tree_formulation(loss: B.Block, *, regularizer: B.Block | None = None, w_bound: float | None = None,
                     b_bound: float | str | None = None, M: float | str = 100.0,
                     sparsity: tuple[B.Block, ...] = ()) -> Formulation:
    """The generalized framework (3.12) as a composition: split, sparsity, routing, forwarding, loss, regularizer."""
    return Formulation("custom", [B.ObliqueSplit(w_bound=w_bound, b_bound=b_bound), *sparsity, B.Routing(),
                                  B.BigMForwarding(M=M, eps=EPS), loss, regularizer or B.L1()],
                       decoder=decode_tree, decisions=("w", "b"))


# ------------------------------------------------------------------------------------------ references
def route(Xs: np.ndarray, W: np.ndarray, b: np.ndarray, depth: int) -> np.ndarray:
    """Branch node on each level of each sample's path (sample x level); right iff v > eps/2."""
    v = Xs @ W.T + b
    path = np.zeros((Xs.shape[0], depth), dtype=int)
    for h in range(1, depth):
        t = path[:, h - 1]
        path[:, h] = 2 * t + 1 + (v[np.arange(t.size), t] > EPS / 2)
    return path


def tree_objective(Xs: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, pieces: tuple | None,
                   C: float | tuple[float, ...], levels: str, l1: float = 1.0) -> float:
    """(3.12) on a given tree: sum_h C_h sum_i loss(y_i v_{i, t_h(i)}) + l1 * sum_t ||w_t||_1.

    ``pieces=None`` is the 0-1 loss (3.9) at the last level, a sample counted +1 iff v > eps/2.
    """
    depth = int(np.log2(W.shape[0] + 1))
    path = route(Xs, W, b, depth)
    v = Xs @ W.T + b
    Cs = np.broadcast_to(np.atleast_1d(np.asarray(C, dtype=float)), (depth,))
    total = l1 * np.abs(W).sum()
    for h in (range(1, depth + 1) if levels == "all" else [depth]):
        at = v[np.arange(y.size), path[:, h - 1]]
        if pieces is None:
            loss = (np.where(at > EPS / 2, 1, -1) != y).astype(float)
        else:
            a, c = pieces
            loss = np.max(np.multiply.outer(y * at, a) + c, axis=1)
        total += Cs[h - 1] * loss.sum()
    return float(total)


class FixedRouting:
    """The tree MIP of §3.2 with the routing ``z`` fixed, written from the equations: a convex program.

    Columns ``[w (T*p), b (T), xi (levels*n), u (T*p)]`` with ``u >= |w|`` for the l1 term.
    Rows: (3.7a)-(3.7b) at every node of ``T \\ T_d``; the loss rows
    ``xi[i, h] >= a_k y_i v_it + c_k - M (1 - sum_{s in T_d(t)} z_is)`` at every node of a modelled
    level ((3.10), (3.13), (3.15); a zero-slope piece is the plain bound ``xi >= c_k``, (3.10b)).
    Objective ``sum_h C_h sum_i xi[i, h] + sum_t l1_t 1'u_t`` (+ ``||w||_2^2`` for MARGOT, solved as a QP).
    """

    def __init__(self, Xs: np.ndarray, y: np.ndarray, depth: int, last: np.ndarray, pieces: tuple,
                 C: float | tuple[float, ...] = 1.0, levels: str = "all", M: float = 100.0,
                 l1: float | np.ndarray = 1.0, w_bound: float | None = None, b_bound: float | None = None,
                 support: np.ndarray | None = None) -> None:
        n, p = Xs.shape
        T = 2**depth - 1
        self.n, self.p, self.T = n, p, T
        lv = list(range(1, depth + 1)) if levels == "all" else [depth]
        leaf = 2 ** (depth - 1) - 1 + np.asarray(last)  # last-layer node of each sample
        path = np.empty((n, depth), dtype=int)
        node = leaf.copy()
        for h in range(depth - 1, -1, -1):
            path[:, h] = node
            node = (node - 1) // 2
        self.iw, self.ib, self.ix = 0, T * p, T * p + T
        self.iu = self.ix + len(lv) * n
        nv = self.iu + T * p
        level = np.floor(np.log2(np.arange(T) + 1)).astype(int) + 1

        def v_rows(t: int, s: np.ndarray) -> np.ndarray:  # rows s_i * (w_t.x_i + b_t)
            r = np.zeros((n, nv))
            r[:, t * p:(t + 1) * p] = s[:, None] * Xs
            r[:, self.ib + t] = s
            return r

        A, rhs = [], []
        for t in np.flatnonzero(level < depth):
            h = level[t]
            on = path[:, h - 1] == t
            left = on & (path[:, h] == 2 * t + 1)
            right = on & (path[:, h] == 2 * t + 2)
            A += [v_rows(t, np.ones(n)), v_rows(t, -np.ones(n))]
            rhs += [M * (1 - left), -EPS + M * (1 - right)]  # (3.7a), (3.7b)
        a, c = pieces
        for k, h in enumerate(lv):
            for t in np.flatnonzero(level == h):
                reach = path[:, h - 1] == t
                for ak, ck in zip(a, c, strict=False):
                    r = v_rows(t, ak * y.astype(float))
                    r[np.arange(n), self.ix + k * n + np.arange(n)] = -1.0
                    A.append(r)
                    rhs.append(np.full(n, -ck) + (0.0 if ak == 0 else M * (1 - reach)))
        eye = np.zeros((T * p, nv))
        eye[np.arange(T * p), np.arange(T * p)] = 1.0
        eye[np.arange(T * p), self.iu + np.arange(T * p)] = -1.0
        A.append(eye)  # w - u <= 0
        eye2 = eye.copy()
        eye2[:, :T * p] *= -1.0
        A.append(eye2)  # -w - u <= 0
        rhs += [np.zeros(T * p), np.zeros(T * p)]
        self.A, self.rhs = np.vstack(A), np.concatenate(rhs)
        self.c = np.zeros(nv)
        Cs = np.broadcast_to(np.atleast_1d(np.asarray(C, dtype=float)), (depth,))
        for k, h in enumerate(lv):
            self.c[self.ix + k * n:self.ix + (k + 1) * n] = Cs[h - 1]
        self.c[self.iu:] = np.repeat(np.broadcast_to(np.asarray(l1, dtype=float), (T,)), p)
        W = np.inf if w_bound is None else w_bound
        wb = np.full((T, p), W)
        if support is not None:
            wb[~np.asarray(support, dtype=bool)] = 0.0
        bb = np.inf if b_bound is None else b_bound
        self.lo = np.concatenate([-wb.ravel(), np.full(T, -bb), np.full(nv - self.ib - T, -np.inf)])
        self.up = np.concatenate([wb.ravel(), np.full(T, bb), np.full(nv - self.ib - T, np.inf)])
        self.lo[self.iu:] = 0.0

    def lp(self) -> float:
        """Optimal value by ``scipy.optimize.linprog`` (inf when this routing is not realizable)."""
        bounds = list(zip(self.lo, self.up, strict=True))
        res = linprog(self.c, A_ub=self.A, b_ub=self.rhs, bounds=bounds, method="highs")
        return float(res.fun) if res.status == 0 else np.inf

    def qp(self, env: object) -> float:
        """Optimal value with ``+ ||w||_2^2`` by a hand-written gurobipy QP (inf when infeasible)."""
        import gurobipy as gp

        m = gp.Model(env=env)
        x = m.addMVar(self.c.size, lb=self.lo, ub=self.up)
        m.addConstr(self.A @ x <= self.rhs)
        w = x[:self.T * self.p]
        m.setObjective(self.c @ x + w @ w)
        m.optimize()
        return float(m.ObjVal) if m.Status == gp.GRB.OPTIMAL else np.inf


def enumerate_root(Xs: np.ndarray, y: np.ndarray, depth: int, solve: str = "lp", env: object = None,
                   **kw: object) -> float:
    """Depth <= 2: the last layer is the root's two children, so a routing is the root's partition:
    the optimum is the best of the 2^n fixed-routing programs."""
    n = y.size
    if depth == 1:
        routings = [np.zeros(n, dtype=int)]
    else:
        assert depth == 2
        routings = [np.array(r) for r in itertools.product((0, 1), repeat=n)]
    best = np.inf
    for r in routings:
        prog = FixedRouting(Xs, y, depth, r, **kw)
        best = min(best, prog.lp() if solve == "lp" else prog.qp(env))
    return best


@pytest.fixture(scope="module")
def grb_env():
    import gurobipy as gp

    env = gp.Env(empty=True)
    env.setParam("OutputFlag", 0)
    env.start()
    yield env
    env.dispose()


# ------------------------------------------------------------------------------------------ 1. OCT
def oct_brute_force(X: np.ndarray, y: np.ndarray, depth: int, C: float = 1.0, alpha: float = 0.0) -> float:
    """Best ``C * errors + alpha * (splits)`` over axis-aligned trees of the given depth.

    Every node either splits (``x_j`` against a threshold between consecutive distinct values, either
    direction at the last level; cost ``alpha``, one feature) or is constant (w = 0: all samples to one
    child, or one predicted class at the last level; cost 0).
    """
    if y.size == 0:
        return 0.0
    n_pos, n_neg = int((y == 1).sum()), int((y == -1).sum())
    if depth == 1:
        best = C * min(n_pos, n_neg)
        for j in range(X.shape[1]):
            vals = np.unique(X[:, j])
            for theta in (vals[:-1] + vals[1:]) / 2:
                right = X[:, j] > theta
                err = int(np.sum(right != (y == 1)))
                best = min(best, alpha + C * min(err, y.size - err))
        return best
    best = oct_brute_force(X, y, depth - 1, C, alpha)  # constant root: every sample to one child
    for j in range(X.shape[1]):
        vals = np.unique(X[:, j])
        for theta in (vals[:-1] + vals[1:]) / 2:
            r = X[:, j] > theta
            best = min(best, alpha + oct_brute_force(X[~r], y[~r], depth - 1, C, alpha)
                       + oct_brute_force(X[r], y[r], depth - 1, C, alpha))
    return best


@st.composite
def grid_data(draw, n_min: int = 8, n_max: int = 12):
    """Features on the integer grid 0..4 (distinct values 1 apart: far more than eps after scaling)."""
    n = draw(st.integers(n_min, n_max))
    X = np.array(draw(st.lists(st.lists(st.integers(0, 4), min_size=2, max_size=2), min_size=n, max_size=n)),
                 dtype=float)
    y = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    if np.unique(y).size < 2:
        y[0] = -y[0]
    return X, y


@settings(max_examples=25, deadline=None)
@given(data=grid_data(), C=st.sampled_from([1.0, 2.5]), alpha=st.sampled_from([0.0, 0.6, 1.5]))
def test_oct_depth1_equals_brute_force(data, C, alpha):
    """Objective C sum_i xi_i + alpha sum_t ||w_t||_0 (oct.py docstring), (3.9) + (3.14) with budget 1."""
    X, y = data
    spec = get_formulation("oct", depth=1, C=C, alpha=alpha)
    res = spec.solve(Dataset.from_arrays(X, y), solver="highs", gap=0.0, time_limit=20)
    assert res.status.value == "optimal" and res.certificate.ok
    assert res.objective == pytest.approx(oct_brute_force(X, y, 1, C, alpha), abs=1e-6)
    # the decoded tree's own cost on the raw data is the optimum
    errors = int(np.sum(res.model.predict(X) != y))
    assert C * errors + alpha * int(res.model.n_features_used().sum()) == pytest.approx(res.objective, abs=1e-6)
    assert res.model.is_axis_aligned()
    if alpha == 0.0:  # an axis-aligned tree is an OCT-H tree (w = ±e_j is in the unit l1 ball)
        octh = get_formulation("octh", depth=1, C=C).solve(Dataset.from_arrays(X, y), gap=0.0, time_limit=20)
        assert octh.objective <= res.objective + 1e-6


@settings(max_examples=6, deadline=None)
@given(data=grid_data(8, 10), alpha=st.sampled_from([0.0, 0.6]))
def test_oct_depth2_equals_brute_force(data, alpha):
    X, y = data
    res = get_formulation("oct", depth=2, alpha=alpha).solve(Dataset.from_arrays(X, y), solver="highs", gap=0.0,
                                                             time_limit=20)
    assert res.status.value == "optimal" and res.certificate.ok
    assert res.objective == pytest.approx(oct_brute_force(X, y, 2, 1.0, alpha), abs=1e-6)
    errors = int(np.sum(res.model.predict(X) != y))
    assert errors + alpha * int(res.model.n_features_used().sum()) == pytest.approx(res.objective, abs=1e-6)


# ------------------------------------------------------------------------------------------ 2. plug-ins
@pytest.mark.parametrize("loss,pieces,levels", [
    (B.HingeLoss(C=2.0, levels="last"), HINGE, "last"),
    (B.HingeLoss(C=2.0, levels="all"), HINGE, "all"),
    (B.TangentLogisticLoss("V2", C=2.0), V2, "all"),
    (B.ZeroOneLoss(C=2.0, M="derived"), None, "last"),
], ids=["hinge-last", "hinge-all", "logistic-V2", "zero-one"])
def test_one_line_swaps_the_loss(loss, pieces, levels):
    """Same composition, one block swapped: each solves, certifies, and its objective is (3.12) with that
    loss evaluated on the decoded tree by numpy."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(14, 2))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.4 * rng.normal(size=14) > 0.1, 1, -1)
    data = scaled_data(X, y)
    f = tree_formulation(loss, w_bound=1.0, b_bound="auto", M="derived")
    res = f.build(data, Topology(2)).solve(gap=0.0, time_limit=20)
    assert res.status.value == "optimal" and res.certificate.ok
    tree = res.model
    assert res.objective == pytest.approx(
        tree_objective(scaled(X), data.y, tree.W, tree.b, pieces, 2.0, levels), rel=1e-6, abs=1e-6)


def test_a_composition_without_a_loss_names_the_missing_block():
    with pytest.raises(FormulationError, match="ObliqueSplit"):
        Formulation("broken", [B.Routing(), B.BigMForwarding(), B.HingeLoss()])


# ------------------------------------------------------------------------------------------ 3. hinge
@pytest.mark.parametrize("C", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("levels", ["last", "all"])
def test_hinge_depth1_is_the_l1_svm_lp(C, levels):
    """Depth 1: (3.10) (= (3.13) with one level) + l1 (3.16) is min C sum_i max(0, 1 - y_i(w.x_i + b)) + ||w||_1,
    written here as an LP over (w+, w-, b+, b-, xi) and solved by linprog."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 3))
    y = np.where(X[:, 0] - X[:, 2] + 0.5 * rng.normal(size=20) > 0, 1, -1)
    Xs = scaled(X)
    n, p = Xs.shape
    c = np.concatenate([np.ones(2 * p), [0.0, 0.0], np.full(n, C)])
    A = np.hstack([-(y[:, None] * Xs), y[:, None] * Xs, -y[:, None], y[:, None], -np.eye(n)])
    lp = linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=[(0, None)] * (2 * p + 2 + n), method="highs")
    out = tree_formulation(B.HingeLoss(C=C, levels=levels)).build(scaled_data(X, y), Topology(1)).solve(gap=0.0)
    assert out.status.value == "optimal" and out.certificate.ok
    assert out.objective == pytest.approx(lp.fun, rel=1e-7, abs=1e-9)


def _hinge_instance(seed: int, n: int = 8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] * X[:, 1] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    if np.unique(y).size < 2:
        y[0] = -y[0]
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
def test_hinge_every_level_with_per_level_C_equals_enumeration(seed):
    """(3.12)-(3.13) with C_h = (0.5, 2) and l1: the MILP optimum is the best over all 2^n root partitions of
    the LP with that routing fixed ((3.7) with M = 100, eps = 1e-5)."""
    X, y = _hinge_instance(seed)
    C = (0.5, 2.0)
    res = tree_formulation(B.HingeLoss(C=C, levels="all")).build(scaled_data(X, y), Topology(2)).solve(gap=0.0)
    assert res.status.value == "optimal" and res.certificate.ok
    ref = enumerate_root(scaled(X), y, 2, pieces=HINGE, C=C, levels="all")
    assert res.objective == pytest.approx(ref, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("seed", [0, 1])
def test_hinge_last_level_with_last_layer_regularizer_equals_enumeration(seed):
    """(3.10) + (3.11): hinge slacks only at T_d and lambda sum_{t in T_d} ||w_t||_1 (the root is not
    regularized: an l1 weight per node, [0, 1, 1])."""
    X, y = _hinge_instance(seed)
    C = 2.0
    per_node = xr.DataArray([0.0, 1.0, 1.0], dims="node")
    f = tree_formulation(B.HingeLoss(C=C, levels="last"), regularizer=B.L1(weight=per_node))
    res = f.build(scaled_data(X, y), Topology(2)).solve(gap=0.0)
    assert res.status.value == "optimal" and res.certificate.ok
    ref = enumerate_root(scaled(X), y, 2, pieces=HINGE, C=C, levels="last", l1=np.array([0.0, 1.0, 1.0]))
    assert res.objective == pytest.approx(ref, rel=1e-6, abs=1e-7)


def test_hinge_every_level_with_zero_root_weight_is_the_last_level_model():
    """C_1 = 0 switches off the root's slack: (3.13) with C = (0, c) is (3.10) with C = c; with C_1 > 0 the
    extra non-negative term can only raise the optimum."""
    X, y = _hinge_instance(3, n=12)
    data = scaled_data(X, y)

    def solve(C: object, levels: str) -> float:
        r = tree_formulation(B.HingeLoss(C=C, levels=levels)).build(data, Topology(2)).solve(gap=0.0)
        assert r.status.value == "optimal" and r.certificate.ok
        return r.objective

    last = solve(1.5, "last")
    assert solve((0.0, 1.5), "all") == pytest.approx(last, rel=1e-6, abs=1e-7)
    assert solve((0.7, 1.5), "all") >= last - 1e-7


# ------------------------------------------------------------------------------------------ 4. MARGOT
@pytest.mark.solver("scip")
@pytest.mark.solver("gurobi")
@pytest.mark.parametrize("C", [0.5, 2.0])
def test_margot_depth1_equals_the_svm_qp(C, grb_env):
    """Depth-1 MARGOT (3.12)-(3.13), Omega = ||.||_2^2 without the 1/2 (margot.py): the soft-margin SVM
    min C sum_i zeta_i + ||w||^2. SCIP (through the library) against a gurobipy QP written here."""
    import gurobipy as gp

    rng = np.random.default_rng(7)
    X = rng.normal(size=(25, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.6 * rng.normal(size=25) > 0, 1, -1)
    Xs = scaled(X)
    m = gp.Model(env=grb_env)
    w = m.addMVar(3, lb=-gp.GRB.INFINITY)
    b = m.addMVar(1, lb=-gp.GRB.INFINITY)
    z = m.addMVar(25, lb=0.0)
    m.addConstr(z + (y[:, None] * Xs) @ w + y[:, None] @ b >= 1)
    m.setObjective(C * z.sum() + w @ w)
    m.optimize()
    res = get_formulation("margot", depth=1, C=C).solve(Dataset.from_arrays(X, y), solver="scip", gap=0.0,
                                                        time_limit=20)
    assert res.status.value == "optimal" and res.certificate.ok
    assert res.objective == pytest.approx(m.ObjVal, rel=1e-5)
    assert res.model.W[0] == pytest.approx(w.X, abs=1e-3)  # strictly convex in w: the same hyperplane


@pytest.mark.solver("scip")
@pytest.mark.solver("gurobi")
@pytest.mark.parametrize("seed", [0, 2])
def test_margot_depth2_equals_enumeration(seed, grb_env):
    """Depth-2 MARGOT by SCIP = the best over the 2^n root partitions of the QP with that routing
    ((3.7), (3.13) with M = 100, C = 1, squared l2 on every node)."""
    X, y = _hinge_instance(seed)
    res = get_formulation("margot", depth=2).solve(Dataset.from_arrays(X, y), solver="scip", gap=0.0,
                                                   time_limit=20)
    assert res.status.value == "optimal" and res.certificate.ok
    ref = enumerate_root(scaled(X), y, 2, solve="qp", env=grb_env, pieces=HINGE, C=1.0, l1=0.0)
    assert res.objective == pytest.approx(ref, rel=1e-5)


def _feature_data(seed: int, n: int = 20, p: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] + 0.8 * X[:, 1] - 0.5 * X[:, 2] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _bounds(Xs: np.ndarray, w_bound: float = 10.0) -> dict[str, float]:
    """The specs' bounds: |w| <= w_bound, |b| <= w_bound * max_i ||x_i||_1 + 1 (b_bound='auto')."""
    return {"w_bound": w_bound, "b_bound": w_bound * np.abs(Xs).sum(1).max() + 1.0}


@pytest.mark.solver("scip")
@pytest.mark.solver("gurobi")
@pytest.mark.parametrize("budget", [1, 2])
def test_margot_hfs_depth1_equals_best_support(budget, grb_env):
    """HFS (3.14) with ||w||_0 <= budget: the optimum over supports S, |S| = budget, of the SVM QP on S."""
    X, y = _feature_data(1)
    Xs = scaled(X)
    res = get_formulation("margot_hfs", depth=1, budget=budget).solve(Dataset.from_arrays(X, y), solver="scip",
                                                                      gap=0.0, time_limit=20)
    assert res.status.value == "optimal" and res.certificate.ok
    assert res.model.n_features_used().max() <= budget
    ref = min(FixedRouting(Xs, y, 1, np.zeros(y.size, dtype=int), HINGE, l1=0.0, support=np.isin(range(4), S)[None],
                           **_bounds(Xs)).qp(grb_env) for S in itertools.combinations(range(4), budget))
    assert res.objective == pytest.approx(ref, rel=1e-5)


@pytest.mark.solver("scip")
@pytest.mark.parametrize("budget", [1, 2])
def test_margot_hfs_depth2_respects_the_budget_at_every_node(budget):
    X, y = _feature_data(2, n=12)
    d = Dataset.from_arrays(X, y)
    res = get_formulation("margot_hfs", depth=2, budget=budget).solve(d, solver="scip", gap=0.0, time_limit=20)
    assert res.status.has_solution and res.certificate.ok
    assert np.all(res.model.n_features_used() <= budget)
    assert np.all(np.count_nonzero(res.values["w"].values, axis=1) <= budget)  # the raw solution too
    free = get_formulation("margot", depth=2, w_bound=10.0, b_bound="auto").solve(d, solver="scip", gap=0.0,
                                                                                  time_limit=20)
    if res.status.value == "optimal":
        assert res.objective >= free.objective - 1e-6  # a restriction of the same model


@pytest.mark.solver("scip")
@pytest.mark.solver("gurobi")
@pytest.mark.parametrize("alpha,floor", [(0.4, 0), (0.4, 2), (3.0, 0)])
def test_margot_sfs_depth1_equals_best_penalized_support(alpha, floor, grb_env):
    """SFS (lines 531-535): Omega(w) + C sum xi + alpha max(||w||_0, B), against min over every support S of
    QP_S + alpha max(|S|, B)."""
    X, y = _feature_data(3, p=3)
    Xs = scaled(X)
    res = get_formulation("margot_sfs", depth=1, alpha=alpha, budget=floor).solve(
        Dataset.from_arrays(X, y), solver="scip", gap=0.0, time_limit=20)
    assert res.status.value == "optimal" and res.certificate.ok
    ref = min(FixedRouting(Xs, y, 1, np.zeros(y.size, dtype=int), HINGE, l1=0.0, support=np.isin(range(3), S)[None],
                           **_bounds(Xs)).qp(grb_env) + alpha * max(len(S), floor)
              for k in range(4) for S in itertools.combinations(range(3), k))
    assert res.objective == pytest.approx(ref, rel=1e-5)
    used = int(res.model.n_features_used()[0])
    assert res.certificate.terms["l0"] == pytest.approx(alpha * max(used, floor), abs=1e-6)


@pytest.mark.solver("scip")
def test_margot_sfs_penalty_reduces_the_number_of_features():
    """For exact optima, a larger alpha never selects more features (add the two optimality inequalities);
    a prohibitive alpha selects none."""
    X, y = _feature_data(4, n=16)
    d = Dataset.from_arrays(X, y)
    counts = []
    for alpha in (0.01, 0.5, 2.0, 1e3):
        res = get_formulation("margot_sfs", depth=1, alpha=alpha).solve(d, solver="scip", gap=0.0, time_limit=20)
        assert res.status.value == "optimal" and res.certificate.ok
        counts.append(int(res.model.n_features_used().sum()))
    assert counts == sorted(counts, reverse=True)
    assert counts[0] > counts[-1] == 0


# ------------------------------------------------------------------------------------------ 5. l0 on OLCT
def _olct_l0(**l0: object) -> Formulation:
    """OLCT (3.17) plus (3.14): bounded w (the indicators need it), constant M = 100 as in the paper."""
    return tree_formulation(B.TangentLogisticLoss("V0"), w_bound=10.0, b_bound="auto",
                            sparsity=(B.L0(**l0),))


@pytest.mark.parametrize("budget", [1, 2])
def test_olct_hfs_depth1_equals_best_support(budget):
    X, y = _feature_data(5, p=3)
    Xs = scaled(X)
    res = _olct_l0(budget=budget).build(scaled_data(X, y), Topology(1)).solve(gap=0.0, time_limit=20)
    assert res.status.value == "optimal" and res.certificate.ok
    assert res.model.n_features_used().max() <= budget
    ref = min(FixedRouting(Xs, y, 1, np.zeros(y.size, dtype=int), V0, support=np.isin(range(3), S)[None],
                           **_bounds(Xs)).lp() for S in itertools.combinations(range(3), budget))
    assert res.objective == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("alpha,floor", [(0.3, 0), (0.3, 1), (2.0, 0)])
def test_olct_sfs_depth1_equals_best_penalized_support(alpha, floor):
    """SFS term alpha_t max(||w_t||_0, B_t) of lines 531-535, against an enumeration of supports."""
    X, y = _feature_data(6, p=3)
    Xs = scaled(X)
    res = _olct_l0(penalty=alpha, penalty_floor=floor).build(scaled_data(X, y), Topology(1)).solve(gap=0.0)
    assert res.status.value == "optimal" and res.certificate.ok
    ref = min(FixedRouting(Xs, y, 1, np.zeros(y.size, dtype=int), V0, support=np.isin(range(3), S)[None],
                           **_bounds(Xs)).lp() + alpha * max(len(S), floor)
              for k in range(4) for S in itertools.combinations(range(3), k))
    assert res.objective == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("budget", [1, 2])
def test_olct_hfs_depth2_budget_holds_in_the_decoded_tree(budget):
    X, y = _feature_data(7, n=16)
    res = _olct_l0(budget=budget).build(scaled_data(X, y), Topology(2)).solve(gap=0.0, time_limit=20)
    assert res.status.has_solution and res.certificate.ok
    assert np.all(res.model.n_features_used() <= budget)
    assert np.all(np.count_nonzero(res.values["w"].values, axis=1) <= budget)  # the raw solution too


def test_olct_sfs_depth2_term_is_alpha_max_l0_floor():
    alpha, floor = 0.5, 1
    X, y = _feature_data(8, n=14)
    res = _olct_l0(penalty=alpha, penalty_floor=floor).build(scaled_data(X, y), Topology(2)).solve(
        gap=0.0, time_limit=20)
    assert res.status.has_solution and res.certificate.ok
    nnz = res.model.n_features_used()
    assert res.certificate.terms["l0"] == pytest.approx(alpha * np.maximum(nnz, floor).sum(), abs=1e-6)
    # and the rest of the objective is (3.17a) with V0 on the decoded tree
    rest = tree_objective(scaled(X), y, res.model.W, res.model.b, V0, 1.0, "all")
    assert res.objective == pytest.approx(rest + alpha * np.maximum(nnz, floor).sum(), rel=1e-6)


# ------------------------------------------------------------------------------------------ 6. axis-aligned
RULE = re.compile(r"node (\d+) \[level (\d+)\]: (?:go right|predict \+1) if (\w+) ([<>]=?) (\S+)$")
OPS = {">": np.greater, "<": np.less, ">=": np.greater_equal, "<=": np.less_equal}


def _axis_instance(seed: int, n: int = 20) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(loc=[50.0, -3.0, 7.0], scale=[10.0, 0.5, 2.0], size=(n, 3))
    y = np.where((X[:, 0] > 52.0) ^ (X[:, 1] > -3.2), 1, -1)
    flip = rng.random(n) < 0.1
    return X, np.where(flip, -y, y)


@pytest.mark.parametrize("name", ["oct", "olct_univariate"])
@pytest.mark.parametrize("seed", [0, 1])
def test_axis_aligned_trees_use_one_feature_per_node(name, seed):
    """Remark 2: ||w_t||_0 <= 1 at every branch node ((3.14) with budget 1), in the solver's values and the
    decoded tree; a node may be constant (w_t = 0) but the tree is not trivial on this instance."""
    X, y = _axis_instance(seed)
    res = get_formulation(name, depth=2).solve(Dataset.from_arrays(X, y), solver="highs", time_limit=20)
    assert res.status.has_solution and res.certificate.ok
    assert np.all(np.count_nonzero(np.abs(res.values["w"].values) > 1e-9, axis=1) <= 1)
    assert res.model.is_axis_aligned()
    assert res.model.n_features_used().sum() >= 1
    oblique = get_formulation("olct" if name == "olct_univariate" else "octh", depth=2, w_bound=10.0,
                              b_bound="auto", big_m="derived").solve(Dataset.from_arrays(X, y), time_limit=20)
    if res.status.value == oblique.status.value == "optimal" and name == "oct":
        assert oblique.objective <= res.objective + 1e-6  # the oblique model relaxes the budget


def _printed_rules(tree) -> list[tuple[int, int, str, float]]:
    out = []
    for line in tree.text().splitlines():
        m = RULE.search(line)
        if m:
            out.append((int(m[1]), tree.feature_names.index(m[3]), m[4], float(m[5])))
    return out


@pytest.mark.parametrize("name", ["oct", "olct_univariate"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_text_prints_each_threshold_in_original_units(name, seed):
    """text() prints "x_j > theta" / "x_j < theta" in raw units: theta is the exact cut
    mean_j + sd_j (eps/2 - b_t)/w_jt computed here from the raw data (to the 6 printed digits), the sign of
    w gives the direction, and the rule sends every raw sample not within printing precision of theta the
    way the model routes (inner nodes) or classifies (last layer) it."""
    X, y = _axis_instance(seed)
    names = ["age", "dose", "weight"]
    res = get_formulation(name, depth=2).solve(Dataset.from_arrays(X, y, feature_names=names), time_limit=20)
    tree = res.model
    rules = _printed_rules(tree)
    assert len(rules) == int(np.sum(tree.n_features_used() == 1)) >= 1
    mu, sd = X.mean(0), X.std(0)
    v = tree.scores(X)
    for t, j, op, theta in rules:
        w, b = tree.W[t, j], tree.b[t]
        exact = mu[j] + sd[j] * (EPS / 2 - b) / w
        assert theta == pytest.approx(exact, rel=1e-5)
        assert op == (">" if w > 0 else "<")
        assert X[:, j].min() - 3 * sd[j] < theta < X[:, j].max() + 3 * sd[j]  # raw units, not standardized
        clear = np.abs(X[:, j] - theta) > 1e-4 * max(abs(theta), 1.0)
        rule = OPS[op](X[:, j], theta)
        assert np.array_equal(rule[clear], (v[:, t] > EPS / 2)[clear])


def test_text_rules_reproduce_the_model_on_every_training_sample():
    """The printed rules are the model: applied to the raw training data they route every sample as the
    model does at inner nodes and classify it as predict() does at the last layer (Remark 2's glass box)."""
    mismatches = []
    for name, seed in itertools.product(["oct", "olct_univariate"], [0, 1]):
        rng = np.random.default_rng(seed)
        X = np.round(rng.normal(loc=[50.0, -3.0], scale=[10.0, 0.5], size=(25, 2)), 1)  # recorded to 0.1
        y = np.where(X[:, 0] + 20 * X[:, 1] > 3 * rng.normal(size=25), 1, -1)
        tree = get_formulation(name, depth=2).solve(Dataset.from_arrays(X, y, feature_names=["age", "dose"]),
                                                    time_limit=20).model
        v = tree.scores(X)
        last = tree.topology.last[tree.apply(X)]
        pred = tree.predict(X) == 1
        for t, j, op, theta in _printed_rules(tree):
            rule = OPS[op](X[:, j], theta)
            model = np.where(last == t, pred, rule) if t in tree.topology.last else v[:, t] > tree.threshold
            if not np.array_equal(rule, model):
                mismatches.append((name, seed, t, theta))
    assert mismatches == [], mismatches


def test_text_leaf_rule_matches_predict_at_the_boundary():
    """Minimal reproducer: a depth-1 logistic tree whose hyperplane passes through a training sample."""
    from treeopt_dsl.models.tree import TreeModel

    X = np.array([[1.0], [2.0], [3.0]])
    sc = Scaler("none").fit(X)
    tree = TreeModel(Topology(1), np.array([[1.0]]), np.array([-2.0]), ("x",), (-1, 1), sc, threshold=EPS / 2,
                     leaf_threshold=0.0)
    (_t, j, op, theta), = _printed_rules(tree)
    rule = OPS[op](X[:, j], theta)
    assert np.array_equal(rule, tree.predict(X) == 1)


@pytest.mark.parametrize("b", [[0.3, -1.4, 1.4], [-0.3, 1.4, -1.4], [EPS / 4, 0.0, -0.0]])
def test_text_says_what_a_constant_node_always_does(b):
    """A node without features is printed as its decision ("go left always", "predict -1 always"), the
    one predict() and the routing take on every sample, also at the thresholds' edges (v = eps/4 at an
    inner node goes left; v = 0 at a leaf predicts +1 with the logistic rule s(v) >= 0.5)."""
    from treeopt_dsl.models.tree import TreeModel

    X = np.random.default_rng(0).normal(size=(9, 2))
    tree = TreeModel(Topology(2), np.zeros((3, 2)), np.array(b), ("x0", "x1"), (-1, 1),
                     Scaler("none").fit(X), threshold=EPS / 2, leaf_threshold=0.0)
    lines = tree.text().splitlines()
    right = tree.scores(X)[0, 0] > tree.threshold
    assert f"node 0 [level 1]: go {'right' if right else 'left'} always" in lines[0]
    leaf = tree.topology.last[tree.apply(X)]
    for t, line in zip((1, 2), lines[1:3], strict=True):
        on = leaf == t
        said = re.search(r"predict ([+-]1) always", line)
        assert said is not None, line
        if on.any():
            assert np.all(tree.predict(X)[on] == int(said[1]))
        assert int(said[1]) == (1 if b[t] >= 0 else -1)


# ------------------------------------------------------------------------------------------ 7. big-M
def _bigm_instance(seed: int, n: int = 14) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return Dataset.from_arrays(X, np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, -1))


@pytest.mark.parametrize("name", ["olct", "octh"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_derived_big_m_gives_the_same_optimum_as_m100(name, seed):
    """With |w| <= 1 and b_bound='auto', |w.x_i + b| <= U_i < 100 for every feasible hyperplane, so M = 100 cuts
    nothing off and the per-row derived M (tighter) must give the same optimum (3.7), (3.9), (3.15)."""
    d = _bigm_instance(seed)
    kw = dict(depth=2, w_bound=1.0, b_bound="auto")
    derived = get_formulation(name, big_m="derived", **kw).build(d)
    const = get_formulation(name, big_m=100.0, **kw).build(d)
    U = derived.ctx["split_bound"].values
    assert U.max() < 100.0  # M = 100 is valid for this instance
    a = derived.solve(gap=0.0, time_limit=20)
    b = const.solve(gap=0.0, time_limit=20)
    assert a.status.value == b.status.value == "optimal"
    assert a.certificate.ok and b.certificate.ok
    assert a.objective == pytest.approx(b.objective, rel=1e-6, abs=1e-7)
    assert 0 < derived.ctx.numerics.max_big_m <= 100.0
    assert derived.ctx.numerics.max_big_m < const.ctx.numerics.max_big_m
    # the derived bound holds at both optima
    for r in (a, b):
        v = scaled(d.X) @ r.model.W.T + r.model.b
        assert np.all(np.abs(v) <= U + 1e-6)


def test_derived_big_m_without_bounds_is_refused():
    with pytest.raises(FormulationError, match="w_bound"):
        get_formulation("olct", depth=2, big_m="derived").build(_bigm_instance(0))


# ------------------------------------------------------------------------------------------ 8. split columns
@pytest.mark.parametrize("name", ["olct", "octh", "oct"])
@pytest.mark.parametrize("seed", [0, 1])
def test_split_columns_give_the_same_optimum_with_a_sparser_matrix(name, seed):
    """``split_columns=true`` adds ``v[i, t] = w_t.x_i + b_t`` as columns: the same model projected on
    ``(w, b, z, xi)``, so the same optimum (both proven, both certified), ``v`` equal to the optimum's
    hyperplanes, and fewer nonzeros (the forwarding and slack rows hold one entry for the split instead of
    ``p + 1``)."""
    d = _bigm_instance(seed, n=16)
    kw = dict(depth=2, w_bound=1.0, b_bound="auto", big_m="derived")
    plain = get_formulation(name, split_columns=False, **kw).build(d)
    cols = get_formulation(name, split_columns=True, **kw).build(d)
    a = plain.solve(gap=0.0, time_limit=30)
    b = cols.solve(gap=0.0, time_limit=30)
    assert a.status.value == b.status.value == "optimal"
    assert a.certificate.ok and b.certificate.ok
    assert b.objective == pytest.approx(a.objective, rel=1e-6, abs=1e-6)
    v = cols.ctx["split"].evaluate(b.x)
    np.testing.assert_allclose(v, scaled(d.X) @ b.model.W.T + b.model.b, atol=1e-6)
    assert cols.compile().nnz < plain.compile().nnz
    n, nodes = cols.ctx["split_bound"].shape
    assert cols.compile().n_rows == plain.compile().n_rows + n * nodes  # one row per sample and node


@pytest.mark.parametrize("start", ["cart", "greedy"])
def test_split_columns_complete_a_start_to_the_same_point(start):
    """A start given as ``(w, b)`` is completed with ``v`` from the hyperplanes: a feasible point of the model
    with columns, with the objective the plain model gives the same start."""
    d = _bigm_instance(3, n=20)
    kw = dict(depth=2, w_bound=10.0, b_bound="auto", big_m="derived")
    plain = get_formulation("olct", split_columns=False, **kw).build(d)
    cols = get_formulation("olct", split_columns=True, **kw).build(d)
    from treeopt_dsl.starts.resolver import start_point

    x_plain, x_cols = start_point(plain, start), start_point(cols, start)
    assert cols.model.max_violation(x_cols) <= 1e-6
    assert cols.model.objective_value(x_cols) == pytest.approx(plain.model.objective_value(x_plain), rel=1e-9)


def test_split_columns_with_a_flow_routing_is_refused():
    """FlowOCT and BendersOCT split on binary columns: there is no hyperplane value to make a column of."""
    with pytest.raises(FormulationError, match="split_columns applies to routing=bigm"):
        get_formulation("oct", routing="flow", split_columns=True).formulation()
    assert get_formulation("oct", routing="flow").formulation() is not None  # the default (False) still builds
