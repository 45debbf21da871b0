"""Born-again tree ensembles (Vidal & Schiffer, ICML 2020): the single smallest decision tree that has exactly
the decision function of a tree ensemble on the whole feature space.

    >>> from treeopt_dsl.bornagain import Ensemble, born_again, check_faithful   # doctest: +SKIP
    >>> from sklearn.ensemble import RandomForestClassifier                      # doctest: +SKIP
    >>> rf = RandomForestClassifier(n_estimators=5, max_depth=2).fit(X, y)       # doctest: +SKIP
    >>> res = born_again(Ensemble.from_sklearn(rf), objective="leaves")          # doctest: +SKIP
    >>> check_faithful(res.tree, Ensemble.from_sklearn(rf)).ok                   # doctest: +SKIP
    True

Modules: :mod:`.ensemble` (the ensemble and its vote), :mod:`.baformat` (the BA-Trees text format),
:mod:`.cells` (split levels, cell classes, regions), :mod:`.dp` (the exact dynamic program),
:mod:`.faithful` (verification), :mod:`.prune` (post-pruning with training data), :mod:`.homogeneity` and
:mod:`.heuristic` (the faithful greedy construction for large ensembles, its proofs an integer program of the
library's IR), :mod:`.estimator` (``BornAgainClassifier``), :mod:`treeopt_dsl.cli.bornagain` (``treeopt born-again``).
"""

from treeopt_dsl.bornagain.baformat import read_ba_forest, write_ba_forest
from treeopt_dsl.bornagain.cells import CellSpace
from treeopt_dsl.bornagain.dp import OBJECTIVES, BornAgainResult, born_again
from treeopt_dsl.bornagain.ensemble import Ensemble
from treeopt_dsl.bornagain.estimator import BornAgainClassifier
from treeopt_dsl.bornagain.faithful import FaithfulResult, check_faithful
from treeopt_dsl.bornagain.heuristic import born_again_heuristic
from treeopt_dsl.bornagain.homogeneity import violating_cell
from treeopt_dsl.bornagain.prune import node_counts, prune_empty_splits
from treeopt_dsl.models.decision_tree import DecisionTree

__all__ = ["OBJECTIVES", "BornAgainClassifier", "BornAgainResult", "CellSpace", "DecisionTree", "Ensemble",
           "FaithfulResult", "born_again", "born_again_heuristic", "check_faithful", "node_counts",
           "prune_empty_splits", "read_ba_forest", "violating_cell", "write_ba_forest"]
