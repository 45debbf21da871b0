"""The flat tree behind the estimators' scikit-learn interface: thresholds at the model's exact boundary (both
signs of the coefficient, both leaf rules), constant splits skipped, and scikit-learn's impurity importances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from treeopt_dsl.data import Scaler
from treeopt_dsl.errors import CapabilityError, OptionError
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.models.sklearn_tree import (
    flatten,
    impurity_importances,
    node_weights,
    prune_misclassification,
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


def _prunings(clf: DecisionTreeClassifier, i: int = 0) -> list[tuple[float, int]]:
    """Every subtree rooted at node ``i`` (it kept, any set of its splits collapsed), as (training errors, leaves):
    brute force, every combination of the children's subtrees."""
    t = clf.tree_
    counts = t.value[i, 0] / t.value[i, 0].sum() * t.weighted_n_node_samples[i]
    out = [(float(counts.sum() - counts.max()), 1)]
    if t.children_left[i] >= 0:
        out += [(el + er, nl + nr) for el, nl in _prunings(clf, t.children_left[i])
                for er, nr in _prunings(clf, t.children_right[i])]
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), cp=st.sampled_from([0.0, 0.005, 0.01, 0.03, 0.1, 0.3, 1.0]),
       n_classes=st.integers(2, 3))
def test_rpart_pruning_is_the_smallest_cost_complexity_optimum(seed: int, cp: float, n_classes: int) -> None:
    """Against every subtree of the grown tree: the pruned tree minimizes errors + cp R(root) |leaves| and is the
    smallest minimizer; it predicts with the grown tree's splits (its training errors are the optimum's)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(60, 4)).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, 60) * (X[:, 1] > 0)) % n_classes
    full = DecisionTreeClassifier(max_leaf_nodes=9, random_state=seed).fit(X, y)
    pruned = prune_misclassification(full, cp)
    subtrees = _prunings(full)
    root = subtrees[0][0]
    cost = [e + cp * root * n for e, n in subtrees]
    best = min(cost)
    smallest = min(n for (e, n), c in zip(subtrees, cost, strict=True) if c <= best + 1e-9)
    errors = float((pruned.predict(X) != y).sum())
    assert pruned.get_n_leaves() == smallest
    assert errors + cp * root * pruned.get_n_leaves() == pytest.approx(best)
    assert pruned.get_n_leaves() <= full.get_n_leaves()
    if cp == 0.0:  # nothing to gain by a collapse that saves no error: only splits that change no prediction go
        assert errors == float((full.predict(X) != y).sum())


@pytest.mark.parametrize("cp", [-0.01, float("nan"), "0.01", True])
def test_a_bad_cp_is_refused_naming_it(cp) -> None:
    full = DecisionTreeClassifier(random_state=0).fit(np.arange(6.0)[:, None], [0, 0, 0, 1, 0, 1])
    with pytest.raises(OptionError, match=r"cp must be a number >= 0"):
        prune_misclassification(full, cp)
