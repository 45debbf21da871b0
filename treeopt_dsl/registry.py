"""Names that become imports: the starts a user names, as ``"module:function"`` targets imported when a start is
asked for, and :func:`load`, which turns such a target (or a built-in formulation's ``"module:Class"``,
:data:`treeopt_dsl.formulations.FORMULATIONS`) into the object.

Like the exact routes' entry points (``[project.entry-points."treeopt_dsl.routes"]`` in ``pyproject.toml``), a name
is a string until it is used, so that a call pays only for what it runs: the exact route of ``oct`` imports no
start (nor ``scipy.optimize``, which the generalized risk scores' start needs), no other formulation family. The
tables are the one list of the names: ``--warm-start``'s choices, a grid's ``warm_start`` and
:func:`treeopt_dsl.starts.resolver.start_point` read them (docs/DESIGN.md, "Names become imports in the
registries").

Example::

    >>> from treeopt_dsl.registry import WARM_STARTS, load
    >>> WARM_STARTS
    ('auto', 'none', 'greedy', 'greedy_lp', 'cart', 'tao', 'tmo', 'beam')
    >>> load("treeopt_dsl.starts.greedy:cart_tree").__name__
    'cart_tree'
"""

from __future__ import annotations

import importlib
from typing import Any

from treeopt_dsl.errors import TreeoptError

__all__ = ["REFINE", "RESOLVER", "RISK_STARTS", "RULE_STARTS", "TREE_STARTS", "WARM_STARTS", "load", "resolve_start"]

#: the tree starts by name: each a function ``f(built)`` (``f(built, seed=...)`` when it takes a seed) returning a
#: tree's ``(W, b)`` in the layout of :func:`treeopt_dsl.starts.resolver.start_point`
TREE_STARTS: dict[str, str] = {
    "greedy": "treeopt_dsl.starts.greedy:greedy_tree",            # the papers' greedy per-node start
    "greedy_lp": "treeopt_dsl.starts.node_lp:greedy_lp_tree",     # OLCT: each node's part of the objective as an LP
    "cart": "treeopt_dsl.starts.greedy:cart_tree",
    "tao": "treeopt_dsl.starts.resolver:tao_from_cart",           # CART improved by Tree Alternating Optimization
    "tmo": "treeopt_dsl.starts.resolver:tmo_start",               # the memetic tree, the paper's k = 100, 5 gens
}
#: the risk scores' starts by name (formulations with an IntegerScores block, ``ors``): ``f(built)`` returning
#: the decisions as a dict; "beam" is the sparse beam search (FasterRisk-style), also the automatic start
RISK_STARTS: dict[str, str] = {"beam": "treeopt_dsl.starts.risk:risk_score_start"}
#: the generalized risk scores' starts by name (a rule block, ``ogrs``): ``f(built)`` returning the decisions
RULE_STARTS: dict[str, str] = {"greedy": "treeopt_dsl.starts.rules:rule_by_rule"}
#: every start a face may name: ``warm_start=``, ``--warm-start``'s choices, a grid's ``warm_start``
WARM_STARTS: tuple[str, ...] = ("auto", "none", *dict.fromkeys([*TREE_STARTS, *RISK_STARTS, *RULE_STARTS]))
#: OLCT's last-layer refinement (thesis Remark 1), asked for by ``refine=True`` / ``--refine``: the check before the
#: solve (``f(spec)``) and the refit after it (``f(result)``)
REFINE: dict[str, str] = {"check": "treeopt_dsl.starts.refine:check_refinable",
                          "refit": "treeopt_dsl.starts.refine:refine_result"}
#: the function that makes a start (a name, ``"auto"``, values) into values for a built formulation
RESOLVER = "treeopt_dsl.starts.resolver:resolve"


def load(target: str) -> Any:
    """The object a ``"module:attribute"`` target names, its module imported now (once per process: Python keeps
    it); a malformed target is a :class:`~treeopt_dsl.errors.TreeoptError` naming it.

    >>> load("treeopt_dsl.formulations.oct:OCT").name
    'oct'
    """
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise TreeoptError(f"a registry target is 'module:attribute', got {target!r}")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def resolve_start(built: Any, warm_start: Any, time_budget: float | None = None, seed: int | None = None) -> Any:
    """``warm_start`` for ``built`` as values (:func:`treeopt_dsl.starts.resolver.resolve`: a
    :class:`~treeopt_dsl.solve.Start` or ``None``), the starts imported only when one is asked for: ``None`` and
    ``"none"`` are no start and import nothing.

    >>> resolve_start(None, "none") is None
    True
    """
    if warm_start is None or (isinstance(warm_start, str) and warm_start == "none"):
        return None
    return load(RESOLVER)(built, warm_start, time_budget, seed=seed)
