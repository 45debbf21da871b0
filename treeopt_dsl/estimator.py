"""scikit-learn classifiers: :class:`OptimalTreeClassifier` fits the registered tree formulations
(OLCT, MARGOT, OCT, ...); :class:`RiskScoreClassifier` fits optimal risk scores (ORS).

:class:`OptimalTreeClassifier` follows the scikit-learn estimator conventions: ``__init__`` only
stores its parameters (so ``get_params``/``set_params``/``clone``/``GridSearchCV`` work), ``fit``
validates the data, builds the chosen formulation with
:func:`treeopt_dsl.formulations.get_formulation`, solves it to (proven) optimality or the time
limit, and keeps the decoded tree in ``tree_``. It passes
:func:`sklearn.utils.estimator_checks.check_estimator`.

The estimator is binary, like the papers (thesis §3.2): ``classes_[0]`` is the class mapped to
``-1`` and ``classes_[1]`` the one mapped to ``+1``. A sample reaching last-layer node ``t`` gets
the score ``v = w_t·x + b_t``; it is predicted ``classes_[1]`` iff ``v`` exceeds the leaf threshold
(``s(v) >= 0.5``, seed 000 line 589) and ``P(classes_[1] | x) = s(v)`` with ``s`` the logistic
function (the calibrated reading of seed 000 lines 585-606).

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
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from .data import Dataset
from .errors import FormulationError, SolveError
from .models.tree import sigmoid

#: estimator parameters forwarded to the formulation, with the estimator's defaults (= OLCT's)
_FORMULATION_PARAMS: dict[str, Any] = {
    "depth": 2, "C": 1.0, "tangents": "V0", "big_m": 100.0, "eps": 1e-5, "w_bound": None, "b_bound": None,
    "scaling": "standard",
}


class _SolvedClassifier(ClassifierMixin, BaseEstimator):
    """What every estimator here shares: validation, the solve, status warnings, prediction.

    Subclasses give ``_spec()`` (the registered formulation), ``_start(X)`` (the warm start) and
    ``_keep(result)`` (the fitted attributes); ``model_`` is the decoded model.
    """

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary, as in the papers
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = False
        return tags

    def _spec(self) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def _start(self, X: np.ndarray) -> Any:
        return None

    def _keep(self, result: Any) -> None:
        """Store the subclass' own fitted attributes."""

    def _seed(self) -> int | None:
        if self.random_state is None:
            return None
        if isinstance(self.random_state, numbers.Integral):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def fit(self, X: Any, y: Any) -> Any:
        """Solve the formulation on ``(X, y)``; ``y`` must hold exactly two classes.

        Raises ``ValueError`` for unusable data (NaN/inf, one class, more than two classes), a
        ``FormulationError`` for bad parameters, and a ``SolveError`` when the solve ends without a
        model (infeasible, unbounded, or the time limit before any feasible solution).
        """
        from .solve import failure_message

        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=True)
        check_classification_targets(y)
        classes = np.unique(y)
        shown = ", ".join(map(repr, classes[:6].tolist())) + (" ..." if classes.size > 6 else "")
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target is {y_type} "
                             f"({classes.size} classes: {shown}); {type(self).__name__} is binary (the papers' "
                             "setting): pick one class against the rest (e.g. y == label)")
        if classes.size != 2:
            raise ValueError(f"{type(self).__name__} needs two classes in y, found 1 class ({shown})")
        spec = self._spec()
        names = getattr(self, "feature_names_in_", None)
        data = Dataset.from_arrays(X, y, feature_names=None if names is None else list(names),
                                   positive=classes[1], name="fit")
        result = spec.solve(data, solver=self.solver, backend=self.backend, time_limit=self.time_limit,
                            gap=self.gap, threads=self.threads, seed=self._seed(), verbose=bool(self.verbose),
                            warm_start=self._start(X))
        if not result.status.has_solution or result.model is None:
            raise SolveError(failure_message(result), result)
        if result.status.name != "OPTIMAL":
            warnings.warn(f"the solver stopped at the time limit ({self.time_limit} s) with gap {result.gap}; "
                          "the model is feasible but not proven optimal: raise time_limit", ConvergenceWarning,
                          stacklevel=2)
        self.classes_ = classes
        self.model_ = result.model
        self.result_ = result
        self.certificate_ = result.certificate
        self._keep(result)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """The model's score minus its threshold: ``> 0`` means ``classes_[1]``. Shape ``(n_samples,)``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=True, reset=False)
        return self.model_.decision_function(X) - float(getattr(self.model_, "leaf_threshold", 0.0))

    def predict_proba(self, X: Any) -> np.ndarray:
        """``[P(classes_[0]), P(classes_[1])]`` with ``P(classes_[1]) = s(decision_function)``."""
        p = sigmoid(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        """The class of each sample in the original label space."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(np.intp)]


class OptimalTreeClassifier(_SolvedClassifier):
    """Optimal (oblique) classification tree fitted by mixed-integer optimization.

    Parameters
    ----------
    formulation : str, default="olct"
        A name from ``treeopt_dsl.formulations.REGISTRY``: ``olct`` (thesis (3.17)),
        ``olct_univariate`` (Remark 2), ``margot``, ``margot_hfs``, ``margot_sfs``, ``oct``, ``octh``.
    depth : int, default=2
        Number of branching levels ``d``; depth 1-2 solve in seconds on a few hundred samples.
    C : float or list of float, default=1.0
        Loss weight ``C_h`` (one number, or one per level) of the objective (seed 000 lines 612-616).
    tangents : str, default="V0"
        Tangent set of the piecewise-linear logistic loss (3.15): ``V0``..``V3`` or comma-separated points.
    big_m : float or "derived", default=100.0
        Big-M of the forwarding rows (3.7) and the loss rows.
    eps : float, default=1e-5
        Gap of the strict forwarding inequality (3.7b).
    w_bound, b_bound : float, "auto" or None, default=None
        Bounds ``|w_jt| <= w_bound`` and ``|b_t| <= b_bound`` (None: free).
    scaling : {"standard", "minmax", "none"}, default="standard"
        Feature scaling fitted on the training data.
    solver : str, default="highs"
        Solver name (see ``treeopt_dsl.backends.available_solvers()``).
    backend : str or None, default=None
        Backend that drives the solver (None: the first available one).
    time_limit : float or None, default=60.0
        Solver time limit in seconds. A fit that stops at the limit keeps the incumbent tree and warns
        with a :class:`~sklearn.exceptions.ConvergenceWarning` (the tree is then not proven optimal).
    gap : float or None, default=None
        Relative MIP gap at which the solver stops (None: the solver's default).
    threads : int or None, default=None
        Solver threads (None: the solver's default).
    random_state : int, RandomState instance or None, default=None
        Seed of the solver (HiGHS ``random_seed``); HiGHS is deterministic for a fixed seed as long as
        the time limit is not reached.
    verbose : bool, default=False
        Print the solver log.
    warm_start : bool, {"greedy", "cart"}, TreeModel or None, default=None
        A start handed to the solver (completed to a feasible point by the blocks): ``greedy``
        (node-by-node classifiers from the root), ``cart`` (a scikit-learn tree of the same depth),
        or a fitted tree, e.g. ``tree_`` of a shallower estimator. ``True`` follows scikit-learn's
        convention: start from this estimator's previous ``tree_`` when it has one (same number of
        features), otherwise from nothing; ``False``/``None``: no start.
    params : dict or None, default=None
        Further parameters of the formulation that are not estimator parameters (e.g. ``alpha`` of
        ``oct``, ``budget`` of ``margot_hfs``). Unknown names raise a ``FormulationError``
        (a ``ValueError``).

    Notes
    -----
    The formulation parameters above (``depth`` .. ``scaling``) are passed to the formulation when
    it declares them. One left at the estimator's default lets the formulation use *its own* default
    (these coincide for ``olct``; e.g. ``olct_univariate`` and ``oct`` default to a derived big-M and
    bounded weights). Setting a non-default value for a parameter the formulation does not declare
    raises a ``FormulationError``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels in sorted order; ``classes_[1]`` is the positive class (+1).
    tree_ : TreeModel
        The decoded tree (coefficients act on scaled features; ``tree_.scaler`` maps raw inputs).
    result_ : SolveResult
        Status, objective, bound, gap, timings and sizes of the solve.
    certificate_ : Certificate
        The decoded tree re-evaluated on the training data against the solver's objective.
    feature_influence_ : ndarray of shape (n_nodes, n_features_in_)
        ``r[t, j] = w_jt * sigma_jt`` (seed 000 lines 567-583) over the training samples.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Feature names, when ``X`` has string column names (e.g. a DataFrame).
    """

    def __init__(self, formulation: str = "olct", depth: int = 2, C: Any = 1.0, tangents: Any = "V0",
                 big_m: Any = 100.0, eps: float = 1e-5, w_bound: float | None = None, b_bound: Any = None,
                 scaling: str = "standard", solver: str = "highs", backend: str | None = None,
                 time_limit: float | None = 60.0, gap: float | None = None, threads: int | None = None,
                 random_state: Any = None, verbose: bool = False, params: dict[str, Any] | None = None,
                 warm_start: Any = None) -> None:
        self.formulation = formulation
        self.depth = depth
        self.C = C
        self.tangents = tangents
        self.big_m = big_m
        self.eps = eps
        self.w_bound = w_bound
        self.b_bound = b_bound
        self.scaling = scaling
        self.solver = solver
        self.backend = backend
        self.time_limit = time_limit
        self.gap = gap
        self.threads = threads
        self.random_state = random_state
        self.verbose = verbose
        self.params = params
        self.warm_start = warm_start

    # ------------------------------------------------------------------ fitting
    def _spec(self) -> Any:
        """The formulation spec from the estimator's parameters and ``params`` (see the class Notes)."""
        from treeopt_dsl.formulations import REGISTRY, get_formulation

        key = str(self.formulation).lower().replace("-", "_")
        if key not in REGISTRY:
            get_formulation(self.formulation)  # raises FormulationError listing the names
        declared = {p.name for p in REGISTRY[key].params}
        chosen: dict[str, Any] = {}
        for name, default in _FORMULATION_PARAMS.items():
            value = getattr(self, name)
            at_default = _same(value, default)
            if name in declared and (not at_default or name in ("depth", "scaling")):
                chosen[name] = value
            elif name not in declared and not at_default:
                raise FormulationError(
                    f"formulation {key!r} has no parameter {name!r} (set to {value!r}); leave it at its default "
                    f"{default!r}; {key!r} declares {sorted(declared)}")
        extra = dict(self.params or {})
        clash = sorted(set(extra) & set(_FORMULATION_PARAMS))
        if clash:
            raise FormulationError(f"set {clash} through the estimator's own parameters, not through params=")
        return get_formulation(key, **chosen, **extra)  # unknown names in params raise FormulationError

    def _keep(self, result: Any) -> None:
        self.tree_ = result.model
        self.feature_influence_ = self.tree_.feature_influence()

    def _start(self, X: np.ndarray) -> Any:
        if self.warm_start is None or self.warm_start is False:
            return None
        if self.warm_start is True:
            prev = getattr(self, "tree_", None)
            return prev if prev is not None and prev.W.shape[1] == X.shape[1] else None
        return self.warm_start

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
        Number of features with points (4.2) / of rules (4.8). ``cardinality="at_most"`` makes the
        ``ors`` count an upper bound.
    A : str, default="-5..5"
        Admissible points (a range ``lo..hi`` or a list ``"-3,-1,0,1,3"``; must contain 0).
    tangents : str, default="V3"
        Tangent set of the logistic loss (4.4); V3 in the thesis' experiments.
    C : float, default=1.0
        Weight of the loss.
    scaling : {"minmax", "standard", "none"}, default="minmax"
        Features are scaled to [0, 1] as in the thesis; binary features keep their 0/1 meaning.
    solver, backend, time_limit, gap, threads, random_state, verbose
        As for :class:`OptimalTreeClassifier`.

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
                 tangents: Any = "V3", C: float = 1.0, scaling: str = "minmax", solver: str = "highs",
                 backend: str | None = None, time_limit: float | None = 60.0, gap: float | None = None,
                 threads: int | None = None, random_state: Any = None, verbose: bool = False) -> None:
        self.formulation = formulation
        self.T = T
        self.A = A
        self.cardinality = cardinality
        self.tangents = tangents
        self.C = C
        self.scaling = scaling
        self.solver = solver
        self.backend = backend
        self.time_limit = time_limit
        self.gap = gap
        self.threads = threads
        self.random_state = random_state
        self.verbose = verbose

    def _spec(self) -> Any:
        from treeopt_dsl.formulations import get_formulation

        if not isinstance(self.T, numbers.Integral) or self.T < 1:
            raise FormulationError(f"T must be a positive integer, got {self.T!r}")
        common = dict(A=str(self.A), tangents=self.tangents, C=float(self.C), scaling=self.scaling)
        if self.formulation == "ors":
            return get_formulation("ors", T=int(self.T), cardinality=self.cardinality, **common)
        if self.formulation == "ogrs":
            T = int(min(self.T, getattr(self, "n_features_in_", self.T)))  # one rule per feature at most (4.9)
            return get_formulation("ogrs", T=T, **common)
        raise FormulationError(f"formulation must be 'ors' or 'ogrs', got {self.formulation!r}")



def _same(a: Any, b: Any) -> bool:
    """``a == b`` for parameter values (numbers, strings, None, lists) without numpy truth errors."""
    if a is None or b is None:
        return a is b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    try:
        return bool(np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float)))
    except (TypeError, ValueError):
        return False
