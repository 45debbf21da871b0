"""rpart's CART with subset splits (treeopt_dsl.models.subset_cart): the split against every subset by brute force,
rpart's stopping rules, the cp pruning against every pruning of the grown tree, and the one-hot attribute case a
one-level-against-the-rest tree cannot answer."""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from treeopt_dsl.data import Dataset
from treeopt_dsl.datasets.encoding import GroupEncoder
from treeopt_dsl.errors import DataError, OptionError
from treeopt_dsl.models.subset_cart import fit_subset_cart

WHOLE = {"min_split": 2, "min_leaf": 1, "cp": None}  # every split that lowers the Gini impurity


def _gini(parts: list[np.ndarray], pos: np.ndarray) -> float:
    """Summed ``n I`` of the parts (Gini impurity times rows)."""
    return float(sum(2 * pos[m].sum() * (m.sum() - pos[m].sum()) / max(m.sum(), 1) for m in parts))


def _categorical(seed: int, n: int = 60, k: int = 5, p: int = 3) -> tuple[Dataset, np.ndarray]:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, k, size=(n, p)).astype(float)
    y = np.where(rng.random(n) < 0.15 + 0.15 * codes[:, 1], 1, -1)
    return Dataset.from_arrays(codes, y), codes


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_the_root_split_is_the_best_subset_of_every_attribute(seed: int) -> None:
    """Breiman's ordering (two classes: the best subset is a prefix of the levels by positive share) against every
    subset of every attribute's levels."""
    d, codes = _categorical(seed)
    pos = d.y > 0
    if pos.all() or not pos.any():
        return
    best = min(_gini([m, ~m], pos) for j in range(codes.shape[1])
               for r in range(1, np.unique(codes[:, j]).size)
               for s in combinations(np.unique(codes[:, j]), r) for m in [np.isin(codes[:, j], s)])
    tree = fit_subset_cart(d, 1, categorical=(0, 1, 2), **WHOLE)
    if tree.get_n_leaves() == 1:  # no split decreases the impurity
        assert best >= _gini([np.ones(pos.size, bool)], pos) - 1e-9
        return
    leaf = tree.apply(d.X)
    assert _gini([leaf == v for v in np.unique(leaf)], pos) == pytest.approx(best)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_a_numeric_column_splits_at_its_best_threshold(seed: int) -> None:
    """An ordinal group (a numeric column with few values: one level per value) is split at a threshold, the best
    one, as scikit-learn's tree on that column alone finds."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 8, size=80).astype(float)
    y = np.where(rng.random(80) < 0.2 + 0.08 * x, 1, -1)
    if np.unique(y).size < 2:
        return
    d = Dataset.from_arrays(x[:, None], y)
    tree = fit_subset_cart(d, 1, **WHOLE)
    sk = DecisionTreeClassifier(max_depth=1).fit(x[:, None], y)
    pos = y > 0
    ours = tree.apply(d.X)
    theirs = sk.apply(x[:, None])
    assert _gini([ours == v for v in np.unique(ours)], pos) == pytest.approx(
        _gini([theirs == v for v in np.unique(theirs)], pos))
    if tree.get_n_leaves() == 2:  # a threshold: the left side is a run of the lowest or highest values
        left = x[ours == tree.left[0]]
        right = x[ours == tree.right[0]]
        assert left.max() < right.min() or right.max() < left.min()


def test_an_attribute_split_by_a_subset_of_its_one_hot_levels() -> None:
    """A 4-level attribute one-hot in 4 columns (one group, as a loader gives it), the class its level in {a, c}:
    one subset split answers it, where scikit-learn's depth-1 tree on the one-hot columns cannot (the mistake of
    the Table 8 probe before 2026-11-28, which read every one-hot column as its own attribute)."""
    level = np.tile(np.arange(4), 25)
    X = np.eye(4)[level]
    y = np.where(np.isin(level, (0, 2)), 1, -1)
    d = replace(Dataset.from_arrays(X, y, feature_names=("c=a", "c=b", "c=c", "c=d")), groups=(0, 0, 0, 0))
    tree = fit_subset_cart(d, 1, **WHOLE)
    assert tree.get_n_leaves() == 2 and np.array_equal(tree.predict(X), d.labels_of(d.y))
    assert DecisionTreeClassifier(max_depth=1).fit(X, y).score(X, y) == 0.75
    assert tree.text().splitlines()[0] in ("node 1: c in {b, d} ?", "node 1: c in {a, c} ?")
    dot = tree.to_dot()  # the picture: the set test and the two leaves with their classes and counts
    assert tree.text().splitlines()[0][8:-2] in dot and dot.count("->") == 2 and "[50 / 0]" in dot


def test_rpart_stopping_rules() -> None:
    """No node of fewer than min_split rows is split and no leaf has fewer than min_leaf rows."""
    d, _ = _categorical(7, n=300, k=6, p=4)
    tree = fit_subset_cart(d, 5, min_split=40, min_leaf=12, cp=None, categorical=(0, 1, 2, 3))
    n = tree.counts.sum(1)
    assert np.all(n[tree.left >= 0] >= 40)
    assert np.all(n[tree.left < 0] >= 12)
    assert tree.get_depth() <= 5
    # every row reaches a leaf whose training counts hold it
    assert np.array_equal(np.bincount(tree.apply(d.X), minlength=n.size)[tree.left < 0], n[tree.left < 0])


def _prunings(tree, i: int = 0) -> list[tuple[float, int]]:
    """(misclassified rows, leaves) of every pruning of the subtree at node ``i``."""
    here = (float(tree.counts[i].sum() - tree.counts[i].max()), 1)
    if tree.left[i] < 0:
        return [here]
    return [here] + [(a[0] + b[0], a[1] + b[1]) for a in _prunings(tree, tree.left[i])
                     for b in _prunings(tree, tree.right[i])]


@pytest.mark.parametrize("cp", [0.0, 0.01, 0.05, 0.2])
def test_cp_keeps_the_cheapest_pruning_in_misclassification_cost(cp: float) -> None:
    """The tree pruned at cp minimizes errors + cp R(root) leaves over every pruning of the whole tree (ties: the
    fewest leaves), rpart's rule."""
    d, _ = _categorical(11, n=200, k=4, p=3)
    whole = fit_subset_cart(d, 3, categorical=(0, 1, 2), **WHOLE)
    pruned = fit_subset_cart(d, 3, categorical=(0, 1, 2), min_split=2, min_leaf=1, cp=cp)
    alpha = cp * float(whole.counts[0].sum() - whole.counts[0].max())
    costs = [(e + alpha * leaves, leaves) for e, leaves in _prunings(whole)]
    best = min(c for c, _ in costs)
    errors = float(sum(pruned.counts[i].sum() - pruned.counts[i].max() for i in np.flatnonzero(pruned.left < 0)))
    assert errors + alpha * pruned.get_n_leaves() == pytest.approx(best)
    assert pruned.get_n_leaves() == min(leaves for c, leaves in costs if c <= best + 1e-9)


def test_bad_input_is_named() -> None:
    d, _ = _categorical(0)
    for kw, word in (({"max_depth": 0}, "max_depth"), ({"max_depth": 31}, "max_depth"), ({"min_split": 1}, "min_split"),
                     ({"min_leaf": 0}, "min_leaf"), ({"cp": -1.0}, "cp")):
        with pytest.raises(OptionError, match=word):
            fit_subset_cart(d, **kw)
    three = Dataset.from_arrays(np.arange(9.0)[:, None], np.repeat([0, 1, 2], 3), multiclass=True)
    with pytest.raises(DataError, match="two classes"):
        fit_subset_cart(three)


def test_integer_weights_are_repeated_rows() -> None:
    """A sample weight of k counts as k copies of the row in the impurity, the classes and the pruning."""
    d, _ = _categorical(5, n=80, k=4, p=3)
    k = np.random.default_rng(5).integers(1, 4, size=80)
    weighted = fit_subset_cart(replace(d, sample_weight=k.astype(float)), 3, categorical=(0, 1, 2), min_split=2,
                               min_leaf=1, cp=0.01)
    repeated = fit_subset_cart(Dataset.from_arrays(np.repeat(d.X, k, axis=0), np.repeat(d.y, k)), 3,
                               categorical=(0, 1, 2), min_split=2, min_leaf=1, cp=0.01)
    assert weighted.text() == repeated.text()
    assert np.array_equal(weighted.predict(d.X), repeated.predict(d.X))


def test_rows_of_a_level_the_encoder_has_not_seen_go_right() -> None:
    """With an encoder fitted on other rows (the categorical trees' own, fitted on their sample), a level it has not
    seen goes right, at fit as at predict time, and may be split off from every seen level."""
    d, codes = _categorical(2, n=120, k=4, p=2)
    seen = codes[:, 0] != 3
    enc = GroupEncoder(categorical_columns=(0, 1)).fit(Dataset.from_arrays(d.X[seen], d.y[seen]))
    y = np.where(codes[:, 0] == 3, 1, -1)  # the unseen level is the positive class
    tree = fit_subset_cart(Dataset.from_arrays(d.X, y), 1, encoder=enc, **WHOLE)
    assert np.array_equal(tree.predict(d.X), y) and tree.subset[0].all() and tree.group[0] == 0


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_apply_follows_each_row_down_the_tree(seed: int) -> None:
    """``apply`` (all rows one level per step) against a walk of each row alone through ``left``, ``right``,
    ``group`` and ``subset``, on a deep tree with levels the encoder has not seen."""
    d, codes = _categorical(seed, n=150, k=5, p=3)
    seen = codes[:, 2] != 4
    enc = GroupEncoder(categorical_columns=(0, 1, 2)).fit(Dataset.from_arrays(d.X[seen], d.y[seen]))
    tree = fit_subset_cart(d, 6, encoder=enc, **WHOLE)
    lev = enc.levels(d.X)

    def walk(row: np.ndarray) -> int:
        i = 0
        while tree.left[i] >= 0:
            code = row[tree.group[i]]
            i = tree.left[i] if code >= 0 and tree.subset[i][code] else tree.right[i]
        return i

    assert tree.get_depth() >= 2
    assert np.array_equal(tree.apply(d.X), [walk(r) for r in lev])
