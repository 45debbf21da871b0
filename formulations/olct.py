"""Optimal Logistic Classification Trees, OLCT (thesis (3.17), [aldinucci-thesis-2024] lines 537-560).

    min  sum_h ( C_h sum_i xi[i, h] + l1 sum_{t in T_h} ||w_t||_1 )       (objective of lines 612-616: l1 = 1)
    s.t. (3.6) routing, (3.7) big-M forwarding, (3.15) tangent-logistic slack at every level,
         (3.16) l1 split of w;  b free (3.17d)

Defaults are the paper's experimental settings ([aldinucci-thesis-2024] line 610): M = 100, eps = 1e-5,
standardized features, tangent set V0. ``big_m="derived"`` uses per-row big-M from bounds on
``w`` and ``b`` (``w_bound``, ``b_bound`` must then be given).

Reading chosen where the paper is ambiguous: the thesis writes the experiments' objective with
``C_h`` on the slacks and weight 1 on ``||w_t||_1`` (lines 612-616) after "moving lambda_h to the
slack component"; we implement exactly that objective, with ``C`` a number or one value per level.
``l1`` weighs the l1 term: 1 is that objective; 0 drops the term (and its split (3.16)), as the thesis does for
the tangent-set and global-step experiments (Figures 3.7 and 3.8, lines 661 and 685: "we did not employ the l1
regularization terms"). The greedy start and the refinement (Remark 1) then minimize the same node objective
without it (see :mod:`treeopt_dsl.starts.refine`).
"""

from __future__ import annotations

from treeopt_dsl import blocks as B
from treeopt_dsl.formulation import Formulation, Numerics
from treeopt_dsl.formulations.common import tree_params
from treeopt_dsl.formulations.spec import FormulationSpec, Param
from treeopt_dsl.models.tree import decode_tree


def _tangents(text: str) -> object:
    return text if text.upper().startswith("V") and len(text) == 2 else [float(t) for t in text.split(",")]


#: the two parameters every OLCT shares beyond the tree's: the tangent set of (3.15) and the weight of ||w_t||_1
TANGENTS = Param("tangents", "V0", _tangents, "tangent set V0..V3 or comma-separated points")
L1 = Param("l1", 1.0, float, "weight of ||w_t||_1 in the objective (lines 612-616: 1; 0 drops it, Figs 3.7-3.8)",
           minimum=0.0)


class OLCT(FormulationSpec):
    name = "olct"
    summary = "Optimal Logistic Classification Tree (thesis 3.17): tangent-logistic loss at every level + l1"
    params = (
        *tree_params(split_columns=True),
        TANGENTS,
        L1,
    )

    def formulation(self) -> Formulation:
        v = self.values
        l1 = [B.L1(of="w", weight=float(v["l1"]))] if v["l1"] > 0 else []
        return Formulation(
            self.name,
            [
                B.ObliqueSplit(w_bound=v["w_bound"], b_bound=v["b_bound"], columns=v["split_columns"]),
                *self.sparsity(),
                B.Routing(),
                B.BigMForwarding(M=v["big_m"], eps=v["eps"]),
                B.TangentLogisticLoss(tangents=v["tangents"], C=v["C"], levels="all", M=v["big_m"]),
                *l1,
            ],
            decoder=decode_tree,
            numerics=Numerics(eps=v["eps"]),
            decisions=("w", "b"),
        )

    def sparsity(self) -> list[B.Block]:
        return []


class UnivariateOLCT(OLCT):
    """Univariate OLCT (Remark 2, [aldinucci-thesis-2024] lines 557-559): OLCT plus ``||w_t||_0 <= 1`` by (3.14).

    The l0 indicators need bounded weights: ``w_bound`` defaults to 10 (standardized features), and
    big-M is derived per row from it.
    """

    name = "olct_univariate"
    summary = "Univariate OLCT (thesis Remark 2): OLCT with ||w_t||_0 <= 1 by l0 indicators (3.14)"
    params = (
        *tree_params(big_m="derived", w_bound=10.0, b_bound="auto", split_columns=True),
        TANGENTS,
        L1,
    )

    def sparsity(self) -> list[B.Block]:
        return [B.L0(budget=1)]
