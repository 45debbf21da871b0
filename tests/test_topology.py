"""Topology masks and routing against a brute-force recursion on heap indices."""

from __future__ import annotations

import numpy as np
import pytest

from treeopt_dsl import Topology
from treeopt_dsl.errors import FormulationError


def subtree_last(t: int, depth: int) -> set[int]:
    """Last-layer nodes under ``t`` (inclusive), by recursion."""
    level = int(np.floor(np.log2(t + 1))) + 1
    if level == depth:
        return {t}
    return subtree_last(2 * t + 1, depth) | subtree_last(2 * t + 2, depth)


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_node_sets_and_masks(depth):
    topo = Topology(depth)
    assert topo.n_nodes == 2**depth - 1
    assert topo.last.size == 2 ** (depth - 1)
    assert topo.inner.size == 2 ** (depth - 1) - 1
    assert np.bincount(topo.level)[1:].tolist() == [2 ** (h - 1) for h in range(1, depth + 1)]
    last = topo.last.tolist()
    for t in topo.nodes:
        desc = {last[k] for k in np.flatnonzero(topo.desc[t])}
        assert desc == subtree_last(int(t), depth)
        if t in topo.inner:
            assert {last[k] for k in np.flatnonzero(topo.left[t])} == subtree_last(2 * int(t) + 1, depth)
            assert {last[k] for k in np.flatnonzero(topo.right[t])} == subtree_last(2 * int(t) + 2, depth)
        else:
            assert not topo.left[t].any() and not topo.right[t].any()
    m = topo.mask("left")
    assert m.dims == ("node", "last") and m.shape == (topo.n_nodes, topo.last.size)


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_route_and_path_walk_the_tree(depth):
    topo = Topology(depth)
    rng = np.random.default_rng(depth)
    goes_right = rng.random((50, topo.n_nodes)) > 0.5
    reached = topo.route(goes_right)
    for i in range(50):
        t, path = 0, [0]
        while len(path) < depth:
            t = 2 * t + (2 if goes_right[i, t] else 1)
            path.append(t)
        assert topo.last[reached[i]] == t
        assert topo.path_nodes(reached[i:i + 1])[0].tolist() == path


@pytest.mark.parametrize("bad", [0, 7, 2.5, "2"])
def test_bad_depth(bad):
    with pytest.raises(FormulationError, match="depth"):
        Topology(bad)
