"""Optimal decision trees for categorical data (Günlük, Kalagnanam, Li, Menickelly, Scheinberg;
[gunluk-odt-categorical]).

``odt_categorical`` composes ([gunluk-odt-categorical] §4):

    GroupSelection (1) -> FeatureSubset (2) -> BranchIndicators (3)-(4)
    -> PathRouting: (5)-(7), or (11)-(12) when strengthened, c dropped by (14)
    -> AnchorFeatures (13) -> OrdinalGroups (§4.4) -> MaxCardinality (§4.5)
    -> ClassWeightedAccuracy (8a)  or  RateConstraint (15)-(16)

on a fixed tree shape ("2", "2.5", "3", "imbalanced": Figures 2-3). The data are encoded first
(``treeopt_dsl.datasets.encoding.GroupEncoder``): one group per categorical attribute, numeric attributes
binned by deciles (§4.4). The switches ``anchor``, ``relax`` and ``strengthen`` reproduce the
columns of Table 2: Nothing (all off), No anchor, No relax, No strength, All (all on, the default).
``drop_c`` (14) is not a column of Table 2: the paper left the deletion to CPLEX's presolve ("so we
do not report results relevant to this modeling choice"); ``benchmarks/odt_categorical.py`` therefore
keeps every ``c`` and (7) in its Table 2 runs by default. Reading of §4.3.3: with (14) the equation
(7) is deleted, as the text says, also when (5)-(6) are not strengthened; the LP relaxation of that
combination ("No strength" with ``drop_c``) lets a sample count at several leaves of its class, so
its bound can be negative (it is a relaxation, the integer optimum is the same).

``preselect`` is the feature selection of §5.1 (Table 5): a CART tree "with default setting" is fitted on the
training data and only the groups it branches on stay available (their ``v`` keep the upper bound 1, the others get
0, as the paper sets them to 0). ``preselect=rpart`` is the paper's CART, R's rpart (line 394) with its defaults:
subset splits of each group and the cp = 0.01 pruning
(:func:`~treeopt_dsl.models.subset_cart.fit_subset_cart` on the formulation's own groups), which keeps 2-9 groups
of Günlük et al.'s sets (bc 4 of 9, krkp 8 of 36 on a 90 % part: the speed-ups of Table 5 over Table 4 need that;
heloc 1 or 2 of 23). ``preselect_min_groups = k`` lowers rpart's cp from 0.01 until its tree branches on at least k
groups, as §5.7 does for heloc ("making sure that at least 4 features are selected"; heloc then keeps 4-6).
``preselect=cart`` is the reading before 2026-11-28: scikit-learn's tree grown whole on the encoded 0/1 features,
which branches on nearly every group (bc 9 of 9, krkp 32 of 36).

Sample weights (``Dataset.sample_weight``) weigh every sample's term of (8a) / (16) and the rates of (15)
(:class:`~treeopt_dsl.blocks.ClassWeightedAccuracy`, :class:`~treeopt_dsl.blocks.RateConstraint`); the
preselecting CART tree is fitted with them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from treeopt_dsl.blocks.categorical import (
    AnchorFeatures,
    BranchIndicators,
    ClassWeightedAccuracy,
    FeatureSubset,
    GroupSelection,
    MaxCardinality,
    OrdinalGroups,
    PathRouting,
    RateConstraint,
)
from treeopt_dsl.data import Dataset
from treeopt_dsl.datasets.encoding import GroupEncoder
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Formulation, Numerics
from treeopt_dsl.formulations.spec import FormulationSpec, Param, boolean, number_or
from treeopt_dsl.models.categorical import decode_categorical_tree
from treeopt_dsl.models.subset_cart import fit_subset_cart
from treeopt_dsl.topology.shapes import NAMED, Shape

#: the columns of Table 2: (anchor, relax, strengthen)
TABLE2 = {
    "Nothing": dict(anchor=False, relax=False, strengthen=False),
    "No anchor": dict(anchor=False, relax=True, strengthen=True),
    "No relax": dict(anchor=True, relax=False, strengthen=True),
    "No strength": dict(anchor=True, relax=True, strengthen=False),
    "All": dict(anchor=True, relax=True, strengthen=True),
}


def optional_int(text: str) -> int | None:
    return None if str(text).strip().lower() in ("none", "") else int(text)


def optional_rate(text: str) -> float | None:
    return None if str(text).strip().lower() in ("none", "") else float(text)


def columns(text: str) -> tuple[Any, ...]:
    """Comma-separated column names or indices (``"0,3"`` or ``"sex,race"``)."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    return tuple(int(p) if p.lstrip("-").isdigit() else p for p in parts)


def shape_name(text: str) -> str:
    Shape.named(str(text))  # validates
    return str(text)


def infer_flag(text: str) -> Any:
    return "auto" if str(text).strip().lower() == "auto" else boolean(text)


#: the values of ``preselect``: no selection, scikit-learn's whole tree (before 2026-11-28), rpart's (the paper's)
PRESELECT = ("none", "cart", "rpart")
#: ``Dataset.meta`` key of the rows ``preselect=rpart`` fits its tree on when they are not the rows the ODT is
#: fitted on: §5.1 applies CART "using 90% of the data" and the ODT to min(90 %, 600) of them (the experiment
#: runner sets it to the training part before ``train_sample``)
SELECTION_ROWS = "selection_rows"


def rpart_groups(data: Dataset, encoder: GroupEncoder, min_groups: int = 1) -> np.ndarray:
    """Groups rpart's tree with its defaults, grown on the raw ``data``, branches on (§5.1 with line 394): a bool per
    group of ``encoder`` (fitted on the ODT's rows: a level it has not seen goes right); every group when the tree
    does not split. ``min_groups`` > 1: rpart's ``cp`` lowered from 0.01 to the largest value whose tree branches on
    at least that many groups (:meth:`~treeopt_dsl.models.subset_cart.SubsetTree.cp_for_groups`; §5.7, heloc:
    "making sure that at least 4 features are selected"), all the whole tree's groups when it has fewer."""
    tree = fit_subset_cart(data, encoder=encoder, cp=None)  # grown whole, then pruned: as fitting at that cp
    return _kept(tree.groups_at(tree.cp_for_groups(min_groups)), len(encoder.groups_))


def cart_groups(data: Dataset, seed: int = 0) -> np.ndarray:
    """Groups scikit-learn's CART grown whole on the encoded ``data`` branches on (``preselect=cart``): a bool per
    group."""
    from sklearn.tree import DecisionTreeClassifier

    enc: GroupEncoder = data.meta["encoder"]
    tree = DecisionTreeClassifier(random_state=seed).fit(data.X, data.y, sample_weight=data.sample_weight)
    used = tree.tree_.feature[tree.tree_.feature >= 0]
    return _kept(enc.group_of[used], len(enc.groups_))


def _kept(used: np.ndarray, n_groups: int) -> np.ndarray:
    """A bool per group: the ``used`` ones, or all when the tree does not split (a pure training set; rpart below
    its ``minsplit``)."""
    keep = np.zeros(n_groups, dtype=bool)
    keep[used] = True
    return keep if keep.any() else ~keep


class ODTCategorical(FormulationSpec):
    name = "odt_categorical"
    summary = ("Optimal decision tree on grouped categorical features (Günlük et al.): subset tests (1)-(4), "
               "routing (5)-(7) or (11)-(12), anchors (13), (14), Prop. 3, numeric §4.4, max.card §4.5, (15)-(16)")
    params = (
        Param("shape", "2", shape_name, f"tree topology: {' | '.join(NAMED)} (Figures 2-3)"),
        Param("C", 1.0, number_or("balanced"), "weight of a correct negative in (8a), or 'balanced' (|I+|/|I-|)"),
        Param("anchor", True, boolean, "anchor features (13) at symmetric nodes not adjacent to leaves (§4.3.2)"),
        Param("relax", True, boolean, "Prop. 3: v, z at leaf-adjacent nodes and c continuous (§4.3.3-4.3.4)"),
        Param("strengthen", True, boolean, "strengthened rows (11)-(12) instead of (5)-(7) (§4.3.1)"),
        Param("drop_c", True, boolean, "define c only for pairs that can score (14) (§4.3.3)"),
        Param("max_card", None, optional_int, "subset size <= max_card or >= |J(g)| - max_card (§4.5; none: off)"),
        Param("min_sensitivity", None, optional_rate, "guarantee training TPR >= s, maximize TNR (15)-(16)"),
        Param("min_specificity", None, optional_rate, "guarantee training TNR >= s, maximize TPR (15)-(16)"),
        Param("n_bins", 10, int, "quantile bins of a numeric feature (deciles, §4.4)"),
        Param("numeric", "ordinal", str, "numeric groups: ordinal (monotone rows, §4.4: 'n') | categorical ('c')"),
        Param("preselect", "none", str, "feature preselection (§5.1, Table 5): none | rpart (the paper's CART, "
              "its defaults) | cart (scikit-learn's whole tree)"),
        Param("preselect_min_groups", 1, int, "preselect=rpart: at least this many groups, rpart's cp lowered from "
              "0.01 until its tree branches on them (§5.7: heloc, 'at least 4 features')"),
        Param("categorical", (), columns, "raw columns holding category codes (names or indices, comma-separated)"),
        Param("infer_groups", "auto", infer_flag,
              "group runs of exclusive 0/1 columns (auto: when the data carry no groups)"),
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        v = self.values
        if v["numeric"] not in ("ordinal", "categorical"):
            raise FormulationError(f"numeric must be 'ordinal' or 'categorical', got {v['numeric']!r}")
        if v["preselect"] not in PRESELECT:
            raise FormulationError(f"preselect must be one of {', '.join(PRESELECT)}, got {v['preselect']!r}")
        if v["min_sensitivity"] is not None and v["min_specificity"] is not None:
            raise FormulationError("give at most one of min_sensitivity and min_specificity")
        for key in ("min_sensitivity", "min_specificity"):
            if v[key] is not None and not 0.0 < float(v[key]) <= 1.0:
                raise FormulationError(f"{key} must be in (0, 1], got {v[key]!r}")
        if v["max_card"] is not None and (not isinstance(v["max_card"], (int, np.integer)) or v["max_card"] < 1):
            raise FormulationError(f"max_card must be a positive integer or none, got {v['max_card']!r}")
        k = v["preselect_min_groups"]
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise FormulationError(f"preselect_min_groups must be an integer >= 1, got {k!r}")
        if not isinstance(v["n_bins"], (int, np.integer)) or v["n_bins"] < 2:
            raise FormulationError(f"n_bins must be an integer >= 2, got {v['n_bins']!r}")
        Shape.named(str(v["shape"]))

    def topology(self) -> Shape:  # type: ignore[override]
        return Shape.named(str(self.values["shape"]))

    def prepare(self, data: Dataset) -> Dataset:
        """Fit the grouped binary encoding on ``data`` (training data); optionally preselect groups by CART."""
        v = self.values
        enc = GroupEncoder(int(v["n_bins"]), tuple(v["categorical"]), v["infer_groups"]).fit(data)
        out = enc.transform(data)
        meta = {k: m for k, m in out.meta.items() if k != SELECTION_ROWS}  # used here, not carried into the model
        if v["preselect"] == "cart":
            meta["allowed_groups"] = cart_groups(out)
        elif v["preselect"] == "rpart":
            meta["allowed_groups"] = rpart_groups(data.meta.get(SELECTION_ROWS, data), enc,
                                                  int(v["preselect_min_groups"]))
        return replace(out, meta=meta)

    def rate(self) -> dict[str, float | None]:
        return {k: self.values[k] for k in ("min_sensitivity", "min_specificity")}

    def formulation(self) -> Formulation:
        v = self.values
        relax = bool(v["relax"])
        rate = any(r is not None for r in self.rate().values())
        # Proposition 3 covers (8) (+ (11)-(14), + the homogeneous rows of §4.4): with max.card or a rate
        # constraint the z of leaf-adjacent nodes stay binary (see treeopt_dsl/blocks/categorical.py)
        relax_leaf_z = relax and not rate and v["max_card"] is None
        blocks = [
            GroupSelection(relax=relax),
            FeatureSubset(relax=relax_leaf_z),
            BranchIndicators(),
            PathRouting(strengthen=bool(v["strengthen"]), drop_c=bool(v["drop_c"]), relax=relax),
        ]
        if v["anchor"]:
            blocks.append(AnchorFeatures())
        if v["numeric"] == "ordinal":
            blocks.append(OrdinalGroups())
        if v["max_card"] is not None:
            blocks.append(MaxCardinality(int(v["max_card"])))
        blocks.append(RateConstraint(**self.rate()) if rate else ClassWeightedAccuracy(v["C"]))
        return Formulation(self.name, blocks, decoder=decode_categorical_tree, numerics=Numerics(),
                           decisions=("v", "z", "z_leaf"))
