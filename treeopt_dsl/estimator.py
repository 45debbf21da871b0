"""scikit-learn classifiers: :class:`OptimalTreeClassifier` fits the registered tree formulations
(OLCT, MARGOT, OCT, ...); :class:`RiskScoreClassifier` fits optimal risk scores (ORS, OGRS).

Both follow the scikit-learn estimator conventions: ``__init__`` only stores its parameters (so
``get_params``/``set_params``/``clone``/``GridSearchCV`` work), ``fit`` validates the data with
:func:`sklearn.utils.validation.validate_data`, builds the chosen formulation with
:func:`treeopt_dsl.formulations.get_formulation`, solves it to (proven) optimality or the time
limit, and keeps the decoded model. Both pass :func:`sklearn.utils.estimator_checks.check_estimator`.

Every estimator takes ``fit(X, y, sample_weight=None)`` and a ``class_weight`` parameter (``None``, ``"balanced"``
or a dict, scikit-learn's semantics: :func:`sklearn.utils.class_weight.compute_sample_weight`); the weights
multiply (``w_i = sample_weight_i * class_weight[y_i]``) and every loss minimizes ``sum_i w_i loss_i``
(docs/weights.md). More than two classes: :class:`OptimalTreeClassifier` with ``oct``/``octh`` (leaf classes,
Bertsimas and Dunn) and :class:`RandomizedTreeClassifier` (S-ORCT) natively, the other tree formulations
one-vs-rest (docs/multiclass.md); the risk scores and categorical trees are binary.

With two classes, as in the papers (thesis §3.2): ``classes_[0]`` is the class mapped to
``-1`` and ``classes_[1]`` the one mapped to ``+1``. A sample reaching last-layer node ``t`` gets
the score ``v = w_t·x + b_t``; it is predicted ``classes_[1]`` iff ``s(v) >= 0.5`` ([aldinucci-thesis-2024] line
589; ``v > eps/2`` for the 0-1 loss of OCT, (3.9)) and ``P(classes_[1] | x) = s(v)`` with ``s`` the
logistic function (the calibrated reading of [aldinucci-thesis-2024] lines 585-606).

>>> from sklearn.datasets import load_breast_cancer
>>> X, y = load_breast_cancer(return_X_y=True)
>>> clf = OptimalTreeClassifier(depth=1, time_limit=30).fit(X[::10], y[::10])
>>> clf.predict(X[:3]).shape, clf.predict_proba(X[:3]).shape
((3,), (3, 2))
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from treeopt_dsl.data import Dataset, check_labels, require_numeric
from treeopt_dsl.errors import DataError, FormulationError, SolveError, UncertifiedWarning
from treeopt_dsl.models.tree import TreeModel
from treeopt_dsl.numeric import sigmoid
from treeopt_dsl.result import Status

#: formulation parameters that are estimator parameters of OptimalTreeClassifier: every tree formulation
#: declares them with these same defaults, so an estimator default never hides a formulation's own default
_TREE_PARAMS: dict[str, Any] = {"depth": 2, "C": 1.0, "scaling": "standard"}

#: fitted attributes cleared at the start of every fit (a failed refit must not leave a stale model)
_FITTED = ("classes_", "model_", "tree_", "result_", "certificate_", "feature_influence_", "estimators_")

_HALF_UP = float(np.nextafter(0.5, 1.0))


def _finite_real(v: Any) -> bool:
    """A real number (not a bool) that is finite."""
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) and bool(np.isfinite(float(v)))


def fit_weights(estimator: Any, X: np.ndarray, y: np.ndarray, sample_weight: Any) -> np.ndarray | None:
    """``sample_weight * class_weight[y]`` (scikit-learn's semantics), or ``None`` when neither is given (the
    unweighted model). ``class_weight`` is the estimator's parameter: ``None``, ``"balanced"`` (``n / (K n_k)``)
    or a dict ``{label: weight}``."""
    cw = getattr(estimator, "class_weight", None)
    if sample_weight is None and cw is None:
        return None
    sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if cw is not None:
        if not (cw == "balanced" or isinstance(cw, dict)):
            raise FormulationError(f"class_weight must be None, 'balanced' or a dict {{label: weight}}, got {cw!r}")
        sw = sw * compute_sample_weight(cw, y)
    if not np.all(np.isfinite(sw)) or np.any(sw < 0):
        raise DataError("sample weights must be finite and non-negative")
    if not np.any(sw > 0):
        raise DataError("every sample has weight 0: nothing to fit")
    return sw


def _warn_unproven(who: str, result: Any, time_limit: float | None) -> None:
    """Warn about a model that is not proven optimal: :class:`UncertifiedWarning` when the certificate
    failed (``warnings.simplefilter("error", UncertifiedWarning)`` makes it raise), a
    :class:`~sklearn.exceptions.ConvergenceWarning` when a limit or an interrupt stopped the solver."""
    gap = "unknown" if result.gap is None else f"{100.0 * result.gap:.3g}%"
    bound = "unknown" if result.bound is None else f"{result.bound:.6g}"
    if result.status is Status.UNCERTIFIED:
        warnings.warn(f"{who}: the solver's answer failed its certificate, the model is not proven optimal: "
                      f"{result.message}", UncertifiedWarning, stacklevel=3)
    elif result.status in (Status.INTERRUPTED, Status.INTERRUPTED_NO_SOLUTION):
        warnings.warn(f"{who}: the solve was interrupted ({result.message}); keeping the best model found so far "
                      f"(objective {result.objective:.6g}, bound {bound}, gap {gap})", ConvergenceWarning,
                      stacklevel=3)
    elif result.status is Status.LOCAL_OPTIMUM:
        pass  # a local solver's answer (S-ORCT's multistart): what the method promises
    elif result.status is Status.FEASIBLE:
        warnings.warn(f"{who}: the solver ended at a worse point than its start, the start is kept "
                      f"(objective {result.objective:.6g}, bound {bound}): {result.message}", ConvergenceWarning,
                      stacklevel=3)
    elif result.status is not Status.OPTIMAL:
        warnings.warn(f"{who}: the solver stopped at the time limit ({time_limit} s) "
                      f"with optimality gap {gap} (objective {result.objective:.6g}, bound {bound}); "
                      "the model is feasible but not proven optimal: raise time_limit or set gap",
                      ConvergenceWarning, stacklevel=3)


class _SolvedClassifier(ClassifierMixin, BaseEstimator):
    """What every estimator here shares: validation, the solve, status warnings, prediction.

    Subclasses give ``_spec()`` (the registered formulation), ``_start(previous)`` (the warm start)
    and ``_keep(result)`` (their own fitted attributes); ``model_`` is the decoded model and
    ``_decision(X)`` its signed score (``> 0``: ``classes_[1]``).
    """

    #: whether ``fit`` takes more than two classes (natively or one-vs-rest)
    _multiclass: bool = False

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self._multiclass  # binary, as in the papers, unless stated
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = False
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "model_")

    def _spec(self) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def _start(self, previous: Any, n_features: int) -> Any:
        return None

    def _keep(self, result: Any) -> None:
        """Store the subclass' own fitted attributes."""

    def _seed(self) -> int | None:
        if self.random_state is None:
            return None
        if isinstance(self.random_state, numbers.Integral):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """Solve the formulation on ``(X, y)``; ``y`` must hold exactly two classes (more for the multiclass
        estimators). ``sample_weight`` (one non-negative weight per sample) and the ``class_weight`` parameter
        weigh every sample's loss: the objective is ``sum_i w_i loss_i`` (an integer weight is a repeated row).

        Raises ``ValueError`` for unusable data (NaN/inf, one class, more than two classes; a
        ``DataError`` naming the columns for text or categorical DataFrame columns, the rows for missing
        labels, the feature for values whose scaling overflows), a
        ``FormulationError`` (a ``ValueError``) for bad parameters, and a ``SolveError`` when the solve
        ends without a model (infeasible, unbounded, or the time limit before any feasible solution).
        A solve stopped by the time limit with a feasible tree keeps it and warns with a
        :class:`~sklearn.exceptions.ConvergenceWarning` that states the optimality gap.
        """
        from treeopt_dsl.solve import failure_message

        previous = getattr(self, "model_", None)
        for name in _FITTED:
            self.__dict__.pop(name, None)
        require_numeric(X)  # text / categorical DataFrame columns: say which and what to do
        if y is not None:
            try:
                y_arr = np.asarray(y)
            except (TypeError, ValueError):  # ragged and the like: validate_data says what is wrong
                y_arr = None
            if y_arr is not None and y_arr.ndim == 1:
                check_labels(y_arr)  # None / NaN labels: name the rows
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=True)
        check_classification_targets(y)
        classes = np.unique(y)
        shown = ", ".join(map(repr, classes[:6].tolist())) + (" ..." if classes.size > 6 else "")
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type not in ("binary", "multiclass") or (y_type == "multiclass" and not self._multiclass):
            raise ValueError(f"Only binary classification is supported. The type of the target is {y_type} "
                             f"({classes.size} classes: {shown}); {type(self).__name__} is binary (the papers' "
                             "setting): pick one class against the rest (e.g. y == label)")
        if classes.size < 2:
            raise DataError(f"{type(self).__name__} needs two classes in y, found 1 class ({shown}): "
                            "a classifier cannot be trained on a single class")
        sw = fit_weights(self, X, y, sample_weight)
        if sw is not None and np.any(sw == 0) and np.unique(y[sw > 0]).size == classes.size:
            keep = sw > 0  # a zero weight removes the row (scikit-learn's semantics; also from the scaling)
            X, y, sw = X[keep], y[keep], sw[keep]
        spec = self._spec()
        if classes.size > 2 and not getattr(spec, "multiclass", False):
            return self._fit_one_vs_rest(X, y, classes, sw)
        names = getattr(self, "feature_names_in_", None)
        data = Dataset.from_arrays(X, y, feature_names=None if names is None else [str(n) for n in names],
                                   positive=None if classes.size > 2 else classes[1], name="fit",
                                   multiclass=classes.size > 2, sample_weight=sw)
        result = spec.solve(data, solver=self.solver, backend=self.backend, time_limit=self.time_limit,
                            gap=self.gap, threads=self.threads, seed=self._seed(), verbose=bool(self.verbose),
                            warm_start=self._start(previous, X.shape[1]))
        if result.status is Status.TIME_LIMIT_NO_SOLUTION:
            raise SolveError(f"the time limit ({self.time_limit} s) was reached before the solver found any "
                             f"feasible {spec.name} model: raise time_limit, lower depth, or give a warm start "
                             "(e.g. warm_start='cart')", result)
        if not result.status.has_solution or result.model is None:
            raise SolveError(failure_message(result), result)
        _warn_unproven(type(self).__name__, result, self.time_limit)
        self.classes_ = classes
        self.model_ = result.model
        self.result_ = result
        self.certificate_ = result.certificate
        self._keep(result)
        return self

    def _fit_one_vs_rest(self, X: np.ndarray, y: np.ndarray, classes: np.ndarray, sw: np.ndarray | None) -> Any:
        """``K > 2`` classes for a binary formulation: one tree per class against the rest, each fitted on every
        sample with the same weights (``class_weight`` already applied to the original classes); ``predict`` is
        the class whose tree scores highest (docs/multiclass.md)."""
        from sklearn.base import clone

        subs = []
        for k in classes:
            sub = clone(self).set_params(class_weight=None, warm_start="auto" if self.warm_start is True
                                         else self.warm_start)
            subs.append(sub.fit(X, (y == k).astype(np.int64), sample_weight=sw))
        self.classes_ = classes
        self.estimators_ = subs
        self.model_ = tuple(s.model_ for s in subs)
        self.tree_ = self.model_
        self.result_ = [s.result_ for s in subs]
        self.certificate_ = [s.certificate_ for s in subs]
        return self

    def _decision(self, X: np.ndarray) -> np.ndarray:
        """The model's signed score of validated ``X``: ``> 0`` means ``classes_[1]``."""
        return self.model_.decision_function(X)

    def _codes(self, X: np.ndarray) -> np.ndarray:
        """``K > 2``: the class codes (positions in ``classes_``) of validated ``X``."""
        if getattr(self, "estimators_", None) is not None:
            return np.argmax(np.column_stack([e._decision(X) for e in self.estimators_]), axis=1)
        if hasattr(self.model_, "predict_codes"):
            return np.asarray(self.model_.predict_codes(X), dtype=np.intp)
        return np.argmax(self.model_.predict_proba(X), axis=1)

    def _multiclass_proba(self, X: np.ndarray) -> np.ndarray:
        """``K > 2``: the model's class probabilities, or (one-vs-rest) the normalized sigmoids of the trees'
        scores (their ``argmax`` is ``predict``'s, as the sigmoid is increasing)."""
        if getattr(self, "estimators_", None) is None:
            return np.asarray(self.model_.predict_proba(X), dtype=float)
        d = np.column_stack([e._decision(X) for e in self.estimators_])
        P = sigmoid(d) + 1e-300
        P /= P.sum(1, keepdims=True)
        return P

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed score, shape ``(n_samples,)``: ``> 0`` means ``classes_[1]`` (what ``predict`` returns).
        ``K > 2``: shape ``(n_samples, K)``, the highest column is the predicted class (one-vs-rest: each tree's
        score; leaf-class trees: ``predict_proba``)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=True, reset=False)
        if len(self.classes_) > 2:
            if getattr(self, "estimators_", None) is not None:
                return np.column_stack([e._decision(X) for e in self.estimators_])
            return self._multiclass_proba(X)
        return self._decision(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """``[P(classes_[0]), P(classes_[1])]`` with ``P(classes_[1]) = s(decision_function)``.

        Columns follow ``classes_``; where ``s`` rounds a positive score to exactly 0.5 the
        probability is nudged one ulp up so that ``argmax`` agrees with ``predict``. ``K > 2``: one column per
        class (the model's leaf probabilities, or one-vs-rest the normalized sigmoids of the trees' scores).
        """
        if len(getattr(self, "classes_", ())) > 2:
            check_is_fitted(self)
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite=True, reset=False)
            return self._multiclass_proba(X)
        d = self.decision_function(X)
        p = sigmoid(d)
        p = np.where((d > 0) & (p <= 0.5), _HALF_UP, p)
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        """The class of each sample, in the original label space (``y``'s labels)."""
        if len(getattr(self, "classes_", ())) > 2:
            check_is_fitted(self)
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite=True, reset=False)
            return self.classes_[self._codes(X)]
        positive = self.decision_function(X) > 0  # checks first that the estimator is fitted
        return self.classes_[positive.astype(np.intp)]


class OptimalTreeClassifier(_SolvedClassifier):
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
    warm_start : bool, {"auto", "greedy", "greedy_lp", "cart"}, TreeModel or None, default="auto"
        A start handed to the solver (completed to a feasible point by the blocks): ``"auto"`` (the best
        of CART, the greedy starts and the exact DP tree in the formulation's objective; the fitted
        model is never worse than it, ``result_.start`` says which won), ``"greedy"``
        (node-by-node classifiers from the root), ``"greedy_lp"`` (OLCT: each node's part of the objective
        solved exactly, an LP), ``"cart"`` (a scikit-learn tree of the same depth),
        or a fitted tree, e.g. ``tree_`` of a shallower estimator. ``True`` follows scikit-learn's
        convention: start from this estimator's previous ``tree_`` when it has one that fits (same
        number of features, depth at most ``depth``), otherwise from nothing; ``False``/``None``: no start.
    params : dict or None, default=None
        Further parameters of the formulation, by the names it declares (``spec.params``), e.g.
        ``{"big_m": 50.0}``, ``{"tangents": "V3"}`` (olct), ``{"alpha": 0.1}`` (oct),
        ``{"budget": 2}`` (margot_hfs), ``{"w_bound": None}``. Parameters not given keep the
        formulation's own defaults (``big_m`` and the weight bounds differ between formulations).
        Unknown names raise a ``FormulationError`` (a ``ValueError``) at ``fit``.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes (scikit-learn's semantics, :func:`~sklearn.utils.class_weight.compute_sample_weight`:
        ``"balanced"`` gives class ``k`` the weight ``n / (K n_k)``); multiplied into ``sample_weight`` of ``fit``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels in sorted order; with two, ``classes_[1]`` is the positive class (+1).
    tree_ : TreeModel
        The decoded tree (coefficients act on scaled features; ``tree_.scaler`` maps raw inputs). With more than
        two classes: ``oct``/``octh`` give one tree with a class per leaf (``tree_.leaf_classes``); the other
        formulations a tuple of one-vs-rest trees (``estimators_``: the fitted binary estimators).
    model_ : TreeModel
        The same object as ``tree_`` (the name every estimator of this module shares).
    result_ : SolveResult
        Status, objective, bound, gap, timings and sizes of the solve.
    certificate_ : Certificate
        The decoded tree re-evaluated on the training data against the solver's objective.
    feature_influence_ : ndarray of shape (n_nodes, n_features_in_)
        ``r[t, j] = w_jt * sigma_jt`` ([aldinucci-thesis-2024] lines 567-583) over the training samples.
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
    """

    def __init__(self, formulation: str = "olct", depth: int = 2, C: Any = 1.0, scaling: str = "standard",
                 solver: str = "highs", backend: str | None = None, time_limit: float | None = 60.0,
                 gap: float | None = None, threads: int | None = None, random_state: Any = None,
                 verbose: bool = False, warm_start: Any = "auto", params: dict[str, Any] | None = None,
                 class_weight: Any = None) -> None:
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

    _multiclass = True  # oct / octh natively (leaf classes), the other formulations one-vs-rest

    # ------------------------------------------------------------------ fitting
    def _spec(self) -> Any:
        """The formulation spec from ``formulation``, ``depth``, ``C``, ``scaling`` and ``params``."""
        from treeopt_dsl.formulations import REGISTRY, get_formulation

        if not isinstance(self.formulation, str):
            raise FormulationError(f"formulation must be a name, got {self.formulation!r}")
        key = self.formulation.lower().replace("-", "_")
        trees = sorted(k for k, cls in REGISTRY.items() if "depth" in {p.name for p in cls.params})
        if key not in REGISTRY:
            raise FormulationError(f"unknown formulation {self.formulation!r}; tree formulations: {', '.join(trees)}")
        if key not in trees:
            raise FormulationError(f"{key!r} is not a tree formulation (use RiskScoreClassifier for risk scores); "
                                   f"tree formulations: {', '.join(trees)}")
        if self.params is not None and not isinstance(self.params, dict):
            raise FormulationError(f"params must be a dict of formulation parameters or None, got {self.params!r}")
        extra = dict(self.params or {})
        clash = sorted(set(extra) & set(_TREE_PARAMS))
        if clash:
            raise FormulationError(f"set {clash} through the estimator's own parameters, not through params=")
        if not isinstance(self.depth, numbers.Integral) or isinstance(self.depth, bool):
            raise FormulationError(f"depth must be an integer from 1 to 6, got {self.depth!r}")
        # unknown names in params raise a FormulationError naming the formulation's parameters
        return get_formulation(key, depth=int(self.depth), C=self.C, scaling=self.scaling, **extra)

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


class RiskScoreClassifier(_SolvedClassifier):
    """Optimal risk scores: ``P(classes_[1] | x) = sigmoid(total points + beta)`` with integer points.

    Parameters
    ----------
    formulation : {"ors", "ogrs"}, default="ors"
        ``ors`` (thesis (4.5)): points on (binary or [0, 1]-scaled) features; ``ogrs`` (4.16): ``T``
        threshold rules ``x_j >= b_t`` learned with their points.
    T : int, default=3
        Number of features with points (4.2) / of rules (4.8), from 1 to the number of features (a larger
        ``T`` raises a ``FormulationError`` at ``fit``). ``cardinality="at_most"`` makes the ``ors`` count
        an upper bound (then any ``T >= 1`` is allowed).
    A : str, default="-5..5"
        Admissible points (a range ``lo..hi`` or a list ``"-3,-1,0,1,3"``; must contain 0).
    tangents : str, default="V3"
        Tangent set of the logistic loss (4.4); V3 in the thesis' experiments.
    C : float, default=1.0
        Weight of the loss.
    scaling : {"minmax", "standard", "none"}, default="minmax"
        Features are scaled to [0, 1] as in the thesis; binary features keep their 0/1 meaning.
    multiplier : float, default=1.0
        ``ors`` only: the scale factor ``m`` of FasterRisk (Liu et al. 2022), ``P = sigmoid((points + beta) / m)``;
        the loss is fitted on that scale, so ``m > 1`` allows larger integer points for the same probabilities.
    solver, backend, time_limit, gap, threads, random_state, verbose, class_weight
        As for :class:`OptimalTreeClassifier`. The solve starts from a beam-search score card
        (``result_.start``) and is never worse than it.

    Attributes
    ----------
    model_ : RiskScoreModel
        The score card (``model_.score_card()``, ``model_.risk_table()``, ``model_.normal_form()``).
    result_, certificate_, classes_, n_features_in_
        As for :class:`OptimalTreeClassifier`.

    >>> import numpy as np
    >>> X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 5, dtype=float); y = X[:, 0].astype(int)
    >>> RiskScoreClassifier(T=1, time_limit=30).fit(X, y).predict([[1, 0], [0, 1]]).tolist()
    [1, 0]
    """

    def __init__(self, formulation: str = "ors", T: int = 3, A: str = "-5..5", cardinality: str = "exact",
                 tangents: Any = "V3", C: float = 1.0, scaling: str = "minmax", multiplier: float = 1.0,
                 solver: str = "highs", backend: str | None = None, time_limit: float | None = 60.0,
                 gap: float | None = None, threads: int | None = None, random_state: Any = None,
                 verbose: bool = False, class_weight: Any = None) -> None:
        self.formulation = formulation
        self.T = T
        self.A = A
        self.cardinality = cardinality
        self.tangents = tangents
        self.C = C
        self.scaling = scaling
        self.multiplier = multiplier
        self.solver = solver
        self.backend = backend
        self.time_limit = time_limit
        self.gap = gap
        self.threads = threads
        self.random_state = random_state
        self.verbose = verbose
        self.class_weight = class_weight

    def _spec(self) -> Any:
        from treeopt_dsl.formulations import get_formulation

        if not isinstance(self.T, numbers.Integral) or isinstance(self.T, bool) or self.T < 1:
            raise FormulationError(f"T must be a positive integer, got {self.T!r}")
        if self.formulation not in ("ors", "ogrs"):
            raise FormulationError(f"formulation must be 'ors' or 'ogrs', got {self.formulation!r}")
        if not _finite_real(self.C):
            raise FormulationError(f"C must be a finite number, got {self.C!r}")
        p = getattr(self, "n_features_in_", None)
        at_most = self.formulation == "ors" and self.cardinality == "at_most"
        if p is not None and self.T > p and not at_most:  # (4.2) / (4.9): at most one per feature
            raise FormulationError(f"T={self.T} exceeds the number of features (n_features={p}): T must be from 1 "
                                   f"to {p}" + (" (or cardinality='at_most' makes T an upper bound)"
                                                if self.formulation == "ors" else ""))
        common = dict(A=str(self.A), tangents=self.tangents, C=float(self.C), scaling=self.scaling)
        if not _finite_real(self.multiplier) or float(self.multiplier) <= 0:
            raise FormulationError(f"multiplier must be a finite number > 0, got {self.multiplier!r}")
        if self.formulation == "ors":
            return get_formulation("ors", T=int(self.T), cardinality=self.cardinality,
                                   multiplier=float(self.multiplier), **common)
        if float(self.multiplier) != 1.0:
            raise FormulationError("multiplier applies to formulation='ors' only")
        return get_formulation("ogrs", T=int(self.T), **common)

    def _start(self, previous: Any, n_features: int) -> Any:
        return "auto"  # the beam-search score card (ors); no automatic start for ogrs

    def _decision(self, X: np.ndarray) -> np.ndarray:
        """``(points + beta) / m``: its sign is the prediction, its sigmoid ``P(classes_[1])``."""
        return self.model_.decision_function(X) / float(getattr(self.model_, "multiplier", 1.0))


class CategoricalTreeClassifier(_SolvedClassifier):
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
    solver, backend, time_limit, gap, threads, random_state, verbose, class_weight
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
                 solver: str = "highs", backend: str | None = None, time_limit: float | None = 60.0,
                 gap: float | None = None, threads: int | None = None, random_state: Any = None,
                 verbose: bool = False, class_weight: Any = None) -> None:
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

    def _spec(self) -> Any:
        from treeopt_dsl.formulations import get_formulation

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


class RandomizedTreeClassifier(_SolvedClassifier):
    """Sparse optimal randomized classification tree, S-ORCT (Blanquero et al., [blanquero-2020-sorct]; formulation
    ``sorct``).

    A smooth NLP solved by Ipopt from ``n_starts`` random points (the best kept): node ``t`` sends ``x`` left with
    probability ``F(a_t·x / p - mu_t)`` (``F`` the logistic CDF of slope ``gamma``), every leaf holds class
    probabilities, the objective is the expected misclassification cost plus ``lambda_l`` (local, l1) and
    ``lambda_g`` (global, l_inf) sparsity. Any number of classes (depth >= log2 K).

    Parameters
    ----------
    depth : int, default=1
        Depth ``D`` (the paper: 1 for two classes, 2 for three or four).
    gamma, lambda_l, lambda_g, cost, rho, n_starts, max_iter, scaling
        The formulation's parameters (``treeopt formulations sorct``): slope of ``F`` (512), sparsity weights
        (0), the misclassification cost ``W`` off the diagonal (0.5), the class performance ``rho`` (None: off),
        the random starts (20), Ipopt's iteration limit per start, the scaling (minmax, as the paper).
    solver : str, default="ipopt"
        An NLP solver route (``ipopt``).
    backend, time_limit, gap, threads, random_state, verbose, class_weight
        As for :class:`OptimalTreeClassifier` (``random_state`` seeds the multistart; the sample weights make the
        expected cost a weighted mean).

    Attributes
    ----------
    model_, tree_ : RandomizedTreeModel
        The fitted randomized tree (``predict_proba`` is the paper's class probability, (lines 141-143)).
    result_, certificate_, classes_, n_features_in_
        As for :class:`OptimalTreeClassifier` (a local solver: ``result_.status`` is ``local_optimum``).
    """

    _multiclass = True

    def __init__(self, depth: int = 1, gamma: float = 512.0, lambda_l: float = 0.0, lambda_g: float = 0.0,
                 cost: float = 0.5, rho: Any = None, n_starts: int = 20, max_iter: int | None = None,
                 scaling: str = "minmax", solver: str = "ipopt", backend: str | None = None,
                 time_limit: float | None = 60.0, gap: float | None = None, threads: int | None = None,
                 random_state: Any = 0, verbose: bool = False, class_weight: Any = None) -> None:
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

    def _spec(self) -> Any:
        from treeopt_dsl.formulations import get_formulation

        if not isinstance(self.depth, numbers.Integral) or isinstance(self.depth, bool) or self.depth < 1:
            raise FormulationError(f"depth must be a positive integer, got {self.depth!r}")
        return get_formulation("sorct", depth=int(self.depth), gamma=self.gamma, lambda_l=self.lambda_l,
                               lambda_g=self.lambda_g, cost=self.cost, rho=self.rho, n_starts=self.n_starts,
                               max_iter=None if self.max_iter is None else float(self.max_iter),
                               scaling=self.scaling)

    def _keep(self, result: Any) -> None:
        self.tree_ = result.model

    def _seed(self) -> int | None:
        seed = super()._seed()
        return 0 if seed is None else seed

    def explain(self) -> str:
        """The fitted randomized tree as text."""
        check_is_fitted(self)
        return self.tree_.text()
