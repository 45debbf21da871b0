"""scikit-learn classifiers: :class:`OptimalTreeClassifier` fits the registered tree formulations
(OLCT, MARGOT, OCT, ...); :class:`RiskScoreClassifier` fits optimal risk scores (ORS, OGRS);
:class:`CategoricalTreeClassifier` categorical subset splits; :class:`RandomizedTreeClassifier` S-ORCT;
:class:`TMOClassifier` and :class:`TAOClassifier` the memetic and alternating-optimization trees (no solver).
The ensembles' estimators live with their families (:mod:`treeopt_dsl.bornagain`, :mod:`treeopt_dsl.contextual`).

Both follow the scikit-learn estimator conventions: ``__init__`` only stores its parameters (so
``get_params``/``set_params``/``clone``/``GridSearchCV`` work), ``fit`` validates the data with
:func:`sklearn.utils.validation.validate_data`, builds the chosen formulation with
:func:`treeopt_dsl.formulations.get_formulation`, solves it to (proven) optimality or the time
limit, and keeps the decoded model. Both pass :func:`sklearn.utils.estimator_checks.check_estimator`.

Every estimator takes ``fit(X, y, sample_weight=None)`` and a ``class_weight`` parameter (``None``, ``"balanced"``
or a dict, scikit-learn's semantics: :func:`sklearn.utils.class_weight.compute_sample_weight`); the weights
multiply (``w_i = sample_weight_i * class_weight[y_i]``) and every loss minimizes ``sum_i w_i loss_i``
(docs/weights.md). More than two classes: :class:`OptimalTreeClassifier` with ``oct``/``octh`` (leaf classes,
Bertsimas and Dunn), :class:`RandomizedTreeClassifier` (S-ORCT), :class:`TAOClassifier` and :class:`TMOClassifier`
natively (a class per leaf); the other tree formulations and :class:`CategoricalTreeClassifier` one-vs-rest, shown
as one view (:class:`~treeopt_dsl.models.ovr.OneVsRestTrees`); :class:`RiskScoreClassifier` refuses them and names
the alternatives (docs/multiclass.md).

The tree estimators (:class:`OptimalTreeClassifier`, :class:`TAOClassifier`, :class:`TMOClassifier`) also speak
scikit-learn's tree interface: ``to_sklearn()`` (an axis-aligned tree as a fitted
:class:`sklearn.tree.DecisionTreeClassifier`, for ``plot_tree``/``export_text``/``export_graphviz``), ``get_depth()``,
``get_n_leaves()``, ``apply(X)``, ``decision_path(X)``, ``feature_importances_``. Every estimator here takes scipy
sparse ``X`` (densified within :func:`~treeopt_dsl.defaults.memory_budget`), and the solved ones pickle without
the solver model and the training matrix unless ``keep_model=True`` (docs/sklearn.md).

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

from treeopt_dsl.estimator.base import SolvedClassifier, fit_weights
from treeopt_dsl.estimator.categorical import CategoricalTreeClassifier
from treeopt_dsl.estimator.memetic import TAOClassifier, TMOClassifier
from treeopt_dsl.estimator.scores import RiskScoreClassifier
from treeopt_dsl.estimator.trees import OptimalTreeClassifier, RandomizedTreeClassifier

__all__ = ["CategoricalTreeClassifier", "OptimalTreeClassifier", "RandomizedTreeClassifier", "RiskScoreClassifier",
           "SolvedClassifier", "TAOClassifier", "TMOClassifier", "fit_weights"]
