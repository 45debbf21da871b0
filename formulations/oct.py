"""OCT and OCT-H (Bertsimas and Dunn) in the loss-optimal framework (thesis §3.2, [aldinucci-thesis-2024] lines
414-462).

* ``oct``: axis-aligned (``||w_t||_0 <= 1`` by (3.14) with budget 1, Remark 2) and the
  misclassification loss (3.9) at the last level; objective ``C sum_i xi_i + alpha sum_t ||w_t||_0``.
* ``octh``: oblique, the 0-1 loss, ``||w_t||_1 <= 1`` (the unit l1 ball of Bertsimas-Dunn that the
  thesis mentions, line 745) and the feature-count penalty ``alpha sum_t ||w_t||_0`` (line 721).

The 0-1 loss is scale-invariant, so ``|w_jt| <= 1`` loses nothing; big-M is derived per row.

Both handle more than two classes natively (``multiclass = True``): the 0-1 loss block then gives every leaf
(the two sides of a last-level node) Bertsimas and Dunn's class variables ``c[l, k]``
(:class:`~treeopt_dsl.blocks.ZeroOneLoss`, docs/multiclass.md). The flow routings stay binary.
"""

from __future__ import annotations

from typing import Any

from treeopt_dsl import blocks as B
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.exact.binarize import CutScaler, binarize
from treeopt_dsl.formulation import Formulation, Numerics
from treeopt_dsl.formulations.common import tree_params
from treeopt_dsl.formulations.spec import FormulationSpec, Param
from treeopt_dsl.models.tree import decode_flow_tree, decode_tree

#: the largest samples x threshold columns x branch nodes that ``cuts="all"`` builds (the split rows are dense
#: in the columns: breast-cancer, 100 samples, 3000 columns, depth 1 takes 0.8 GB to build)
CUTS_ALL_MAX_ENTRIES = 2_000_000


class OCT(FormulationSpec):
    name = "oct"
    multiclass = True  # leaf class variables (B&D) when the data have K > 2 classes
    summary = "Optimal Classification Tree, axis-aligned: 0-1 loss (3.9) + ||w_t||_0 <= 1 (3.14)"
    params = (
        *tree_params(big_m="derived", w_bound=1.0, b_bound="auto"),
        Param("alpha", 0.0, float, "penalty per used feature (number of splits)", minimum=0.0),
        Param("cuts", "data", str, "data: split the scaled features (cuts between values closer than eps/w_bound "
                                   "cannot be expressed; the result counts them); all: split 0/1 columns [x_j > c] "
                                   "at every midpoint c, so every distinct cut is expressible (larger model)"),
        Param("routing", "bigm", str, "bigm: big-M forwarding (3.7) and the 0-1 loss (3.9); flow: FlowOCT's flow "
                                      "routing (Aghaei et al., no big-M); benders: its Benders decomposition (cuts "
                                      "added lazily). flow and benders split the 0/1 cut columns (cuts=all)"),
    )

    def prepare(self, data: Any) -> Any:
        """``cuts="all"``: the model splits threshold columns ``[x_j > c]``, one per midpoint between
        consecutive distinct training values (:func:`treeopt_dsl.exact.binarize`): every distinct
        axis-aligned cut has a gap of 1, whatever eps, and predictions map raw inputs through the same cuts."""
        cuts = self.values.get("cuts", "data")  # (OCT-H, oblique, has no such parameter)
        routing = self.values.get("routing", "bigm")
        if cuts not in ("data", "all"):
            raise FormulationError(f"cuts must be 'data' or 'all', got {cuts!r}")
        if routing not in ROUTINGS:
            raise FormulationError(f"routing must be one of {', '.join(ROUTINGS)}, got {routing!r}")
        if cuts == "data" and routing == "bigm":
            return super().prepare(data)
        from dataclasses import replace


        if routing != "bigm":
            data.require_binary(f"{self.name} with routing={routing}")
        bz = binarize(data.X)
        nodes = 2 ** int(self.values["depth"]) - 1
        if data.n_samples * bz.n_columns * nodes > CUTS_ALL_MAX_ENTRIES and routing != "benders":
            raise FormulationError(
                f"cuts='all' gives {bz.n_columns} threshold columns on {data.n_samples} samples: a model of "
                f"about {data.n_samples * bz.n_columns * nodes:.2g} split entries, above {CUTS_ALL_MAX_ENTRIES:.0e} "
                "(memory): subsample (--sample) or use cuts='data'")
        scaler = CutScaler(bz, data.feature_names)
        return replace(data, X=bz.Z.astype(float), feature_names=scaler.names, meta={**data.meta, "scaler": scaler})

    def regularizers(self) -> list[B.Block]:
        alpha = float(self.values["alpha"])
        return [B.L0(budget=1, penalty=alpha)]

    def formulation(self) -> Formulation:
        v = self.values
        routing = v.get("routing", "bigm")
        if routing in ("flow", "benders"):
            if v.get("split_columns"):
                raise FormulationError(f"split_columns applies to routing=bigm (the hyperplane split's values); "
                                       f"routing={routing} has binary splits and no such values")
            return self.flow_formulation(routing)
        return Formulation(
            self.name,
            [
                B.ObliqueSplit(w_bound=v["w_bound"], b_bound=v["b_bound"], columns=v["split_columns"]),
                *self.regularizers(),
                B.Routing(),
                B.BigMForwarding(M=v["big_m"], eps=v["eps"]),
                B.ZeroOneLoss(C=v["C"], levels="last", M=v["big_m"]),
            ],
            decoder=decode_tree,
            numerics=Numerics(eps=v["eps"]),
            decisions=("w", "b"),
        )


    def flow_formulation(self, routing: str) -> Formulation:
        """FlowOCT / BendersOCT (Aghaei, Gómez, Vayanos): the same trees (axis-aligned, the 0-1 loss at the
        leaves, ``alpha`` per split) on the 0/1 cut columns, routed by flows instead of big-M rows."""
        import numpy as np

        v = self.values
        C = float(np.atleast_1d(np.asarray(v["C"], dtype=float))[-1])  # the last level's C_d: (3.9) at the leaves
        alpha = float(v["alpha"])
        reg = [B.L0(of="select", penalty=alpha)] if alpha > 0 else []
        tail = [B.FlowRouting(), B.FlowZeroOneLoss(C=C)] if routing == "flow" else [B.BendersFlow(C=C)]
        return Formulation(f"{self.name}-{routing}", [B.BinarySplits(), *reg, *tail], decoder=decode_flow_tree,
                           numerics=Numerics(eps=v["eps"]), decisions=("select", "leaf_class"))


#: the routings of ``oct`` (``--param routing=...``)
ROUTINGS = ("bigm", "flow", "benders")


class OCTH(OCT):
    name = "octh"
    summary = "OCT-H, oblique: 0-1 loss (3.9) + unit l1 ball + alpha * feature count (3.14)"
    params = (
        *tree_params(big_m="derived", w_bound=1.0, b_bound="auto"),
        Param("alpha", 0.0, float, "penalty per used feature at each node", minimum=0.0),
    )

    def regularizers(self) -> list[B.Block]:
        alpha = float(self.values["alpha"])
        l1 = B.L1(weight=0.0, bound=1.0)
        return [l1, B.L0(penalty=alpha)] if alpha > 0 else [l1]
