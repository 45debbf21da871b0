"""Blocks: the pieces formulations are composed of. Each reads like its equation in the paper."""

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
from treeopt_dsl.blocks.flow import (
    BendersFlow,
    BinarySplits,
    FlowRouting,
    FlowZeroOneLoss,
)
from treeopt_dsl.blocks.lattice import LatticeLogisticLoss, SampleLatticeLoss, best_intercept
from treeopt_dsl.blocks.losses import (
    EPIGRAPHS,
    OBJECTIVES,
    OUTER_TOL,
    TANGENT_SETS,
    HingeLoss,
    SlackLoss,
    TangentLogisticLoss,
    ZeroOneLoss,
    envelope,
    logistic_loss,
    logistic_tangents,
)
from treeopt_dsl.blocks.randomized import (
    ClassPerformance,
    ExpectedMisclassification,
    LeafClasses,
    LeafProbabilities,
    RandomizedSplit,
)
from treeopt_dsl.blocks.regularizers import L0, L1, LInf, SquaredL2
from treeopt_dsl.blocks.routing import BigMForwarding, Routing
from treeopt_dsl.blocks.rules import BinaryTimesInteger, RulePoints, RuleSelection, ThresholdRules, TotalScore
from treeopt_dsl.blocks.scores import IntegerScores, integer_in_set, score_set
from treeopt_dsl.blocks.splits import ObliqueSplit
from treeopt_dsl.formulation import PROVIDERS, Block

for _cls in (ObliqueSplit, Routing, BigMForwarding, HingeLoss, L1, BinarySplits, FlowRouting):
    for _role in _cls.provides:
        PROVIDERS.setdefault(_role, _cls.__name__ + "()")
_LOSS = "a loss block (e.g. TangentLogisticLoss())"
PROVIDERS.update({"xi": _LOSS, "loss": _LOSS})

__all__ = [
    "EPIGRAPHS",
    "L0",
    "L1",
    "OBJECTIVES",
    "OUTER_TOL",
    "TANGENT_SETS",
    "AnchorFeatures",
    "BendersFlow",
    "BigMForwarding",
    "BinarySplits",
    "BinaryTimesInteger",
    "Block",
    "BranchIndicators",
    "ClassPerformance",
    "ClassWeightedAccuracy",
    "ExpectedMisclassification",
    "FeatureSubset",
    "FlowRouting",
    "FlowZeroOneLoss",
    "GroupSelection",
    "HingeLoss",
    "IntegerScores",
    "LInf",
    "LatticeLogisticLoss",
    "LeafClasses",
    "LeafProbabilities",
    "MaxCardinality",
    "ObliqueSplit",
    "OrdinalGroups",
    "PathRouting",
    "RandomizedSplit",
    "RateConstraint",
    "Routing",
    "RulePoints",
    "RuleSelection",
    "SampleLatticeLoss",
    "SlackLoss",
    "SquaredL2",
    "TangentLogisticLoss",
    "ThresholdRules",
    "TotalScore",
    "ZeroOneLoss",
    "best_intercept",
    "envelope",
    "integer_in_set",
    "logistic_loss",
    "logistic_tangents",
    "score_set",
]
