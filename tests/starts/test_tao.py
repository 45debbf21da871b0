"""TAO, Tree Alternating Optimization (treeopt_dsl/starts/tao.py; Carreira-Perpiñán & Tavallali, NeurIPS 2018).

TAO never increases the training error (each node accepts only a refit that does not increase its care-set
error, and the change of the tree's error equals the change of the care-set error); it improves CART; its
trees convert to TreeModels and to feasible starts of the MILP formulations.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from treeopt_dsl import Dataset
from treeopt_dsl.data import Scaler
from treeopt_dsl.datasets import load
from treeopt_dsl.errors import DataError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.tree import TreeModel
from treeopt_dsl.starts import from_sklearn, tao, tao_tree, training_error
from treeopt_dsl.starts.greedy import cart_tree
from treeopt_dsl.starts.resolver import start_point
from treeopt_dsl.topology import Topology


def _predict(X: np.ndarray, W: np.ndarray, b: np.ndarray, depth: int, eps: float, lt: float) -> np.ndarray:
    """The library rule, written out: route by ``v > eps/2``, classify by the leaf rule of TreeModel.predict."""
    topo = Topology(depth)
    V = X @ W.T + b
    last = topo.last[topo.route(V > eps / 2)]
    s = V[np.arange(X.shape[0]), last]
    return np.where(s > lt if lt > 0 else s >= 0, 1, -1)


def _standardized(name: str) -> tuple[np.ndarray, np.ndarray]:
    d = load(name)
    sd = d.X.std(0)
    return (d.X - d.X.mean(0)) / np.where(sd > 0, sd, 1.0), d.y


# --------------------------------------------------------------------------- the property
@st.composite
def problems(draw: st.DrawFn) -> dict:
    n = draw(st.integers(10, 60))
    p = draw(st.integers(1, 4))
    depth = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.normal(size=(n, p))
    if draw(st.booleans()):  # ties: few distinct values
        X = np.round(X)
    y = np.where(rng.random(n) < draw(st.floats(0.1, 0.9)), 1, -1)
    T = 2**depth - 1
    if draw(st.booleans()):  # one-hot (axis-aligned) rows, some constant
        W = np.zeros((T, p))
        W[np.arange(T), rng.integers(0, p, T)] = rng.choice([-1.0, 1.0], T) * (rng.random(T) < 0.8)
    else:
        W = rng.normal(size=(T, p))
    b = rng.normal(size=T)
    eps = draw(st.sampled_from([0.0, 1e-3]))
    lt = draw(st.sampled_from([None, 0.0]))
    if draw(st.booleans()):  # labels from the tree itself, a few flipped: a good start that refits must not spoil
        y = _predict(X, W, b, depth, eps, eps / 2 if lt is None else lt) * np.where(rng.random(n) < 0.1, -1, 1)
    weights = rng.integers(0, 4, n).astype(float) if draw(st.booleans()) else None
    return dict(X=X, y=y, W=W, b=b, depth=depth, sample_weight=weights, eps=eps, leaf_threshold=lt)


@pytest.mark.parametrize("oblique", [False, True], ids=["axis", "oblique"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pb=problems())
def test_tao_never_increases_the_training_error(pb: dict, oblique: bool) -> None:
    X, y, W0, b0, d = pb["X"], pb["y"], pb["W"], pb["b"], pb["depth"]
    kw = dict(eps=pb["eps"], leaf_threshold=pb["leaf_threshold"], sample_weight=pb["sample_weight"])
    W0c, b0c = W0.copy(), b0.copy()
    before = training_error(X, y, W0, b0, d, **kw)
    W, b, history = tao(X, y, W0, b0, d, oblique=oblique, max_iter=6, **kw)
    assert np.array_equal(W0, W0c) and np.array_equal(b0, b0c)  # inputs untouched
    assert 1 <= len(history) <= 6
    assert history[-1] <= before
    assert all(a >= c for a, c in zip([before, *history[:-1]], history, strict=True))  # non-increasing, pass after pass
    assert history[-1] == training_error(X, y, W, b, d, **kw)
    if not oblique:  # axis-aligned TAO changes a node only for a one-feature split or a constant
        changed = np.any(W != W0, axis=1) | (b != b0)
        assert np.all((np.abs(W[changed]) > 0).sum(1) <= 1)


@pytest.mark.parametrize("depth", [1, 2])
def test_axis_tao_keeps_a_better_oblique_split(depth: int) -> None:
    """A perfect oblique tree: no axis-aligned split does as well on any care set, so nothing changes."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    T = 2**depth - 1
    W0, b0 = np.tile([1.0, 1.0], (T, 1)), np.zeros(T)
    W, b, history = tao(X, y, W0, b0, depth)
    assert history == [0.0] and np.array_equal(W, W0) and np.array_equal(b, b0)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 40), p=st.integers(1, 3), seed=st.integers(0, 2**32 - 1), rounded=st.booleans())
def test_axis_search_is_exact_on_a_stump(n: int, p: int, seed: int, rounded: bool) -> None:
    """Depth 1: the root is a classifier whose care set is every sample, so one TAO refit is the best stump;
    compare with brute force over every feature, midpoint, orientation and the two constants."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X = np.round(X) if rounded else X
    y = np.where(rng.random(n) < 0.5, 1, -1)
    w8 = rng.integers(1, 4, n).astype(float)
    best = min(w8[y > 0].sum(), w8[y < 0].sum())
    for j in range(p):
        v = np.unique(X[:, j])
        for theta in (v[1:] + v[:-1]) / 2:
            right = X[:, j] > theta
            best = min(best, w8[right != (y > 0)].sum(), w8[right == (y > 0)].sum())
    hist = tao(X, y, np.zeros((1, p)), np.array([-1.0]), 1, sample_weight=w8)[2]
    assert hist[-1] == pytest.approx(best)


# --------------------------------------------------------------------------- from CART
def test_from_sklearn_predicts_as_sklearn() -> None:
    X, y = _standardized("breast-cancer")
    for depth, topo_depth, kw in [(2, 2, {}), (3, 3, {"min_samples_leaf": 40}), (2, 4, {})]:
        cl = DecisionTreeClassifier(max_depth=depth, random_state=0, **kw).fit(X, y)
        for eps, lt in [(0.0, 0.0), (1e-5, 5e-6), (1e-5, 0.0)]:
            W, b = from_sklearn(cl, topo_depth, X.shape[1], eps=eps, leaf_threshold=lt)
            assert np.array_equal(_predict(X, W, b, topo_depth, eps, lt), cl.predict(X))
    pure = DecisionTreeClassifier(max_depth=3).fit(X[:20], np.ones(20, dtype=int))  # one class, a single leaf
    W, b = from_sklearn(pure, 2, X.shape[1])
    assert np.all(_predict(X, W, b, 2, 0.0, 0.0) == 1)
    with pytest.raises(DataError, match="does not fit"):
        from_sklearn(DecisionTreeClassifier(max_depth=3).fit(X, y), 2, X.shape[1])


@pytest.mark.parametrize("depth", [2, 3])
@pytest.mark.parametrize("oblique", [False, True], ids=["axis", "oblique"])
def test_tao_improves_cart_on_breast_cancer(depth: int, oblique: bool) -> None:
    X, y = _standardized("breast-cancer")
    cl = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
    W, b = from_sklearn(cl, depth, X.shape[1])
    cart = float((cl.predict(X) != y).sum())
    W2, b2, history = tao(X, y, W, b, depth, oblique=oblique)
    assert history[-1] <= cart
    assert history[-1] == float((_predict(X, W2, b2, depth, 0.0, 0.0) != y).sum())
    if not oblique:
        assert history[-1] < cart  # 33 -> 24 at depth 2, 12 -> 11 at depth 3 (axis-aligned)


def test_tao_repairs_a_bad_cart_threshold_on_xor() -> None:
    """XOR of x0 > 0 and x1 > 0.3: the root's impurity gains are flat, and greedy CART (depth 2) cuts x0 at
    0.55 instead of 0 (51 of 200 wrong); TAO moves the cut and reaches 0 errors. TAO is local, though: a
    *decoy* feature that wins the greedy root (below) is not replaced, since after the leaf refits no root
    split reduces the care-set error -- it only never makes the tree worse."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = np.where((X[:, 0] > 0) ^ (X[:, 1] > 0.3), 1, -1)
    cl = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    cart = int((cl.predict(X) != y).sum())
    assert cart > 40 and cl.tree_.feature[0] == 0
    history = tao(X, y, *from_sklearn(cl, 2, 3), 2)[2]
    assert history[-1] == 0

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = np.where((X[:, 0] > 0) ^ (X[:, 1] > 0), 1, -1)
    X[:, 2] = np.where(rng.random(200) < 0.25, -1, 1) * y * np.abs(X[:, 2])  # sign(x2) = y for ~75%
    cl = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    assert cl.tree_.feature[0] == 2  # the greedy root takes the decoy
    history = tao(X, y, *from_sklearn(cl, 2, 3), 2)[2]
    assert history[-1] <= (cl.predict(X) != y).sum()


# --------------------------------------------------------------------------- TreeModel
@pytest.mark.parametrize("eps,lt", [(0.0, 0.0), (1e-5, 5e-6), (1e-5, 0.0)])
def test_tao_tree_returns_a_model_that_predicts_with_its_w_b(eps: float, lt: float) -> None:
    d = load("breast-cancer")
    scaler = Scaler("standard").fit(d.X, d.feature_names)
    Xs = scaler.transform(d.X)
    cl = DecisionTreeClassifier(max_depth=2, random_state=0).fit(Xs, d.y)
    W, b = from_sklearn(cl, 2, Xs.shape[1], eps=eps, leaf_threshold=lt)
    model = TreeModel(Topology(2), W, b, d.feature_names, d.classes, scaler, threshold=eps / 2, leaf_threshold=lt)
    raw_y = np.where(d.y > 0, d.classes[1], d.classes[0])
    for oblique in (False, True):
        new = tao_tree(model, d.X, raw_y, oblique=oblique)
        assert isinstance(new, TreeModel) and new is not model and np.array_equal(model.W, W)
        ours = _predict(Xs, new.W, new.b, 2, eps, lt)
        assert np.array_equal(new.predict(d.X), np.where(ours > 0, d.classes[1], d.classes[0]))
        assert (new.predict(d.X) != raw_y).sum() <= (model.predict(d.X) != raw_y).sum()
    with pytest.raises(DataError):
        tao_tree(model, d.X, np.full(d.y.size, "other"))


def test_bad_inputs() -> None:
    X = np.zeros((4, 2))
    with pytest.raises(DataError, match="-1, \\+1"):
        tao(X, np.array([0, 1, 0, 1]), np.zeros((1, 2)), np.zeros(1), 1)
    with pytest.raises(DataError, match="W must be"):
        tao(X, np.array([-1, 1, -1, 1]), np.zeros((3, 2)), np.zeros(3), 1)
    with pytest.raises(DataError, match="sample_weight"):
        tao(X, np.array([-1, 1, -1, 1]), np.zeros((1, 2)), np.zeros(1), 1, sample_weight=-np.ones(4))


# --------------------------------------------------------------------------- MILP starts
def _small_data() -> Dataset:
    d = load("breast-cancer")
    rng = np.random.default_rng(0)
    rows = rng.choice(d.X.shape[0], 120, replace=False)
    return Dataset.from_arrays(d.X[rows], d.y[rows])


@pytest.mark.parametrize("name,oblique", [("oct", False), ("olct", True)])
def test_tao_start_is_feasible_for_the_milps(name: str, oblique: bool) -> None:
    built = get_formulation(name, depth=2).build(_small_data())
    ctx = built.ctx
    X, y, eps = ctx.data.X, ctx.data.y, ctx.numerics.eps
    lt = float(ctx.roles["loss"].leaf_threshold(ctx))
    W0, b0 = cart_tree(built)
    W, b, history = tao(X, y, W0, b0, ctx.topo, oblique=oblique, eps=eps, leaf_threshold=lt)
    assert history[-1] <= training_error(X, y, W0, b0, ctx.topo, eps=eps, leaf_threshold=lt)
    if name == "oct":
        assert np.all((np.abs(W) > 0).sum(1) <= 1)  # oct: ||w_t||_0 <= 1
    x = start_point(built, {"w": W, "b": b})
    assert np.all(np.isfinite(x)) and built.model.max_violation(x) <= 1e-6
    if name == "oct":  # objective C * (misclassified) with C = 1, alpha = 0: TAO's own count
        assert built.compile().objective(x) == pytest.approx(history[-1])


def test_tao_is_a_warm_start_of_the_library() -> None:
    """``warm_start="tao"`` (TAO from CART) is accepted by the axis-aligned and the oblique formulations, and
    ``"auto"`` tries TAO from the best other start: its 0-1 error is never above that start's."""
    from treeopt_dsl.data import Dataset
    from treeopt_dsl.formulations import get_formulation
    from treeopt_dsl.result import Status
    from treeopt_dsl.starts.resolver import auto_start, start_point

    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 4))
    y = np.where((X[:, 0] > 0.3) ^ (X[:, 1] > -0.2), 1, -1)
    y[rng.random(120) < 0.1] *= -1
    data = Dataset.from_arrays(X, y)
    for name in ("oct", "olct"):
        built = get_formulation(name, depth=2).build(data)
        x = start_point(built, "tao")
        assert built.model.max_violation(x) <= 1e-6
        cart = float(built.compile().objective(start_point(built, "cart")))
        if name == "oct":  # the 0-1 objective: TAO never worse than its CART start
            assert float(built.compile().objective(x)) <= cart + 1e-9
    built = get_formulation("oct", depth=2, alpha=0.5).build(data)  # alpha: not proven by the DP start alone
    _, report = auto_start(built)
    others = [v for k, v in report["candidates"].items() if k != "tao" and isinstance(v, float)]
    if isinstance(report["candidates"].get("tao"), float):
        assert report["candidates"]["tao"] <= min(others) + 1e-9 or report["proven"]
    res = get_formulation("oct", depth=2).solve(data, warm_start="tao", time_limit=5, solver="highs")
    assert res.status.has_solution and res.start["chosen"] == "tao" and res.objective <= res.start["objective"]
    assert res.status is not Status.UNCERTIFIED


def test_tao_keeps_to_its_deadline_and_bounds_an_oblique_refit_by_rows() -> None:
    """The formulations' start runs TAO under the starts' share: past ``deadline`` no node is refitted (the tree
    comes back as it went in); ``fit_rows`` fits each oblique node on a stratified sample of its care set but
    judges it on all of it, so the training error still never increases, and a cap above the care sets changes
    nothing."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 5))
    y = np.where(X[:, 0] - 0.7 * X[:, 1] + 0.3 * rng.normal(size=400) > 0, 1, -1)
    W0, b0 = cart_tree(get_formulation("olct", depth=2).build(Dataset.from_arrays(X, y)))
    W0, b0 = W0 + 0.05 * rng.normal(size=W0.shape), b0  # a worse oblique start for TAO to improve
    W, b, hist = tao(X, y, W0, b0, 2, oblique=True, deadline=0.0)
    np.testing.assert_array_equal(W, W0)
    np.testing.assert_array_equal(b, b0)
    start_error = training_error(X, y, W0, b0, 2)
    W, b, hist = tao(X, y, W0, b0, 2, oblique=True, fit_rows=60, seed=0)
    assert training_error(X, y, W, b, 2) <= start_error and hist == sorted(hist, reverse=True)
    full = tao(X, y, W0, b0, 2, oblique=True, seed=0)
    capped = tao(X, y, W0, b0, 2, oblique=True, fit_rows=10_000, seed=0)
    np.testing.assert_array_equal(full[0], capped[0])
