"""The homogeneity integer program of the born-again heuristic (Vidal & Schiffer §4.5) against enumeration of
every cell: it proves a region homogeneous exactly when every cell has the region's class, and otherwise returns
a point of the region whose class differs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treeopt_dsl.bornagain.ensemble import Ensemble
from treeopt_dsl.bornagain.homogeneity import violating_cell
from treeopt_dsl.errors import SolveError
from treeopt_dsl.models.decision_tree import DecisionTree

pytest.importorskip("highspy")


def random_tree(rng: np.random.Generator, depth: int, p: int, grid: np.ndarray, k: int) -> DecisionTree:
    """A random full tree of ``depth`` splitting on values of ``grid``; leaves hold random classes."""
    feature, threshold, left, right, value = [], [], [], [], []

    def grow(d: int) -> int:
        i = len(feature)
        feature.append(-1), threshold.append(0.0), left.append(-1), right.append(-1), value.append(-1)
        if d == depth or rng.random() < 0.2:
            value[i] = int(rng.integers(k))
            return i
        feature[i], threshold[i] = int(rng.integers(p)), float(rng.choice(grid))
        left[i] = grow(d + 1)
        right[i] = grow(d + 1)
        return i

    grow(0)
    return DecisionTree(feature, threshold, left, right, value, n_features=p)


def cells(ens: Ensemble, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """One point per cell of the region ``lo < x <= hi`` (every split value and the midpoints around them)."""
    axes = []
    for j, t in enumerate(ens.thresholds()):
        ends = [v for v in (lo[j] + 0.125, hi[j]) if np.isfinite(v)]
        cand = np.unique(np.r_[t, t - 0.25, t + 0.25, 0.0, ends])
        axes.append(cand[(cand > lo[j]) & (cand <= hi[j])])
    return np.array(list(itertools.product(*axes)), dtype=float)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_trees=st.integers(1, 4), k=st.integers(2, 3), soft=st.booleans())
def test_violating_cell_agrees_with_enumeration(seed: int, n_trees: int, k: int, soft: bool) -> None:
    rng = np.random.default_rng(seed)
    p, grid = 2, np.arange(1.0, 5.0)
    trees = [random_tree(rng, int(rng.integers(1, 4)), p, grid, k) for _ in range(n_trees)]
    if soft:
        scores = [np.where(t.left[:, None] < 0, rng.dirichlet(np.ones(k), len(t.left)), 0.0) for t in trees]
        ens = Ensemble(trees, p, k, scores, vote="soft", divisor=float(n_trees))
    else:
        ens = Ensemble.hard_vote(trees, n_classes=k, n_features=p)
    lo = np.where(rng.random(p) < 0.5, -np.inf, rng.choice(grid, p))
    hi = np.where(rng.random(p) < 0.5, np.inf,
                  np.where(np.isfinite(lo), lo, 0.0) + rng.choice([1.0, 2.0, 3.0], p))
    X = cells(ens, lo, hi)
    truth = ens.predict_index(X)
    for cls in range(k):
        x = violating_cell(ens, lo, hi, cls)
        if np.all(truth == cls):
            assert x is None
        else:
            assert x is not None, (cls, truth)
            assert np.all(x > lo) and np.all(x <= hi)
            assert int(ens.predict_index(x[None, :])[0]) != cls


def test_bad_region_and_class_are_refused() -> None:
    stump = DecisionTree([0, -1, -1], [0.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1])
    ens = Ensemble.hard_vote([stump], n_classes=2)
    with pytest.raises(SolveError, match="one bound per feature"):
        violating_cell(ens, [0.0, 0.0], [1.0, 1.0], 0)
    with pytest.raises(SolveError, match="class index"):
        violating_cell(ens, [0.0], [1.0], 2)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_trees=st.integers(1, 4), k=st.integers(2, 3))
def test_heuristic_is_faithful_and_never_smaller_than_the_exact_optimum(seed: int, n_trees: int, k: int) -> None:
    from treeopt_dsl.bornagain import born_again, check_faithful
    from treeopt_dsl.bornagain.heuristic import born_again_heuristic

    rng = np.random.default_rng(seed)
    p, grid = 3, np.arange(1.0, 5.0)
    ens = Ensemble.hard_vote([random_tree(rng, int(rng.integers(1, 4)), p, grid, k) for _ in range(n_trees)],
                             n_classes=k, n_features=p)
    tree, stats = born_again_heuristic(ens, n_cells=20, seed=seed)
    assert check_faithful(tree, ens).ok
    assert tree.depth >= born_again(ens, "depth").depth
    assert tree.n_leaves >= born_again(ens, "leaves").n_leaves
    assert stats["proofs"] >= tree.n_leaves  # every leaf proved by the integer program


def test_heuristic_on_a_scikit_learn_forest_float32_thresholds() -> None:
    """scikit-learn's trees compare float32(x): the sampled points and counterexamples sit inside cells, so
    the proofs and the faithfulness check agree with the forest's own predict."""
    from sklearn.ensemble import RandomForestClassifier

    from treeopt_dsl.bornagain import check_faithful
    from treeopt_dsl.bornagain.heuristic import born_again_heuristic

    rng = np.random.default_rng(1)
    X = rng.random((300, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int) + (X[:, 2] > 0.7)
    forest = RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0).fit(X, y)
    ens = Ensemble.from_sklearn(forest)
    tree, _ = born_again_heuristic(ens, seed=0)
    assert check_faithful(tree, ens).ok
    np.testing.assert_array_equal(tree.predict(X), forest.predict(X))


def test_faithfulness_by_integer_program_agrees_with_the_sweep() -> None:
    """With a cell budget too small for any sweep, check_faithful proves each leaf region by the integer
    program: the same verdicts as the exhaustive sweep, on a faithful tree and on a wrong one."""
    from treeopt_dsl.bornagain import born_again, check_faithful

    rng = np.random.default_rng(3)
    ens = Ensemble.hard_vote([random_tree(rng, 3, 3, np.arange(1.0, 5.0), 2) for _ in range(4)], n_classes=2,
                             n_features=3)
    tree = born_again(ens, "depth").tree
    assert check_faithful(tree, ens).ok and check_faithful(tree, ens, max_cells=1).method == "integer-program"
    assert check_faithful(tree, ens, max_cells=1).ok
    wrong = DecisionTree(tree.feature, tree.threshold, tree.left, tree.right,
                         np.where(tree.left < 0, 1 - tree.value, -1), n_features=3)
    verdict = check_faithful(wrong, ens, max_cells=1)
    assert not verdict.ok and verdict.method == "integer-program"
    assert ens.predict(verdict.counterexample[None, :])[0] != wrong.predict(verdict.counterexample[None, :])[0]


def test_the_estimator_heuristic_stops_at_its_time_limit_and_says_the_tree_is_not_faithful():
    """Issue 36: BornAgainClassifier(time_limit=60) on a 30-feature forest ran over 10 minutes in the heuristic,
    which had no clock. The time limit bounds the whole born-again step: regions not proven by then become majority
    leaves, the fit warns and ``faithful_`` says the tree is not faithful (no hours-long check)."""
    import warnings

    from sklearn.datasets import load_breast_cancer

    from treeopt_dsl.bornagain import BornAgainClassifier
    from treeopt_dsl.errors import UncertifiedWarning

    X, y = load_breast_cancer(return_X_y=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = BornAgainClassifier(method="heuristic", time_limit=0.0).fit(X[:142], y[:142])
    assert any(issubclass(w.category, UncertifiedWarning) and "not proven homogeneous" in str(w.message)
               for w in caught)
    assert clf.faithful_.ok is False and "unproven" in clf.faithful_.method
    assert clf.tree_.n_leaves == 1  # the root was never split: the majority of its random cells
    assert clf.predict(X).shape == (X.shape[0],)
