"""Issue 35: multiclass where the formulation allows it, and an honest refusal where it does not (risk scores);
one printable / plottable view of a one-vs-rest bundle of trees (OLCT, MARGOT)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.multiclass import OneVsRestClassifier

from treeopt_dsl.errors import DataError
from treeopt_dsl.estimator import RiskScoreClassifier


def binary_features(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three classes from two 0/1 features (class = x0 + x1), a third 0/1 noise feature."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 3)).astype(float)
    return X, (X[:, 0] + X[:, 1]).astype(int)


def test_risk_scores_refuse_more_classes_and_name_the_alternatives():
    X, y = binary_features()
    with pytest.raises(DataError, match=r"Only binary classification is supported.*one card per question.*"
                                         r"y == label.*OneVsRestClassifier"):
        RiskScoreClassifier(T=1).fit(X, y)
    # the named alternative works: K cards, predict is the class of the highest card score
    ovr = OneVsRestClassifier(RiskScoreClassifier(T=2, A="-3..3", time_limit=60)).fit(X, y)
    cards = [RiskScoreClassifier(T=2, A="-3..3", time_limit=60).fit(X, (y == k).astype(int)) for k in range(3)]
    scores = np.column_stack([c.decision_function(X) for c in cards])
    assert np.array_equal(ovr.predict(X), np.argmax(scores, axis=1))
    assert ovr.score(X, y) > 0.9


def test_one_vs_rest_trees_print_and_draw_as_one_view():
    import pickle
    import re
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    from sklearn.datasets import load_iris
    from sklearn.exceptions import ConvergenceWarning

    from treeopt_dsl.estimator import OptimalTreeClassifier
    from treeopt_dsl.models.ovr import OneVsRestTrees

    X, y = load_iris(return_X_y=True)
    X, names = X[::3], np.array(["setosa", "versicolor", "virginica"])[y[::3]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = OptimalTreeClassifier(formulation="olct", depth=1, time_limit=20).fit(X, names)
    view = clf.tree_
    assert isinstance(view, OneVsRestTrees) and isinstance(view, tuple) and view is clf.model_
    assert view.classes == ("setosa", "versicolor", "virginica")
    assert all(view[k] is e.tree_ for k, e in enumerate(clf.estimators_))
    text = clf.explain()
    assert text == str(view) and text.startswith("one-vs-rest: 3 binary trees")
    for k, c in enumerate(view.classes):
        assert f"{c} vs rest:" in text and f"-1 = 'not {c}', +1 = '{c}'" in text
        rule = clf.estimators_[k].explain().splitlines()[0]  # each tree's own rule, as its estimator prints it
        assert rule in text
    fig = view.plot(X=X, y=names)
    axes = [a for a in fig.axes if a.get_title()]
    assert [a.get_title() for a in axes] == [f"{c} vs rest" for c in view.classes]
    for ax, c in zip(axes, view.classes, strict=True):  # every panel's leaves count each training sample once
        counts = [tuple(map(int, m)) for t in ax.texts for m in re.findall(r"(\d+) / (\d+) \(not", t.get_text())]
        assert sum(a + b for a, b in counts) == len(names)
        assert sum(b for _, b in counts) == int(np.sum(names == c))
    back = pickle.loads(pickle.dumps(clf))  # lean by default: the view survives, without training data
    assert isinstance(back.tree_, OneVsRestTrees) and back.tree_.classes == view.classes
    assert all(t.X_train is None for t in back.tree_) and back.explain() == text
    assert np.array_equal(back.predict(X), clf.predict(X))


def test_categorical_trees_on_three_classes_are_one_vs_rest_with_names():
    import warnings

    import pandas as pd

    from treeopt_dsl.estimator import CategoricalTreeClassifier
    from treeopt_dsl.models.ovr import OneVsRestTrees

    rng = np.random.default_rng(0)
    color = rng.choice(["red", "green", "blue", "amber"], 150)
    size = np.round(rng.normal(size=150), 2)
    y = np.where(color == "red", "stop", np.where(size > 0.3, "go", "wait"))
    df = pd.DataFrame({"color": color, "size": size})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = CategoricalTreeClassifier(shape="1", time_limit=30).fit(df, y)
    assert isinstance(clf.tree_, OneVsRestTrees) and clf.tree_.classes == ("go", "stop", "wait")
    assert "stop vs rest:" in clf.explain() and "{red}" in clf.explain() and "size" in clf.explain()
    # an independent fit per class (the binary estimator on y == label, the colors coded by hand) gives each tree's
    # optimum, and predict is the class whose tree scores highest
    codes = df.assign(color=np.searchsorted(sorted(set(color)), color).astype(float))
    scores = []
    for k, label in enumerate(clf.classes_):
        own = CategoricalTreeClassifier(shape="1", categorical_features=["color"], time_limit=30).fit(
            codes, (y == label).astype(int))
        assert clf.estimators_[k].result_.objective == pytest.approx(own.result_.objective)
        scores.append(own.decision_function(codes))
    assert np.array_equal(clf.predict(df), clf.classes_[np.argmax(np.column_stack(scores), axis=1)])
    assert clf.score(df, y) > 0.95
    P = clf.predict_proba(df)
    assert P.shape == (150, 3) and np.array_equal(clf.classes_[P.argmax(1)], clf.predict(df))
