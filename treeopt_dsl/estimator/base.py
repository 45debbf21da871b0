"""What the estimators that solve a formulation share: validation, weights, the solve, status warnings and
prediction (:class:`SolvedClassifier`)."""

from __future__ import annotations

import numbers
import warnings
from dataclasses import is_dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from treeopt_dsl.data import NUMERIC_HINT, Dataset, check_labels, require_numeric
from treeopt_dsl.defaults import MEMORY_ENV, memory_budget
from treeopt_dsl.errors import DataError, FormulationError, ModelTooLarge, SolveError, UncertifiedWarning
from treeopt_dsl.models.ovr import OneVsRestTrees
from treeopt_dsl.models.pictures import pyplot
from treeopt_dsl.numeric import sigmoid
from treeopt_dsl.result import Status
from treeopt_dsl.solve import failure_message

#: formulation parameters that are estimator parameters of OptimalTreeClassifier: every tree formulation
#: declares them with these same defaults, so an estimator default never hides a formulation's own default
TREE_PARAMS: dict[str, Any] = {"depth": 2, "C": 1.0, "scaling": "standard"}


#: fitted attributes cleared at the start of every fit (a failed refit must not leave a stale model)
FITTED = ("classes_", "model_", "tree_", "result_", "certificate_", "feature_influence_", "estimators_",
          "feature_importances_", "_flat", "_node_weights", "_node_counts", "depth_", "n_iter_")

#: scipy sparse formats ``fit`` and ``predict`` take (densified first, :func:`dense_features`)
SPARSE_FORMATS = ("csr", "csc", "coo")


HALF_UP = float(np.nextafter(0.5, 1.0))


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


def dense_features(X: Any, who: str) -> np.ndarray:
    """A validated ``X`` as a dense float64 array: a scipy sparse matrix is densified when the dense copy fits
    :func:`~treeopt_dsl.defaults.memory_budget`, else :class:`ModelTooLarge` says how much it needs (before any
    allocation). The solvers and the models work on dense rows; one-hot encoded data (scikit-learn's
    ``OneHotEncoder`` outputs sparse matrices) is the usual sparse input."""
    if not sp.issparse(X):
        return X
    need = int(X.shape[0]) * int(X.shape[1]) * 8
    budget = memory_budget()
    if need > budget:
        raise ModelTooLarge(f"{who}: X is a sparse {X.shape[0]} x {X.shape[1]} matrix; its dense copy needs "
                            f"{need / 2**20:.1f} MiB, above the memory budget of {budget / 2**20:.1f} MiB "
                            f"(set {MEMORY_ENV} to raise it): select columns or rows first")
    return np.asarray(X.toarray(), dtype=np.float64)


def lean_model(model: Any) -> Any:
    """``model`` without its training data (a tuple: each; a model with ``lean()``: that; else itself)."""
    if isinstance(model, OneVsRestTrees):
        return model.lean()
    if isinstance(model, tuple):
        return tuple(lean_model(m) for m in model)
    return model.lean() if hasattr(model, "lean") else model


def lean_result(result: Any, model: Any) -> Any:
    """``result`` without the built solver model and its point, holding ``model`` (the lean fitted model)."""
    if isinstance(result, list):
        return [lean_result(r, None) for r in result]
    if result is None or not hasattr(result, "built"):
        return result
    return replace(result, built=None, x=None, model=model if model is not None else lean_model(result.model))


def warn_unproven(who: str, result: Any, time_limit: float | None) -> None:
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


class SolvedClassifier(ClassifierMixin, BaseEstimator):
    """What every estimator here shares: validation, the solve, status warnings, prediction.

    Subclasses give ``_spec()`` (the registered formulation), ``_start(previous)`` (the warm start)
    and ``_keep(result)`` (their own fitted attributes); ``model_`` is the decoded model and
    ``_decision(X)`` its signed score (``> 0``: ``classes_[1]``).
    """

    #: whether ``fit`` takes more than two classes (natively or one-vs-rest)
    _multiclass: bool = False
    #: what the refusal of text columns says to do instead
    _numeric_hint: str = NUMERIC_HINT
    #: what the refusal of more than two classes says to do instead (binary estimators)
    _binary_hint: str = "pick one class against the rest (e.g. y == label)"

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self._multiclass  # binary, as in the papers, unless stated
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True  # densified (dense_features)
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "model_")

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps: everything unless ``keep_model`` is false (the default), then the fitted model
        without its training data (:meth:`TreeModel.lean <treeopt_dsl.models.tree.TreeModel.lean>`) and
        ``result_`` without the built solver model and its point (``result_.built``, ``result_.x``). A depth-2
        tree pickles in a few KB instead of MBs and no training row can be read back from the pickle;
        ``predict``, ``predict_proba``, ``explain``, ``plot`` and ``to_sklearn`` work as before."""
        state = dict(super().__getstate__())
        if getattr(self, "keep_model", False) or "model_" not in state:
            return state
        model = lean_model(state["model_"])
        for name in ("model_", "tree_"):
            if name in state:
                state[name] = model
        if "result_" in state:
            state["result_"] = lean_result(state["result_"], model if not isinstance(model, tuple) else None)
        return state

    def _validate(self, X: Any, reset: bool = False) -> np.ndarray:
        """``X`` for prediction: validated against the fit (features, names, finite) and dense."""
        X = validate_data(self, X, accept_sparse=SPARSE_FORMATS, dtype=np.float64, ensure_all_finite=True,
                          reset=reset)
        return dense_features(X, type(self).__name__)

    def _remember(self, X: np.ndarray, codes: np.ndarray, sample_weight: np.ndarray | None) -> None:
        """Store what the subclass derives from the training data (``X`` dense and validated, ``codes`` the
        positions of ``y`` in ``classes_``) before it is dropped, e.g. per-node training weights."""

    def _spec(self) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def _spec_for(self, n_classes: int) -> Any:
        """The formulation spec for data with ``n_classes`` classes (``_spec()`` unless a parameter's default
        depends on them, e.g. S-ORCT's depth)."""
        return self._spec()

    def _start(self, previous: Any, n_features: int) -> Any:
        return None

    def _keep(self, result: Any) -> None:
        """Store the subclass' own fitted attributes."""

    def _after_solve(self, result: Any) -> Any:
        """The result the estimator keeps, from the solve's (with a model): e.g. a refined tree."""
        return result

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
        previous = getattr(self, "model_", None)
        for name in FITTED:
            self.__dict__.pop(name, None)
        require_numeric(X, self._numeric_hint)  # text / categorical DataFrame columns: say which and what to do
        if y is not None:
            try:
                y_arr = np.asarray(y)
            except (TypeError, ValueError):  # ragged and the like: validate_data says what is wrong
                y_arr = None
            if y_arr is not None and y_arr.ndim == 1:
                check_labels(y_arr)  # None / NaN labels: name the rows
        X, y = validate_data(self, X, y, accept_sparse=SPARSE_FORMATS, dtype=np.float64, ensure_all_finite=True)
        X = dense_features(X, type(self).__name__)
        check_classification_targets(y)
        classes = np.unique(y)
        shown = ", ".join(map(repr, classes[:6].tolist())) + (" ..." if classes.size > 6 else "")
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type not in ("binary", "multiclass") or (y_type == "multiclass" and not self._multiclass):
            raise DataError(f"Only binary classification is supported. The type of the target is {y_type} "
                            f"({classes.size} classes: {shown}); {type(self).__name__} is binary (the papers' "
                            f"setting): {self._binary_hint}")
        if classes.size < 2:
            raise DataError(f"{type(self).__name__} needs two classes in y, found 1 class ({shown}): "
                            "a classifier cannot be trained on a single class")
        sw = fit_weights(self, X, y, sample_weight)
        if sw is not None and np.any(sw == 0) and np.unique(y[sw > 0]).size == classes.size:
            keep = sw > 0  # a zero weight removes the row (scikit-learn's semantics; also from the scaling)
            X, y, sw = X[keep], y[keep], sw[keep]
        spec = self._spec_for(int(classes.size))
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
        warn_unproven(type(self).__name__, result, self.time_limit)
        result = self._after_solve(result)
        self.classes_ = classes
        self.model_ = result.model
        self.result_ = result
        self.certificate_ = result.certificate
        self._keep(result)
        self._remember(X, np.searchsorted(classes, y), sw)
        return self

    def _fit_one_vs_rest(self, X: np.ndarray, y: np.ndarray, classes: np.ndarray, sw: np.ndarray | None) -> Any:
        """``K > 2`` classes for a binary formulation: one tree per class against the rest, each fitted on every
        sample with the same weights (``class_weight`` already applied to the original classes); ``predict`` is
        the class whose tree scores highest (docs/multiclass.md)."""
        from sklearn.base import clone

        params: dict[str, Any] = {"class_weight": None}
        if "warm_start" in self.get_params(deep=False):
            params["warm_start"] = "auto" if self.warm_start is True else self.warm_start
        params.update(self._ovr_params())
        names = getattr(self, "feature_names_in_", None)
        Xn = X if names is None else pd.DataFrame(X, columns=names)  # the trees print the column names
        subs = []
        for k in classes:
            sub = clone(self).set_params(**params)
            sub.fit(Xn, (y == k).astype(np.int64), sample_weight=sw)
            self._ovr_after(sub)
            subs.append(sub)
        self.classes_ = classes
        self.estimators_ = subs
        self.model_ = OneVsRestTrees([s.model_ for s in subs], classes.tolist())  # a tuple with one text / figure
        self.tree_ = self.model_
        self.result_ = [s.result_ for s in subs]
        self.certificate_ = [s.certificate_ for s in subs]
        self._remember(X, np.searchsorted(classes, y), sw)
        return self

    def _ovr_params(self) -> dict[str, Any]:
        """Parameters of the binary estimators of a one-vs-rest fit that differ from this one's."""
        return {}

    def _ovr_after(self, sub: Any) -> None:
        """Complete a fitted binary estimator of a one-vs-rest fit (e.g. with what ``fit`` derived from the data)."""

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
        X = self._validate(X)
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
            X = self._validate(X)
            return self._multiclass_proba(X)
        d = self.decision_function(X)
        p = sigmoid(d)
        p = np.where((d > 0) & (p <= 0.5), HALF_UP, p)
        return np.column_stack([1.0 - p, p])

    def plot(self, **kwargs: Any) -> Any:
        """Draw the fitted model: ``model_.plot(**kwargs)`` (a tree, a score card, ...), a
        :class:`matplotlib.figure.Figure` as every model's ``plot()``. One-vs-rest (``K > 2`` classes of a binary
        formulation): one panel per class, its tree against the rest.

        Example::

            >>> clf.plot().savefig("model.png")  # doctest: +SKIP
        """
        check_is_fitted(self, "model_")
        models = self.model_ if isinstance(self.model_, tuple) else None
        if models is None:
            return self.model_.plot(**kwargs)
        fig, axes = pyplot().subplots(len(models), 1, figsize=(9.0, 3.2 * len(models)), squeeze=False)
        names = getattr(self, "feature_names_in_", None)
        for ax, k, model in zip(axes[:, 0], self.classes_, models, strict=True):
            if is_dataclass(model) and hasattr(model, "feature_names"):  # the sub-trees saw 0/1 labels and arrays
                model = replace(model, classes=("rest", k), **({} if names is None else
                                                               {"feature_names": tuple(map(str, names))}))
            model.plot(ax=ax, **kwargs)
            ax.set_title(f"{k} against the rest: " + ax.get_title(), fontsize=8)
        fig.tight_layout()
        return fig

    def predict(self, X: Any) -> np.ndarray:
        """The class of each sample, in the original label space (``y``'s labels)."""
        if len(getattr(self, "classes_", ())) > 2:
            check_is_fitted(self)
            X = self._validate(X)
            return self.classes_[self._codes(X)]
        positive = self.decision_function(X) > 0  # checks first that the estimator is fitted
        return self.classes_[positive.astype(np.intp)]
