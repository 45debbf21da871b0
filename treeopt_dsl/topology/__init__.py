"""Tree topologies: the balanced trees of the oblique formulations (:class:`Topology`, implicit leaves) and the
general binary shapes of the categorical trees (:class:`Shape`, explicit leaves, unbalanced)."""

from __future__ import annotations

from treeopt_dsl.topology.balanced import LAST, LEVEL, NODE, Topology
from treeopt_dsl.topology.shapes import Shape

__all__ = ["LAST", "LEVEL", "NODE", "Shape", "Topology"]
