"""The DP route answered from the blocks: ``spec.solve(data, solver="streed")`` without building the MILP.

:func:`~treeopt_dsl.exact.dp.solve_dp` embeds the DP's tree in the built model and certifies it on the model's
rows. No solver reads those rows, and building them costs more than the DP itself on small data (OCT's big-M rows
are ``n x 2^d`` routing rows over every feature: 4-7 ms on the benchmark's small sets where the DP needs about
one, 50-140 ms with the certificate on mushrooms at depth 3; docs/benchmarks.md). When the composition is
recognized from its blocks alone (:func:`~treeopt_dsl.exact.dp.inspect_blocks`: a spec's own blocks add no other
rows), this route fits the tree and certifies it *on the tree*, checking what OCT's rows encode directly:

* **bounds** (3.14 and the split block's box): ``|w_jt| <= w_bound``, ``|b_t| <= b_bound``, at most one feature
  per split;
* **margin** ((3.7), (3.9)): every training sample at every node has ``w_t·x_i + b_t <= 0`` or ``>= eps`` (right
  iff ``> eps/2``, nobody inside the band), so the big-M rows hold for any routing of it; the largest intrusion
  into the band is the certificate's ``max_violation``;
* **objective**: ``C sum_i w_i [predict(x_i) != y_i] + alpha * (features used)``, recounted from the decoded
  model's own prediction rule on the (scaled) training data the rows see, independently of the DP's count;
* **routing**: the DP's predictions on its 0/1 threshold columns against the decoded model's
  (``routing_mismatches``).

That the formulation's rows accept the embedded point is a tested property of the embedding
(tests/exact/test_exact_direct.py certifies it on the built model on random data), not re-checked per solve. The
result's ``built`` is deferred: reading it (exporting the model, scoring another point) builds the MILP then;
``x`` (the MILP point) is ``None`` and ``size`` describes the DP's problem (``problem_class`` ``"DP:oct"``,
samples, threshold columns). Compositions recognized only on the built model (rows added to it) and the flow
routings take :func:`~treeopt_dsl.exact.dp.maybe_solve_dp`.
"""

from __future__ import annotations

import functools
import time
import weakref
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from treeopt_dsl.blocks import ObliqueSplit
from treeopt_dsl.exact import depth2
from treeopt_dsl.exact.binarize import cuts_per_feature
from treeopt_dsl.exact.contree import fit_contree, precision_reason
from treeopt_dsl.exact.contree import weights_reason as contree_weights_reason
from treeopt_dsl.exact.dp import (
    DPTask,
    DPTree,
    constant_b,
    dp_result,
    fit_tree,
    inspect_blocks,
    streed,
)
from treeopt_dsl.formulation import BuildContext, DeferredBuilt
from treeopt_dsl.ir import Model
from treeopt_dsl.models.tree import tree_of
from treeopt_dsl.numeric import one_blas_thread
from treeopt_dsl.result import Certificate, SolveResult


@dataclass
class Reading:
    """A registered formulation read for the exact route before anything is built: its DP task, the scaled data,
    the build context the decoder reads, the split block and the formulation."""

    task: DPTask
    prepared: Any
    ctx: BuildContext
    split: Any
    formulation: Any

    @functools.cached_property
    def cuts(self) -> np.ndarray:
        """Distinct cuts per feature (:func:`~treeopt_dsl.exact.binarize.cuts_per_feature`), sorted once per
        reading: every engine's estimate, the size check and the binarization's check read them."""
        return cuts_per_feature(self.prepared.X)

    @functools.cached_property
    def bounds(self) -> tuple[float, float]:
        """The split block's ``(W, B)`` on the scaled data (:meth:`~treeopt_dsl.blocks.ObliqueSplit.bounds`: a pass
        over every value, 5 ms on mushrooms), computed once per reading."""
        return self.split.bounds(self.prepared.X)

    @functools.cached_property
    def contree_reason(self) -> str | None:
        """Why ConTree cannot take these data (:func:`~treeopt_dsl.exact.contree.weights_reason`,
        :func:`~treeopt_dsl.exact.contree.precision_reason`), computed once per reading."""
        return contree_weights_reason(self.prepared) or precision_reason(self.prepared.X)

    @property
    def binary(self) -> bool:
        """Whether every feature takes at most two distinct values (the count and STreeD's home ground)."""
        return bool(np.all(self.cuts <= 1))


#: the last reading, for the same spec and data asked again (``--solver auto`` asks every engine, then the chosen
#: one solves): ``(weakref to the data, id(spec), the spec's parameters, the reading)``
_LAST: list[Any] = [None]


def read(spec: Any, data: Any) -> Reading | str:
    """``spec`` on ``data`` as the exact route sees it, or why it is not the route's problem (a composition the
    DP does not solve exactly: oblique splits, another loss, side rows; the flow routings, recognized on the built
    model). The last reading is kept for the same spec (same parameters) and the same data object."""
    key = (id(spec), repr(sorted(spec.values.items())))
    last = _LAST[0]
    if last is not None and last[0]() is data and last[1] == key:
        return last[2]
    reading = _read(spec, data)
    _LAST[0] = (weakref.ref(data), key, reading)
    return reading


def _read(spec: Any, data: Any) -> Reading | str:
    prepared = spec.prepare(data)
    f = spec.formulation()
    ctx = BuildContext(Model(f.name), prepared, spec.topology(), replace(f.numerics))
    split = next((b for b in f.blocks if isinstance(b, ObliqueSplit)), None)
    if split is None:
        return "its splits are binary columns (flow routing): recognized on the built model"
    task = inspect_blocks(f, ctx)
    if not isinstance(task, DPTask):
        return task
    return Reading(task, prepared, ctx, split, f)


def solve_spec(spec: Any, data: Any, time_limit: float | None = None, max_thresholds: int | None = None,
               engine: str = "dp", reading: Reading | None = None) -> SolveResult | None:
    """Solve ``spec`` on ``data`` exactly over every distinct cut when its blocks make a DP task, else ``None`` (the
    caller builds the model and takes :func:`~treeopt_dsl.exact.dp.solve_exact`, which explains a refusal).

    ``engine``: ``"dp"`` (the depth-1/2 count, STreeD deeper, on the exact binarization) or ``"contree"`` (ConTree
    on the continuous features). A cut may fall between any two distinct training values: closer than the MILP's
    ``eps / w_bound`` too (the MILP's scaled rows cannot express such a cut, so this optimum may be below the built
    model's; the message says how many cuts are that close)."""
    t0 = time.perf_counter()
    r = read(spec, data) if reading is None else reading
    if isinstance(r, str):
        return None
    task, prepared, ctx, f = r.task, r.prepared, r.ctx, r.formulation
    if engine == "dp" and task.depth > depth2.MAX_DEPTH:
        streed()  # a missing pystreed is SolverNotAvailable with the install hint (depth 1-2 count without it)
    bounds = r.bounds
    t1 = time.perf_counter()
    with one_blas_thread():  # small products (treeopt_dsl.numeric)
        if engine == "contree":
            tree = fit_contree(prepared, task, constant_b(f, prepared, bounds[1]), time_limit,
                               reason=r.contree_reason)
        else:
            tree = fit_tree(prepared, task, constant_b(f, prepared, bounds[1]), time_limit, max_thresholds,
                            min_gap=0.0, cuts=r.cuts)
        t2 = time.perf_counter()
        model = _model(ctx, tree)
        cert, close = tree_certificate(ctx, task, tree, model, bounds)
    res = dp_result(tree, cert, cert.ok, "the tree certificate", time_limit, max_thresholds, x=None, compile_s=0.0,
                    size={"problem_class": f"DP:{f.name}", "n_samples": prepared.n_samples,
                          "n_threshold_columns": tree.n_columns},
                    model=model, built=DeferredBuilt(functools.partial(spec.build, data)))
    t3 = time.perf_counter()
    res.timing = {"prepare": t1 - t0, "search": t2 - t1, "certify": t3 - t2, "total": t3 - t0}
    if close:
        res.message += (f"; {close} sample(s) lie within eps/2 of a cut (distinct values closer than the MILP's "
                        "eps/w_bound): the built model's rows cannot express this tree, only the exact route can")
    return res


def _model(ctx: BuildContext, tree: DPTree) -> Any:
    """The decoded tree (the formulation's decoder reads ``w`` and ``b``; here they are the DP's arrays)."""
    data = ctx.data
    leaf = float(ctx.numerics.eps) / 2  # the 0-1 loss' leaf threshold (ZeroOneLoss.leaf_threshold)
    if data.n_classes <= 2:
        return tree_of(ctx, tree.W, tree.b, leaf)
    # K > 2: every leaf takes the DP's class of the samples it receives (one class per leaf when the routing
    # agrees: tree_certificate counts the samples that disagree); an empty leaf the weighted majority
    n_leaves = 2**ctx.topo.depth
    probe = tree_of(ctx, tree.W, tree.b, leaf, np.zeros(n_leaves, dtype=np.int64))
    at = probe.leaf(data.X, scaled=True)
    votes = np.zeros((n_leaves, data.n_classes))
    np.add.at(votes, (at, np.asarray(tree.predictions, dtype=np.int64)), 1.0)
    overall = int(np.argmax(np.bincount(data.class_index, weights=data.weights, minlength=data.n_classes)))
    return tree_of(ctx, tree.W, tree.b, leaf, np.where(votes.sum(1) > 0, np.argmax(votes, 1), overall))


def tree_certificate(ctx: BuildContext, task: DPTask, tree: DPTree, model: Any,
                     bounds: tuple[float, float]) -> tuple[Certificate, int]:
    """The certificate of a DP tree checked on the tree (module docstring): bounds and the one-feature budget as
    ``max_violation``, the objective recounted from ``model``'s predictions (its own rule, on the scaled data the
    rows see), the DP's own predictions against the model's as ``routing_mismatches``; ``bounds``: the split
    block's ``(W, B)`` (:meth:`~treeopt_dsl.blocks.ObliqueSplit.bounds`). Also how many samples lie inside a
    split's margin band ``(0, eps)``: cuts the MILP's rows could not express, which the exact route may take."""
    data, eps = ctx.data, float(ctx.numerics.eps)
    Wb, Bb = bounds
    W, b = model.W, model.b
    V = model.scores(data.X, scaled=True)  # sample x node, scaled space: what the rows see
    band = np.minimum(V, eps - V)  # > 0 only strictly inside (0, eps): a cut closer than the MILP's margin
    close = int(np.count_nonzero(band.max(axis=1, initial=0.0) > 1e-3 * eps))
    viol = max(0.0, float(np.max(np.abs(W) - Wb, initial=0.0)), float(np.max(np.abs(b) - Bb, initial=0.0)))
    used = np.count_nonzero(W, axis=1)
    viol = max(viol, float(np.max(used, initial=0)) - 1.0)  # the budget of one feature per split (3.14)
    codes = model.predict_codes(data.X, scaled=True)  # the decoded model's own rule, on the data the rows see
    loss = task.C * float(np.sum(data.weights * (codes != data.class_index)))
    l0 = task.alpha * int(used.sum())
    dp_codes = (np.asarray(tree.predictions) > 0).astype(np.int64) if data.n_classes <= 2 else tree.predictions
    mism = int(np.sum(dp_codes != codes))
    # the band is eps wide (1e-5 by default): intrusions are measured against a thousandth of it, not the
    # solvers' absolute 1e-5 (a sample at the band's middle would pass that)
    return Certificate(objective_solver=tree.objective, objective_decoded=loss + l0, max_violation=viol,
                       routing_mismatches=mism, tolerance=1e-9, violation_tolerance=1e-3 * eps,
                       terms={"loss": loss, "l0": l0}), close
