"""OCT and OCT-H (Bertsimas and Dunn) in the loss-optimal framework (thesis §3.2, seed 000 lines 414-462).

* ``oct``: axis-aligned (``||w_t||_0 <= 1`` by (3.14) with budget 1, Remark 2) and the
  misclassification loss (3.9) at the last level; objective ``C sum_i xi_i + alpha sum_t ||w_t||_0``.
* ``octh``: oblique, the 0-1 loss, ``||w_t||_1 <= 1`` (the unit l1 ball of Bertsimas-Dunn that the
  thesis mentions, line 745) and the feature-count penalty ``alpha sum_t ||w_t||_0`` (line 721).

The 0-1 loss is scale-invariant, so ``|w_jt| <= 1`` loses nothing; big-M is derived per row.
"""

from __future__ import annotations

from treeopt_dsl import blocks as B
from treeopt_dsl.formulation import Formulation, Numerics
from treeopt_dsl.models.tree import decode_tree
from treeopt_dsl.spec import FormulationSpec, Param

from .common import tree_params


class OCT(FormulationSpec):
    name = "oct"
    summary = "Optimal Classification Tree, axis-aligned: 0-1 loss (3.9) + ||w_t||_0 <= 1 (3.14)"
    params = (
        *tree_params(big_m="derived", w_bound=1.0, b_bound="auto"),
        Param("alpha", 0.0, float, "penalty per used feature (number of splits)"),
    )

    def regularizers(self) -> list[B.Block]:
        alpha = float(self.values["alpha"])
        return [B.L0(budget=1, penalty=alpha)]

    def formulation(self) -> Formulation:
        v = self.values
        return Formulation(
            self.name,
            [
                B.ObliqueSplit(w_bound=v["w_bound"], b_bound=v["b_bound"]),
                *self.regularizers(),
                B.Routing(),
                B.BigMForwarding(M=v["big_m"], eps=v["eps"]),
                B.ZeroOneLoss(C=v["C"], levels="last", M=v["big_m"]),
            ],
            decoder=decode_tree,
            numerics=Numerics(eps=v["eps"]),
            decisions=("w", "b"),
        )


class OCTH(OCT):
    name = "octh"
    summary = "OCT-H, oblique: 0-1 loss (3.9) + unit l1 ball + alpha * feature count (3.14)"
    params = (
        *tree_params(big_m="derived", w_bound=1.0, b_bound="auto"),
        Param("alpha", 0.0, float, "penalty per used feature at each node"),
    )

    def regularizers(self) -> list[B.Block]:
        alpha = float(self.values["alpha"])
        l1 = B.L1(weight=0.0, bound=1.0)
        return [l1, B.L0(penalty=alpha)] if alpha > 0 else [l1]
