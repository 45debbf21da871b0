"""MARGOT and its feature-selection variants (thesis (3.12)-(3.14), [aldinucci-thesis-2024] lines 438-462, 531-535).

``margot``: hinge slack at every level (3.13) + ``||w_t||_2^2`` (an MIQP: SCIP or Gurobi);
``margot_hfs``: plus ``||w_t||_0 <= budget`` (HFS); ``margot_sfs``: plus ``alpha max(||w_t||_0, B)``
(SFS). Reading: the thesis writes ``Omega = ||.||_2^2`` without the SVM's 1/2; we follow the thesis.
"""

from __future__ import annotations

from treeopt_dsl import blocks as B
from treeopt_dsl.formulation import Formulation, Numerics
from treeopt_dsl.formulations.common import tree_params
from treeopt_dsl.formulations.spec import FormulationSpec, Param
from treeopt_dsl.models.tree import decode_tree


class MARGOT(FormulationSpec):
    name = "margot"
    summary = "Margin Optimal Classification Tree: hinge at every level (3.13) + squared l2 (MIQP)"
    params = tree_params()

    def sparsity(self) -> list[B.Block]:
        return []

    def formulation(self) -> Formulation:
        v = self.values
        return Formulation(
            self.name,
            [
                B.ObliqueSplit(w_bound=v["w_bound"], b_bound=v["b_bound"], columns=v["split_columns"]),
                *self.sparsity(),
                B.Routing(),
                B.BigMForwarding(M=v["big_m"], eps=v["eps"]),
                B.HingeLoss(C=v["C"], levels="all", M=v["big_m"]),
                B.SquaredL2(),
            ],
            decoder=decode_tree,
            numerics=Numerics(eps=v["eps"]),
            decisions=("w", "b"),
        )


class MARGOT_HFS(MARGOT):
    name = "margot_hfs"
    summary = "HFS-MARGOT: MARGOT + ||w_t||_0 <= budget (3.14), hard feature selection"
    params = (*tree_params(w_bound=10.0, b_bound="auto"), Param("budget", 2, int, "features per node", minimum=1))

    def sparsity(self) -> list[B.Block]:
        return [B.L0(budget=int(self.values["budget"]))]


class MARGOT_SFS(MARGOT):
    name = "margot_sfs"
    summary = "SFS-MARGOT: MARGOT + alpha max(||w_t||_0, B), soft feature selection (lines 531-535)"
    params = (*tree_params(w_bound=10.0, b_bound="auto"), Param("alpha", 1.0, float, "l0 penalty alpha_t", minimum=0.0),
              Param("budget", 0, int, "B_t: features counted as free", minimum=0))

    def sparsity(self) -> list[B.Block]:
        return [B.L0(penalty=float(self.values["alpha"]), penalty_floor=float(self.values["budget"]))]
