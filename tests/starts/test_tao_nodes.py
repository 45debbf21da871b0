"""TAO as seed 004's author runs it (treeopt_dsl.starts.tao_nodes): its cut rule against a brute-force reading
of the rule, its tree against its own predictions through the library's layout, and the estimator's variant."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from treeopt_dsl.errors import DataError, OptionError
from treeopt_dsl.estimator.memetic import TAOClassifier, TMOClassifier
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.starts.tao import from_sklearn
from treeopt_dsl.starts.tao_nodes import first_best_cut, prune, tao_nodes


def _brute_cut(Xc: np.ndarray, right: np.ndarray, w: np.ndarray) -> tuple[int, float] | None:
    """The rule written out point by point: for each feature in order, the care points sorted; after each group
    of equal values a cut (at the midpoint to the next value for a one-point group, at the value for a larger
    one; after the last group only when it has several points); the first strictly smaller error wins."""
    if len(Xc) < 2:
        return None
    best, out = np.inf, None
    for j in range(Xc.shape[1]):
        v = np.sort(Xc[:, j], kind="stable")
        groups = [g for g in np.unique(v)]
        for gi, g in enumerate(groups):
            size = int(np.sum(v == g))
            last = gi == len(groups) - 1
            if last and size < 2:
                continue
            thr = g if size > 1 else 0.5 * (g + groups[gi + 1])
            left = Xc[:, j] <= g
            err = float(np.sum(w[left & right]) + np.sum(w[~left & ~right]))
            if err < best:
                best, out = err, (j, float(thr))
    return out


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12), st.integers(1, 3))
def test_the_cut_is_the_rule_written_out(seed: int, m: int, p: int) -> None:
    rng = np.random.default_rng(seed)
    Xc = rng.integers(0, 4, size=(m, p)).astype(float)  # few values: ties in every column
    right = rng.random(m) < 0.5
    w = rng.integers(1, 3, size=m).astype(float)
    got, want = first_best_cut(Xc, right, w), _brute_cut(Xc, right, w)
    assert got == want


def test_the_tree_predicts_through_the_library_layout_as_it_does_itself() -> None:
    """After the passes and the pruning, the tree (CART's nodes) and its conversion to the library's complete
    layout (what TAOClassifier keeps) give every row the same class; no pass leaves a pure decision node."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=300) > 0, 1, -1)
    for depth in (1, 2, 3, 4):
        cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
        tree, history = tao_nodes(X, y, DecisionTree.from_sklearn(cart, dtype="float64"))
        assert len(history) == 7
        W, _ = from_sklearn(tree.sklearn_view(), depth, X.shape[1])
        ours = TAOClassifier(depth=depth, variant="seed004", max_iter=7).fit(X, y)
        assert (ours.predict(X) == tree.predict(X)).all()
        assert np.array_equal(ours.W_, W)
        on = tree.decision_path(X)
        for t in np.flatnonzero(~tree.is_leaf):
            rows = np.flatnonzero(on[:, t])
            assert len(set(y[rows].tolist())) == 2  # pure decision nodes were pruned to leaves
            assert on[:, tree.left[t]].any() and on[:, tree.right[t]].any()  # no empty child is left


def test_pruning_keeps_every_training_row_s_class_but_where_it_was_wrong() -> None:
    """The author's last step on a tree whose subtrees are pure or empty on the rows: a pure node's subtree
    becomes one leaf of its class, an empty child's sibling moves up; the new tree is a valid DecisionTree with
    only the reached nodes (renumbered), and it predicts every training row as before except where it was wrong."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = np.array([-1, -1, 1, -1])
    #        0: x0 <= 0.5
    #   1: x1 <= 0.5        2: x1 <= 5 (nothing goes right)
    # 3: -1     4: +1     5: x1 <= 0.5    6: -1
    #                   7: +1   8: -1
    t = DecisionTree(feature=[0, 1, 1, -1, -1, 1, -1, -1, -1], threshold=[0.5, 0.5, 5, 0, 0, 0.5, 0, 0, 0],
                     left=[1, 3, 5, -1, -1, 7, -1, -1, -1], right=[2, 4, 6, -1, -1, 8, -1, -1, -1],
                     value=[-1, -1, -1, 0, 1, -1, 0, 1, 0], classes=[-1, 1], dtype="float64")
    assert t.predict(X).tolist() == [-1, 1, 1, -1]  # row 1 is wrong: its node 1 holds two class -1 rows
    pruned = prune(X, y, t)
    assert pruned.predict(X).tolist() == y.tolist()
    # node 1 a leaf of -1; node 2, whose right child is empty, holds node 5's cut and leaves 7 and 8
    assert (pruned.n_nodes, pruned.depth) == (5, 2)
    assert pruned.feature.tolist() == [0, -1, 1, -1, -1] and pruned.value.tolist() == [-1, 0, -1, 1, 0]
    with pytest.raises(DataError, match="classes"):
        prune(X, y, DecisionTree([0, -1, -1], [0.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1]))


def test_the_variant_is_refused_where_it_means_nothing() -> None:
    X = np.arange(30.0).reshape(-1, 1)
    with pytest.raises(OptionError, match="variant must be one of 'library', 'seed004'"):
        TAOClassifier(variant="paper").fit(X, np.arange(30) % 2)
    with pytest.raises(OptionError, match="two classes"):
        TAOClassifier(variant="seed004").fit(X, np.arange(30) % 3)
    with pytest.raises(OptionError, match="variant must be one of 'library', 'seed004'"):
        TMOClassifier(variant="paper", n_trees=2, n_generations=0).fit(X, np.arange(30) % 2)
    with pytest.raises(OptionError, match="two classes"):
        TMOClassifier(variant="seed004", n_trees=2, n_generations=0).fit(X, np.arange(30) % 3)
