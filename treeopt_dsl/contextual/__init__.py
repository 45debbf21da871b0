"""Contextual decision trees (thesis chapter 5, [aldinucci-thesis-2024] lines 1512-1716; Aldinucci et al., 2022): a
random
forest of ``B`` shallow trees and a policy network that reads an input and picks the one tree that predicts
it, so each prediction is explained by one tree's path.

    >>> from treeopt_dsl.contextual import ContextualTreeClassifier          # doctest: +SKIP
    >>> clf = ContextualTreeClassifier(random_state=0).fit(X_train, y_train)  # doctest: +SKIP
    >>> print(clf.explain(X_test[:1])[0])                                    # doctest: +SKIP

Modules: :mod:`.rewards` (the bandit rewards (5.4), (5.5) and the supervised baseline's labels),
:mod:`.forest` (CART's validated depth, the forest, its prediction matrix, trees as
:class:`~treeopt_dsl.models.decision_tree.DecisionTree`, decision paths), :mod:`.policy` (the network,
REINFORCE with entropy regularization of Algorithm 4, the supervised training; PyTorch, imported only when
training), :mod:`.estimator` (``ContextualTreeClassifier``, ``ContextualTreeRegressor``), :mod:`.plots` (the
Figure 5.2-like training plot), :mod:`treeopt_dsl.cli.contextual` (``treeopt fit cct`` / ``treeopt fit crt``).
Importing this package does not import PyTorch.
"""

from treeopt_dsl.contextual.estimator import ContextualTreeClassifier, ContextualTreeRegressor, Explanation
from treeopt_dsl.contextual.plots import plot_training
from treeopt_dsl.contextual.rewards import (
    classification_rewards,
    normalized_squared_error,
    regression_rewards,
    supervised_labels_classification,
    supervised_labels_regression,
)

__all__ = ["ContextualTreeClassifier", "ContextualTreeRegressor", "Explanation", "classification_rewards",
           "normalized_squared_error", "plot_training", "regression_rewards", "supervised_labels_classification",
           "supervised_labels_regression"]
