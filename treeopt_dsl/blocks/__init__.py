"""Blocks: the pieces formulations are composed of. Each reads like its equation in the paper."""

from ..formulation import PROVIDERS
from .losses import TANGENT_SETS, HingeLoss, SlackLoss, TangentLogisticLoss, logistic_loss, logistic_tangents
from .regularizers import L1
from .routing import BigMForwarding, Routing
from .splits import ObliqueSplit

for _cls in (ObliqueSplit, Routing, BigMForwarding, HingeLoss, L1):
    for _role in _cls.provides:
        PROVIDERS.setdefault(_role, _cls.__name__ + "()")
_LOSS = "a loss block (e.g. TangentLogisticLoss())"
PROVIDERS.update({"xi": _LOSS, "loss": _LOSS})

__all__ = [
    "L1",
    "TANGENT_SETS",
    "BigMForwarding",
    "HingeLoss",
    "ObliqueSplit",
    "Routing",
    "SlackLoss",
    "TangentLogisticLoss",
    "logistic_loss",
    "logistic_tangents",
]
