"""The fit's metrics (treeopt_dsl.models.metrics) against scikit-learn's, which they replace on the command's path
(importing ``sklearn.metrics`` cost 0.5-3 s after the solve): AUC with ties, balanced accuracy with absent classes,
the one-versus-rest multiclass AUC."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import balanced_accuracy_score, recall_score, roc_auc_score

from treeopt_dsl.models.metrics import balanced_accuracy, rates, roc_auc

labels = st.lists(st.integers(0, 2), min_size=2, max_size=60)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_roc_auc_is_scikit_learns_with_ties(data) -> None:
    n = data.draw(st.integers(2, 60))
    positive = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    score = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, -3.0, 7.5]), min_size=n,
                                        max_size=n)))  # few values: many ties
    if positive.all() or not positive.any():
        assert np.isnan(roc_auc(positive, score))
    else:
        assert np.isclose(roc_auc(positive, score), roc_auc_score(positive, score), rtol=0, atol=1e-12)


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
@settings(max_examples=200, deadline=None)
@given(labels, st.data())
def test_balanced_accuracy_is_scikit_learns(y, data) -> None:
    y = np.array(y)
    pred = np.array(data.draw(st.lists(st.integers(0, 3), min_size=y.size, max_size=y.size)))
    ours = balanced_accuracy(y, pred)
    assert np.isclose(ours, balanced_accuracy_score(y, pred), rtol=0, atol=1e-12)


def test_multiclass_auc_is_the_one_versus_rest_macro_mean() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=80)
    proba = rng.dirichlet(np.ones(3), size=80)
    ours = np.mean([roc_auc(y == k, proba[:, k]) for k in range(3)])
    assert np.isclose(ours, roc_auc_score(y, proba, multi_class="ovr"), rtol=0, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_rates_are_scikit_learns_recall_of_each_class(pairs) -> None:
    """TPR = recall of the positive class, TNR = recall of the negative one (Günlük et al. Table 14); NaN for a
    class with no row."""
    truth = np.array([t for t, _ in pairs])
    pred = np.array([p for _, p in pairs])
    y, p = np.where(truth, "pos", "neg"), np.where(pred, "pos", "neg")
    got = rates(y, p, truth)
    for name, label, present in (("tpr", "pos", truth.any()), ("tnr", "neg", (~truth).any())):
        if present:
            assert got[name] == pytest.approx(recall_score(y, p, pos_label=label, average="binary"), abs=1e-12)
        else:
            assert np.isnan(got[name])
