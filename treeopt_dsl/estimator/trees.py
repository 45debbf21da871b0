"""Tree classifiers: :class:`OptimalTreeClassifier` (the registered tree formulations: OLCT, MARGOT, OCT, ...) and
:class:`RandomizedTreeClassifier` (S-ORCT)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted

from treeopt_dsl.defaults import ESTIMATOR_TIME_LIMIT, SOLVER
from treeopt_dsl.errors import CapabilityError, FormulationError, OptionError
from treeopt_dsl.estimator.base import TREE_PARAMS, SolvedClassifier
from treeopt_dsl.formulations import REGISTRY, get_formulation
from treeopt_dsl.models.sklearn_tree import (
    FlatTree,
    flatten,
    impurity_importances,
    node_weights,
    oblique_importances,
    sklearn_classifier,
    split_thresholds,
)
from treeopt_dsl.models.tree import TreeModel
from treeopt_dsl.starts.refine import check_refinable, refine_result
from treeopt_dsl.topology import check_depth


class OptimalTreeClassifier(SolvedClassifier):
    """Optimal (oblique or axis-aligned) classification tree fitted by mixed-integer optimization.

    Parameters
    ----------
    formulation : str, default="olct"
        A tree formulation of ``treeopt_dsl.formulations.REGISTRY``: ``olct`` (thesis (3.17)),
        ``olct_univariate`` (Remark 2), ``margot``, ``margot_hfs``, ``margot_sfs``, ``oct``, ``octh``.
    depth : int, default=2
        Number of branching levels ``d`` (1-6); depth 1-2 solve in seconds on a few hundred samples.
    C : float or list of float, default=1.0
        Loss weight ``C_h`` (one number, or one per level) of the objective ([aldinucci-thesis-2024] lines 612-616).
    scaling : {"standard", "minmax", "none"}, default="standard"
        Feature scaling fitted on the training data (the coefficients of ``tree_`` act on scaled features).
    solver : str, default="highs"
        Solver name (see ``treeopt_dsl.backends.available_solvers()``).
    backend : str or None, default=None
        Backend that drives the solver (None: the first available one).
    time_limit : float or None, default=60.0
        Solver time limit in seconds. A fit that stops at the limit keeps the incumbent tree and warns
        with a :class:`~sklearn.exceptions.ConvergenceWarning` stating the gap (the tree is then not
        proven optimal); a fit that stops before any feasible tree raises a ``SolveError``.
    gap : float or None, default=None
        Relative MIP gap at which the solver stops (None: the solver's default).
    threads : int or None, default=None
        Solver threads (None: the solver's default).
    random_state : int, RandomState instance or None, default=None
        Seed of the solver (HiGHS ``random_seed``); HiGHS is deterministic for a fixed seed as long as
        the time limit is not reached.
    verbose : bool, default=False
        Print the solver log.
    warm_start : bool, {"auto", "greedy", "greedy_lp", "cart"}, TreeModel, DecisionTreeClassifier, None, default="auto"
        A start handed to the solver (completed to a feasible point by the blocks): ``"auto"`` (the best
        of CART, the greedy starts and the exact DP tree in the formulation's objective; the fitted
        model is never worse than it, ``result_.start`` says which won), ``"greedy"``
        (node-by-node classifiers from the root), ``"greedy_lp"`` (OLCT: each node's part of the objective
        solved exactly, an LP), ``"cart"`` (a scikit-learn tree of the same depth),
        or a fitted tree, e.g. ``tree_`` of a shallower estimator or a fitted
        :class:`sklearn.tree.DecisionTreeClassifier` (its splits and leaf classes, same features and labels).
        ``True`` follows scikit-learn's convention: start from this estimator's previous ``tree_`` when it has
        one that fits (same number of features, depth at most ``depth``), otherwise from nothing;
        ``False``/``None``: no start.
    params : dict or None, default=None
        Further parameters of the formulation, by the names it declares (``spec.params``), e.g.
        ``{"big_m": 50.0}``, ``{"tangents": "V3"}`` (olct), ``{"alpha": 0.1}`` (oct),
        ``{"budget": 2}`` (margot_hfs), ``{"w_bound": None}``. Parameters not given keep the
        formulation's own defaults (``big_m`` and the weight bounds differ between formulations).
        Unknown names raise a ``FormulationError`` (a ``ValueError``) at ``fit``.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes (scikit-learn's semantics, :func:`~sklearn.utils.class_weight.compute_sample_weight`:
        ``"balanced"`` gives class ``k`` the weight ``n / (K n_k)``); multiplied into ``sample_weight`` of ``fit``.
    keep_model : bool, default=False
        Whether pickling keeps the built solver model (``result_.built``, ``result_.x``) and the scaled training
        matrix (``tree_.X_train``). By default a pickle holds the tree alone (a few KB for depth 2, and no training
        row can be read back from it); ``predict``, ``predict_proba``, ``explain``, ``plot`` and ``to_sklearn``
        work on the unpickled estimator as before.
    refine : bool, default=False
        ``olct``/``olct_univariate``: after the solve, refit each last-layer node as an exact l1-logistic regression
        on the training samples reaching it (thesis Remark 1, :func:`~treeopt_dsl.starts.refine.refine_result`; the
        thesis' experiments always do, docs/DESIGN.md "Readings of the papers"). ``tree_`` is then the refined
        tree; ``result_.refinement`` holds the exact objective before and after, while ``result_.objective`` and
        ``certificate_`` stay the MILP's. Another formulation with ``refine=True`` raises a ``FormulationError``
        at ``fit``, before the solve.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels in sorted order; with two, ``classes_[1]`` is the positive class (+1).
    tree_ : TreeModel or OneVsRestTrees
        The decoded tree (coefficients act on scaled features; ``tree_.scaler`` maps raw inputs). With more than
        two classes: ``oct``/``octh`` give one tree with a class per leaf (``tree_.leaf_classes``); the other
        formulations one-vs-rest trees, a :class:`~treeopt_dsl.models.ovr.OneVsRestTrees` (a tuple of the ``K``
        binary trees that prints them one after the other and draws them side by side; ``estimators_``: the fitted
        binary estimators).
    model_ : TreeModel
        The same object as ``tree_`` (the name every estimator of this module shares).
    result_ : SolveResult
        Status, objective, bound, gap, timings and sizes of the solve.
    certificate_ : Certificate
        The decoded tree re-evaluated on the training data against the solver's objective.
    feature_influence_ : ndarray of shape (n_nodes, n_features_in_)
        ``r[t, j] = w_jt * sigma_jt`` ([aldinucci-thesis-2024] lines 567-583) over the training samples.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Sums to 1 (all zeros for a tree without a useful split). Axis-aligned trees: scikit-learn's definition, the
        decrease of the (weighted Gini) impurity of the training data at each split of the feature, normalized.
        Oblique trees: ``sum_t N_t sum |w_tj| sd_j`` normalized, with ``N_t`` the training weight reaching branch
        node ``t`` and ``w_tj sd_j`` the standardized coefficient (``sd_j`` the standard deviation of the scaled
        training feature ``j``). One-vs-rest: the mean of the binary trees' importances.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Feature names, when ``X`` has string column names (e.g. a DataFrame).

    Notes
    -----
    ``predict`` equals ``tree_.predict`` (``s(v) >= 0.5`` at the reached last-layer node, or
    ``v > eps/2`` for the 0-1 loss); ``decision_function`` is ``v`` minus that leaf threshold, with an
    exact tie ``v = 0`` of the ``s(v) >= 0.5`` rule returned as the smallest positive float, so that
    scikit-learn's reading (``decision_function > 0`` means ``classes_[1]``) gives the same classes.
    ``predict_proba`` is ``s(decision_function)``: calibrated log-odds for the logistic loss of OLCT;
    for the hinge (MARGOT) and 0-1 (OCT, OCT-H: ``|w| <= 1``, scores near 0) losses it only ranks samples.

    scikit-learn's tree interface (docs/sklearn.md): :meth:`to_sklearn` (axis-aligned trees as a fitted
    :class:`sklearn.tree.DecisionTreeClassifier`, for ``plot_tree``/``export_text``/``export_graphviz``),
    :meth:`get_depth`, :meth:`get_n_leaves`, :meth:`apply`, :meth:`decision_path` and ``feature_importances_``
    read the *flat* tree: the nodes a sample can take, numbered depth first as scikit-learn numbers them (a split
    that sends every sample one way is skipped). ``fit`` and ``predict`` take scipy sparse ``X`` (densified when
    the dense copy fits :func:`~treeopt_dsl.defaults.memory_budget`, else
    :class:`~treeopt_dsl.errors.ModelTooLarge`), e.g. after a ``OneHotEncoder``. ``warm_start`` also takes a fitted
    :class:`sklearn.tree.DecisionTreeClassifier` (a solver route such as ``solver="highs"``; the exact engines of
    ``solver="auto"`` need no start).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import export_text
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = OptimalTreeClassifier(formulation="oct", depth=2).fit(X, y)
    >>> sk = clf.to_sklearn()
    >>> bool((sk.predict(X) == clf.predict(X)).all()), clf.get_depth(), clf.get_n_leaves()
    (True, 2, 4)
    >>> print(export_text(sk, feature_names=["sl", "sw", "pl", "pw"]).splitlines()[0])
    |--- pl <= 4.45
    """

    def __init__(self, formulation: str = "olct", depth: int = 2, C: Any = 1.0, scaling: str = "standard",
                 solver: str = SOLVER, backend: str | None = None, time_limit: float | None = ESTIMATOR_TIME_LIMIT,
                 gap: float | None = None, threads: int | None = None, random_state: Any = None,
                 verbose: bool = False, warm_start: Any = "auto", params: dict[str, Any] | None = None,
                 class_weight: Any = None, keep_model: bool = False, refine: bool = False) -> None:
        self.formulation = formulation
        self.depth = depth
        self.C = C
        self.scaling = scaling
        self.solver = solver
        self.backend = backend
        self.time_limit = time_limit
        self.gap = gap
        self.threads = threads
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.params = params
        self.class_weight = class_weight
        self.keep_model = keep_model
        self.refine = refine

    _multiclass = True  # oct / octh natively (leaf classes), the other formulations one-vs-rest

    # ------------------------------------------------------------------ fitting
    def _spec(self) -> Any:
        """The formulation spec from ``formulation``, ``depth``, ``C``, ``scaling`` and ``params``."""
        if not isinstance(self.formulation, str):
            raise FormulationError(f"formulation must be a name, got {self.formulation!r}")
        key = self.formulation.lower().replace("-", "_")
        if key not in REGISTRY or "depth" not in {p.name for p in REGISTRY[key].params}:
            # the tree formulations named only in the error: listing them imports every family
            trees = sorted(k for k, cls in REGISTRY.items() if "depth" in {p.name for p in cls.params})
            if key not in REGISTRY:
                raise FormulationError(f"unknown formulation {self.formulation!r}; tree formulations: "
                                       f"{', '.join(trees)}")
            raise FormulationError(f"{key!r} is not a tree formulation (use RiskScoreClassifier for risk scores); "
                                   f"tree formulations: {', '.join(trees)}")
        if self.params is not None and not isinstance(self.params, dict):
            raise FormulationError(f"params must be a dict of formulation parameters or None, got {self.params!r}")
        extra = dict(self.params or {})
        clash = sorted(set(extra) & set(TREE_PARAMS))
        if clash:
            raise FormulationError(f"set {clash} through the estimator's own parameters, not through params=")
        check_depth(self.depth)
        if not isinstance(self.refine, (bool, np.bool_)):
            raise OptionError(f"refine must be True or False, got {self.refine!r}")
        # unknown names in params raise a FormulationError naming the formulation's parameters
        spec = get_formulation(key, depth=int(self.depth), C=self.C, scaling=self.scaling, **extra)
        if self.refine:
            check_refinable(spec)
        return spec

    def _after_solve(self, result: Any) -> Any:
        return refine_result(result) if self.refine else result

    def _start(self, previous: Any, n_features: int) -> Any:
        ws = self.warm_start
        if ws is None or ws is False:
            return None
        if ws is True:  # scikit-learn's convention: continue from the previous fit when it applies
            ok = (isinstance(previous, TreeModel) and previous.W.shape[1] == n_features
                  and isinstance(self.depth, numbers.Integral) and previous.topology.depth <= self.depth)
            return previous if ok else None
        return ws

    def _keep(self, result: Any) -> None:
        self.tree_ = result.model
        self.feature_influence_ = self.tree_.feature_influence()

    def _remember(self, X: np.ndarray, codes: np.ndarray, sample_weight: np.ndarray | None) -> None:
        """The flat tree (:func:`~treeopt_dsl.models.sklearn_tree.flatten`), the training weight of every class at
        each of its nodes, and ``feature_importances_`` (class Notes), from the training data."""
        if getattr(self, "estimators_", None) is not None:  # one-vs-rest: the mean of the trees' importances
            imp = np.mean([e.feature_importances_ for e in self.estimators_], axis=0)
            self.feature_importances_ = imp / imp.sum() if imp.sum() > 0 else imp
            return
        tree = self.tree_
        flat = flatten(tree)
        weights, counts = node_weights(flat.decision_path(tree, X), codes, len(self.classes_), sample_weight)
        self._flat, self._node_weights, self._node_counts = flat, weights, counts
        try:
            feature, _ = split_thresholds(tree, flat, X.shape[1])
        except CapabilityError:  # oblique: standardized coefficients weighted by the training weight at the node
            self.feature_importances_ = oblique_importances(tree, flat, weights, tree._scaled(X).std(0))
        else:
            self.feature_importances_ = impurity_importances(flat.left, flat.right, feature, weights, X.shape[1])

    def _decision(self, X: np.ndarray) -> np.ndarray:
        """``v - leaf_threshold`` at the reached node, ties of the ``>= 0`` rule made positive (class Notes)."""
        v = self.tree_.decision_function(X)
        lt = float(self.tree_.leaf_threshold)
        if lt > 0:
            return v - lt  # v > lt  <=>  v - lt > 0 exactly in floating point
        return np.where(v == 0.0, np.finfo(float).smallest_normal, v)

    # ------------------------------------------------------------------ explanation
    def explain(self, max_terms: int = 6) -> str:
        """The fitted tree as text: one line per node, thresholds in original units when axis-aligned."""
        check_is_fitted(self)
        return self.tree_.text(max_terms=max_terms)

    # ------------------------------------------------------------------ scikit-learn's tree interface
    def _structure(self, who: str) -> FlatTree:
        """The flat tree of the fitted ``tree_`` (kept at fit; rebuilt when missing)."""
        check_is_fitted(self)
        if not isinstance(self.tree_, TreeModel):
            raise CapabilityError(f"{who}: this estimator holds {len(self.classes_)} one-vs-rest trees "
                                  f"({self.formulation!r} is binary); call it on each of estimators_, or fit "
                                  "formulation='oct' for one multiclass tree")
        flat = getattr(self, "_flat", None)
        if flat is None:
            flat = self._flat = flatten(self.tree_)
        return flat

    def to_sklearn(self) -> DecisionTreeClassifier:
        """The fitted tree as a fitted :class:`sklearn.tree.DecisionTreeClassifier` (axis-aligned trees only).

        Its ``tree_`` holds the nodes a sample can take (splits that send every sample one way are skipped), in
        this estimator's numbering (:meth:`apply`), with thresholds in the raw features' units: a split
        ``x_j <= threshold`` goes left, as scikit-learn's. ``value``, ``impurity`` and the sample counts are those
        of the training data, so :func:`~sklearn.tree.plot_tree`, :func:`~sklearn.tree.export_text` and
        :func:`~sklearn.tree.export_graphviz` draw the tree as scikit-learn's own. It predicts as this estimator
        on every input, except within float32 rounding (relative ``6e-8``) of a threshold: scikit-learn compares
        ``float32(x)``. Raises :class:`~treeopt_dsl.errors.CapabilityError` for oblique trees (a split on
        several features) and one-vs-rest ensembles.

        Example::

            >>> from sklearn.tree import export_text
            >>> clf = OptimalTreeClassifier(formulation="oct", depth=2).fit(X, y)  # doctest: +SKIP
            >>> print(export_text(clf.to_sklearn()))  # doctest: +SKIP
        """
        flat = self._structure("to_sklearn")
        feature, threshold = split_thresholds(self.tree_, flat, self.n_features_in_)
        return sklearn_classifier(flat.left, flat.right, feature, threshold, flat.code,
                                  getattr(self, "_node_weights", None), getattr(self, "_node_counts", None),
                                  self.classes_, self.n_features_in_, getattr(self, "feature_names_in_", None))

    def get_depth(self) -> int:
        """The depth of the fitted tree: its longest root-to-leaf path once splits that send every sample one way
        are skipped (at most ``depth``)."""
        return self._structure("get_depth").depth

    def get_n_leaves(self) -> int:
        """The number of leaves of the fitted tree (those a sample can reach)."""
        return self._structure("get_n_leaves").n_leaves

    def apply(self, X: Any) -> np.ndarray:
        """The leaf each sample reaches, as a node index of the flat tree (depth-first numbering, scikit-learn's:
        ``to_sklearn().apply(X)`` gives the same indices for an axis-aligned tree)."""
        flat = self._structure("apply")
        return flat.apply(self.tree_, self._validate(X))

    def decision_path(self, X: Any) -> sp.csr_matrix:
        """The nodes each sample passes, a sparse ``(n_samples, n_nodes)`` indicator matrix as scikit-learn's
        ``decision_path`` (node indices as :meth:`apply`)."""
        flat = self._structure("decision_path")
        return sp.csr_matrix(flat.decision_path(self.tree_, self._validate(X)).astype(np.int64))


class RandomizedTreeClassifier(SolvedClassifier):
    """Sparse optimal randomized classification tree, S-ORCT (Blanquero et al., [blanquero-2020-sorct]; formulation
    ``sorct``).

    A smooth NLP solved by Ipopt from ``n_starts`` random points (the best kept): node ``t`` sends ``x`` left with
    probability ``F(a_t·x / p - mu_t)`` (``F`` the logistic CDF of slope ``gamma``), every leaf holds class
    probabilities, the objective is the expected misclassification cost plus ``lambda_l`` (local, l1) and
    ``lambda_g`` (global, l_inf) sparsity. Any number of classes (depth >= log2 K).

    Parameters
    ----------
    depth : int or None, default=None
        Depth ``D``. ``None``: the paper's choice for the data, the smallest depth with a leaf per class,
        ``max(1, ceil(log2 K))`` (1 for two classes, 2 for three or four; ``depth_`` holds it). A depth with fewer
        leaves than classes raises a ``FormulationError`` (a ``ValueError``) at ``fit``: constraint (3) asks every
        class to label a leaf.
    gamma, lambda_l, lambda_g, cost, rho, n_starts, max_iter, scaling
        The formulation's parameters (``treeopt formulations sorct``): slope of ``F`` (512), sparsity weights
        (0), the misclassification cost ``W`` off the diagonal (0.5), the class performance ``rho`` (None: off),
        the random starts (20), Ipopt's iteration limit per start, the scaling (minmax, as the paper).
    solver : str, default="ipopt"
        An NLP solver route (``ipopt``).
    backend, time_limit, gap, threads, random_state, verbose, class_weight, keep_model
        As for :class:`OptimalTreeClassifier` (``random_state`` seeds the multistart; the sample weights make the
        expected cost a weighted mean).

    Attributes
    ----------
    model_, tree_ : RandomizedTreeModel
        The fitted randomized tree (``predict_proba`` is the paper's class probability, (lines 141-143)).
    depth_ : int
        The depth fitted (``depth``, or the one ``depth=None`` chose).
    n_iter_ : int
        Ipopt's iterations for the start whose solution is kept (as scikit-learn's ``KMeans`` with ``n_init``
        reports its best run); every start's count is in ``result_.starts``.
    result_, certificate_, classes_, n_features_in_
        As for :class:`OptimalTreeClassifier` (a local solver: ``result_.status`` is ``local_optimum``).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = RandomizedTreeClassifier(n_starts=2).fit(X, y)  # three classes: depth 2 (four leaves)
    >>> clf.depth_, clf.predict_proba(X[:2]).shape, clf.n_iter_ > 0
    (2, (2, 3), True)
    """

    _multiclass = True

    def __init__(self, depth: int | None = None, gamma: float = 512.0, lambda_l: float = 0.0, lambda_g: float = 0.0,
                 cost: float = 0.5, rho: Any = None, n_starts: int = 20, max_iter: int | None = None,
                 scaling: str = "minmax", solver: str = "ipopt", backend: str | None = None,
                 time_limit: float | None = ESTIMATOR_TIME_LIMIT, gap: float | None = None, threads: int | None = None,
                 random_state: Any = 0, verbose: bool = False, class_weight: Any = None,
                 keep_model: bool = False) -> None:
        self.depth = depth
        self.gamma = gamma
        self.lambda_l = lambda_l
        self.lambda_g = lambda_g
        self.cost = cost
        self.rho = rho
        self.n_starts = n_starts
        self.max_iter = max_iter
        self.scaling = scaling
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
        return self._spec_for(2)

    def _spec_for(self, n_classes: int) -> Any:
        """S-ORCT at ``depth``, or (``None``) at the smallest depth with a leaf for each of ``n_classes``."""
        if self.depth is None:
            depth = max(1, int(np.ceil(np.log2(max(n_classes, 2)))))
        elif not isinstance(self.depth, numbers.Integral) or isinstance(self.depth, bool) or self.depth < 1:
            raise FormulationError(f"depth must be a positive integer or None (a leaf per class), got {self.depth!r}")
        else:
            depth = int(self.depth)
        return get_formulation("sorct", depth=depth, gamma=self.gamma, lambda_l=self.lambda_l,
                               lambda_g=self.lambda_g, cost=self.cost, rho=self.rho, n_starts=self.n_starts,
                               max_iter=None if self.max_iter is None else float(self.max_iter),
                               scaling=self.scaling)

    def _keep(self, result: Any) -> None:
        self.tree_ = result.model
        self.depth_ = int(self.tree_.topology.depth)
        self.n_iter_ = int(result.iterations or 0)

    def _seed(self) -> int | None:
        seed = super()._seed()
        return 0 if seed is None else seed

    def explain(self) -> str:
        """The fitted randomized tree as text."""
        check_is_fitted(self)
        return self.tree_.text()
