"""The scikit-learn estimators: check_estimator, agreement with the direct solve, formulation=, params=,
label handling, warm starts, the time-limit warning and the errors."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from treeopt_dsl import Dataset
from treeopt_dsl.errors import DataError, FormulationError, SolveError
from treeopt_dsl.estimator import OptimalTreeClassifier, RiskScoreClassifier
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.numeric import sigmoid
from treeopt_dsl.result import Status


def data(n: int = 40, seed: int = 0, p: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, 0)
    return X, y


def xor_data(n: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """y = [x0 > 0] xor [x1 > 0] with a margin of 0.3 around the cuts, plus a noise feature x2."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.3, 1.0, size=(n, 3)) * rng.choice([-1.0, 1.0], size=(n, 3))
    return X, ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)


# ---------------------------------------------------------------- check_estimator
#: checks that an exact optimizer fails by design since fit takes sample_weight / class_weight (issue 19); what
#: they test is tested exactly in tests/estimator/test_weights_multiclass.py (weighted optima = brute force,
#: integer weights = repeated rows, on the objective)
_EQUIVALENCE = ("a 15 x 30 problem has many optimal trees / score cards: the solver may return another optimum "
                "for the repeated rows (and standard scaling is fitted on the rows, unweighted); the objective's "
                "equivalence is tested in tests/estimator/test_weights_multiclass.py")
_DEPTH1_3_CLASSES = "a depth-1 tree has two leaves: it cannot predict all three classes of the check's blobs"
_CLASS_WEIGHT = ("the exact optimum isolates a pure region of the 1e-4-weight class (it lowers the training "
                 "objective), so fewer than 87% of the test points are predicted as the 1000-weight class")


def _expected_failures(estimator: object) -> dict[str, str]:
    out = {"check_sample_weight_equivalence_on_dense_data": _EQUIVALENCE,
           "check_sample_weight_equivalence_on_sparse_data": _EQUIVALENCE}  # sparse X is densified: the same fit
    if getattr(estimator, "formulation", None) == "oct":
        out.update(check_classifiers_train=_DEPTH1_3_CLASSES, check_class_weight_classifiers=_CLASS_WEIGHT)
    return out


# Depth 1 keeps every fit of check_estimator (30-100 samples) well under a second for olct (~6 s for all
# checks). Only the checks of _expected_failures are marked (why: there).
@parametrize_with_checks([OptimalTreeClassifier(depth=1, time_limit=5)], expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# oct: a MILP with a binary per sample and the 0-1 loss, whose leaf threshold is eps/2 (the other prediction
# rule); up to ~2 s per fit with HiGHS, ~40 s for all checks.
@pytest.mark.slow
@parametrize_with_checks([OptimalTreeClassifier(formulation="oct", depth=1, time_limit=5)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible_oct(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks([RiskScoreClassifier(T=2, time_limit=120),
                          RiskScoreClassifier(T=2, binarize="quantile", max_cuts=2, time_limit=120),
                          RiskScoreClassifier(formulation="ogrs", T=1, time_limit=120, gap=0.05)],
                         expected_failed_checks=_expected_failures)
def test_risk_score_classifier_is_sklearn_compatible(estimator, check):
    check(estimator)


# ---------------------------------------------------------------- the direct solve
@pytest.mark.parametrize(("formulation", "solver"), [
    ("olct", "highs"), ("oct", "highs"),
    pytest.param("margot", "gurobi", marks=pytest.mark.solver("gurobi")),  # MIQP (||w||^2): not for HiGHS
])
def test_predictions_equal_the_direct_solve(formulation, solver):
    X, y = data(30)
    clf = OptimalTreeClassifier(formulation=formulation, depth=2, solver=solver, time_limit=20).fit(X, y)
    res = get_formulation(formulation, depth=2).solve(Dataset.from_arrays(X, y, positive=1), solver=solver,
                                                      time_limit=20, warm_start="auto")  # the estimator's default
    assert clf.result_.status is Status.OPTIMAL and res.status is Status.OPTIMAL
    assert clf.result_.objective == pytest.approx(res.objective, rel=1e-6)
    assert clf.certificate_.ok
    Xt, _ = data(200, seed=1)
    np.testing.assert_array_equal(clf.predict(Xt), res.model.predict(Xt))
    np.testing.assert_array_equal(clf.predict(X), res.model.predict(X))
    # the estimator's decision is the score minus the leaf threshold (eps/2 for the 0-1 loss of oct, 0 otherwise),
    # so that predict == (decision_function > 0) == argmax predict_proba as scikit-learn requires
    lt = res.model.leaf_threshold
    assert (lt > 0) == (formulation == "oct")
    v = res.model.decision_function(Xt)
    np.testing.assert_allclose(clf.decision_function(Xt), v - lt, rtol=1e-12)
    proba = clf.predict_proba(Xt)
    np.testing.assert_allclose(proba[:, 1], sigmoid(v - lt), rtol=1e-12)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(1)], res.model.predict(Xt))
    assert clf.score(X, y) == pytest.approx(np.mean(res.model.predict(X) == y))
    assert clf.tree_ is clf.model_ and clf.n_features_in_ == 3


@pytest.mark.solver("gurobi")
def test_params_reach_the_formulation():
    X, y = data(30)
    clf = OptimalTreeClassifier(formulation="margot_hfs", depth=2, solver="gurobi", time_limit=20,
                                params={"budget": 1}).fit(X, y)
    res = get_formulation("margot_hfs", depth=2, budget=1).solve(Dataset.from_arrays(X, y), solver="gurobi",
                                                                 time_limit=20)
    assert clf.result_.objective == pytest.approx(res.objective, rel=1e-6)
    assert np.all(clf.tree_.n_features_used() <= 1)  # the l0 budget (3.14) of 1 feature per node
    v3 = OptimalTreeClassifier(depth=1, C=[2.0], time_limit=20, params={"tangents": "V3", "big_m": 50.0}).fit(X, y)
    ref = get_formulation("olct", depth=1, C=[2.0], tangents="V3", big_m=50.0).solve(Dataset.from_arrays(X, y))
    assert v3.result_.objective == pytest.approx(ref.objective, rel=1e-6)
    v0 = OptimalTreeClassifier(depth=1, C=[2.0], time_limit=20, params={"big_m": 50.0}).fit(X, y)
    assert v3.result_.size["n_constraints"] > v0.result_.size["n_constraints"]  # V3 has more tangent rows than V0


def test_depth_and_scaling_are_used():
    X, y = data(30)
    d1 = OptimalTreeClassifier(depth=1, time_limit=20).fit(X, y)
    d2 = OptimalTreeClassifier(depth=2, time_limit=20).fit(X, y)
    assert d1.tree_.W.shape == (1, 3) and d2.tree_.W.shape == (3, 3)
    mm = OptimalTreeClassifier(depth=1, scaling="minmax", time_limit=20).fit(X, y)
    Xs = mm.tree_.scaler.transform(X)
    assert Xs.min() == pytest.approx(0.0) and Xs.max() == pytest.approx(1.0)


# ---------------------------------------------------------------- labels and probabilities
def test_predict_proba_rows_and_class_order():
    X, y = data(40)
    y_odd = np.where(y == 1, 7, -3)
    clf = OptimalTreeClassifier(depth=2, time_limit=20).fit(X, y_odd)
    assert clf.classes_.tolist() == [-3, 7]
    Xt, _ = data(100, seed=2)
    proba = clf.predict_proba(Xt)
    assert proba.shape == (100, 2)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    # column 1 is P(classes_[1]) = s(score at the reached node), column order = classes_
    np.testing.assert_allclose(proba[:, 1], sigmoid(clf.tree_.decision_function(Xt)))
    pred = clf.predict(Xt)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(1)], pred)
    np.testing.assert_array_equal(np.where(clf.decision_function(Xt) > 0, 7, -3), pred)
    assert set(pred.tolist()) <= {-3, 7}


def test_string_labels_give_the_same_tree():
    X, y = data()
    ys = np.where(y == 1, "yes", "no")
    clf = OptimalTreeClassifier(depth=1, time_limit=20).fit(X, ys)
    ref = OptimalTreeClassifier(depth=1, time_limit=20).fit(X, y)
    assert clf.classes_.tolist() == ["no", "yes"]
    pred = clf.predict(X)
    np.testing.assert_array_equal(pred, np.where(ref.predict(X) == 1, "yes", "no"))
    assert clf.score(X, ys) == pytest.approx(np.mean(pred == ys))
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X))


def test_exact_ties_follow_the_tree_rule():
    """A score of exactly 0 is classes_[1] for the tree (s(v) >= 0.5); the estimator's decision, argmax of
    predict_proba and predict must all agree with that."""
    X, y = data(30)
    clf = OptimalTreeClassifier(depth=1, time_limit=20).fit(X, y)
    flat = dataclasses.replace(clf.tree_, W=np.zeros_like(clf.tree_.W), b=np.zeros_like(clf.tree_.b))
    clf.tree_ = clf.model_ = flat
    assert np.all(flat.predict(X) == 1)
    assert np.all(clf.decision_function(X) > 0)
    np.testing.assert_array_equal(clf.predict(X), flat.predict(X))
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(1)], flat.predict(X))
    np.testing.assert_allclose(proba, 0.5)


def test_feature_names_from_a_dataframe():
    import pandas as pd

    X, y = data(30)
    df = pd.DataFrame(X, columns=["age", "dose", "weight"])
    clf = OptimalTreeClassifier(depth=1, time_limit=20).fit(df, y)
    assert clf.feature_names_in_.tolist() == ["age", "dose", "weight"]
    assert clf.tree_.feature_names == ("age", "dose", "weight")
    assert "age" in clf.explain() or "dose" in clf.explain()
    np.testing.assert_array_equal(clf.predict(df), clf.tree_.predict(X))
    refit = clf.fit(X, y)  # without names the attribute goes away, as in scikit-learn
    assert not hasattr(refit, "feature_names_in_")


# ---------------------------------------------------------------- formulations
def test_oct_gives_axis_aligned_splits():
    """On xor data a zero-error depth-2 tree must split at all three nodes, each on one feature: the root on
    x0 (or x1) and both children on the other. So OCT's optimum has exactly one nonzero weight per node."""
    X, y = xor_data(40)
    clf = OptimalTreeClassifier(formulation="oct", depth=2, time_limit=20).fit(X, y)
    assert clf.result_.status is Status.OPTIMAL
    assert clf.result_.objective == pytest.approx(0.0, abs=1e-6)
    assert clf.score(X, y) == 1.0
    np.testing.assert_array_equal(clf.tree_.n_features_used(), [1, 1, 1])
    used = np.argmax(np.abs(clf.tree_.W), axis=1)
    assert used[0] in (0, 1) and used[1] == used[2] == 1 - used[0]
    assert clf.tree_.is_axis_aligned()


def test_grid_search_and_clone():
    X, y = data(36)
    base = OptimalTreeClassifier(time_limit=20)
    grid = {"formulation": ["olct", "oct"], "depth": [1, 2]}
    cv = StratifiedKFold(2)
    search = GridSearchCV(base, grid, cv=cv).fit(X, y)
    manual = [cross_val_score(clone(base).set_params(**p), X, y, cv=cv).mean() for p in search.cv_results_["params"]]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], manual)
    assert search.best_params_ == search.cv_results_["params"][int(np.argmax(manual))]
    best = search.best_estimator_
    assert (best.formulation, best.depth) == (search.best_params_["formulation"], search.best_params_["depth"])
    assert best.tree_.W.shape[0] == 2 ** best.depth - 1

    c = clone(OptimalTreeClassifier(formulation="oct", depth=3, params={"alpha": 0.1}))
    assert c.get_params()["formulation"] == "oct" and c.get_params()["depth"] == 3
    assert c.get_params()["params"] == {"alpha": 0.1}
    assert not hasattr(c, "tree_")


# ---------------------------------------------------------------- warm starts
def test_warm_start_cart_is_accepted():
    X, y = data(40)
    clf = OptimalTreeClassifier(depth=2, time_limit=20, warm_start="cart").fit(X, y)
    assert clf.result_.warm_start_accepted is True
    ref = OptimalTreeClassifier(depth=2, time_limit=20, warm_start=None).fit(X, y)
    assert ref.result_.warm_start_accepted is None
    assert clf.result_.status is Status.OPTIMAL and ref.result_.status is Status.OPTIMAL
    assert clf.result_.objective == pytest.approx(ref.result_.objective, rel=1e-6)


def test_warm_start_true_reuses_the_previous_tree():
    X, y = data(40)
    est = OptimalTreeClassifier(depth=1, time_limit=20, warm_start=True)
    est.fit(X, y)
    assert est.result_.warm_start_accepted is None  # nothing to start from yet
    est.set_params(depth=2).fit(X, y)
    assert est.result_.warm_start_accepted is True  # the depth-1 tree, embedded at depth 2
    est.set_params(depth=1).fit(X, y)
    assert est.result_.warm_start_accepted is None  # a depth-2 tree cannot start depth 1: no start
    assert clone(est).get_params()["warm_start"] is True


# ---------------------------------------------------------------- time limit and errors
def hard_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    return X, (np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=200) > 0).astype(int)


def test_time_limit_with_an_incumbent_warns_with_the_gap():
    X, y = hard_data()  # depth 3 on 200 noisy samples: far from proven optimal after 1 s
    with pytest.warns(ConvergenceWarning, match=r"time limit \(1 s\) with optimality gap \d") as record:
        clf = OptimalTreeClassifier(depth=3, time_limit=1, warm_start="cart").fit(X, y)
    assert clf.result_.status is Status.TIME_LIMIT
    assert f"{100 * clf.result_.gap:.3g}%" in str(record[0].message)
    assert clf.predict(X).shape == (200,)  # the incumbent is kept


def test_no_incumbent_raises_solve_error():
    X, y = hard_data()
    est = OptimalTreeClassifier(depth=3, time_limit=0.0, warm_start=None)
    with pytest.raises(SolveError, match="before the solver found any feasible") as info:
        est.fit(X, y)
    assert info.value.result.status is Status.TIME_LIMIT_NO_SOLUTION
    assert not hasattr(est, "tree_")
    with pytest.raises(NotFittedError):
        est.predict(X)


def test_the_default_start_is_never_lost():
    """warm_start="auto" (the default): with no time to solve, the fit still returns the best start
    (status time_limit, its objective), never worse; with time, the solver only improves on it."""
    X, y = hard_data()
    with pytest.warns(ConvergenceWarning):
        est = OptimalTreeClassifier(depth=3, time_limit=0.0).fit(X, y)
    st = est.result_.start
    from treeopt_dsl.starts.resolver import AUTO_CANDIDATES

    assert st["chosen"] in AUTO_CANDIDATES and est.result_.status is Status.TIME_LIMIT
    assert est.result_.objective == pytest.approx(st["objective"])
    assert st["objective"] == pytest.approx(min(v for v in st["candidates"].values() if isinstance(v, float)))
    assert est.certificate_.ok and est.result_.improvement == pytest.approx(0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        longer = OptimalTreeClassifier(depth=3, time_limit=5.0).fit(X, y)
    assert longer.result_.objective <= longer.result_.start["objective"] + 1e-9
    assert longer.result_.improvement >= -1e-9


def test_optimal_fit_does_not_warn():
    X, y = data(30)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = OptimalTreeClassifier(depth=1, time_limit=20).fit(X, y)
    assert clf.result_.status is Status.OPTIMAL


def test_bad_parameters_and_data():
    X, y = data()
    with pytest.raises(FormulationError, match="unknown formulation"):
        OptimalTreeClassifier(formulation="nope").fit(X, y)
    with pytest.raises(FormulationError, match="not a tree formulation"):
        OptimalTreeClassifier(formulation="ors").fit(X, y)
    with pytest.raises(FormulationError, match="no parameter"):
        OptimalTreeClassifier(formulation="oct", params={"tangents": "V3"}).fit(X, y)
    with pytest.raises(FormulationError, match="estimator's own parameters"):
        OptimalTreeClassifier(params={"depth": 3}).fit(X, y)
    with pytest.raises(FormulationError, match="depth"):
        OptimalTreeClassifier(depth=0).fit(X, y)
    with pytest.raises(DataError, match="Only binary classification is supported"):  # (trees: multiclass, issue 19)
        RiskScoreClassifier(T=1).fit(X, np.arange(X.shape[0]) % 3)
    with pytest.raises(DataError, match="class"):
        OptimalTreeClassifier(depth=1).fit(X, np.full(X.shape[0], "a"))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"NaN|infinity"):
        OptimalTreeClassifier(depth=1).fit(Xn, y)
    clf = OptimalTreeClassifier(depth=1, time_limit=20).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :2])


# ---------------------------------------------------------------- risk scores
def test_risk_score_classifier_matches_the_formulation():
    rng = np.random.default_rng(0)
    X = (rng.random((40, 5)) > 0.5).astype(float)
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] + 0.3 * rng.normal(size=40) > 0.5, "sick", "well")
    clf = RiskScoreClassifier(T=2, time_limit=60).fit(X, y)
    res = get_formulation("ors", T=2).solve(Dataset.from_arrays(X, y, positive="well"), time_limit=60)
    assert clf.result_.objective == pytest.approx(res.objective, rel=1e-6)
    assert list(clf.classes_) == ["sick", "well"]
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], res.model.predict_proba(X)[:, 1])
    np.testing.assert_array_equal(clf.predict(X), res.model.predict(X))
    assert np.count_nonzero(clf.model_.s) <= 2
