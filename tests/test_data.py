"""Dataset validation and scaling: bad input gets a clear DataError; scalers match scikit-learn's."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from treeopt_dsl import Dataset, Scaler
from treeopt_dsl.errors import DataError


@pytest.mark.parametrize("X,y,match", [
    ([[0.0], [np.nan]], [0, 1], "NaN|inf"),
    ([[0.0], [np.inf]], [0, 1], "NaN|inf"),
    ([[0.0], [1.0]], [0, 1, 1], "rows but y has"),
    ([[0.0], [1.0]], [1, 1], "exactly two classes"),
    ([[0.0], [1.0], [2.0]], [0, 1, 2], "pick the positive class"),
    ([], [], "two-dimensional"),
    (np.zeros((0, 2)), [], "no rows"),
    ([[0.0], [1.0]], [[0], [1]], "one-dimensional"),
    ([["a"], ["b"]], [0, 1], "numeric|float"),
])
def test_bad_input_is_a_clear_data_error(X, y, match):
    with pytest.raises(DataError, match=match):
        Dataset.from_arrays(X, y)


def test_label_mapping_is_kept():
    d = Dataset.from_arrays([[0.0], [1.0], [2.0]], ["no", "yes", "no"], positive="yes")
    assert d.y.tolist() == [-1, 1, -1] and d.classes == ("no", "yes")
    assert d.labels_of(np.array([1, -1])).tolist() == ["yes", "no"]
    with pytest.raises(DataError, match="not among"):
        Dataset.from_arrays([[0.0], [1.0]], ["a", "b"], positive="c")


@pytest.mark.parametrize("kind,ref", [("standard", StandardScaler), ("minmax", MinMaxScaler)])
def test_scalers_fit_on_train_reused_on_test(kind, ref):
    rng = np.random.default_rng(0)
    train, test = rng.normal(3, 2, size=(40, 4)), rng.normal(3, 2, size=(10, 4))
    s = Scaler(kind).fit(train)
    r = ref().fit(train)
    np.testing.assert_allclose(s.transform(test), r.transform(test), atol=1e-12)
    with pytest.raises(DataError, match="features"):
        s.transform(test[:, :3])


def test_constant_columns_are_left_unscaled():
    X = np.column_stack([np.ones(5), np.arange(5.0)])
    out = Scaler("standard").fit(X).transform(X)
    assert np.all(out[:, 0] == 0) and np.all(np.isfinite(out))


def test_subsample_is_stratified_and_split_sizes():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(400) < 0.25, 1, 0)
    d = Dataset.from_arrays(rng.normal(size=(400, 2)), y)
    s = d.subsample(100, seed=1)
    assert s.n_samples == 100
    assert abs((s.y == 1).mean() - (d.y == 1).mean()) <= 0.02
    tr, te = d.split(0.25, seed=2)
    assert tr.n_samples + te.n_samples == 400 and te.n_samples == 100
    assert abs((te.y == 1).mean() - (d.y == 1).mean()) <= 0.02
