"""Tree topologies: the balanced trees of the oblique formulations (:class:`Topology`, implicit leaves) and the
general binary shapes of the categorical trees (:class:`Shape`, explicit leaves, unbalanced)."""

from __future__ import annotations

from treeopt_dsl.topology.balanced import LAST, LEVEL, MAX_DEPTH, NODE, Topology, check_depth
from treeopt_dsl.topology.shapes import Shape

__all__ = ["LAST", "LEVEL", "MAX_DEPTH", "NODE", "Shape", "Topology", "check_depth"]
