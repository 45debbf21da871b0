"""The balanced tree: node sets, levels and the subtree masks the routing blocks contract with.

Branch nodes are numbered breadth first from 0 (the root); node ``t`` has children ``2t+1``
(left) and ``2t+2`` (right). In the thesis' notation ([aldinucci-thesis-2024], lines 379-392) ``T`` is the set
of branch nodes, ``T_h`` the nodes at level ``h = 1..d`` and ``T_d`` the last branching layer,
whose nodes are the classifiers (leaves are implicit). ``T_d^l(t)`` / ``T_d^r(t)`` are the
last-layer nodes in the left / right subtree of ``t``; :meth:`Topology.left_mask` and
:meth:`Topology.right_mask` return them as 0/1 matrices (node x last).
"""

from __future__ import annotations

from functools import cached_property, lru_cache

import numpy as np
import xarray as xr

from treeopt_dsl.errors import FormulationError

NODE, LAST, LEVEL = "node", "last", "level"

#: the deepest tree any route builds (2^6 = 64 leaves): the formulations' ``depth`` parameter, the topologies
#: and the estimators hold to 1..MAX_DEPTH
MAX_DEPTH = 6


def check_depth(depth: object) -> int:
    """``depth`` as an int, or a :class:`FormulationError` unless it is a whole number from 1 to :data:`MAX_DEPTH`."""
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or not 1 <= depth <= MAX_DEPTH:
        raise FormulationError(f"depth must be an integer from 1 to {MAX_DEPTH}, got {depth!r}")
    return int(depth)


class Topology:
    """A balanced binary tree of ``depth`` branching levels (1 <= depth <= :data:`MAX_DEPTH`)."""

    def __init__(self, depth: int) -> None:
        self.depth = check_depth(depth)

    def __repr__(self) -> str:
        return f"Topology(depth={self.depth})"

    @property
    def n_nodes(self) -> int:
        return 2**self.depth - 1

    @cached_property
    def nodes(self) -> np.ndarray:
        return np.arange(self.n_nodes)

    @cached_property
    def level(self) -> np.ndarray:
        """Level ``h`` (1 = root) of each branch node."""
        return np.floor(np.log2(self.nodes + 1)).astype(int) + 1

    @property
    def levels(self) -> np.ndarray:
        return np.arange(1, self.depth + 1)

    @cached_property
    def last(self) -> np.ndarray:
        """``T_d``: the last branching layer."""
        return self.nodes[self.level == self.depth]

    @cached_property
    def inner(self) -> np.ndarray:
        """``T \\ T_d``: nodes whose decision routes samples (forwarding constraints (3.7))."""
        return self.nodes[self.level < self.depth]

    def by_level(self, nodes: np.ndarray | None = None) -> list[tuple[int, np.ndarray]]:
        """``[(h, nodes of level h), ...]`` for the levels ``nodes`` (default: all) touch, root first.

        The nodes of one level have equally many last-layer descendants (``2**(depth - h)``, half of them
        on each side), so rows built level by level have one length: no padding terms.
        """
        nodes = self.nodes if nodes is None else np.asarray(nodes)
        lv = self.level[nodes]
        return [(int(h), nodes[lv == h]) for h in np.unique(lv)]

    def _subtree_of(self, targets: np.ndarray) -> np.ndarray:
        """anc[t, s] = True when node t is an ancestor-or-self of target s."""
        anc = np.zeros((self.n_nodes, targets.size), dtype=bool)
        cur = targets.copy()
        for _ in range(self.depth):
            anc[cur, np.arange(targets.size)] = True
            cur = np.maximum((cur - 1) // 2, 0)
        anc[0, :] = True
        return anc

    @cached_property
    def desc(self) -> np.ndarray:
        """``T_d(t)`` as a bool matrix (node x last)."""
        return self._subtree_of(self.last)

    @cached_property
    def left(self) -> np.ndarray:
        """``T_d^l(t)`` as a bool matrix (node x last)."""
        return self.desc & self._subtree_of_child(1)

    @cached_property
    def right(self) -> np.ndarray:
        """``T_d^r(t)`` as a bool matrix (node x last)."""
        return self.desc & self._subtree_of_child(2)

    def _subtree_of_child(self, side: int) -> np.ndarray:
        child = 2 * self.nodes + side
        out = np.zeros((self.n_nodes, self.last.size), dtype=bool)
        has = child < self.n_nodes
        out[has] = self.desc[child[has]]
        return out

    @property
    def n_leaves(self) -> int:
        """Leaves ``tau_L`` below the last branching layer (``2**depth``; explicit in S-ORCT)."""
        return 2**self.depth

    @cached_property
    def leaf_paths(self) -> tuple[np.ndarray, np.ndarray]:
        """``(N_L, N_R)`` as bool matrices (leaf x node): ``N_L[l, t]`` when leaf ``l``'s path takes the
        left branch at node ``t`` ([blanquero-2020-sorct], notation of §2.1). Leaf ``l`` is tree node ``2**depth - 1 +
        l``."""
        n_l = self.n_leaves
        left = np.zeros((n_l, self.n_nodes), dtype=bool)
        right = np.zeros((n_l, self.n_nodes), dtype=bool)
        u = self.n_nodes + np.arange(n_l)
        for _ in range(self.depth):  # one step up per level, vectorized over leaves
            parent = (u - 1) // 2
            is_left = u == 2 * parent + 1
            left[np.arange(n_l), parent] = is_left
            right[np.arange(n_l), parent] = ~is_left
            u = parent
        return left, right

    def mask(self, which: str, nodes: np.ndarray | None = None) -> xr.DataArray:
        """``desc``, ``left`` or ``right`` as a 0/1 DataArray over (node, last), optionally restricted.

        Shared between calls (read-only): building the same tree again, as multistarts, paths and
        experiment grids do, reuses it instead of paying xarray's construction each time.
        """
        nodes = self.nodes if nodes is None else np.asarray(nodes)
        return _mask(self.depth, which, tuple(int(t) for t in nodes))

    def route(self, goes_right: np.ndarray) -> np.ndarray:
        """Index into ``last`` reached by each sample, given ``goes_right[sample, node]`` (bool).

        Loops over the ``depth`` levels only; each step is vectorized over samples.
        """
        t = np.zeros(goes_right.shape[0], dtype=np.int64)
        for _ in range(self.depth - 1):
            t = 2 * t + 1 + goes_right[np.arange(t.size), t]
        return t - self.last[0]

    def path_nodes(self, last_index: np.ndarray) -> np.ndarray:
        """Branch node at each level on the path to each reached last-layer node: (sample, level)."""
        node = self.last[last_index]
        out = np.empty((node.size, self.depth), dtype=np.int64)
        for h in range(self.depth - 1, -1, -1):
            out[:, h] = node
            node = (node - 1) // 2
        return out


@lru_cache(maxsize=256)
def _mask(depth: int, which: str, nodes: tuple[int, ...]) -> xr.DataArray:
    topo = Topology(depth)
    if which not in ("desc", "left", "right"):
        raise FormulationError(f"unknown mask {which!r}; choose desc, left or right")
    at = np.asarray(nodes, dtype=np.int64)
    values = getattr(topo, which)[at].astype(float)
    values.setflags(write=False)
    return xr.DataArray(values, dims=(NODE, LAST), coords={NODE: at, LAST: topo.last})
