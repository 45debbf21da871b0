"""The flat tree behind the estimators' scikit-learn interface: thresholds at the model's exact boundary (both
signs of the coefficient, both leaf rules), constant splits skipped, and scikit-learn's impurity importances."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from treeopt_dsl.data import Scaler
from treeopt_dsl.errors import CapabilityError
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.models.sklearn_tree import (
    flatten,
    impurity_importances,
    node_weights,
    sklearn_classifier,
    split_thresholds,
)
from treeopt_dsl.models.tree import TreeModel
from treeopt_dsl.topology import Topology


def _tree(W: np.ndarray, b: np.ndarray, leaf_threshold: float, X: np.ndarray, depth: int = 1) -> TreeModel:
    scaler = Scaler("standard").fit(X)
    names = tuple(f"x{j}" for j in range(X.shape[1]))
    return TreeModel(Topology(depth), np.asarray(W, dtype=float), np.asarray(b, dtype=float), names, ("neg", "pos"),
                     scaler, threshold=5e-6, leaf_threshold=leaf_threshold, X_train=scaler.transform(X))


@pytest.mark.parametrize("w", [1.7, -2.3])
@pytest.mark.parametrize("leaf_threshold", [0.0, 5e-6])  # s(v) >= 0.5 (non-strict) and the 0-1 loss' v > eps/2
def test_threshold_is_the_models_exact_boundary(w, leaf_threshold):
    rng = np.random.default_rng(0)
    X = rng.normal(loc=[3.0, -10.0], scale=[2.0, 0.01], size=(50, 2))
    tree = _tree([[0.0, w]], [0.3], leaf_threshold, X)
    flat = flatten(tree)
    feature, threshold = split_thresholds(tree, flat, 2)
    assert feature[0] == 1 and flat.flip[0] == (w < 0)
    t = threshold[0]
    at = np.array([[0.0, t], [0.0, np.nextafter(t, np.inf)]])
    codes = tree.predict_codes(at)
    left, right = flat.code[flat.left[0]], flat.code[flat.right[0]]
    # the flat left child takes x <= threshold, its right child the next float up: the model agrees on both
    assert codes.tolist() == [left, right]
    # and on random inputs across the cut, evaluated with scikit-learn's rule in float64
    R = np.column_stack([np.zeros(2000), rng.normal(t, 0.05, 2000)])
    sk_codes = np.where(R[:, 1] <= t, left, right)
    assert np.array_equal(sk_codes, tree.predict_codes(R))


def test_constant_splits_are_skipped_and_oblique_splits_refused():
    X = np.random.default_rng(1).normal(size=(30, 3))
    # depth 2: the root splits on x0, its left child sends everything right (w = 0, b > threshold), its right
    # child splits on x2
    W = np.array([[1.0, 0, 0], [0, 0, 0], [0, 0, -1.0]])
    tree = _tree(W, [0.0, 1.0, 0.2], 0.0, X, depth=2)
    flat = flatten(tree)
    assert flat.n_nodes == 5 and flat.depth == 2 and flat.n_leaves == 3
    assert np.array_equal(flat.apply(tree, X) >= 0, np.ones(30, bool))
    leaves = flat.code[flat.apply(tree, X)]
    assert np.array_equal(leaves, tree.predict_codes(X))
    oblique = _tree(np.array([[1.0, 0.5, 0.0]]), [0.0], 0.0, X)
    with pytest.raises(CapabilityError, match=r"to_sklearn.*2 features"):
        split_thresholds(oblique, flatten(oblique), 3)


def test_impurity_importances_are_scikit_learns():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 5))
    y = ((X[:, 0] > 0.2) ^ (X[:, 3] < -0.1)).astype(int)
    w = rng.uniform(0.5, 2.0, 300)
    cart = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y, sample_weight=w)
    tree = DecisionTree.from_sklearn(cart)
    weights, counts = node_weights(tree.decision_path(X.astype(np.float32)), y, 2, w)
    assert np.array_equal(counts, cart.tree_.n_node_samples)
    assert np.allclose(weights.sum(1), cart.tree_.weighted_n_node_samples)
    imp = impurity_importances(tree.left, tree.right, tree.feature, weights, 5)
    assert np.allclose(imp, cart.feature_importances_)
    # and the scikit-learn tree rebuilt from the flat arrays predicts and weighs as the original
    rebuilt = sklearn_classifier(tree.left, tree.right, tree.feature, cart.tree_.threshold, tree.value, weights,
                                 counts, cart.classes_, 5)
    assert np.array_equal(rebuilt.predict(X), cart.predict(X))
    assert np.allclose(rebuilt.predict_proba(X), cart.predict_proba(X))
    assert np.allclose(rebuilt.feature_importances_, cart.feature_importances_)
