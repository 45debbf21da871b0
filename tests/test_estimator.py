"""The scikit-learn estimator: check_estimator, agreement with the direct solve, formulation=, warm starts."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from treeopt_dsl import Dataset
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.estimator import OptimalTreeClassifier, RiskScoreClassifier
from treeopt_dsl.formulations import get_formulation


def data(n: int = 40, seed: int = 0, p: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, 0)
    return X, y


@parametrize_with_checks([OptimalTreeClassifier(depth=1, time_limit=10)])
def test_sklearn_compatible(estimator, check):
    """Every check of scikit-learn passes (none needs to be marked as not applicable)."""
    check(estimator)


def test_predictions_equal_the_direct_solve():
    X, y = data()
    clf = OptimalTreeClassifier(depth=1, time_limit=60).fit(X, y)
    res = get_formulation("olct", depth=1).solve(Dataset.from_arrays(X, y, positive=1), time_limit=60)
    assert clf.result_.objective == pytest.approx(res.objective, rel=1e-6)
    Xt, _ = data(50, seed=1)
    assert np.array_equal(clf.predict(Xt), res.model.predict(Xt))
    proba = clf.predict_proba(Xt)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_allclose(proba[:, 1], res.model.predict_proba(Xt)[:, 1])
    assert list(clf.classes_) == [0, 1]
    assert clf.certificate_.ok


def test_string_labels_and_class_order():
    X, y = data()
    ys = np.where(y == 1, "yes", "no")
    clf = OptimalTreeClassifier(depth=1, time_limit=30).fit(X, ys)
    assert list(clf.classes_) == ["no", "yes"]
    pred = clf.predict(X)
    assert set(pred) <= {"no", "yes"}
    assert np.mean(pred == ys) == pytest.approx(clf.score(X, ys))
    # predict agrees with argmax of predict_proba
    assert np.array_equal(clf.classes_[clf.predict_proba(X).argmax(1)], pred)


def test_oct_gives_axis_aligned_splits():
    X, y = data(30)
    clf = OptimalTreeClassifier(formulation="oct", depth=2, time_limit=60).fit(X, y)
    W = clf.tree_.W
    assert np.all((np.abs(W) > 1e-7).sum(1) <= 1)
    assert clf.tree_.is_axis_aligned()


def test_grid_search_and_clone():
    X, y = data(36)
    grid = GridSearchCV(OptimalTreeClassifier(time_limit=20), {"formulation": ["olct", "oct"], "depth": [1]},
                        cv=2)
    grid.fit(X, y)
    assert grid.best_params_["formulation"] in ("olct", "oct")
    c = clone(OptimalTreeClassifier(formulation="oct", depth=3))
    assert c.get_params()["formulation"] == "oct" and c.get_params()["depth"] == 3


def test_warm_start_cart_is_accepted():
    X, y = data(40)
    clf = OptimalTreeClassifier(depth=1, time_limit=30, warm_start="cart").fit(X, y)
    assert clf.result_.warm_start_accepted is True
    ref = OptimalTreeClassifier(depth=1, time_limit=30).fit(X, y)
    assert clf.result_.objective == pytest.approx(ref.result_.objective, rel=1e-6)
    again = OptimalTreeClassifier(depth=1, time_limit=30, warm_start=True)
    again.fit(X, y)
    assert again.result_.warm_start_accepted is None  # nothing to start from yet
    again.fit(X, y)
    assert again.result_.warm_start_accepted is True  # sklearn's convention: the previous tree


def test_bad_parameters_and_data():
    X, y = data()
    with pytest.raises(FormulationError, match="unknown formulation"):
        OptimalTreeClassifier(formulation="nope").fit(X, y)
    with pytest.raises(FormulationError, match="no parameter"):
        OptimalTreeClassifier(formulation="oct", tangents="V3").fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        OptimalTreeClassifier(depth=1).fit(X, np.arange(X.shape[0]) % 3)
    with pytest.raises(ValueError, match=r"NaN|infinity"):
        Xn = X.copy()
        Xn[0, 0] = np.nan
        OptimalTreeClassifier(depth=1).fit(Xn, y)


@parametrize_with_checks([RiskScoreClassifier(T=2, time_limit=10),
                          RiskScoreClassifier(formulation="ogrs", T=1, time_limit=10, gap=0.05)])
def test_risk_score_classifier_is_sklearn_compatible(estimator, check):
    check(estimator)


def test_risk_score_classifier_matches_the_formulation():
    rng = np.random.default_rng(0)
    X = (rng.random((40, 5)) > 0.5).astype(float)
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] + 0.3 * rng.normal(size=40) > 0.5, "sick", "well")
    clf = RiskScoreClassifier(T=2, time_limit=60).fit(X, y)
    res = get_formulation("ors", T=2).solve(Dataset.from_arrays(X, y, positive="well"), time_limit=60)
    assert clf.result_.objective == pytest.approx(res.objective, rel=1e-6)
    assert list(clf.classes_) == ["sick", "well"]
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], res.model.predict_proba(X)[:, 1])
    assert np.count_nonzero(clf.model_.s) <= 2
