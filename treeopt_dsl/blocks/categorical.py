"""Blocks of the optimal categorical decision trees of Günlük et al. ([gunluk-odt-categorical], §4, lines 46-275).

Notation of the paper: samples ``I = I+ ∪ I-``, 0/1 features ``J`` grouped into ``G`` (``g(j)``,
``J(g)``), decision nodes ``K`` and leaves ``B = B+ ∪ B-`` of a fixed :class:`~treeopt_dsl.topology.shapes.Shape`
(the tree topology is the ``topology`` argument of ``Formulation.build``). Blocks in model order:

* :class:`GroupSelection`: ``v[k, g]`` and (1) ``sum_g v[k, g] = 1``;
* :class:`FeatureSubset`: ``z[k, j]`` and (2) ``z[k, j] <= v[k, g(j)]``;
* :class:`BranchIndicators`: the expressions (3) ``L(i, k) = sum_j a_ij z[k, j]`` and (4) ``R = 1 - L``;
* :class:`PathRouting`: ``c[i, b]`` and either the path rows (5)-(7) or the strengthened rows
  (11)-(12) that replace them, with the ``c`` that cannot score dropped (14);
* :class:`AnchorFeatures`: (13) ``z[k, j(g)] = v[k, g]`` at the nodes where it is valid (§4.3.2);
* :class:`OrdinalGroups`: the monotone rows of §4.4 with ``w[k, g]`` for numeric (binned) groups;
* :class:`MaxCardinality`: the subset-size rows of §4.5;
* :class:`ClassWeightedAccuracy`: objective (8a) with the class weight ``C``;
* :class:`RateConstraint`: the sensitivity / specificity variant (15)-(16).

**Objective sign.** The model minimizes, so (8a) ``max sum_{I+,B+} c + C sum_{I-,B-} c`` is
written as the equivalent ``min |I+| + C |I-| - (8a)``: the reported objective is the weighted
number of misclassified training samples (0 = perfect), and (16) likewise becomes the number of
missed samples of the maximized class.

**Integrality (Proposition 3).** With ``relax=True`` the ``v`` (all nodes), the ``z`` of the
leaf-adjacent nodes (family ``z_leaf``) and the ``c`` are continuous in ``[0, 1]``; only ``z`` at
the other nodes (family ``z``) is binary, so the number of integer variables does not depend on
the number of samples. Proposition 3 is proved for (8) (and holds with (11)-(14) and with the
homogeneous monotone rows of §4.4, which the tests check against the fully integral model); the
max.card rows (§4.5) and the rate constraint (15) are not covered by it (a fractional ``v`` can
split the cardinality budget between groups, and (15) can be met by fractional routing), so with
them :class:`FeatureSubset` must keep ``z_leaf`` binary (``formulations/categorical.py`` does).

**Leaf labels.** ``B+`` are the even leaf labels (line 69): the left leaf of every leaf-parent is
``-1`` and its right leaf ``+1``. (The proof of Proposition 3 names the left leaf ``b+``; the two
readings are the same model up to complementing the test at every leaf-adjacent node, which no
constraint here distinguishes: those nodes carry no anchor rows.)

Everything is vectorized over samples, nodes, leaves and features; Python loops run over groups only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import xarray as xr

from treeopt_dsl.blocks.splits import FEATURE, SAMPLE
from treeopt_dsl.datasets.encoding import GroupStructure, structure
from treeopt_dsl.errors import DataError, FormulationError
from treeopt_dsl.formulation import Block, BuildContext
from treeopt_dsl.ir import Kind, LinExpr, VarFamily
from treeopt_dsl.topology.shapes import LEAF, NODE, Shape

GROUP, PAIR = "group", "pair"


def _shape(ctx: BuildContext) -> Shape:
    s = ctx.topology
    if not isinstance(s, Shape):
        raise FormulationError("the categorical tree blocks need a treeopt_dsl.topology.shapes.Shape as topology "
                               "(e.g. Shape.named('2'); the balanced Topology has no explicit leaves)")
    return s


def _kind(relax: bool) -> Kind:
    return Kind.CONTINUOUS if relax else Kind.BINARY


class GroupSelection(Block):
    """``v[k, g]``: group ``g`` is tested at decision node ``k``; (1) ``sum_g v[k, g] = 1``.

    ``relax=True`` declares ``v`` continuous in ``[0, 1]`` (Proposition 3 (i)). Groups removed by a
    feature preselection (§5.1: "by setting the corresponding v variables to 0") are read from
    ``data.meta["allowed_groups"]`` (a bool per group) and get the upper bound 0.
    """

    provides = ("v", "groups")

    def __init__(self, relax: bool = True) -> None:
        self.relax = bool(relax)

    def build(self, ctx: BuildContext) -> None:
        shape, m = _shape(ctx), ctx.model
        S = structure(ctx.data)
        allowed = np.asarray(ctx.data.meta.get("allowed_groups", np.ones(S.n_groups, dtype=bool)), dtype=bool)
        if allowed.shape != (S.n_groups,):
            raise FormulationError(f"meta['allowed_groups'] must hold one bool per group ({S.n_groups})")
        if not allowed.any():
            raise FormulationError("every feature group is excluded (allowed_groups is all False)")
        up = xr.DataArray(allowed.astype(float), dims=(GROUP,))
        v = m.add_variables("v", (NODE, GROUP), {NODE: shape.nodes, GROUP: np.arange(S.n_groups)},
                            kind=_kind(self.relax), lower=0.0, upper=up)
        m.add_constraints("one_group", v.sum(GROUP) == 1)  # (1)
        ctx.provide("v", v, "GroupSelection")
        ctx.provide("groups", S, "GroupSelection")


class FeatureSubset(Block):
    """``z[k, j]``: feature ``j`` is in the subset tested at node ``k``; (2) ``z[k, j] <= v[k, g(j)]``.

    Two families: ``z`` on the nodes not adjacent to a leaf (always binary) and ``z_leaf`` on the
    leaf-adjacent nodes (continuous with ``relax=True``, Proposition 3 (ii)). The role ``"subset"`` is
    the expression ``z`` over all nodes (node x feature); the name ``"z"`` stays with the routing of the
    oblique trees, which the certificate compares.
    """

    requires = ("v", "groups")
    provides = ("subset",)

    def __init__(self, relax: bool = True) -> None:
        self.relax = bool(relax)

    def build(self, ctx: BuildContext) -> None:
        shape, m = _shape(ctx), ctx.model
        S: GroupStructure = ctx["groups"]
        feats = np.arange(S.n_features)
        adj = shape.leaf_adjacent
        z_in = m.add_variables("z", (NODE, FEATURE), {NODE: shape.nodes[~adj], FEATURE: feats},
                               kind=Kind.BINARY, lower=0.0, upper=1.0)
        z_lf = m.add_variables("z_leaf", (NODE, FEATURE), {NODE: shape.nodes[adj], FEATURE: feats},
                               kind=_kind(self.relax), lower=0.0, upper=1.0)
        ids = np.empty((shape.n_nodes, S.n_features), dtype=np.int64)
        ids[~adj] = z_in.ids
        ids[adj] = z_lf.ids
        z = LinExpr((NODE, FEATURE), {NODE: shape.nodes, FEATURE: feats}, np.ones(ids.shape + (1,)),
                    ids[..., None], 0.0, distinct=True, rep=frozenset(), fams=frozenset({z_in.offset, z_lf.offset}))
        v_of_j = ctx["v"].take(GROUP, S.group_of, FEATURE, feats)  # v[k, g(j)]
        m.add_constraints("subset_in_group", z <= v_of_j)  # (2)
        ctx.provide("subset", z, "FeatureSubset")


def _row_terms(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column index and value of every nonzero of each row, padded with (-1, 0): shape (n, max nnz)."""
    rows, cols = np.nonzero(A)
    counts = np.bincount(rows, minlength=A.shape[0])
    width = max(int(counts.max()) if counts.size else 0, 1)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pos = np.arange(rows.size) - start[rows]
    idx = np.full((A.shape[0], width), -1, dtype=np.int64)
    val = np.zeros((A.shape[0], width))
    idx[rows, pos] = cols
    val[rows, pos] = A[rows, cols]
    return idx, val


class BranchIndicators(Block):
    """(3) ``L(i, k) = sum_j a_ij z[k, j]`` (sample ``i`` branches left at ``k``) and (4) ``R = 1 - L``.

    ``L`` is built from the nonzeros of ``a`` only (one per group and sample), not as a dense
    contraction. Proposition 1 needs at most one 1 per group and sample; this is checked.
    """

    requires = ("subset", "groups")
    provides = ("L", "R")

    def build(self, ctx: BuildContext) -> None:
        shape = _shape(ctx)
        S: GroupStructure = ctx["groups"]
        A = np.asarray(ctx.data.X, dtype=float)
        if not np.all((A == 0) | (A == 1)):
            raise DataError("the categorical tree needs 0/1 features; encode the data with "
                            "treeopt_dsl.datasets.encoding.encode_groups first")
        per_group = np.add.reduceat(A, S.first, axis=1) if A.size else A
        if np.any(per_group > 1):
            i, g = np.argwhere(per_group > 1)[0]
            raise DataError(f"sample {i} has several features set in group {S.names[g]!r}: the features of a "
                            "group must be a unit vector (Proposition 1)")
        z: LinExpr = ctx["subset"]
        zid = z.vars[..., 0]  # node x feature
        idx, val = _row_terms(A)
        pad = idx < 0
        vars_ = np.where(pad[:, None, :], -1, zid[:, np.maximum(idx, 0)].transpose(1, 0, 2))
        coef = np.broadcast_to(val[:, None, :], vars_.shape).copy()
        L = LinExpr((SAMPLE, NODE), {SAMPLE: np.arange(A.shape[0]), NODE: shape.nodes}, coef, vars_, 0.0,
                    distinct=True, rep=frozenset({SAMPLE}), fams=z.fams)
        ctx.provide("L", L, "BranchIndicators")  # (3)
        ctx.provide("R", 1 - L, "BranchIndicators")  # (4)


@dataclass
class LeafVars:
    """The routing variables of one class: ``c[i, b]`` for ``i`` in ``samples`` and ``b`` in ``leaves``."""

    sign: int
    family: VarFamily
    samples: np.ndarray  # sample indices (the coordinates of the family's sample dimension)
    leaves: np.ndarray  # leaf labels (all leaves, or only those of the same sign with (14))

    def scoring(self, shape: Shape) -> xr.DataArray:
        """1 on the leaves whose label is this class (the ``c`` the objective counts)."""
        on = shape.leaf_sign[self.leaves - 1] == self.sign
        return xr.DataArray(on.astype(float), dims=(LEAF,), coords={LEAF: self.leaves})

    def correct(self, shape: Shape) -> LinExpr:
        """``sum_{b in B_s} c[i, b]`` per sample of this class (1 iff correctly classified)."""
        return self.family.dot(self.scoring(shape), LEAF)


class PathRouting(Block):
    """``c[i, b]``: sample ``i`` is routed to leaf ``b``, with either the paper's basic rows

    (5) ``c[i, b] <= L(i, k)`` for ``k in K^L(b)``, (6) ``c[i, b] <= R(i, k)`` for ``k in K^R(b)``,
    (7) ``sum_b c[i, b] = 1``

    or (``strengthen=True``, §4.3.1) the strengthened rows that replace them:

    (11) ``sum_{b: k in K^L(b)} c[i, b] <= L(i, k)``, (12) ``sum_{b: k in K^R(b)} c[i, b] <= R(i, k)``
    for every sample and node; (7) is then dropped (the root's (11) + (12) imply ``sum_b c <= 1``).

    ``drop_c=True`` (§4.3.3, (14)) defines ``c`` only for the pairs that can score, ``i in I+`` with
    ``b in B+`` and ``i in I-`` with ``b in B-``, writes (5)-(6) / (11)-(12) for them only, and deletes
    (7) as the paper does. The variables are one family per class, ``c_pos`` and ``c_neg`` (sample
    coordinates are the original sample indices). ``relax=True`` declares ``c`` continuous (§4.3.3).
    """

    requires = ("L", "R")
    provides = ("c",)

    def __init__(self, strengthen: bool = True, drop_c: bool = True, relax: bool = True) -> None:
        self.strengthen, self.drop_c, self.relax = bool(strengthen), bool(drop_c), bool(relax)

    def build(self, ctx: BuildContext) -> None:
        shape, m, y = _shape(ctx), ctx.model, ctx.data.y
        L, R = ctx["L"], ctx["R"]
        out: dict[int, LeafVars] = {}
        for sign, tag in ((1, "pos"), (-1, "neg")):
            idx = np.flatnonzero(y == sign)
            leaves = shape.leaves[shape.leaf_sign == sign] if self.drop_c else shape.leaves
            c = m.add_variables(f"c_{tag}", (SAMPLE, LEAF), {SAMPLE: idx, LEAF: leaves}, kind=_kind(self.relax),
                                lower=0.0, upper=1.0)
            out[sign] = LeafVars(sign, c, idx, leaves)
            if idx.size == 0:
                continue
            L_s, R_s = L.isel(sample=idx), R.isel(sample=idx)
            KL, KR = shape.mask("KL", leaves=leaves), shape.mask("KR", leaves=leaves)
            if self.strengthen:
                for name, side, M in ((f"strong_left_{tag}", L_s, KL), (f"strong_right_{tag}", R_s, KR)):
                    used = M.sum(LEAF) > 0  # nodes with a leaf of this set below that branch
                    if bool(used.any()):
                        sel = shape.nodes[used.values]
                        lhs = c.dot(M.sel({NODE: sel}), LEAF)
                        m.add_constraints(name, lhs <= side.sel(node=sel))  # (11) / (12)
            else:
                m.add_constraints(f"path_left_{tag}", (c <= L_s).where(KL))  # (5)
                m.add_constraints(f"path_right_{tag}", (c <= R_s).where(KR))  # (6)
                if not self.drop_c:
                    m.add_constraints(f"one_leaf_{tag}", c.sum(LEAF) == 1)  # (7)
        ctx.provide("c", out, "PathRouting")

    @staticmethod
    def leaf_of(ctx: BuildContext, x: np.ndarray) -> np.ndarray:
        """Leaf position (0-based) each training sample reaches in the tree given by the ``z`` columns of ``x``."""
        shape = _shape(ctx)
        Z = ctx["subset"].evaluate(x) > 0.5  # node x feature, rounded
        goes_left = (np.asarray(ctx.data.X, dtype=float) @ Z.T.astype(float)) > 0.5  # L(i, k), (3)
        return shape.route(goes_left)

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        """``c[i, b] = 1`` iff sample ``i`` reaches leaf ``b`` in the tree of ``(v, z)`` (Proposition 2)."""
        leaf = self.leaf_of(ctx, x)
        for lv in ctx["c"].values():
            x[lv.family.ids] = (leaf[lv.samples][:, None] == (lv.leaves - 1)[None, :]).astype(float)


class AnchorFeatures(Block):
    """(13) ``z[k, j(g)] = v[k, g]`` for every group, at the nodes that are not adjacent to a leaf and
    whose two subtrees have the same topology (``Shape.anchored``): there, complementing the test and
    swapping the subtrees gives the same tree, so fixing which side the anchor level goes to (left)
    removes that symmetry without excluding any tree (§4.3.2). The anchor ``j(g)`` is the first level
    of each group (for a numeric group the lowest bin, so with §4.4 the anchored test reads ``x <= t``).

    Provides ``"anchors"``: the anchored node labels.
    """

    requires = ("v", "subset", "groups")
    provides = ("anchors",)

    def build(self, ctx: BuildContext) -> None:
        shape, m = _shape(ctx), ctx.model
        S: GroupStructure = ctx["groups"]
        nodes = shape.nodes[shape.anchored]
        ctx.provide("anchors", nodes, "AnchorFeatures")
        if nodes.size == 0:
            return
        z_anchor = ctx["subset"].take(FEATURE, S.first, GROUP, np.arange(S.n_groups))  # z[k, j(g)]
        m.add_constraints("anchor", z_anchor.sel(node=nodes) == ctx["v"].sel(node=nodes))  # (13)


class OrdinalGroups(Block):
    """Monotone subsets for numeric (binned) groups, §4.4 ([gunluk-odt-categorical] lines 256-262):

    ``z[k, j] >= z[k, j+1] - w[k, g]`` and ``z[k, j] >= z[k, j-1] - (1 - w[k, g])`` for consecutive
    levels ``j, j+1`` of ``g``, ``w`` binary: with ``w = 0`` the subset is a prefix of the bins
    (``x <= t`` goes left), with ``w = 1`` a suffix (``x > t`` goes left).

    Only groups flagged ordinal with at least 3 levels get rows (with 2 levels every subset is
    monotone). At anchored nodes the anchor (13) already puts the lowest bin left, so only the prefix
    form remains and ``w`` is fixed to 0 there (``fix_anchored``), which removes the last duplicate.
    """

    requires = ("subset", "groups")
    provides = ("w_ord",)

    def __init__(self, fix_anchored: bool = True) -> None:
        self.fix_anchored = bool(fix_anchored)

    def _pairs(self, S: GroupStructure) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        groups = np.flatnonzero(S.ordinal & (S.sizes >= 3))
        lo = [S.members(g)[:-1] for g in groups]  # one numpy op per group
        pg = [np.full(S.sizes[g] - 1, k) for k, g in enumerate(groups)]
        lo_a = np.concatenate(lo) if lo else np.zeros(0, dtype=np.int64)
        return groups, lo_a, lo_a + 1, np.concatenate(pg) if pg else np.zeros(0, dtype=np.int64)

    def build(self, ctx: BuildContext) -> None:
        shape, m = _shape(ctx), ctx.model
        S: GroupStructure = ctx["groups"]
        groups, lo, hi, pg = self._pairs(S)
        if groups.size == 0:
            ctx.provide("w_ord", None, "OrdinalGroups")
            return
        up = np.ones((shape.n_nodes, groups.size))
        if self.fix_anchored and "anchors" in ctx and len(ctx["anchors"]):
            up[np.asarray(ctx["anchors"]) - 1] = 0.0
        w = m.add_variables("w_ord", (NODE, GROUP), {NODE: shape.nodes, GROUP: groups}, kind=Kind.BINARY,
                            lower=0.0, upper=xr.DataArray(up, dims=(NODE, GROUP)))
        z = ctx["subset"]
        pairs = np.arange(lo.size)
        z_lo, z_hi = z.take(FEATURE, lo, PAIR, pairs), z.take(FEATURE, hi, PAIR, pairs)
        w_p = w.take(GROUP, pg, PAIR, pairs)
        m.add_constraints("ordinal_down", z_lo >= z_hi - w_p)  # z_j >= z_{j+1} - w
        m.add_constraints("ordinal_up", z_hi >= z_lo - (1 - w_p))  # z_{j+1} >= z_j - (1 - w)
        ctx.provide("w_ord", (w, groups, lo, hi, pg), "OrdinalGroups")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        """``w = 1`` iff the subset increases somewhere along the bins (a suffix), else 0."""
        if ctx["w_ord"] is None:
            return
        w, groups, lo, hi, pg = ctx["w_ord"]
        Z = ctx["subset"].evaluate(x) > 0.5
        rises = (~Z[:, lo] & Z[:, hi]).astype(float)  # node x pair
        member = np.zeros((lo.size, groups.size))
        member[np.arange(lo.size), pg] = 1.0
        x[w.ids] = (rises @ member > 0).astype(float)


class MaxCardinality(Block):
    """Subset size at most ``max_card`` or at least ``|J(g)| - max_card`` (§4.5, [gunluk-odt-categorical] lines
    268-272):

    ``sum_{j in J(g)} z[k, j] <= max_card + (|J(g)| - max_card)(1 - w[k, g])``
    ``sum_{j in J(g)} z[k, j] >= (|J(g)| - max_card) - (|J(g)| - max_card) w[k, g]``, ``w`` binary,

    for every node and every categorical group with ``|J(g)| > max_card``. Groups that carry the
    monotone rows of :class:`OrdinalGroups` are numeric and are left out (the paper applies §4.5 to
    categorical features). ``max_card = 1`` gives the "simple" one-level tests of Table 6.
    """

    requires = ("subset", "groups")
    provides = ("w_card",)

    def __init__(self, max_card: int) -> None:
        if not isinstance(max_card, (int, np.integer)) or isinstance(max_card, bool) or max_card < 1:
            raise FormulationError(f"max_card must be a positive integer, got {max_card!r}")
        self.max_card = int(max_card)

    def build(self, ctx: BuildContext) -> None:
        shape, m = _shape(ctx), ctx.model
        S: GroupStructure = ctx["groups"]
        ordinal = set()
        if "w_ord" in ctx and ctx["w_ord"] is not None:
            ordinal = set(ctx["w_ord"][1].tolist())
        groups = np.array([g for g in range(S.n_groups) if S.sizes[g] > self.max_card and g not in ordinal],
                          dtype=np.int64)
        if groups.size == 0:
            ctx.provide("w_card", None, "MaxCardinality")
            return
        member = np.zeros((S.n_features, groups.size))
        for k, g in enumerate(groups):
            member[S.members(g), k] = 1.0
        w = m.add_variables("w_card", (NODE, GROUP), {NODE: shape.nodes, GROUP: groups}, kind=Kind.BINARY,
                            lower=0.0, upper=1.0)
        size = ctx["subset"].dot(xr.DataArray(member, dims=(FEATURE, GROUP), coords={GROUP: groups}), FEATURE)
        n_g = xr.DataArray(S.sizes[groups].astype(float), dims=(GROUP,), coords={GROUP: groups})
        big = n_g - self.max_card
        m.add_constraints("card_small", size <= self.max_card + (1 - w) * big)
        m.add_constraints("card_large", size >= (1 - w) * big)  # (|J(g)| - mc) - (|J(g)| - mc) w
        ctx.provide("w_card", (w, member), "MaxCardinality")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        """``w = 1`` iff the subset has at most ``max_card`` levels."""
        if ctx["w_card"] is None:
            return
        w, member = ctx["w_card"]
        Z = (ctx["subset"].evaluate(x) > 0.5).astype(float)
        x[w.ids] = ((Z @ member) <= self.max_card + 0.5).astype(float)


class ClassWeightedAccuracy(Block):
    """Objective (8a) ``max sum_{i in I+} sum_{b in B+} c[i, b] + C sum_{i in I-} sum_{b in B-} c[i, b]``,
    minimized as the weighted error ``sum_{I+} (1 - sum_{B+} c) + C sum_{I-} (1 - sum_{B-} c)``.

    ``C`` is the weight of the negative class (line 130), a positive number or ``"balanced"``
    (``|I+| / |I-|``, the paper's example: twice as many positives -> ``C = 2``; with sample weights, the
    ratio of the classes' total weights). Sample weights ``w_i`` (``Dataset.sample_weight``) multiply each
    sample's term: ``sum_{I+} w_i (1 - sum_{B+} c) + C sum_{I-} w_i (1 - sum_{B-} c)``.
    """

    requires = ("c",)
    provides = ("loss",)

    def __init__(self, C: float | str = 1.0) -> None:
        if not (C == "balanced" or (isinstance(C, (int, float)) and math.isfinite(C) and C > 0)):
            raise FormulationError(f"C must be a positive number or 'balanced', got {C!r}")
        self.C = C

    def weight(self, ctx: BuildContext) -> float:
        if self.C == "balanced":
            y, w = ctx.data.y, ctx.data.weights
            neg = float(w[y < 0].sum())
            return float(w[y > 0].sum()) / neg if neg > 0 else 1.0
        return float(self.C)

    def build(self, ctx: BuildContext) -> None:
        shape, c = _shape(ctx), ctx["c"]
        for sign, wt in ((1, 1.0), (-1, self.weight(ctx))):
            if c[sign].samples.size:
                ctx.model.add_objective((1 - c[sign].correct(shape)) * _sample_factor(ctx, c[sign].samples, wt),
                                        "misclassified")  # (8a)
        ctx.provide("loss", self, "ClassWeightedAccuracy")


def _sample_factor(ctx: BuildContext, samples: np.ndarray, factor: float) -> xr.DataArray | float:
    """``factor * w_i`` over the ``sample`` coordinates ``samples`` (just ``factor`` without sample weights)."""
    sw = ctx.data.sample_weight
    if sw is None or bool(np.all(sw == 1.0)):
        return factor
    return xr.DataArray(factor * np.asarray(sw, dtype=float)[samples], dims=(SAMPLE,), coords={SAMPLE: samples})


class RateConstraint(Block):
    """The sensitivity / specificity variant, §4.6 (15)-(16).

    ``min_specificity=s``: (15) ``sum_{I-} sum_{B-} c >= ceil(s |I-|)`` and objective (16)
    ``max sum_{I+} sum_{B+} c`` (minimized as the number of missed positives);
    ``min_sensitivity=s``: the same with the classes switched (Table 14: sensitivity constrained,
    specificity maximized).

    Reading: the paper prints the right-hand side of (15) as ``ceil((1 - 0.95)|I-|)`` for "a
    guaranteed specificity of 0.95"; that bound would only ask for 5% of the negatives, and Table 14
    reports training rates equal to the guaranteed level, so we read it as ``ceil(s |I-|)``.

    Sample weights: the guaranteed rate is a share of the class' total weight, ``sum_{I-} w_i sum_{B-} c >=
    s sum_{I-} w_i`` (rounded up when the weights are integers, as ``ceil`` counts samples), and the objective
    counts the other class' missed weight.
    """

    requires = ("c",)
    provides = ("loss",)

    def __init__(self, min_sensitivity: float | None = None, min_specificity: float | None = None) -> None:
        given = [v for v in (min_sensitivity, min_specificity) if v is not None]
        if len(given) != 1:
            raise FormulationError("give exactly one of min_sensitivity and min_specificity")
        if not 0.0 < float(given[0]) <= 1.0:
            raise FormulationError(f"a guaranteed rate must be in (0, 1], got {given[0]!r}")
        self.min_sensitivity, self.min_specificity = min_sensitivity, min_specificity

    @property
    def constrained(self) -> int:
        """The class whose rate is guaranteed: +1 (sensitivity) or -1 (specificity)."""
        return 1 if self.min_sensitivity is not None else -1

    def bound(self, n: int) -> int:
        rate = float(self.min_sensitivity if self.min_sensitivity is not None else self.min_specificity)
        return int(math.ceil(rate * n - 1e-9))

    def build(self, ctx: BuildContext) -> None:
        shape, c = _shape(ctx), ctx["c"]
        s = self.constrained
        name = "min_sensitivity" if s > 0 else "min_specificity"
        if not ctx.data.weighted:
            k = self.bound(int(c[s].samples.size))
            if c[s].samples.size:
                ctx.model.add_constraints(name, c[s].correct(shape).sum() >= k)  # (15)
            if c[-s].samples.size:
                ctx.model.add_objective(1 - c[-s].correct(shape), "missed")  # (16)
        else:
            w = ctx.data.weights
            idx = c[s].samples
            total = float(w[idx].sum())
            rate = float(self.min_sensitivity if self.min_sensitivity is not None else self.min_specificity)
            integral = bool(np.all(w[idx] == np.round(w[idx])))
            k = float(math.ceil(rate * total - 1e-9)) if integral else rate * total
            if idx.size:
                ctx.model.add_constraints(name, (c[s].correct(shape) * _sample_factor(ctx, idx, 1.0)).sum() >= k)
            if c[-s].samples.size:
                ctx.model.add_objective((1 - c[-s].correct(shape)) * _sample_factor(ctx, c[-s].samples, 1.0),
                                        "missed")
        ctx.provide("loss", self, "RateConstraint")
