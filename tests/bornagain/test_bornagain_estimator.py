"""BornAgainClassifier: a scikit-learn estimator that fits a forest and its born-again tree."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import GridSearchCV

import treeopt_dsl.bornagain.estimator as est_mod
from treeopt_dsl.bornagain.estimator import BornAgainClassifier
from treeopt_dsl.errors import ModelTooLarge, OptionError


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(240, 4)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] > 5, "yes", "no")
    return X, y


def test_check_estimator() -> None:
    from sklearn.utils.estimator_checks import check_estimator

    # small enough that the exact DP ends in well under a second even on a loaded machine: no time limit, so the
    # check cannot depend on the machine's speed
    small = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
    # fit takes sample_weight (issue 19) and hands it to the forest, whose bootstrap draws rows, not weights: a
    # weighted forest and the forest of repeated rows differ (scikit-learn marks this check for its own forests)
    check_estimator(BornAgainClassifier(small, method="exact", time_limit=None), expected_failed_checks={
        "check_sample_weight_equivalence_on_dense_data": "the forest's bootstrap samples rows, not weights"})


def test_tree_reproduces_the_forest_and_prune_keeps_the_training_predictions() -> None:
    X, y = data()
    clf = BornAgainClassifier(objective="leaves").fit(X, y)
    assert clf.method_ == "exact" and clf.faithful_.ok
    grid = np.array(np.meshgrid(*[np.arange(-1, 7, 0.5)] * 4)).reshape(4, -1).T  # far beyond the data
    np.testing.assert_array_equal(clf.predict(grid), clf.forest_.predict(grid))
    pruned = BornAgainClassifier(objective="leaves", prune=True).fit(X, y)
    assert pruned.tree_.n_leaves <= pruned.born_again_.n_leaves
    np.testing.assert_array_equal(pruned.predict(X), clf.forest_.predict(X))
    assert set(clf.classes_) == {"no", "yes"}


def test_prefit_and_grid_search() -> None:
    X, y = data(1)
    forest = RandomForestClassifier(n_estimators=4, max_depth=2, random_state=1).fit(X, y)
    clf = BornAgainClassifier(forest, prefit=True, objective="depth").fit(X, y)
    assert clf.forest_ is forest and clf.faithful_.ok
    search = GridSearchCV(BornAgainClassifier(RandomForestClassifier(n_estimators=4, max_depth=2, random_state=0)),
                          {"objective": ["depth", "leaves"], "prune": [False, True]}, cv=3).fit(X, y)
    assert search.best_score_ > 0.8


def test_auto_falls_back_to_the_heuristic_when_the_grid_is_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    def too_large(*args: object, **kwargs: object) -> None:
        raise ModelTooLarge("too many cells")

    monkeypatch.setattr(est_mod, "born_again", too_large)
    X, y = data(2)
    clf = BornAgainClassifier(RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0)).fit(X, y)
    assert clf.method_ == "heuristic" and clf.faithful_.ok
    with pytest.raises(ModelTooLarge):
        BornAgainClassifier(method="exact").fit(X, y)
    with pytest.raises(OptionError, match="method must be one of"):
        BornAgainClassifier(method="fast").fit(X, y)
