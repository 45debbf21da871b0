"""Issue 35: multiclass where the formulation allows it, and an honest refusal where it does not (risk scores);
one printable / plottable view of a one-vs-rest bundle of trees (OLCT, MARGOT)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.multiclass import OneVsRestClassifier

from treeopt_dsl.estimator import RiskScoreClassifier


def binary_features(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three classes from two 0/1 features (class = x0 + x1), a third 0/1 noise feature."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 3)).astype(float)
    return X, (X[:, 0] + X[:, 1]).astype(int)


def test_risk_scores_refuse_more_classes_and_name_the_alternatives():
    X, y = binary_features()
    with pytest.raises(ValueError, match=r"Only binary classification is supported.*one card per question.*"
                                         r"y == label.*OneVsRestClassifier"):
        RiskScoreClassifier(T=1).fit(X, y)
    # the named alternative works: K cards, predict is the class of the highest card score
    ovr = OneVsRestClassifier(RiskScoreClassifier(T=2, A="-3..3", time_limit=60)).fit(X, y)
    cards = [RiskScoreClassifier(T=2, A="-3..3", time_limit=60).fit(X, (y == k).astype(int)) for k in range(3)]
    scores = np.column_stack([c.decision_function(X) for c in cards])
    assert np.array_equal(ovr.predict(X), np.argmax(scores, axis=1))
    assert ovr.score(X, y) > 0.9
