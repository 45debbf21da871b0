"""Topology node sets, levels, masks, routing and paths against a brute-force recursion on heap indices.

The reference tree is grown by recursion from the root (node 0, children 2t+1 and 2t+2), so no formula of the
library (levels by log2, ancestors by (t-1)//2) is reused. Thesis notation (seed 000, lines 379-392): T the branch
nodes, T_h the nodes at level h, T_d the last branching layer, T_d(t) / T_d^l(t) / T_d^r(t) the last-layer nodes
under t, under its left child, under its right child.
"""

from __future__ import annotations

import numpy as np
import pytest

from treeopt_dsl import Topology
from treeopt_dsl.errors import FormulationError

DEPTHS = [1, 2, 3, 4]


def grow(depth: int) -> dict[int, dict]:
    """Every branch node: its level, children (None in the last layer) and the last-layer nodes under it."""
    tree: dict[int, dict] = {}

    def visit(t: int, level: int) -> set[int]:
        if level == depth:
            tree[t] = {"level": level, "children": None, "under": {t}}
            return {t}
        left, right = visit(2 * t + 1, level + 1), visit(2 * t + 2, level + 1)
        tree[t] = {"level": level, "children": (2 * t + 1, 2 * t + 2), "under": left | right,
                   "left": left, "right": right}
        return left | right

    visit(0, 1)
    return tree


def walk(tree: dict[int, dict], goes_right: np.ndarray) -> list[int]:
    """The nodes one sample visits from the root, by hand."""
    t, path = 0, [0]
    while tree[t]["children"] is not None:
        t = tree[t]["children"][int(bool(goes_right[t]))]
        path.append(t)
    return path


@pytest.mark.parametrize("depth", DEPTHS)
def test_node_sets_and_levels(depth):
    topo, tree = Topology(depth), grow(depth)
    assert topo.n_nodes == 2**depth - 1 == len(tree)
    assert topo.nodes.tolist() == sorted(tree)
    assert topo.level.tolist() == [tree[t]["level"] for t in sorted(tree)]
    assert topo.levels.tolist() == list(range(1, depth + 1))
    assert topo.last.tolist() == sorted(t for t in tree if tree[t]["children"] is None)
    assert topo.last.size == 2 ** (depth - 1)
    assert topo.inner.tolist() == sorted(t for t in tree if tree[t]["children"] is not None)
    for h in range(1, depth + 1):  # |T_h| = 2^(h-1)
        assert int((topo.level == h).sum()) == 2 ** (h - 1)


@pytest.mark.parametrize("depth", DEPTHS)
def test_masks_match_the_recursion(depth):
    topo, tree = Topology(depth), grow(depth)
    last = topo.last.tolist()

    def as_set(row: np.ndarray) -> set[int]:
        return {last[k] for k in np.flatnonzero(row)}

    for t in topo.nodes.tolist():
        node = tree[t]
        assert as_set(topo.desc[t]) == node["under"]
        if node["children"] is None:
            assert not topo.left[t].any() and not topo.right[t].any()
        else:
            assert as_set(topo.left[t]) == node["left"] and as_set(topo.right[t]) == node["right"]
            # T_d^l(t) and T_d^r(t) partition T_d(t)
            assert not (topo.left[t] & topo.right[t]).any()
            np.testing.assert_array_equal(topo.left[t] | topo.right[t], topo.desc[t])
    for which in ("desc", "left", "right"):
        m = topo.mask(which)
        assert m.dims == ("node", "last") and m.shape == (topo.n_nodes, topo.last.size)
        assert m.coords["last"].values.tolist() == last and set(np.unique(m.values)) <= {0.0, 1.0}
        np.testing.assert_array_equal(m.values, getattr(topo, which).astype(float))
    inner = topo.mask("left", topo.inner)
    assert inner.coords["node"].values.tolist() == topo.inner.tolist()
    np.testing.assert_array_equal(inner.values, topo.left[topo.inner].astype(float))
    assert Topology(depth).mask("left", topo.inner) is inner  # shared between trees of one depth
    with pytest.raises(ValueError, match="read-only"):
        inner.values[0, 0] = 2.0  # so nobody can change it for the others


@pytest.mark.parametrize("depth", DEPTHS)
def test_by_level_groups_nodes_with_equally_many_descendants(depth):
    topo = Topology(depth)
    groups = topo.by_level()
    assert [h for h, _ in groups] == list(range(1, depth + 1))
    assert np.concatenate([g for _, g in groups]).tolist() == topo.nodes.tolist()
    for h, g in groups:
        assert set(topo.level[g]) == {h}
        assert set(topo.desc[g].sum(1)) == {2 ** (depth - h)}  # one row length per level
    assert [h for h, _ in topo.by_level(topo.inner)] == list(range(1, depth))
    if depth > 1:
        assert [(h, g.tolist()) for h, g in topo.by_level(np.array([2, 0]))] == [(1, [0]), (2, [2])]


@pytest.mark.parametrize("depth", DEPTHS)
def test_route_and_path_walk_the_tree(depth):
    topo, tree = Topology(depth), grow(depth)
    rng = np.random.default_rng(depth)
    goes_right = rng.random((64, topo.n_nodes)) > 0.5
    reached = topo.route(goes_right)
    paths = topo.path_nodes(reached)
    assert paths.shape == (64, depth)
    for i in range(64):
        path = walk(tree, goes_right[i])
        assert topo.last[reached[i]] == path[-1]
        assert paths[i].tolist() == path
        assert [tree[t]["level"] for t in path] == list(range(1, depth + 1))
    # every last-layer node is reachable, and its path is the chain of ancestors
    every = topo.path_nodes(np.arange(topo.last.size))
    for k, s in enumerate(topo.last.tolist()):
        assert every[k, -1] == s
        assert all(s in tree[t]["under"] for t in every[k])


@pytest.mark.parametrize("depth", DEPTHS)
def test_route_ignores_decisions_off_the_path(depth):
    topo, tree = Topology(depth), grow(depth)
    rng = np.random.default_rng(10 + depth)
    g = rng.random((20, topo.n_nodes)) > 0.5
    flipped = g.copy()
    for i in range(20):
        on_path = set(walk(tree, g[i]))
        off = [t for t in range(topo.n_nodes) if t not in on_path]
        flipped[i, off] = ~flipped[i, off]
    np.testing.assert_array_equal(topo.route(g), topo.route(flipped))


@pytest.mark.parametrize("bad", [0, 7, -1, 2.5, "2", None])
def test_bad_depth(bad):
    with pytest.raises(FormulationError, match="depth"):
        Topology(bad)
