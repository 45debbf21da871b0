"""Issue 35: TAO and TMO with more than two classes (a class per leaf, :func:`~treeopt_dsl.starts.tao.tao_multiclass`),
checked by brute force on small 3-class data: TAO's answer is a fixed point that no single leaf label and no single
axis-aligned split improves, the leaves are majority classes, and the estimators predict as their trees."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.tree import DecisionTreeClassifier

from treeopt_dsl.errors import DataError
from treeopt_dsl.estimator import TAOClassifier, TMOClassifier
from treeopt_dsl.starts.memetic.encoding import decode_multiclass, encode
from treeopt_dsl.starts.memetic.tmo import tmo
from treeopt_dsl.starts.tao import (
    class_error,
    from_sklearn,
    from_sklearn_multiclass,
    tao,
    tao_multiclass,
    to_decision_tree,
)
from treeopt_dsl.topology import Topology


def three_classes(n: int = 90, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three noisy classes on two informative features and a noise column; integer weights 1-3."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(size=(n, 3)), 2)
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.15 * rng.normal(size=n), [0.5, 0.95]).astype(np.intp)
    return X, y, rng.integers(1, 4, size=n).astype(float)


def brute_force_improvement(X, y, W, b, leaves, depth, sw) -> float:
    """The largest decrease of the weighted error from changing one leaf's class or one node's split (every feature,
    every midpoint between distinct values, both orientations, and the two constants)."""
    base = class_error(X, y, W, b, leaves, depth, sample_weight=sw)
    best = 0.0
    K = int(y.max()) + 1
    for leaf in range(leaves.size):
        for k in range(K):
            L2 = leaves.copy()
            L2[leaf] = k
            best = max(best, base - class_error(X, y, W, b, L2, depth, sample_weight=sw))
    for t in range(Topology(depth).n_nodes):
        candidates = [(np.zeros(X.shape[1]), c) for c in (-1.0, 1.0)]
        for j in range(X.shape[1]):
            v = np.unique(X[:, j])
            for theta in (v[:-1] + v[1:]) / 2:
                for sign in (1.0, -1.0):
                    w = np.zeros(X.shape[1])
                    w[j] = sign
                    candidates.append((w, -sign * theta))
        for w, c in candidates:
            W2, b2 = W.copy(), b.copy()
            W2[t], b2[t] = w, c
            best = max(best, base - class_error(X, y, W2, b2, leaves, depth, sample_weight=sw))
    return best


@pytest.mark.parametrize("depth", [1, 2])
def test_tao_multiclass_ends_where_no_single_change_helps(depth):
    X, y, sw = three_classes()
    cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y, sample_weight=sw)
    W0, b0, L0 = from_sklearn_multiclass(cart, depth, X.shape[1])
    # the conversion predicts as scikit-learn's tree
    assert class_error(X, y, W0, b0, L0, depth, sample_weight=sw) == pytest.approx(sw[cart.predict(X) != y].sum())
    if depth == 2:  # CART's tree is not such a fixed point: one split can be improved (by weight 4)
        assert brute_force_improvement(X, y, W0, b0, L0, depth, sw) > 0
    W, b, leaves, history = tao_multiclass(X, y, W0, b0, L0, depth, sample_weight=sw, max_iter=50)
    assert len(history) < 50  # converged
    assert np.all(np.diff(history) <= 1e-12) and history[-1] <= sw[cart.predict(X) != y].sum()
    assert history[-1] == pytest.approx(class_error(X, y, W, b, leaves, depth, sample_weight=sw))
    assert brute_force_improvement(X, y, W, b, leaves, depth, sw) <= 1e-9
    # the DecisionTree of the result predicts as the hyperplanes with their leaf classes
    tree = to_decision_tree(W, b, depth, leaf_classes=leaves, classes=np.array(["a", "b", "c"]))
    assert np.sum(sw[tree.predict_index(X) != y]) == pytest.approx(history[-1])


def test_tao_multiclass_with_two_classes_is_tao():
    X, y, _ = three_classes(seed=3)
    y2 = (y > 0).astype(np.intp)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, np.where(y2 > 0, 1, -1))
    W0, b0 = from_sklearn(cart, 2, X.shape[1])
    W, b, hist = tao(X, np.where(y2 > 0, 1, -1), W0, b0, 2)
    # the binary layout is the leaf classes [0, 1, 0, 1]: the same error read either way
    assert hist[-1] == class_error(X, y2, W, b, np.array([0, 1, 0, 1]), 2)
    W2, b2, leaves, hist2 = tao_multiclass(X, y2, W0, b0, np.array([0, 1, 0, 1]), 2)
    assert hist2[-1] == class_error(X, y2, W2, b2, leaves, 2) <= hist[-1]  # relabelling only lowers it
    with pytest.raises(DataError, match="class codes"):
        tao_multiclass(X, y2.astype(float) - 0.5, W0, b0, np.array([0, 1, 0, 1]), 2)
    with pytest.raises(DataError, match="leaf_classes must be 4"):
        tao_multiclass(X, y2, W0, b0, np.array([0, 1]), 2)


def test_decode_multiclass_reads_a_cart_tree_back():
    X, y, sw = three_classes(seed=1)
    for depth in (1, 2, 3):
        cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y, sample_weight=sw)
        W, b, leaves = from_sklearn_multiclass(cart, depth, X.shape[1])
        g = encode(to_decision_tree(W, b, depth, leaf_classes=leaves, classes=np.arange(3)), depth)
        W2, b2, leaves2 = decode_multiclass(g, X, y, sw, 3)
        # CART's leaves are weighted majorities, so decoding (majority leaves) gives CART's predictions back
        assert class_error(X, y, W2, b2, leaves2, depth, sample_weight=sw) == \
            pytest.approx(sw[cart.predict(X) != y].sum())


def test_tao_classifier_on_three_classes():
    X, y = load_wine(return_X_y=True)
    labels = np.array(["barolo", "grignolino", "barbera"])[y]
    clf = TAOClassifier(depth=2).fit(X, labels)
    assert list(clf.classes_) == sorted(set(labels)) and clf.leaf_classes_.shape == (4,)
    pred = clf.predict(X)
    # an independent reading: the leaf classes applied to the hyperplanes W_, b_
    codes = np.searchsorted(clf.classes_, labels)
    errors = class_error(X, codes, clf.W_, clf.b_, clf.leaf_classes_, 2)
    assert errors == np.sum(pred != labels) == clf.history_[-1] <= clf.cart_error_
    sk = clf.to_sklearn()
    assert np.array_equal(sk.predict(X), pred) and np.array_equal(sk.apply(X), clf.apply(X))
    P = clf.predict_proba(X)
    assert P.shape == (X.shape[0], 3) and np.allclose(P.sum(1), 1.0)
    assert np.array_equal(clf.classes_[P.argmax(1)], pred)
    # leaf frequencies by brute force: the share of each class among the training samples of the leaf
    leaf = clf.apply(X)
    for node in np.unique(leaf):
        share = np.array([np.mean(labels[leaf == node] == c) for c in clf.classes_])
        assert np.allclose(P[leaf == node][0], share, atol=1e-12)
    assert np.isclose(clf.feature_importances_.sum(), 1.0)


def test_tmo_on_three_classes():
    X, y = load_wine(return_X_y=True)
    kw = dict(depth=2, n_trees=8, n_generations=2, random_state=0)
    clf = TMOClassifier(**kw).fit(X, y)
    assert clf.leaf_classes_.shape == (4,)
    assert clf.score(X, y) == pytest.approx(clf.result_.fitness) and clf.score(X, y) >= clf.initial_score_
    assert np.array_equal(clf.to_sklearn().predict(X), clf.predict(X))
    assert np.array_equal(clf.classes_[clf.predict_proba(X).argmax(1)], clf.predict(X))
    again = TMOClassifier(**kw).fit(X, y)
    assert np.array_equal(again.predict(X), clf.predict(X))  # the seed fixes the run
    parallel = TMOClassifier(**kw, schedule="generational").fit(X, y)
    assert parallel.score(X, y) >= parallel.initial_score_
    # the fitness is the accuracy of the returned tree, as an independent evaluation reads it
    res = tmo(X, y.astype(np.intp), 2, n_trees=6, n_generations=1, multiclass=True)
    assert res.fitness == pytest.approx(1 - class_error(X, y, res.W, res.b, res.leaf_classes, 2) / len(y))
    with pytest.raises(DataError, match="class codes"):
        tmo(X, y - 1, 2, n_trees=4, multiclass=True)
