"""A scikit-learn estimator: fit a forest, then the born-again tree that reproduces it everywhere.

Example::

    >>> import numpy as np
    >>> from treeopt_dsl.bornagain.estimator import BornAgainClassifier
    >>> rng = np.random.default_rng(0); X = rng.random((200, 3)); y = (X[:, 0] + X[:, 1] > 1).astype(int)
    >>> clf = BornAgainClassifier(objective="depth-leaves", random_state=0).fit(X, y)
    >>> bool((clf.predict(X) == clf.forest_.predict(X)).all()), clf.faithful_.ok
    (True, True)
    >>> clf.tree_.depth >= 1
    True
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from treeopt_dsl.bornagain.dp import OBJECTIVES, born_again
from treeopt_dsl.bornagain.ensemble import Ensemble
from treeopt_dsl.bornagain.faithful import FaithfulResult, check_faithful
from treeopt_dsl.bornagain.heuristic import born_again_heuristic
from treeopt_dsl.bornagain.prune import prune_empty_splits
from treeopt_dsl.defaults import ESTIMATOR_TIME_LIMIT
from treeopt_dsl.errors import ModelTooLarge, OptionError, SolveError, UncertifiedWarning
from treeopt_dsl.estimator import fit_weights
from treeopt_dsl.models.sklearn_tree import node_weights

__all__ = ["BornAgainClassifier"]

METHODS = ("auto", "exact", "heuristic")


class BornAgainClassifier(ClassifierMixin, BaseEstimator):
    """Fit ``estimator`` (default: the paper's random forest of 10 trees of depth 3), then the born-again tree.

    Parameters
    ----------
    estimator : RandomForestClassifier, ExtraTreesClassifier, DecisionTreeClassifier or None, default=None
        The ensemble to reproduce (``None``: the paper's random forest of 10 trees of depth 3); cloned and fitted
        unless ``prefit``.
    prefit : bool, default=False
        Use ``estimator`` as already fitted (only the born-again step runs in :meth:`fit`).
    objective : {"depth", "leaves", "depth-leaves"}, default="depth"
        What the exact dynamic program minimizes.
    method : {"auto", "exact", "heuristic"}, default="auto"
        ``"exact"``: the dynamic program (minimal); ``"heuristic"``: the faithful greedy construction of §4.5 (not
        minimal); ``"auto"``: exact within ``time_limit`` and the cell budget, else the heuristic (``method_`` says
        which ran).
    prune : bool, default=False
        Remove the splits with no training sample on a side (§4.4): smaller, no longer faithful everywhere,
        identical on the training data.
    time_limit : float or None, default=60
        Seconds for the born-again step, the dynamic program and then the heuristic together (``None``: no
        limit); a heuristic cut short by it leaves unproven regions as majority leaves, warns
        (``UncertifiedWarning``) and sets ``faithful_.ok`` False.
    random_state : int or None, default=0
        Seed of the default forest and of the heuristic's samples.
    class_weight : None, "balanced" or dict, default=None
        scikit-learn's semantics; multiplied into the ``sample_weight`` of :meth:`fit`, which go to the forest's
        ``fit`` (the born-again tree reproduces the forest, so the weights act through it; ignored with
        ``prefit``).

    Attributes
    ----------
    forest_ : estimator
        The fitted ensemble; ``ensemble_`` its :class:`~treeopt_dsl.bornagain.Ensemble`.
    tree_ : DecisionTree
        The tree :meth:`predict` uses (pruned if ``prune``); ``born_again_`` the tree before pruning.
    faithful_ : object
        The check of ``born_again_`` against the forest on every cell.
    method_ : str
        Which method ran.
    node_weights_ : numpy.ndarray
        The training samples of each class reaching each node of ``tree_`` (what :meth:`plot` shows).

    ``classes_`` and ``n_features_in_`` as scikit-learn's estimators.
    """

    def __init__(self, estimator: Any = None, *, prefit: bool = False, objective: str = "depth",
                 method: str = "auto", prune: bool = False, time_limit: float | None = ESTIMATOR_TIME_LIMIT,
                 random_state: int | None = 0, class_weight: Any = None) -> None:
        self.estimator = estimator
        self.prefit = prefit
        self.objective = objective
        self.method = method
        self.prune = prune
        self.time_limit = time_limit
        self.random_state = random_state
        self.class_weight = class_weight

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> BornAgainClassifier:
        """Fit the forest on ``(X, y)`` (weighted by ``sample_weight`` and ``class_weight``) and its born-again
        tree."""
        if self.objective not in OBJECTIVES:
            raise OptionError(f"objective must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}")
        if self.method not in METHODS:
            raise OptionError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        X, y = validate_data(self, X, y)
        if self.prefit:
            if self.estimator is None:
                raise OptionError("prefit=True needs a fitted estimator (estimator=None was given)")
            forest = self.estimator
        else:
            from sklearn.ensemble import RandomForestClassifier

            forest = (clone(self.estimator) if self.estimator is not None else
                      RandomForestClassifier(n_estimators=10, max_depth=3, random_state=self.random_state))

            sw = fit_weights(self, X, y, sample_weight)
            if sw is None:
                forest.fit(X, y)
            else:
                forest.fit(X, y, sample_weight=sw)
        self.forest_ = forest
        names = getattr(self, "feature_names_in_", None)  # a DataFrame's columns: the tree prints them
        self.ensemble_ = Ensemble.from_sklearn(forest, feature_names=None if names is None else [str(c) for c in names])
        tree, self.method_ = None, "heuristic"
        deadline = None if self.time_limit is None else time.perf_counter() + float(self.time_limit)
        if self.method != "heuristic":
            try:
                res = born_again(self.ensemble_, self.objective, time_limit=self.time_limit)
                tree, self.method_ = res.tree, "exact"
            except ModelTooLarge:
                if self.method == "exact":
                    raise
            if tree is None and self.method == "exact":
                raise SolveError(f"the born-again dynamic program stopped at time_limit={self.time_limit} s "
                                 "without a tree: raise time_limit or use method='auto' / 'heuristic'")
        stats: dict[str, Any] = {"complete": True}
        if tree is None:  # the heuristic within what is left of time_limit (the whole fit's budget)
            tree, stats = born_again_heuristic(self.ensemble_, seed=self.random_state, deadline=deadline)
            self.method_ = "heuristic"
        self.born_again_ = tree
        if stats["complete"]:
            self.faithful_ = check_faithful(tree, self.ensemble_)
        else:  # regions left unproven at the time limit: not faithful, said without a check that could take hours
            self.faithful_ = FaithfulResult(False, 0, f"time limit: {stats['unproven_leaves']} unproven region(s)")
            warnings.warn(f"BornAgainClassifier: time_limit={self.time_limit} s ran out with "
                          f"{stats['unproven_leaves']} region(s) of the heuristic not proven homogeneous: their "
                          "leaves take the majority of their random cells, and the tree may disagree with the "
                          "forest there (faithful_.ok is False); raise time_limit for a faithful tree",
                          UncertifiedWarning, stacklevel=2)
        self.tree_ = prune_empty_splits(tree, X) if self.prune else tree
        self.classes_ = np.asarray(forest.classes_)
        codes = np.searchsorted(self.classes_, y)
        self.node_weights_, _ = node_weights(self.tree_.decision_path(X), codes, self.classes_.size)
        return self

    def plot(self, ax: Any = None, max_leaves: int = 64) -> Any:
        """Draw ``tree_`` with matplotlib (:meth:`~treeopt_dsl.models.decision_tree.DecisionTree.plot`), each leaf
        with the training samples of each class (``node_weights_``), as the other trees' pictures; returns the
        figure.

        Example::

            >>> clf.plot().savefig("born_again.png")  # doctest: +SKIP
        """
        check_is_fitted(self, "tree_")
        return self.tree_.plot(ax=ax, max_leaves=max_leaves, counts=getattr(self, "node_weights_", None))

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "tree_")
        X = validate_data(self, X, reset=False)
        return self.tree_.predict(X)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
