"""Categorical trees: :class:`CategoricalTreeClassifier` (Günlük et al.'s subset splits)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from treeopt_dsl.data import non_numeric_columns
from treeopt_dsl.defaults import ESTIMATOR_TIME_LIMIT, SOLVER
from treeopt_dsl.estimator.base import SolvedClassifier
from treeopt_dsl.formulations import get_formulation

#: the code of a category not seen in training (a level no node's subset holds: it follows the "not in S" side)
UNSEEN = -1.0


def text_levels(X: Any) -> dict[int, tuple[Any, ...]]:
    """The columns of ``X`` that hold categories, by position, with their levels: a pandas ``category`` column (its
    categories, in their order), a DataFrame column of text (its sorted distinct strings), or a column of a numpy
    text / object array whose values are all strings. A column that is neither numbers nor all text is left for the
    validation to refuse (scikit-learn's message)."""
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        import pandas as pd

        out: dict[int, tuple[Any, ...]] = {}
        names = set(non_numeric_columns(X))
        for j, (c, t) in enumerate(zip(X.columns, X.dtypes, strict=True)):
            if str(c) not in names:
                continue
            col = X.iloc[:, j]
            if isinstance(t, pd.CategoricalDtype):
                out[j] = tuple(col.cat.categories.tolist())
            else:
                seen = col.dropna()
                if len(seen) and all(isinstance(v, str) for v in seen):
                    out[j] = tuple(sorted(set(seen)))
        return out
    A = np.asarray(X) if isinstance(X, (list, tuple, np.ndarray)) else None
    if A is None or A.ndim != 2 or A.dtype.kind not in "USO":
        return {}
    out = {}
    for j in range(A.shape[1]):
        col = A[:, j]
        if all(isinstance(v, (str, np.str_)) for v in col):
            try:
                col.astype(np.float64)  # numbers written as text stay numbers
            except (TypeError, ValueError):
                out[j] = tuple(sorted({str(v) for v in col}))
    return out


def encode_levels(X: Any, levels: dict[int, tuple[Any, ...]]) -> Any:
    """``X`` with every column of ``levels`` replaced by its category's position in the levels (float; a category
    not among them: :data:`UNSEEN`; a missing value stays missing). A DataFrame stays a DataFrame with its column
    names; an array becomes an object array (the validation makes it float)."""
    if not levels:
        return X
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        out = X.copy()
        for j, lv in levels.items():
            col = X.iloc[:, j]
            index = {v: float(k) for k, v in enumerate(lv)}
            codes = np.array([np.nan if v is None or (isinstance(v, float) and np.isnan(v)) else
                              index.get(v, UNSEEN) for v in col.astype(object)], dtype=np.float64)
            out[out.columns[j]] = codes
        return out
    A = np.array(X, dtype=object)
    for j, lv in levels.items():
        index = {str(v): float(k) for k, v in enumerate(lv)}
        A[:, j] = [index.get(str(v), UNSEEN) for v in A[:, j]]
    return A


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
        every other column is numeric and binned by its training quantiles (``n_bins``). Text columns and pandas
        ``category`` columns are categorical without being listed (encoded to levels inside ``fit``; the tree
        prints their level names).
    n_bins : int, default=10
        Quantile bins of a numeric column (deciles, §4.4); a column with at most ``n_bins`` distinct
        values gets one level per value.
    numeric : {"ordinal", "categorical"}, default="ordinal"
        "ordinal": numeric columns are split by thresholds only (the monotone rows of §4.4).
    max_card : int or None, default=None
        Subsets of at most ``max_card`` (or all but ``max_card``) categories (§4.5).
    min_sensitivity, min_specificity : float or None, default=None
        Guarantee the training true positive (negative) rate and maximize the other (15)-(16).
    preselect : {"none", "rpart", "cart"}, default="none"
        Keep only the columns a CART tree uses (§5.1): ``"rpart"`` the paper's (rpart's defaults, subset splits,
        pruned at cp = 0.01: a few columns), ``"cart"`` scikit-learn's tree grown whole (most columns).
    preselect_min_groups : int, default=1
        With ``preselect="rpart"``: at least this many attributes, rpart's cp lowered from 0.01 until its tree
        branches on them (§5.7 on heloc: "making sure that at least 4 features are selected").
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
    text_levels_ : dict
        The text / category columns (by name for a DataFrame, else by position) and their levels, in code order.
    result_, certificate_, classes_, n_features_in_
        As for :class:`OptimalTreeClassifier`.

    Notes
    -----
    ``predict_proba`` is the Laplace-smoothed share of ``classes_[1]`` among the training samples of the
    reached leaf, clipped to the leaf's side of 1/2 (so that it agrees with ``predict``).
    """

    _multiclass = True  # one-vs-rest (the formulation's leaves carry fixed labels B+ / B-): docs/multiclass.md

    def __init__(self, shape: str = "2", C: Any = 1.0, categorical_features: Any = None, n_bins: int = 10,
                 numeric: str = "ordinal", max_card: int | None = None, min_sensitivity: float | None = None,
                 min_specificity: float | None = None, preselect: str = "none", preselect_min_groups: int = 1,
                 anchor: bool = True,
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
        self.preselect_min_groups = preselect_min_groups
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

    _numeric_hint = ("a categorical column must hold strings only (it mixes text with numbers or other objects): "
                     "make it text (df[col].astype(str)) or a pandas category (astype('category')) for category "
                     "splits, or numbers (pd.to_numeric) for threshold splits")

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """Solve the formulation on ``(X, y)`` (:meth:`SolvedClassifier.fit
        <treeopt_dsl.estimator.base.SolvedClassifier.fit>`). Text columns (a DataFrame's ``object`` / ``string``
        columns, or a numpy array of strings) and pandas ``category`` columns are categorical features: each is
        encoded to integer levels here and its level names print in :meth:`explain` and ``tree_.plot()``;
        ``predict`` encodes new rows the same way (a category unseen in training fails every "in S" test)."""
        self._levels = text_levels(X)
        super().fit(encode_levels(X, self._levels), y, sample_weight=sample_weight)
        self.text_levels_ = {self._column_name(j): lv for j, lv in self._levels.items()}
        return self

    def _validate(self, X: Any, reset: bool = False) -> np.ndarray:
        return super()._validate(encode_levels(X, getattr(self, "_levels", {})), reset=reset)

    def _keep(self, result: Any) -> None:
        self.tree_ = result.model
        self._name_levels()

    def _name_levels(self) -> None:
        """The level names of the text / category columns in the fitted tree's groups, instead of their codes."""
        levels = getattr(self, "_levels", {})
        enc = getattr(self.tree_, "encoder", None)
        if levels and enc is not None:
            enc.groups_ = [replace(g, levels=tuple(str(levels[g.columns[0]][int(v)]) for v in g.values))
                           if g.how == "codes" and g.columns[0] in levels else g for g in enc.groups_]

    def _categorical(self) -> tuple[Any, ...]:
        """The categorical columns: ``categorical_features`` and the text / category columns (positions)."""
        cats = () if self.categorical_features is None else tuple(np.atleast_1d(self.categorical_features).tolist())
        return cats + tuple(j for j in getattr(self, "_levels", {}) if j not in cats)

    def _ovr_params(self) -> dict[str, Any]:
        return {"categorical_features": list(self._categorical())}  # the text columns arrive as codes

    def _ovr_after(self, sub: Any) -> None:
        sub._levels = self._levels
        sub._name_levels()

    def _column_name(self, j: int) -> Any:
        names = getattr(self, "feature_names_in_", None)
        return str(names[j]) if names is not None else j

    def _spec(self) -> Any:
        cats = self._categorical()
        return get_formulation(
            "odt_categorical", shape=str(self.shape), C=self.C, categorical=cats, n_bins=self.n_bins,
            numeric=self.numeric, max_card=self.max_card, min_sensitivity=self.min_sensitivity,
            min_specificity=self.min_specificity, preselect=self.preselect,
            preselect_min_groups=self.preselect_min_groups, anchor=bool(self.anchor),
            relax=bool(self.relax), strengthen=bool(self.strengthen), drop_c=bool(self.drop_c),
            infer_groups=bool(self.infer_groups))

    def explain(self) -> str:
        """The fitted tree as text (set membership / thresholds on the original columns)."""
        check_is_fitted(self)
        return self.tree_.text()
