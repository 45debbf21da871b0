"""Categorical trees: :class:`CategoricalTreeClassifier` (Günlük et al.'s subset splits)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from treeopt_dsl.defaults import ESTIMATOR_TIME_LIMIT, SOLVER
from treeopt_dsl.estimator.base import SolvedClassifier
from treeopt_dsl.formulations import get_formulation


class CategoricalTreeClassifier(SolvedClassifier):
    """Optimal decision tree on grouped categorical features (Günlük et al., [gunluk-odt-categorical];
    ``odt_categorical``).

    Every node tests one column: "is its value in the set S?" (a category set, or a threshold for a
    numeric column binned by deciles, §4.4); the tree has a fixed shape and leaves with fixed labels.

    Parameters
    ----------
    shape : {"2", "2.5", "3", "imbalanced", "1"}, default="2"
        Tree topology (Figures 2-3 of the paper).
    C : float or "balanced", default=1.0
        Weight of a correctly classified ``classes_[0]`` sample in the objective (8a).
    categorical_features : list of int or str, or None, default=None
        Columns holding category codes (one level per distinct value, any subset can be tested);
        every other column is numeric and binned by its training quantiles (``n_bins``).
    n_bins : int, default=10
        Quantile bins of a numeric column (deciles, §4.4); a column with at most ``n_bins`` distinct
        values gets one level per value.
    numeric : {"ordinal", "categorical"}, default="ordinal"
        "ordinal": numeric columns are split by thresholds only (the monotone rows of §4.4).
    max_card : int or None, default=None
        Subsets of at most ``max_card`` (or all but ``max_card``) categories (§4.5).
    min_sensitivity, min_specificity : float or None, default=None
        Guarantee the training true positive (negative) rate and maximize the other (15)-(16).
    preselect : {"none", "cart"}, default="none"
        Keep only the columns a CART tree uses (§5.1).
    anchor, relax, strengthen, drop_c : bool, default=True
        The model enhancements of §4.3 (they never change the optimum, only the solve time).
    infer_groups : bool, default=False
        Treat runs of mutually exclusive 0/1 columns as one categorical attribute (one-hot input).
    solver, backend, time_limit, gap, threads, random_state, verbose, class_weight, keep_model
        As for :class:`OptimalTreeClassifier` (``class_weight`` multiplies the sample weights; ``C`` weighs a
        correct ``classes_[0]`` sample on top of them).

    Attributes
    ----------
    tree_, model_ : CategoricalTreeModel
        The decoded tree (``tree_.text()``, ``tree_.plot()``).
    result_, certificate_, classes_, n_features_in_
        As for :class:`OptimalTreeClassifier`.

    Notes
    -----
    ``predict_proba`` is the Laplace-smoothed share of ``classes_[1]`` among the training samples of the
    reached leaf, clipped to the leaf's side of 1/2 (so that it agrees with ``predict``).
    """

    def __init__(self, shape: str = "2", C: Any = 1.0, categorical_features: Any = None, n_bins: int = 10,
                 numeric: str = "ordinal", max_card: int | None = None, min_sensitivity: float | None = None,
                 min_specificity: float | None = None, preselect: str = "none", anchor: bool = True,
                 relax: bool = True, strengthen: bool = True, drop_c: bool = True, infer_groups: bool = False,
                 solver: str = SOLVER, backend: str | None = None, time_limit: float | None = ESTIMATOR_TIME_LIMIT,
                 gap: float | None = None, threads: int | None = None, random_state: Any = None,
                 verbose: bool = False, class_weight: Any = None,
                 keep_model: bool = False) -> None:
        self.shape = shape
        self.C = C
        self.categorical_features = categorical_features
        self.n_bins = n_bins
        self.numeric = numeric
        self.max_card = max_card
        self.min_sensitivity = min_sensitivity
        self.min_specificity = min_specificity
        self.preselect = preselect
        self.anchor = anchor
        self.relax = relax
        self.strengthen = strengthen
        self.drop_c = drop_c
        self.infer_groups = infer_groups
        self.solver = solver
        self.backend = backend
        self.time_limit = time_limit
        self.gap = gap
        self.threads = threads
        self.random_state = random_state
        self.verbose = verbose
        self.class_weight = class_weight
        self.keep_model = keep_model

    def _spec(self) -> Any:
        cats = () if self.categorical_features is None else tuple(np.atleast_1d(self.categorical_features).tolist())
        return get_formulation(
            "odt_categorical", shape=str(self.shape), C=self.C, categorical=cats, n_bins=self.n_bins,
            numeric=self.numeric, max_card=self.max_card, min_sensitivity=self.min_sensitivity,
            min_specificity=self.min_specificity, preselect=self.preselect, anchor=bool(self.anchor),
            relax=bool(self.relax), strengthen=bool(self.strengthen), drop_c=bool(self.drop_c),
            infer_groups=bool(self.infer_groups))

    def _keep(self, result: Any) -> None:
        self.tree_ = result.model

    def explain(self) -> str:
        """The fitted tree as text (set membership / thresholds on the original columns)."""
        check_is_fitted(self)
        return self.tree_.text()
