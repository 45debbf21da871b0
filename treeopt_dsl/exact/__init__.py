"""Exact routes that bypass the MILP: dynamic programming over binarized axis-aligned splits.

:mod:`.binarize` turns continuous features into 0/1 threshold columns (every distinct cut, or quantiles);
:mod:`.dp` recognizes the compositions a DP solver solves exactly (OCT, Bertsimas & Dunn 2017: axis-aligned
splits, the 0-1 loss, a penalty per split) and solves them, by :mod:`.depth2`'s exhaustive count at depth 1-2
and by STreeD (van der Linden et al. 2023) deeper, returning a :class:`~treeopt_dsl.result.SolveResult`
certified by the formulation's own blocks; :mod:`.direct` answers a spec's recognized composition without
building the MILP (what ``spec.solve(data, solver="streed")`` does), certified on the tree.
STreeD (``pystreed``) is optional: ``pip install treeopt-dsl[dp]``.
"""

from __future__ import annotations

from treeopt_dsl.exact.binarize import Binarization, binarize
from treeopt_dsl.exact.dp import DPTask, maybe_solve_dp, recognize, solve_dp, why_not_dp

__all__ = ["Binarization", "DPTask", "binarize", "maybe_solve_dp", "recognize", "solve_dp", "why_not_dp"]
