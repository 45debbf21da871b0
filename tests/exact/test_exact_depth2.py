"""The depth-1/2 count (treeopt_dsl.exact.depth2): its optimum is the brute-force optimum over every tree of depth
<= 2 on the same 0/1 columns (with weights, K classes, C and alpha), and STreeD's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treeopt_dsl.errors import OptionError
from treeopt_dsl.exact import depth2


def brute(Z: np.ndarray, y: np.ndarray, w: np.ndarray, K: int, depth: int, C: float, alpha: float) -> float:
    """``min C * weighted errors + alpha * splits`` by enumerating every tree of depth <= ``depth``."""

    def leaf(rows: np.ndarray) -> float:
        mass = np.bincount(y[rows], weights=w[rows], minlength=K)
        return C * float(mass.sum() - mass.max()) if rows.size else 0.0

    def best(rows: np.ndarray, h: int) -> float:
        out = leaf(rows)
        if h == 0:
            return out
        for j in range(Z.shape[1]):
            right = Z[rows, j] == 1
            out = min(out, alpha + best(rows[~right], h - 1) + best(rows[right], h - 1))
        return out

    return best(np.arange(y.size), depth)


def predict(node: depth2.Node, Z: np.ndarray) -> np.ndarray:
    out = np.empty(Z.shape[0], dtype=np.int64)
    for i, z in enumerate(Z):
        nd = node
        while not nd.is_leaf_node():
            nd = nd.right_child if z[nd.feature] == 1 else nd.left_child
        out[i] = nd.label
    return out


@st.composite
def problems(draw: st.DrawFn) -> tuple:
    n = draw(st.integers(1, 14))
    m = draw(st.integers(0, 4))
    K = draw(st.integers(2, 4))
    Z = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=m, max_size=m), min_size=n, max_size=n)),
                 dtype=np.int32).reshape(n, m)
    y = np.array(draw(st.lists(st.integers(0, K - 1), min_size=n, max_size=n)))
    weighted = draw(st.booleans())
    w = (np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n)))
         if weighted else None)
    return Z, y, w, K, draw(st.sampled_from([1, 2])), draw(st.sampled_from([1.0, 2.5])), \
        draw(st.sampled_from([0.0, 0.5, 1.0, 3.0]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_count_equals_brute_force(problem: tuple) -> None:
    Z, y, w, K, depth, C, alpha = problem
    node, obj, _ = depth2.solve(Z, y, depth, C=C, alpha=alpha, weights=w, n_classes=K)
    ww = np.ones(y.size) if w is None else w
    assert obj == pytest.approx(brute(Z, y, ww, K, depth, C, alpha), abs=1e-9)
    # the returned tree scores what it claims
    splits = 0 if node.is_leaf_node() else 1 + sum(not c.is_leaf_node() for c in (node.left_child, node.right_child))
    errors = float(np.sum(ww * (predict(node, Z) != y))) if y.size else 0.0
    assert C * errors + alpha * splits == pytest.approx(obj, abs=1e-9)


def test_count_equals_streed_on_random_columns() -> None:
    from pystreed import STreeDClassifier

    rng = np.random.default_rng(0)
    for trial in range(20):
        n, m = int(rng.integers(20, 200)), int(rng.integers(1, 12))
        Z = (rng.random((n, m)) < rng.random(m)).astype(np.int32)
        y = ((Z[:, 0] ^ Z[:, -1]) if trial % 2 else (rng.random(n) < 0.4)).astype(np.int64)
        y[rng.random(n) < 0.1] ^= 1  # noise
        for depth in (1, 2):
            _, obj, _ = depth2.solve(Z, y, depth)
            st_ = STreeDClassifier(max_depth=depth).fit(Z, y)
            assert obj == float(np.sum(st_.predict(Z) != y)), (trial, depth)


def test_blocks_of_root_columns_give_the_same_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The P tables in blocks of root columns (the memory bound) change nothing."""
    rng = np.random.default_rng(3)
    Z = (rng.random((60, 9)) < 0.5).astype(np.int32)
    y = rng.integers(0, 3, 60)
    whole = depth2.solve(Z, y, 2, alpha=0.3)
    monkeypatch.setattr(depth2, "BLOCK_BYTES", 1)  # one root column per block
    node, obj, _ = depth2.solve(Z, y, 2, alpha=0.3)
    assert obj == whole[1] and np.array_equal(predict(node, Z), predict(whole[0], Z))


def test_refuses_other_depths() -> None:
    with pytest.raises(OptionError, match="depth must be 1 or 2"):
        depth2.solve(np.zeros((3, 1)), np.zeros(3, dtype=int), 3)


def test_xor_needs_both_levels() -> None:
    Z = np.array(list(itertools.product([0, 1], repeat=2)) * 3)
    y = Z[:, 0] ^ Z[:, 1]
    assert depth2.solve(Z, y, 1)[1] == 6.0  # one split cannot do better than half
    node, obj, _ = depth2.solve(Z, y, 2)
    assert obj == 0.0 and np.array_equal(predict(node, Z), y)


@st.composite
def columns_of_features(draw: st.DrawFn) -> tuple:
    """Threshold columns of small integer features (binarize's layout), classes, optional weights."""
    n = draw(st.integers(2, 30))
    p = draw(st.integers(1, 4))
    values = draw(st.integers(2, 7))
    X = np.array(draw(st.lists(st.lists(st.integers(0, values - 1), min_size=p, max_size=p), min_size=n,
                               max_size=n)), dtype=float)
    K = draw(st.integers(2, 3))
    y = np.array(draw(st.lists(st.integers(0, K - 1), min_size=n, max_size=n)))
    w = (np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=n, max_size=n)))
         if draw(st.booleans()) else None)
    return X, y, w, K, draw(st.sampled_from([0.0, 0.5, 2.0]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns_of_features(), st.booleans())
def test_rank_histograms_and_boundary_cuts_keep_the_optimum(problem: tuple, small_blocks: bool) -> None:
    """With ``groups`` (rank histograms, child splits on boundary cuts only) the optimum is the brute force's over
    every column, also when the root cuts are taken a few at a time."""
    from treeopt_dsl.exact import binarize

    X, y, w, K, alpha = problem
    bz = binarize(X)
    ww = np.ones(y.size) if w is None else w
    expected = brute(bz.Z, y, ww, K, 2, 1.0, alpha)
    old = depth2.BLOCK_BYTES
    depth2.BLOCK_BYTES = 1 if small_blocks else old  # one root cut per block
    try:
        node, obj, _ = depth2.solve(bz.Z, y, 2, alpha=alpha, weights=w, n_classes=K, groups=bz.feature)
    finally:
        depth2.BLOCK_BYTES = old
    assert obj == pytest.approx(expected, abs=1e-9)
    splits = 0 if node.is_leaf_node() else 1 + sum(not c.is_leaf_node() for c in (node.left_child, node.right_child))
    assert float(np.sum(ww * (predict(node, bz.Z) != y))) + alpha * splits == pytest.approx(obj, abs=1e-9)


def test_rank_histograms_are_used_on_continuous_columns() -> None:
    from treeopt_dsl.exact import binarize

    rng = np.random.default_rng(8)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    bz = binarize(X)
    lay = depth2.Layout.of(bz.Z, bz.feature, np.eye(2)[y])
    assert 0 < lay.child.size < bz.n_columns  # boundary cuts only for the children
    assert depth2.solve(bz.Z, y, 2, groups=bz.feature)[1] == depth2.solve(bz.Z, y, 2)[1]
    with pytest.raises(ValueError, match="groups"):
        depth2.solve(bz.Z, y, 2, groups=bz.feature[::-1])


def test_time_limit_stops_between_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(9)
    Z = (rng.random((50, 6)) < 0.5).astype(np.int32)
    y = rng.integers(0, 2, 50)
    monkeypatch.setattr(depth2, "BLOCK_BYTES", 1)
    assert depth2.solve(Z, y, 2).complete
    stopped = depth2.solve(Z, y, 2, time_limit=-1.0)  # no block searched: the best stump (leaves on both sides)
    assert not stopped.complete and stopped.objective == depth2.solve(Z, y, 1).objective
