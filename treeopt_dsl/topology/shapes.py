"""General binary tree shapes: the fixed topologies of Günlük et al. ([gunluk-odt-categorical], §4.2, Figures 2-3).

:class:`~treeopt_dsl.topology.Topology` is the balanced tree of the oblique formulations (nodes
numbered breadth first, leaves implicit). The categorical trees of [gunluk-odt-categorical] need explicit leaves and
unbalanced shapes, so :class:`Shape` describes any binary tree in the class the paper uses (line 73:
"a decision node either has two leaf nodes or else has two other decision nodes as children"):

* decision nodes ``K`` are numbered ``1..|K|`` in preorder and leaves ``B`` are numbered ``1..|B|``
  from left to right, which is exactly the numbering of Figures 2 and 3;
* every leaf has its path from the root: ``K^L(b)`` / ``K^R(b)`` (the nodes where the left / right
  branch is followed, (5)-(6)), as bool matrices ``KL[leaf, node]`` and ``KR[leaf, node]``;
* the leaf labels are fixed by the paper's convention (line 69): ``B+`` holds the even labels,
  ``B-`` the odd ones, so the left leaf of every leaf-parent predicts -1 and its right leaf +1;
* ``leaf_adjacent`` marks the nodes whose children are leaves (Proposition 3, (ii)) and
  ``anchored`` the nodes that are *not* adjacent to a leaf and whose two subtrees have the same
  topology: only there may the test be complemented while the subtrees are swapped, so only there
  do the anchor equations (13) hold without excluding any tree (§4.3.2, line 208).

Named shapes (``Shape.named``): ``"1"`` (a stump), ``"2"`` and ``"3"`` (balanced), ``"2.5"``
(Figure 3, upper right: a depth-2 left subtree and a depth-1 right subtree) and ``"imbalanced"``
(Figure 3, bottom: a left spine of four decision nodes).

>>> s = Shape.named("2.5")
>>> s.n_nodes, s.n_leaves, s.anchored.tolist()
(5, 6, [False, True, False, False, False])
>>> [s.path(b) for b in (1, 6)]
[[(1, 'L'), (2, 'L'), (3, 'L')], [(1, 'R'), (5, 'R')]]
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import xarray as xr

from treeopt_dsl.errors import FormulationError
from treeopt_dsl.topology.balanced import check_depth

NODE, LEAF = "node", "leaf"

#: nested pairs: a decision node is ``(left, right)``, a leaf is ``None``
_S1: Any = (None, None)
_S2: Any = (_S1, _S1)
NAMED: dict[str, Any] = {
    "1": _S1,
    "2": _S2,
    "2.5": (_S2, _S1),
    "3": (_S2, _S2),
    "imbalanced": (((_S1, _S1), _S1), _S1),
}


def _canonical(spec: Any) -> Any:
    """The nesting with every node as a tuple (lists accepted), checked to be a binary tree."""
    if spec is None:
        return None
    if isinstance(spec, (tuple, list)) and len(spec) == 2:
        return (_canonical(spec[0]), _canonical(spec[1]))
    raise FormulationError(f"a tree shape is nested pairs (left, right) with None for a leaf; got {spec!r}")


class Shape:
    """A binary tree topology with explicit decision nodes and leaves (see the module docstring).

    ``spec`` is a nested pair ``(left, right)`` with ``None`` for a leaf, or one of the names in
    :data:`NAMED`. Arrays are indexed by *position* (``label - 1``); the coordinates of the model's
    ``node`` and ``leaf`` dimensions are the paper's labels ``1..|K|`` and ``1..|B|``.
    """

    def __init__(self, spec: Any, name: str | None = None) -> None:
        if isinstance(spec, str):
            name, spec = spec, self._lookup(spec)
        spec = _canonical(spec)
        if spec is None:
            raise FormulationError("a tree shape needs at least one decision node")
        self.spec = spec
        self.name = name or repr(spec)
        left: list[tuple[str, int]] = []
        right: list[tuple[str, int]] = []
        subtree: list[Any] = []
        n_leaves = 0

        def visit(s: Any) -> tuple[str, int]:  # preorder: the node, then its left and right subtrees
            nonlocal n_leaves
            if s is None:
                n_leaves += 1
                return ("leaf", n_leaves - 1)
            k = len(left)
            left.append(("leaf", -1))
            right.append(("leaf", -1))
            subtree.append(s)
            left[k] = visit(s[0])
            right[k] = visit(s[1])
            return ("node", k)

        visit(spec)
        self.children = list(zip(left, right, strict=True))
        self._subtrees = subtree
        for k, (lc, rc) in enumerate(self.children):
            if lc[0] != rc[0]:
                raise FormulationError(
                    f"decision node {k + 1} of shape {self.name} has one leaf and one decision node as children; "
                    "the categorical formulation needs either two leaves or two decision nodes under every node "
                    "([gunluk-odt-categorical] line 73), so that each leaf-parent carries one -1 and one +1 leaf")
        self.n_nodes = len(left)
        self.n_leaves = n_leaves

    @staticmethod
    def _lookup(name: str) -> Any:
        key = str(name).strip().lower()
        key = {"depth2": "2", "depth3": "3", "depth2.5": "2.5", "ib": "imbalanced", "stump": "1"}.get(key, key)
        if key not in NAMED:
            raise FormulationError(f"unknown tree shape {name!r}; choose one of {', '.join(NAMED)}")
        return NAMED[key]

    @classmethod
    def named(cls, name: str) -> Shape:
        """One of the paper's topologies: ``"2"``, ``"2.5"``, ``"3"``, ``"imbalanced"`` (or ``"1"``)."""
        return cls(cls._lookup(name), name=str(name))

    @classmethod
    def balanced(cls, depth: int) -> Shape:
        spec: Any = None
        for _ in range(check_depth(depth)):
            spec = (spec, spec)
        return cls(spec, name=str(int(depth)))

    def __repr__(self) -> str:
        return f"Shape({self.name!r}: {self.n_nodes} decision nodes, {self.n_leaves} leaves)"

    # ------------------------------------------------------------------ labels
    @property
    def nodes(self) -> np.ndarray:
        """Node labels ``1..|K|`` (preorder)."""
        return np.arange(1, self.n_nodes + 1)

    @property
    def leaves(self) -> np.ndarray:
        """Leaf labels ``1..|B|`` (left to right)."""
        return np.arange(1, self.n_leaves + 1)

    @cached_property
    def leaf_sign(self) -> np.ndarray:
        """+1 for ``B+`` (even labels), -1 for ``B-`` (odd labels), [gunluk-odt-categorical] line 69."""
        return np.where(self.leaves % 2 == 0, 1, -1)

    # ------------------------------------------------------------------ paths
    @cached_property
    def _paths(self) -> list[list[tuple[int, str]]]:
        paths: list[list[tuple[int, str]]] = [[] for _ in range(self.n_leaves)]

        def walk(child: tuple[str, int], prefix: list[tuple[int, str]]) -> None:
            kind, i = child
            if kind == "leaf":
                paths[i] = prefix
                return
            lc, rc = self.children[i]
            walk(lc, [*prefix, (i, "L")])
            walk(rc, [*prefix, (i, "R")])

        walk(("node", 0), [])
        return paths

    def path(self, leaf: int) -> list[tuple[int, str]]:
        """``[(node label, 'L' or 'R'), ...]`` from the root to leaf ``leaf`` (a label, 1-based)."""
        if not 1 <= leaf <= self.n_leaves:
            raise FormulationError(f"leaf {leaf} is not in 1..{self.n_leaves}")
        return [(k + 1, d) for k, d in self._paths[leaf - 1]]

    def _side(self, side: str) -> np.ndarray:
        out = np.zeros((self.n_leaves, self.n_nodes), dtype=bool)
        for b, p in enumerate(self._paths):  # one pass per leaf (at most a few dozen)
            for k, d in p:
                out[b, k] = d == side
        return out

    @cached_property
    def KL(self) -> np.ndarray:
        """``KL[b, k]``: node ``k`` is in ``K^L(b)`` (leaf ``b`` lies in its left subtree)."""
        return self._side("L")

    @cached_property
    def KR(self) -> np.ndarray:
        """``KR[b, k]``: node ``k`` is in ``K^R(b)``."""
        return self._side("R")

    @cached_property
    def depth(self) -> int:
        return max(len(p) for p in self._paths)

    @cached_property
    def node_depth(self) -> np.ndarray:
        """Number of edges from the root to each decision node (root: 0)."""
        d = np.zeros(self.n_nodes, dtype=int)
        for k, (lc, rc) in enumerate(self.children):
            for kind, i in (lc, rc):
                if kind == "node":
                    d[i] = d[k] + 1
        return d

    # ------------------------------------------------------------------ node sets
    @cached_property
    def leaf_adjacent(self) -> np.ndarray:
        """``K^L`` of Proposition 3: nodes whose children are leaves."""
        return np.array([lc[0] == "leaf" for lc, _ in self.children])

    @cached_property
    def symmetric(self) -> np.ndarray:
        """Nodes whose left and right subtrees have the same topology."""
        return np.array([s[0] == s[1] for s in self._subtrees])

    @cached_property
    def anchored(self) -> np.ndarray:
        """Nodes where the anchor equations (13) apply: not leaf-adjacent, symmetric subtrees (§4.3.2)."""
        return ~self.leaf_adjacent & self.symmetric

    def leaf_pair(self, node: int) -> tuple[int, int]:
        """The (left, right) leaf labels of a leaf-adjacent node (a label)."""
        lc, rc = self.children[node - 1]
        if lc[0] != "leaf":
            raise FormulationError(f"node {node} is not adjacent to leaves")
        return lc[1] + 1, rc[1] + 1

    def mask(self, which: str, nodes: np.ndarray | None = None, leaves: np.ndarray | None = None) -> xr.DataArray:
        """``KL`` or ``KR`` as a 0/1 DataArray over (leaf, node), optionally restricted to labels."""
        if which not in ("KL", "KR"):
            raise FormulationError(f"mask must be 'KL' or 'KR', got {which!r}")
        nodes = self.nodes if nodes is None else np.asarray(nodes)
        leaves = self.leaves if leaves is None else np.asarray(leaves)
        m = getattr(self, which)[np.ix_(leaves - 1, nodes - 1)]
        return xr.DataArray(m.astype(float), dims=(LEAF, NODE), coords={LEAF: leaves, NODE: nodes})

    # ------------------------------------------------------------------ routing
    @cached_property
    def _child_code(self) -> np.ndarray:
        """(node, 2) codes of the children: ``k >= 0`` a node position, ``-(b + 1)`` leaf position ``b``."""
        out = np.empty((self.n_nodes, 2), dtype=np.int64)
        for k, pair in enumerate(self.children):
            for side, (kind, i) in enumerate(pair):
                out[k, side] = i if kind == "node" else -(i + 1)
        return out

    def route(self, goes_left: np.ndarray) -> np.ndarray:
        """Leaf position (0-based) reached by each sample, given ``goes_left[sample, node position]``.

        Loops over the depth only; each step is vectorized over samples.
        """
        goes_left = np.asarray(goes_left, dtype=bool)
        if goes_left.ndim != 2 or goes_left.shape[1] != self.n_nodes:
            raise FormulationError(f"goes_left must be (samples, {self.n_nodes}), got {goes_left.shape}")
        n = goes_left.shape[0]
        cur = np.zeros(n, dtype=np.int64)
        rows = np.arange(n)
        for _ in range(self.depth):
            at = cur >= 0
            k = np.where(at, cur, 0)
            nxt = np.where(goes_left[rows, k], self._child_code[k, 0], self._child_code[k, 1])
            cur = np.where(at, nxt, cur)
        return -cur - 1

    def describe(self) -> str:
        """One line per decision node: its children, and whether it is leaf-adjacent / anchored."""
        lines = []
        for k, (lc, rc) in enumerate(self.children):
            def show(c: tuple[str, int]) -> str:
                if c[0] == "node":
                    return f"node {c[1] + 1}"
                return f"leaf {c[1] + 1} ({'+' if (c[1] + 1) % 2 == 0 else '-'})"
            tags = [t for t, on in (("leaf-adjacent", self.leaf_adjacent[k]), ("anchored", self.anchored[k])) if on]
            pad = "  " * int(self.node_depth[k])
            lines.append(f"{pad}node {k + 1}: left {show(lc)}, right {show(rc)}"
                         + (f"  [{', '.join(tags)}]" if tags else ""))
        return "\n".join(lines)
