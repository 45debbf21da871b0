"""Issue 35, a scikit-learn citizen: ``to_sklearn``, the tree introspection (``get_depth``, ``get_n_leaves``,
``apply``, ``decision_path``, ``feature_importances_``), lean pickles, sparse input and a scikit-learn tree as a
warm start."""

from __future__ import annotations

import pickle
import warnings

import matplotlib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier, export_graphviz, export_text, plot_tree

from treeopt_dsl.defaults import MEMORY_ENV
from treeopt_dsl.errors import CapabilityError, ModelTooLarge
from treeopt_dsl.estimator import OptimalTreeClassifier, TAOClassifier

matplotlib.use("Agg")


def xor_data(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """y = [x0 > 1] xor [x1 < 20] on features of different scales (a standard scaling to undo), a noise column."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(1.0, 0.5, n), rng.normal(20.0, 5.0, n), rng.normal(size=n)])
    return X, ((X[:, 0] > 1.0) ^ (X[:, 1] < 20.0)).astype(int)


def random_inputs(X: np.ndarray, n: int = 3000, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(X.min(0) - 1, X.max(0) + 1, size=(n, X.shape[1]))


@pytest.fixture(scope="module")
def binary_oct() -> tuple[OptimalTreeClassifier, np.ndarray, np.ndarray]:
    X, y = xor_data()
    return OptimalTreeClassifier(formulation="oct", depth=2, time_limit=30).fit(X, y), X, y


@pytest.fixture(scope="module")
def iris_oct() -> tuple[OptimalTreeClassifier, np.ndarray, np.ndarray]:
    X, y = load_iris(return_X_y=True)
    return OptimalTreeClassifier(formulation="oct", depth=2, time_limit=30).fit(X, y), X, y


@pytest.mark.parametrize("fitted", ["binary_oct", "iris_oct"])
def test_to_sklearn_reproduces_the_tree(fitted, request):
    clf, X, _ = request.getfixturevalue(fitted)
    sk = clf.to_sklearn()
    assert isinstance(sk, DecisionTreeClassifier)
    R = random_inputs(X)
    for data in (X, R):
        assert np.array_equal(sk.predict(data), clf.predict(data))
        assert np.array_equal(sk.apply(data), clf.apply(data))
        assert np.array_equal(sk.decision_path(data).toarray(), clf.decision_path(data).toarray())
    assert sk.get_depth() == clf.get_depth() and sk.get_n_leaves() == clf.get_n_leaves()
    assert np.allclose(sk.feature_importances_, clf.feature_importances_)
    assert np.isclose(clf.feature_importances_.sum(), 1.0)
    # training counts: every sample reaches the root, the leaves share them
    assert sk.tree_.n_node_samples[0] == X.shape[0]
    assert sk.tree_.n_node_samples[sk.tree_.children_left < 0].sum() == X.shape[0]
    text = export_text(sk)
    assert text.count("class:") == clf.get_n_leaves()
    assert export_graphviz(sk).count("->") == 2 * (clf.get_n_leaves() - 1)
    assert len(plot_tree(sk)) > 0


def test_thresholds_are_in_raw_units(binary_oct):
    clf, _, _ = binary_oct
    sk = clf.to_sklearn()
    inner = sk.tree_.children_left >= 0
    # the xor cuts are x0 = 1 and x1 = 20 (not their standardized values, near 0)
    cuts = dict(zip(sk.tree_.feature[inner].tolist(), sk.tree_.threshold[inner].tolist(), strict=False))
    assert set(cuts) == {0, 1}
    assert abs(cuts[0] - 1.0) < 0.3 and abs(cuts[1] - 20.0) < 3.0


def test_oblique_and_one_vs_rest_trees_refuse_to_sklearn():
    X, y = xor_data(60)
    olct = OptimalTreeClassifier(formulation="olct", depth=1, time_limit=10).fit(X, y)
    if np.all((olct.tree_.W != 0).sum(1) <= 1):
        pytest.skip("the optimum happens to be axis-aligned")
    with pytest.raises(CapabilityError, match="to_sklearn"):
        olct.to_sklearn()
    # oblique importances: |w_j| times the scaled feature's spread, normalized (one node at depth 1)
    expect = np.abs(olct.tree_.W[0]) * olct.tree_.X_train.std(0)
    assert np.allclose(olct.feature_importances_, expect / expect.sum())
    assert olct.get_depth() == 1 and olct.get_n_leaves() == 2 and set(olct.apply(X)) <= {1, 2}
    Xi, yi = load_iris(return_X_y=True)
    ovr = OptimalTreeClassifier(formulation="olct_univariate", depth=1, time_limit=10).fit(Xi[::3], yi[::3])
    with pytest.raises(CapabilityError, match="one-vs-rest"):
        ovr.to_sklearn()
    assert ovr.feature_importances_.shape == (4,) and np.isclose(ovr.feature_importances_.sum(), 1.0)


def test_pickles_are_lean_by_default():
    X, y = xor_data(200)
    R = random_inputs(X)
    with warnings.catch_warnings():  # a 5 s solve: feasible, not necessarily proven (the size is what counts)
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = OptimalTreeClassifier(formulation="olct_univariate", depth=2, solver="highs", time_limit=5,
                                    keep_model=True).fit(X, y)
    kept = pickle.dumps(clf)
    small = pickle.dumps(clf.set_params(keep_model=False))  # read when pickling
    assert len(small) < 50_000 < len(kept)
    assert pickle.loads(kept).result_.built is not None
    back = pickle.loads(small)
    assert back.tree_.X_train is None and back.result_.built is None and back.result_.x is None
    assert back.tree_ is back.model_ is back.result_.model
    assert np.array_equal(back.predict(R), clf.predict(R))
    assert np.array_equal(back.predict_proba(R), clf.predict_proba(R))
    assert back.explain() == clf.explain()
    assert back.tree_.plot() is not None
    assert np.array_equal(back.to_sklearn().predict(R), clf.predict(R))
    # pickling leaves the fitted estimator whole
    assert clf.tree_.X_train is not None and clf.result_.built is not None


def test_sparse_input_in_a_one_hot_pipeline(monkeypatch):
    rng = np.random.default_rng(3)
    cats = rng.choice(["a", "b", "c", "d"], size=(80, 2))
    y = ((cats[:, 0] == "a") | (cats[:, 1] == "d")).astype(int)
    pipe = make_pipeline(OneHotEncoder(), OptimalTreeClassifier(formulation="oct", depth=2, time_limit=30))
    pipe.fit(cats, y)
    assert sp.issparse(pipe[0].transform(cats))
    dense = OptimalTreeClassifier(formulation="oct", depth=2, time_limit=30).fit(pipe[0].transform(cats).toarray(), y)
    assert np.array_equal(pipe.predict(cats), dense.predict(pipe[0].transform(cats).toarray()))
    assert pipe.score(cats, y) == 1.0
    clf = pipe[-1]
    assert np.array_equal(clf.apply(pipe[0].transform(cats)), dense.apply(pipe[0].transform(cats).toarray()))
    monkeypatch.setenv(MEMORY_ENV, "1K")  # 80 x 8 doubles = 5 KB
    with pytest.raises(ModelTooLarge, match="sparse 80 x 8.*" + MEMORY_ENV):
        OptimalTreeClassifier(formulation="oct", depth=2).fit(pipe[0].transform(cats), y)


def test_a_fitted_sklearn_tree_is_a_warm_start():
    X, y = xor_data(60)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    clf = OptimalTreeClassifier(formulation="oct", depth=2, solver="highs", time_limit=30, warm_start=cart).fit(X, y)
    assert clf.result_.start["chosen"] == "given"
    assert clf.score(X, y) >= cart.score(X, y)


def test_tao_has_the_same_interface():
    X, y = xor_data()
    tao = TAOClassifier(depth=2).fit(X, y)
    sk = tao.to_sklearn()
    R = random_inputs(X)
    for data in (X, R):
        assert np.array_equal(sk.predict(data), tao.predict(data))
        assert np.array_equal(sk.apply(data), tao.apply(data))
        assert np.array_equal(sk.decision_path(data).toarray(), tao.decision_path(data).toarray())
    assert sk.get_depth() == tao.get_depth() and sk.get_n_leaves() == tao.get_n_leaves()
    assert np.allclose(sk.feature_importances_, tao.feature_importances_)
    assert np.allclose(sk.predict_proba(X)[:, 1], tao.predict_proba(X)[:, 1])
    assert np.array_equal(TAOClassifier(depth=2).fit(sp.csr_matrix(X), y).predict(sp.csr_matrix(X)), tao.predict(X))
