"""Heuristic starts: trees computed without a solver, to warm-start the MILP formulations.

* :func:`~treeopt_dsl.starts.tao.tao`: Tree Alternating Optimization (Carreira-Perpiñán & Tavallali,
  NeurIPS 2018), as used by TMO (thesis §3.3): improves a given tree node by node, never increasing its
  training error; :func:`~treeopt_dsl.starts.tao.tao_tree` applies it to a fitted
  :class:`~treeopt_dsl.models.tree.TreeModel`, :func:`~treeopt_dsl.starts.tao.from_sklearn` converts a
  scikit-learn CART tree into the library's ``(W, b)`` layout.

The results are plain ``(W, b)`` arrays, accepted by :func:`treeopt_dsl.warmstart.start_point` as
``{"w": W, "b": b}``.
"""

from treeopt_dsl.starts.tao import AxisBins, from_sklearn, tao, tao_tree, training_error

__all__ = ["AxisBins", "from_sklearn", "tao", "tao_tree", "training_error"]
