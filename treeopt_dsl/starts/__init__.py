"""Starts: everything that finds a model without proving it, to warm-start the formulations (and the seed systems
that are starts of their own: TAO, TMO).

The faces (the command line, the estimators, the experiment runner, a formulation's ``solve``) call
:func:`resolve` to make a named start into values before the solve, which takes a start only as values
(:class:`~treeopt_dsl.solve.Start`).

* :mod:`~treeopt_dsl.starts.resolver`: :func:`resolve`, ``"auto"`` (the best of every start that applies) and the
  starts by name;
* :mod:`~treeopt_dsl.starts.greedy`: the papers' greedy per-node start and CART;
  :mod:`~treeopt_dsl.starts.node_lp`: ``greedy_lp``, each node's part of OLCT's objective solved as an LP;
* :mod:`~treeopt_dsl.starts.dp`: the exact DP tree (:mod:`treeopt_dsl.exact`) as a start, proven for OCT;
* :mod:`~treeopt_dsl.starts.tao`: Tree Alternating Optimization (Carreira-Perpiñán & Tavallali, NeurIPS 2018);
  :mod:`~treeopt_dsl.starts.memetic`: TMO, the memetic trees of [aldinucci-memetic] built on it;
* :mod:`~treeopt_dsl.starts.risk`: the risk scores' beam search; :mod:`~treeopt_dsl.starts.rules`: the
  generalized risk scores' rule-by-rule start;
* :mod:`~treeopt_dsl.starts.refine`: OLCT's last-layer refinement (thesis Remark 1);
* :mod:`~treeopt_dsl.starts.multistart`: multistart and regularization paths (S-ORCT).
"""

from __future__ import annotations

from typing import Any

from treeopt_dsl.registry import load
from treeopt_dsl.starts.tao import AxisBins, from_sklearn, tao, tao_tree, training_error

#: the resolver's public names, imported from it when first asked for (PEP 562), so that importing one module of
#: the package (``treeopt_dsl.starts.refine`` for ``--refine``) does not import every start (TAO's names are
#: imported here: the function ``tao`` must hide the module of the same name)
EXPORTS: dict[str, str] = {name: f"treeopt_dsl.starts.resolver:{name}"
                           for name in ("AUTO_CANDIDATES", "STRATEGIES", "auto_start", "resolve", "start_point")}


def __getattr__(attr: str) -> Any:
    """PEP 562: :data:`EXPORTS` imported when first asked for."""
    if attr in EXPORTS:
        return load(EXPORTS[attr])
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


__all__ = ["AUTO_CANDIDATES", "STRATEGIES", "AxisBins", "auto_start", "from_sklearn", "resolve", "start_point", "tao",
           "tao_tree", "training_error"]
