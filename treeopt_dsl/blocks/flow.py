"""Flow routing for binary features (FlowOCT) and its Benders decomposition (BendersOCT).

Aghaei, Gómez and Vayanos, "Strong optimal classification trees" (Operations Research, 2024; arXiv
2103.15965), §3 (FlowOCT, problem (4)) and §4 (BendersOCT, problem (8) and the cuts of Theorem 2). Not
among the seed papers: read from the paper and ODTlearn's documentation (docs/DESIGN.md, "Flow routing").

A tree of depth ``d`` is a flow network: a source ``s`` feeds the root, every branch node ``n`` forwards
flow to its children, every leaf ``l`` to a sink ``t``. Sample ``i`` may send one unit along the arcs its
features open: at ``n``, the left arc has capacity ``1 - sum_f x_if b[n, f]`` and the right one
``sum_f x_if b[n, f]`` (``b[n, f] = 1``: node ``n`` tests binary feature ``f``, ``x_if = 1`` goes right),
and the sink arc of leaf ``l`` has capacity ``c[l, y_i]`` (the leaf predicts the sample's class). The unit
reaches the sink iff the tree classifies the sample correctly, so ``1 - flow`` is the 0-1 loss and the LP
relaxation is much tighter than big-M routing (no ``M``, no ``eps``).

The reading this library takes (docs/DESIGN.md): FlowOCT's "predict at an internal node" variables
``p[n]`` are replaced by the library's layout, where every branch node of a balanced tree either tests
one feature or tests none and sends every sample left (``sum_f b[n, f] <= 1``, the left arc's capacity
``1 - sum_f x_if b[n, f]`` is then 1): both describe the same classifiers (a pruned node is a node whose
samples all follow one path to one leaf) and the LP bound is the same on the leaves' flows.
Symmetry breaking (valid because the right subtree of a node that splits on nothing is never reached):
``sum_f b[2n+2, f] <= sum_f b[n, f]``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import xarray as xr

from treeopt_dsl.blocks.losses import sample_weights
from treeopt_dsl.blocks.splits import FEATURE, SAMPLE
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Block, BuildContext, Cuts
from treeopt_dsl.ir import Kind, affine
from treeopt_dsl.topology import NODE, Topology

FNODE, LEAF, CLASS = "fnode", "leaf", "class"


def _check_binary(X: np.ndarray, who: str) -> None:
    if X.size and not np.all((X == 0) | (X == 1)):
        raise FormulationError(f"{who} needs 0/1 features (FlowOCT splits binary columns); oct with "
                               "--param routing=flow binarizes every feature at its cuts first")


def flow_route(topo: Topology, X: np.ndarray, select: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(path, right)``: the branch node of each sample at each level (sample x level) and whether it goes
    right there, for 0/1 features ``X`` and the (rounded) selections ``select[node, feature]``; a sample's
    leaf is ``2 * path[:, -1] + 1 + right[:, -1] - n_nodes``."""
    n = X.shape[0]
    goes = (X @ np.round(select).T) > 0.5  # sample x node: right iff the tested feature is 1
    path = np.empty((n, topo.depth), dtype=np.int64)
    right = np.empty((n, topo.depth), dtype=bool)
    t = np.zeros(n, dtype=np.int64)
    for h in range(topo.depth):
        path[:, h] = t
        right[:, h] = goes[np.arange(n), t]
        t = 2 * t + 1 + right[:, h]
    return path, right


def reached_leaf(topo: Topology, path: np.ndarray, right: np.ndarray) -> np.ndarray:
    return 2 * path[:, -1] + 1 + right[:, -1] - topo.n_nodes


class BinarySplits(Block):
    """``b[n, f]`` binary: branch node ``n`` tests 0/1 feature ``f`` (FlowOCT (4b), without ``p``: see the
    module docstring); ``sum_f b[n, f] <= 1``, and the symmetry-breaking rows ``sum_f b[2n+2, f] <= sum_f
    b[n, f]``. Provides ``select``; a regularizer composes with it by role (``L0(of="select", penalty=alpha)``:
    ``alpha`` per split, FlowOCT's ``lambda sum b``)."""

    provides = ("select",)

    def __init__(self, symmetry: bool = True) -> None:
        self.symmetry = symmetry

    def build(self, ctx: BuildContext) -> None:
        topo, data, m = ctx.topo, ctx.data, ctx.model
        _check_binary(data.X, "BinarySplits")
        coords = {NODE: topo.nodes, FEATURE: np.arange(data.n_features)}
        b = m.add_variables("select", (NODE, FEATURE), coords, kind=Kind.BINARY)
        m.add_constraints("select_one", b.sum(FEATURE) <= 1)
        inner = topo.inner
        if self.symmetry and inner.size:
            rc = xr.DataArray(np.eye(topo.n_nodes)[2 * inner + 2], dims=("parent", NODE),
                              coords={"parent": inner, NODE: topo.nodes})
            pm = xr.DataArray(np.eye(topo.n_nodes)[inner], dims=("parent", NODE),
                              coords={"parent": inner, NODE: topo.nodes})
            used = b.sum(FEATURE)
            m.add_constraints("select_right_child", used.dot(rc, NODE) <= used.dot(pm, NODE))
        ctx.provide("select", b, "BinarySplits")


def _node_masks(topo: Topology) -> dict[str, xr.DataArray]:
    """0/1 matrices (node x fnode) over the full tree's nodes ``0 .. 2**(d+1) - 2`` (branch nodes, then
    leaves): the node itself, its left child, its right child; and (leaf x fnode) for the leaves."""
    nf = 2 * topo.n_nodes + 1
    eye = np.eye(nf)
    coords = {NODE: topo.nodes, FNODE: np.arange(nf)}
    out = {k: xr.DataArray(eye[idx], dims=(NODE, FNODE), coords=coords)
           for k, idx in (("self", topo.nodes), ("left", 2 * topo.nodes + 1), ("right", 2 * topo.nodes + 2))}
    out["leaf"] = xr.DataArray(eye[topo.n_nodes:], dims=(LEAF, FNODE),
                               coords={LEAF: np.arange(topo.n_leaves), FNODE: np.arange(nf)})
    return out


class FlowRouting(Block):
    """FlowOCT's flows (problem (4)): ``f[i, v] in [0, 1]`` is the flow of sample ``i`` into node ``v`` of the
    full tree (branch nodes and leaves; ``f[i, 0]`` is the arc from the source).

    (4c) conservation at branch nodes ``f[i, n] = f[i, 2n+1] + f[i, 2n+2]``;
    (4e) ``f[i, 2n+1] <= 1 - sum_f x_if b[n, f]`` and (4f) ``f[i, 2n+2] <= sum_f x_if b[n, f]``.

    Provides ``flow`` (the family), ``reach`` (sample x branch node: the flow through ``n``, 1 iff the sample
    passes there and is classified correctly) and ``leaf_flow`` (sample x leaf), which a leaf loss caps by
    its sink arcs (:class:`FlowZeroOneLoss`).
    """

    requires = ("select",)
    provides = ("flow", "reach", "leaf_flow")

    def build(self, ctx: BuildContext) -> None:
        topo, data, m = ctx.topo, ctx.data, ctx.model
        _check_binary(data.X, "FlowRouting")
        mk = _node_masks(topo)
        nf = 2 * topo.n_nodes + 1
        f = m.add_variables("flow", (SAMPLE, FNODE), {SAMPLE: data.n_samples, FNODE: np.arange(nf)},
                            lower=0.0, upper=1.0)
        into, left, right = (f.dot(mk[k], FNODE) for k in ("self", "left", "right"))  # sample x node
        m.add_constraints("flow_conservation", into == left + right)  # (4c)
        xs = affine(ctx["select"], xr.DataArray(data.X, dims=(SAMPLE, FEATURE)), FEATURE)  # sum_f x_if b[n, f]
        m.add_constraints("flow_left_arc", left + xs <= 1)  # (4e)
        m.add_constraints("flow_right_arc", right <= xs)  # (4f)
        ctx.provide("flow", f, "FlowRouting")
        ctx.provide("reach", into, "FlowRouting")
        ctx.provide("leaf_flow", f.dot(mk["leaf"], FNODE), "FlowRouting")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        """One unit along each sample's path (the leaf loss removes it where the leaf predicts wrong)."""
        _path_flows(ctx, x)


def _path_flows(ctx: BuildContext, x: np.ndarray) -> None:
    """Set the flow family of ``x`` to one unit along each sample's path under the tree of ``x``."""
    topo = ctx.topo
    path, right = flow_route(topo, ctx.data.X, ctx["select"].values(x))
    n = ctx.data.n_samples
    vals = np.zeros((n, 2 * topo.n_nodes + 1))
    vals[np.arange(n)[:, None], path] = 1.0
    vals[np.arange(n), 2 * path[:, -1] + 1 + right[:, -1]] = 1.0
    x[ctx["flow"].ids] = vals


class _LeafLoss(Block):
    """What the flow losses share: the weight ``C`` of the 0-1 loss, and leaves that predict by class (the
    decoded tree's last layer classifies by the sign of ``±(x_f - 1/2)``, so its leaf threshold is 0)."""

    def __init__(self, C: float = 1.0) -> None:
        if not (np.isfinite(C) and C >= 0):
            raise FormulationError(f"C must be a non-negative number, got {C!r}")
        self.C = float(C)

    def leaf_threshold(self, ctx: BuildContext) -> float:
        return 0.0

    @staticmethod
    def add_leaf_classes(ctx: BuildContext) -> object:
        """``c[l, k]`` binary, one class per leaf (FlowOCT (4d) with ``p = 1`` at the leaves)."""
        topo, data, m = ctx.topo, ctx.data, ctx.model
        if data.n_classes != 2:
            raise FormulationError("the flow losses handle two classes (the library's trees are binary)")
        c = m.add_variables("leaf_class", (LEAF, CLASS), {LEAF: np.arange(topo.n_leaves), CLASS: [-1, 1]},
                            kind=Kind.BINARY)
        m.add_constraints("leaf_class_one", c.sum(CLASS) == 1)
        return c

    @staticmethod
    def correct(ctx: BuildContext, x: np.ndarray) -> np.ndarray:
        """Whether the tree of ``x`` classifies each training sample correctly."""
        topo = ctx.topo
        path, right = flow_route(topo, ctx.data.X, ctx["select"].values(x))
        leaf = reached_leaf(topo, path, right)
        cls = np.round(ctx["leaf_class"].values(x))  # leaf x {-1, +1}
        return cls[leaf, (ctx.data.y > 0).astype(np.int64)] > 0.5


class FlowZeroOneLoss(_LeafLoss):
    """The 0-1 loss by sink arcs (FlowOCT (4g)): ``f[i, l] <= c[l, y_i]`` at every leaf, the loss
    ``xi_i = 1 - f[i, 0]`` (the unit the sample could not bring to the sink) and the objective
    ``C sum_i xi_i`` (FlowOCT maximizes ``sum_i f[i, 0]``: the same optimum)."""

    requires = ("leaf_flow", "flow")
    provides = ("xi", "loss", "leaf_class")

    def build(self, ctx: BuildContext) -> None:
        m, data = ctx.model, ctx.data
        c = self.add_leaf_classes(ctx)
        onehot = xr.DataArray(np.stack([data.y < 0, data.y > 0], 1).astype(float), dims=(SAMPLE, CLASS),
                              coords={CLASS: [-1, 1]})
        sink = c.dot(onehot, CLASS)  # leaf x sample: c[l, y_i]
        m.add_constraints("flow_sink_arc", ctx["leaf_flow"] <= sink.transpose(SAMPLE, LEAF))  # (4g)
        xi = 1 - ctx["flow"].sel(fnode=0)
        m.add_objective(xi * (sample_weights(ctx) * self.C), "loss")  # C sum_i w_i xi_i
        ctx.provide("xi", xi, "FlowZeroOneLoss")
        ctx.provide("loss", self, "FlowZeroOneLoss")
        ctx.provide("leaf_class", c, "FlowZeroOneLoss")

    def polish(self, ctx: BuildContext, x: np.ndarray) -> None:
        """The flows of the tree the integers describe: one unit along every correctly classified sample's path.
        A solver's incumbent may carry less (any flow up to the capacities is feasible), which overstates its
        loss; the polished point is feasible and scores the tree's own loss."""
        _path_flows(ctx, x)
        self.complete(ctx, x)

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        """Remove the unit of every misclassified sample (its sink arc is closed)."""
        ok = self.correct(ctx, x)
        f = ctx["flow"]
        vals = f.values(x).copy()
        vals[~ok] = 0.0
        x[f.ids] = vals


class BendersFlow(_LeafLoss):
    """BendersOCT (problem (8)): FlowRouting and FlowZeroOneLoss projected onto the tree's variables.

    The master keeps ``b`` (from :class:`BinarySplits`), the leaf classes ``c`` and one ``g_i in [0, 1]`` per
    sample (``g_i`` = the flow sample ``i`` brings to the sink), with the loss ``xi_i = 1 - g_i``. The flow rows
    become cuts ``g_i <= capacity of a source-sink cut of sample i's network`` (Theorem 2), separated lazily
    at integer points by :meth:`separate`: a misclassified sample follows its path ``n_1 .. n_d`` to leaf
    ``l``; the cut around that path crosses, at each ``n_h``, the arc the sample did not take (capacity
    ``sum_{f: x_if = 1} b[n_h, f]`` if it went left, ``1 - sum_{f: x_if = 1} b[n_h, f]`` if it went right)
    and the sink arc of ``l`` (``c[l, y_i]``), so

        ``g_i <= sum_{h: left} sum_{f: x_if=1} b[n_h, f] + sum_{h: right} (1 - sum_{f: x_if=1} b[n_h, f]) + c[l, y_i]``,

    which the current tree violates (its right-hand side is 0 there) and every tree satisfies (a cut's
    capacity bounds the max flow). At an integer point with every violated cut added, ``g_i`` is 1 exactly for
    the correctly classified samples, so the master's optimum is FlowOCT's.
    """

    requires = ("select",)
    provides = ("xi", "loss", "leaf_class", "g")

    def build(self, ctx: BuildContext) -> None:
        m, data = ctx.model, ctx.data
        _check_binary(data.X, "BendersFlow")
        c = self.add_leaf_classes(ctx)
        g = m.add_variables("g", (SAMPLE,), {SAMPLE: data.n_samples}, lower=0.0, upper=1.0)
        xi = 1 - g
        m.add_objective(xi * (sample_weights(ctx) * self.C), "loss")  # C sum_i w_i xi_i
        ctx.provide("xi", xi, "BendersFlow")
        ctx.provide("loss", self, "BendersFlow")
        ctx.provide("leaf_class", c, "BendersFlow")
        ctx.provide("g", g, "BendersFlow")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        x[ctx["g"].ids] = self.correct(ctx, x).astype(float)

    def polish(self, ctx: BuildContext, x: np.ndarray) -> None:
        """``g`` of the tree the integers describe (a solver's incumbent may leave a correct sample's ``g`` below 1)."""
        self.complete(ctx, x)

    def separate(self, ctx: BuildContext, x: np.ndarray, tol: float = 1e-6) -> Cuts | None:
        """The cut of Theorem 2 for every misclassified sample with ``g_i > tol`` at ``x`` (vectorized)."""
        topo, X, y = ctx.topo, ctx.data.X, ctx.data.y
        sel_ids, cls_ids, g_ids = ctx["select"].ids, ctx["leaf_class"].ids, ctx["g"].ids
        path, right = flow_route(topo, X, ctx["select"].values(x))
        leaf = reached_leaf(topo, path, right)
        cls = np.round(ctx["leaf_class"].values(x))
        yk = (y > 0).astype(np.int64)
        wrong = cls[leaf, yk] < 0.5
        rows = np.flatnonzero(wrong & (ctx["g"].values(x) > tol))
        if rows.size == 0:
            return None
        k = rows.size
        Xs = sp.csr_matrix(X[rows])  # the features that are 1 for each violated sample
        coo = Xs.tocoo()
        r_parts, c_parts, v_parts = [np.arange(k), np.arange(k)], [g_ids[rows], cls_ids[leaf[rows], yk[rows]]], \
            [np.ones(k), -np.ones(k)]
        for h in range(topo.depth):
            node = path[rows, h]
            sign = np.where(right[rows, h], 1.0, -1.0)  # went right: + b (from -(1 - sum b)); left: - b
            r_parts.append(coo.row)
            c_parts.append(sel_ids[node[coo.row], coo.col])
            v_parts.append(sign[coo.row])
        A = sp.csr_matrix((np.concatenate(v_parts), (np.concatenate(r_parts), np.concatenate(c_parts))),
                          shape=(k, int(ctx.model.n_vars)))
        A.sum_duplicates()
        upper = right[rows].sum(1).astype(float)  # the constant 1 of each right-hand arc moved to the right side
        return Cuts(A, np.full(k, -np.inf), upper)
