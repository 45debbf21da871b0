"""treeopt-dsl: compose optimization formulations of interpretable classifiers from blocks.

>>> from treeopt_dsl import blocks as B, Formulation, Topology
>>> f = Formulation("olct-by-hand", [B.ObliqueSplit(), B.Routing(), B.BigMForwarding(M=100),
...                                  B.TangentLogisticLoss("V1"), B.L1()])
"""

from treeopt_dsl import blocks
from treeopt_dsl.data import Dataset, Scaler
from treeopt_dsl.errors import (
    CapabilityError,
    DataError,
    FormulationError,
    ModelError,
    ModelTooLarge,
    SolveError,
    SolverNotAvailable,
    TreeoptError,
)
from treeopt_dsl.formulation import Block, BuildContext, Built, Formulation, Numerics
from treeopt_dsl.ir import Model, StandardForm
from treeopt_dsl.result import Certificate, SolveResult, Status
from treeopt_dsl.topology import Topology

__version__ = "0.1.0"

__all__ = [
    "Block", "BuildContext", "Built", "CapabilityError", "Certificate", "DataError", "Dataset", "Formulation",
    "FormulationError", "Model", "ModelError", "ModelTooLarge", "Numerics", "Scaler", "SolveError", "SolveResult",
    "SolverNotAvailable", "StandardForm", "Status", "Topology", "TreeoptError", "__version__", "blocks",
]
