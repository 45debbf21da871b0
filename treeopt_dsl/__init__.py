"""treeopt-dsl: compose optimization formulations of interpretable classifiers from blocks.

>>> from treeopt_dsl import blocks as B, Formulation, Topology
>>> f = Formulation("olct-by-hand", [B.ObliqueSplit(), B.Routing(), B.BigMForwarding(M=100),
...                                  B.TangentLogisticLoss("V1"), B.L1()])
"""

from . import blocks
from .data import Dataset, Scaler
from .errors import (
    CapabilityError,
    DataError,
    FormulationError,
    ModelError,
    ModelTooLarge,
    SolveError,
    SolverNotAvailable,
    TreeoptError,
)
from .formulation import Block, BuildContext, Built, Formulation, Numerics
from .ir import Model, StandardForm
from .result import Certificate, SolveResult, Status
from .topology import Topology

__version__ = "0.1.0"

__all__ = [
    "Block", "BuildContext", "Built", "CapabilityError", "Certificate", "DataError", "Dataset", "Formulation",
    "FormulationError", "Model", "ModelError", "ModelTooLarge", "Numerics", "Scaler", "SolveError", "SolveResult",
    "SolverNotAvailable", "StandardForm", "Status", "Topology", "TreeoptError", "__version__", "blocks",
]
