"""Named starts made into values: what a face (the command line, the estimators, the experiment runner, a
formulation's ``solve``) calls before the solve, which takes a start only as values
(:class:`~treeopt_dsl.solve.Start`).

``warm_start=`` / ``--warm-start`` accept:

* ``"auto"``: the best, in the formulation's own objective, of every start that applies (:func:`auto_start`);
* ``"greedy"`` (:func:`~treeopt_dsl.starts.greedy.greedy_tree`; for generalized risk scores the rule-by-rule
  start, :func:`~treeopt_dsl.starts.rules.rule_by_rule`), ``"greedy_lp"`` (OLCT: each node's part of the objective
  as an LP, :mod:`treeopt_dsl.starts.node_lp`), ``"cart"``, ``"tao"`` (CART improved by Tree Alternating
  Optimization) and ``"tmo"`` (the memetic tree of [aldinucci-memetic], the paper's k = 100 trees and 5
  generations); ``"beam"`` for risk scores (:func:`~treeopt_dsl.starts.risk.risk_score_start`);
* values (:func:`treeopt_dsl.models.embed.point_of`): a fitted tree, a dict of decisions, a column vector.
"""

from __future__ import annotations

import inspect
import time
from typing import Any

import numpy as np

from treeopt_dsl.defaults import AUTO_TMO, DP_START_TIME, NODE_ROWS
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Built
from treeopt_dsl.models.embed import feasible_start, is_risk_score, is_tree, point_of, split_budget
from treeopt_dsl.registry import RISK_STARTS, RULE_STARTS, TREE_STARTS, load
from treeopt_dsl.solve import Start
from treeopt_dsl.starts.dp import dp_candidate
from treeopt_dsl.starts.greedy import cart_tree, greedy_tree
from treeopt_dsl.starts.memetic.tmo import tmo
from treeopt_dsl.starts.node_lp import greedy_lp_tree
from treeopt_dsl.starts.tao import tao

__all__ = ["AUTO_CANDIDATES", "RISK_STRATEGIES", "STRATEGIES", "auto_start", "resolve", "start_point",
           "tao_from_cart", "tao_start", "tmo_start"]

#: tree starts by name (the registry's table, :data:`treeopt_dsl.registry.TREE_STARTS`)
STRATEGIES = tuple(TREE_STARTS)
#: starts by name for risk scores (formulations with an IntegerScores block, ``ors``;
#: :data:`treeopt_dsl.registry.RISK_STARTS`): "beam" is the sparse beam search of
#: :func:`treeopt_dsl.starts.risk.risk_score_start` (FasterRisk-style); also the auto start
RISK_STRATEGIES = tuple(RISK_STARTS)
#: what ``warm_start="auto"`` tries, in this order (the best in the formulation's own objective wins);
#: "tmo" is a short memetic run (:data:`treeopt_dsl.defaults.AUTO_TMO`), "tao" improves the best of the others by
#: Tree Alternating Optimization; neither runs once a start is proven optimal
AUTO_CANDIDATES = ("cart", "greedy", "greedy_lp", "dp", "tmo", "tao")


def resolve(built: Built, warm_start: Any, time_budget: float | None = None, seed: int | None = None) -> Start | None:
    """``warm_start`` for ``built`` as values: ``None`` (or ``"none"``) is no start; ``"auto"`` the best of the
    candidates with their report (:func:`auto_start`, within ``time_budget`` seconds); a name or values the point
    :func:`start_point` makes, with the report ``{"chosen": name or "given"}``; a :class:`~treeopt_dsl.solve.Start`
    is returned as it is. ``seed`` (the solve's; ``None``: 0) seeds the randomized starts (TMO), so
    ``warm_start="tmo"`` with seed ``s`` starts from the tree ``TMOClassifier(random_state=s)`` fits."""
    if warm_start is None or (isinstance(warm_start, str) and warm_start == "none"):
        return None
    if isinstance(warm_start, Start):
        return warm_start
    if isinstance(warm_start, str) and warm_start == "auto":
        x, report = auto_start(built, time_budget, seed)
        return Start(x, report)
    name = warm_start if isinstance(warm_start, str) else "given"
    return Start(start_point(built, warm_start, seed), {"chosen": name, "candidates": {}})


def auto_start(built: Built, time_budget: float | None = None,
               seed: int | None = None) -> tuple[np.ndarray | None, dict[str, Any]]:
    """``warm_start="auto"``: every start that applies to ``built`` (:data:`AUTO_CANDIDATES`: CART, the
    papers' greedy per-node start, ``greedy_lp`` (OLCT: each node's part of the objective as an LP), the exact DP
    tree when a DP solver is installed, a short TMO run, then TAO from the best of them), each completed to a
    feasible point and scored in the formulation's own objective; the best one, and a report
    ``{"chosen", "objective", "proven", "candidates": {name: objective or the reason it does not apply},
    "time_s"}`` (``proven``: the chosen start is the formulation's proven optimum, e.g. the exact DP tree
    of ``oct``, and ``proven_by`` the route that proved it; the MILP is then not run).

    Risk scores (an :class:`~treeopt_dsl.blocks.IntegerScores` block, ``ors``) get the sparse beam-search
    start (candidate ``"beam"``, :func:`treeopt_dsl.starts.risk.risk_score_start`). Any other formulation
    without tree decisions (``ogrs``, categorical trees) has no automatic start (``(None, {"chosen": None,
    ...})``); they take their own (``"greedy"``) when asked by name.

    ``time_budget``: seconds (the call's share, :data:`treeopt_dsl.defaults.START_SHARE` of its ``time_limit``);
    once spent, the remaining candidates are skipped (said in the report) and the best so far is the start. Each
    candidate is budgeted by its own work, so within the budget a seed gives the same start on any machine.
    """
    t0 = time.perf_counter()
    report: dict[str, Any] = {"chosen": None, "objective": None, "candidates": {}}
    if is_risk_score(built):  # risk scores: one candidate, the beam search
        names: tuple[str, ...] = RISK_STRATEGIES
    elif not is_tree(built):
        report["candidates"] = {"auto": "not a tree formulation with hyperplane decisions (w, b)"}
        report["time_s"] = time.perf_counter() - t0
        return None, report
    else:
        names = AUTO_CANDIDATES
    best: np.ndarray | None = None
    report["proven"] = False
    for name in names:
        if name in ("tao", "tmo") and (best is None or report["proven"]):
            continue  # TAO improves the best start, TMO searches for a better one: a proven optimum needs neither
        if time_budget is not None and best is not None and time.perf_counter() - t0 >= time_budget:
            report["candidates"][name] = (f"not used: the starts' share of the time limit ({time_budget:.3g} s) "
                                          "was spent")
            continue
        try:
            left = None if time_budget is None else max(0.1, time_budget - (time.perf_counter() - t0))
            x, proof = (_candidate(built, name, left, seed) if name != "tao" else
                        (_tao_from(built, best, None if left is None else time.perf_counter() + left), None))
        except (FormulationError, ImportError, ValueError) as exc:
            report["candidates"][name] = f"not used: {exc}"
            continue
        except KeyboardInterrupt:  # Ctrl-C while the starts are computed: keep the best one so far
            report["candidates"][name] = "not used: interrupted"
            report["interrupted"] = True
            break
        if x is None:
            report["candidates"][name] = "not used: no DP solver installed (pip install treeopt-dsl[dp])"
            continue
        obj = built.model.objective_value(x)
        report["candidates"][name] = obj
        best_obj = report["objective"]
        tie = best_obj is not None and obj <= best_obj + 1e-9 * max(1.0, abs(best_obj))
        proven = proof is not None
        if best_obj is None or obj < best_obj - 1e-9 or (tie and proven and not report["proven"]):
            best, report["chosen"], report["objective"], report["proven"] = x, name, obj, proven
            report.pop("proven_by", None)
            if proof is not None:  # the exact tree: the route whose proof it is
                report["proven_by"] = dict(proof)
    report["time_s"] = time.perf_counter() - t0
    return best, report


def tao_start(built: Built, W: np.ndarray, b: np.ndarray, max_iter: int = 10,
              deadline: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """TAO (Carreira-Perpinan & Tavallali 2018; :mod:`treeopt_dsl.starts.tao`) from ``(W, b)`` on the
    formulation's scaled training data: axis-aligned node refits when the formulation allows one feature
    per split (an l0 budget of 1), sparse oblique ones otherwise, each fitted on at most
    :data:`~treeopt_dsl.defaults.NODE_ROWS` of its care set; the training error never increases; no node is
    refitted past ``deadline``."""
    ctx = built.ctx
    loss = ctx.roles.get("loss")
    leaf = float(loss.leaf_threshold(ctx)) if hasattr(loss, "leaf_threshold") else 0.0
    W2, b2, _ = tao(ctx.data.X, np.asarray(ctx.data.y), W, b, ctx.topo, oblique=split_budget(built) != 1,
                    max_iter=max_iter, eps=float(ctx.numerics.eps), leaf_threshold=leaf, deadline=deadline,
                    fit_rows=NODE_ROWS)
    return W2, b2


def tmo_start(built: Built, **kw: Any) -> tuple[np.ndarray, np.ndarray]:
    """TMO ([aldinucci-memetic], :func:`treeopt_dsl.starts.memetic.tmo.tmo`) on the formulation's scaled training
    data, with its sample weights and decision rules (``eps``, the loss' leaf threshold): an axis-aligned tree, a
    start for the axis-aligned and the oblique formulations alike. ``kw`` go to
    :func:`~treeopt_dsl.starts.memetic.tmo.tmo` (default: the paper's k = 100, n_gen = 5, CR = 0.75, seed 0). The
    scaling is monotone per feature and TMO's cuts are midpoints, so with the same seed the tree splits the
    training samples as ``TMOClassifier`` on the raw data does."""
    ctx = built.ctx
    loss = ctx.roles.get("loss")
    leaf = float(loss.leaf_threshold(ctx)) if hasattr(loss, "leaf_threshold") else 0.0
    res = tmo(ctx.data.X, np.asarray(ctx.data.y), ctx.topo.depth, eps=float(ctx.numerics.eps), leaf_threshold=leaf,
              **{"sample_weight": ctx.data.sample_weight, **kw})
    if res.stopped == "interrupted":  # TMO keeps its best tree on Ctrl-C; a start must pass the interrupt on
        raise KeyboardInterrupt("interrupted while TMO computed a warm start")
    return res.W, res.b


def tao_from_cart(built: Built) -> tuple[np.ndarray, np.ndarray]:
    """``warm_start="tao"``: CART's tree (:func:`~treeopt_dsl.starts.greedy.cart_tree`) improved by TAO
    (:func:`tao_start`)."""
    return tao_start(built, *cart_tree(built))


def _tao_from(built: Built, x: np.ndarray, deadline: float | None = None) -> np.ndarray:
    """The completed point of TAO started from the decisions of the point ``x``; no node refitted past
    ``deadline`` (the end of the starts' share)."""
    tree = built.decode(built.polish(x))
    return feasible_start(built, *tao_start(built, tree.W.copy(), tree.b.copy(), deadline=deadline))


def _candidate(built: Built, name: str, left: float | None = None,
               seed: int | None = None) -> tuple[np.ndarray | None, dict[str, str] | None]:
    """The completed point of one automatic start (``None``: not available here) and the route that proved it the
    formulation's optimum (the exact tree of a composition an engine solves), else ``None``; ``left``: the seconds
    left of the starts' budget (the DP's own limit)."""
    if name == "dp":
        return dp_candidate(built, DP_START_TIME if left is None else min(DP_START_TIME, left))
    if name == "tmo":
        return feasible_start(built, *tmo_start(built, **AUTO_TMO, seed=0 if seed is None else int(seed))), None
    if name == "greedy_lp" and left is not None:  # root weights tried while the starts' share lasts
        return feasible_start(built, *greedy_lp_tree(built, deadline=time.perf_counter() + left)), None
    if name == "greedy" and left is not None and is_tree(built):  # linear node fits while the share lasts
        return feasible_start(built, *greedy_tree(built, deadline=time.perf_counter() + left)), None
    return start_point(built, name, seed), None


def start_point(built: Built, start: Any, seed: int | None = None) -> np.ndarray:
    """A full, feasible column vector for ``built`` from a start by name (:data:`STRATEGIES`,
    :data:`RISK_STRATEGIES`, ``"greedy"`` for generalized risk scores) or given as values
    (:func:`~treeopt_dsl.models.embed.point_of`); ``seed`` seeds TMO (``None``: 0)."""
    if not isinstance(start, str):
        return point_of(built, start)
    if not is_tree(built):  # not a tree: risk scores take a strategy of their own
        risk = is_risk_score(built)
        if start in RULE_STARTS and "a_rule" in built.ctx:  # "greedy": rule by rule
            return point_of(built, load(RULE_STARTS[start])(built))
        if start in RISK_STARTS and risk:  # "beam": sparse beam search
            return point_of(built, load(RISK_STARTS[start])(built))
        raise FormulationError(f"{built.formulation.name} takes a warm start as a dict of its decisions "
                               f"{list(built.formulation.decisions)}"
                               + ("".join(f" or {k!r}" for k in RULE_STARTS) if "a_rule" in built.ctx else "")
                               + (f" or one of {RISK_STRATEGIES}" if risk else ""))
    if start not in TREE_STARTS:
        raise FormulationError(f"unknown warm start {start!r}; use one of {STRATEGIES}, a TreeModel or values")
    make = load(TREE_STARTS[start])
    takes_seed = any(p.name == "seed" or p.kind is p.VAR_KEYWORD for p in inspect.signature(make).parameters.values())
    W, b = make(built, seed=0 if seed is None else int(seed)) if takes_seed else make(built)
    return feasible_start(built, W, b)
