"""Dataset validation and scaling: bad input gets a clear DataError; scalers match scikit-learn's; subsampling and
splitting are stratified, reproducible and keep the label mapping."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from treeopt_dsl import Dataset, Scaler
from treeopt_dsl.errors import DataError
from treeopt_dsl.formulations import get_formulation


@pytest.mark.parametrize("X,y,match", [
    ([[0.0], [np.nan]], [0, 1], "NaN|inf"),
    ([[0.0], [np.inf]], [0, 1], "NaN|inf"),
    ([[0.0], [-np.inf]], [0, 1], "NaN|inf"),
    ([[0.0], [1.0]], [0.0, np.nan], "NaN|inf"),
    ([[0.0], [1.0]], [0, 1, 1], "rows but y has"),
    ([[0.0], [1.0], [2.0]], [0, 1], "rows but y has"),
    ([[0.0], [1.0]], [1, 1], "exactly two classes"),
    ([[0.0], [1.0]], ["a", "a"], "exactly two classes"),
    ([[0.0], [1.0], [2.0]], [0, 1, 2], "pick the positive class"),
    ([[0.0], [1.0], [2.0]], ["a", "b", "c"], "three|3 \\(|pick the positive class"),
    ([], [], "two-dimensional"),
    ([0.0, 1.0], [0, 1], "two-dimensional"),
    (np.zeros((2, 2, 1)), [0, 1], "two-dimensional"),
    (np.zeros((0, 2)), [], "no rows"),
    (np.zeros((2, 0)), [0, 1], "no features"),
    ([[0.0], [1.0]], [[0], [1]], "one-dimensional"),
    ([["a"], ["b"]], [0, 1], "numeric|float"),
])
def test_bad_input_is_a_clear_data_error(X, y, match):
    with pytest.raises(DataError, match=match):
        Dataset.from_arrays(X, y)


def test_nan_position_is_reported():
    X = np.zeros((4, 3))
    X[2, 1] = np.nan
    with pytest.raises(DataError, match="row 2, column 1"):
        Dataset.from_arrays(X, [0, 1, 0, 1])


@pytest.mark.parametrize("y,positive,classes,want", [
    ([0, 1, 0], None, (0, 1), [-1, 1, -1]),
    ([-1, 1, 1], None, (-1, 1), [-1, 1, 1]),
    ([2, 1, 2], None, (1, 2), [1, -1, 1]),               # the larger label is positive by default
    ([2, 1, 2], 1, (2, 1), [-1, 1, -1]),                # unless positive= says otherwise
    ([2, 1, 2], "1", (2, 1), [-1, 1, -1]),              # a string matches the label's text (CLI --positive)
    (["no", "yes", "no"], None, ("no", "yes"), [-1, 1, -1]),
    (["no", "yes", "no"], "no", ("yes", "no"), [1, -1, 1]),
    ([True, False, True], None, (False, True), [1, -1, 1]),
])
def test_label_mapping(y, positive, classes, want):
    d = Dataset.from_arrays([[0.0], [1.0], [2.0]], y, positive=positive)
    assert d.y.tolist() == want and d.y.dtype == np.int64
    assert d.classes == classes
    assert list(d.labels_of(d.y)) == list(y)  # the round trip gives the user's labels back
    assert all(type(c) is type(y[0]) for c in d.classes)  # plain Python values, not numpy scalars


def test_label_mapping_is_kept_and_bad_positive_is_refused():
    d = Dataset.from_arrays([[0.0], [1.0], [2.0]], ["no", "yes", "no"], positive="yes")
    assert d.labels_of(np.array([1, -1])).tolist() == ["yes", "no"]
    for sub in (d.take(np.array([0, 1])), d.subsample(2, seed=0), *Dataset.from_arrays(
            np.arange(20.0)[:, None], ["no", "yes"] * 10, positive="yes").split(0.3, seed=0)):
        assert sub.classes == ("no", "yes")
    with pytest.raises(DataError, match="not among"):
        Dataset.from_arrays([[0.0], [1.0]], ["a", "b"], positive="c")


def test_feature_names_and_dataframes():
    df = pd.DataFrame({"age": [30.0, 40.0, 50.0], "bmi": [20.0, 25.0, 30.0]})
    d = Dataset.from_arrays(df, [0, 1, 1], feature_names=list(df.columns))
    np.testing.assert_array_equal(d.X, df.to_numpy())
    assert d.X.dtype == np.float64 and d.feature_names == ("age", "bmi")
    assert Dataset.from_arrays(df, [0, 1, 1]).feature_names == ("x0", "x1")
    with pytest.raises(DataError, match="3 feature names for 2 features"):
        Dataset.from_arrays(df, [0, 1, 1], feature_names=["a", "b", "c"])
    assert (d.n_samples, d.n_features) == (3, 2)


@pytest.mark.parametrize("kind,ref", [("standard", StandardScaler), ("minmax", MinMaxScaler)])
def test_scalers_fit_on_train_reused_on_test(kind, ref):
    rng = np.random.default_rng(0)
    train, test = rng.normal(3, 2, size=(40, 4)), rng.normal(-1, 5, size=(10, 4))
    s = Scaler(kind).fit(train)
    r = ref().fit(train)
    np.testing.assert_allclose(s.transform(train), r.transform(train), atol=1e-12)
    np.testing.assert_allclose(s.transform(test), r.transform(test), atol=1e-12)
    # the test data's own statistics are not used
    assert not np.allclose(s.transform(test), ref().fit_transform(test))
    with pytest.raises(DataError, match="features"):
        s.transform(test[:, :3])


def test_scaler_kinds_and_errors():
    X = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(Scaler("none").fit(X).transform(X), X)
    with pytest.raises(DataError, match="unknown scaling"):
        Scaler("robust")
    with pytest.raises(DataError, match="not been fitted"):
        Scaler("standard").transform(X)
    d = Dataset.from_arrays(X, [0, 1, 0, 1])
    np.testing.assert_allclose(Scaler("minmax").fit(X).apply(d).X, MinMaxScaler().fit_transform(X))


@pytest.mark.parametrize("kind,ref", [("standard", StandardScaler), ("minmax", MinMaxScaler)])
def test_constant_columns_are_left_unscaled(kind, ref):
    X = np.column_stack([np.full(5, 7.0), np.arange(5.0), np.full(5, -2.0)])
    out = Scaler(kind).fit(X).transform(X)
    assert np.all(out[:, [0, 2]] == 0) and np.all(np.isfinite(out))
    np.testing.assert_allclose(out, ref().fit_transform(X), atol=1e-12)


def test_formulations_scale_with_training_statistics():
    """A spec's prepare() standardizes as the thesis' experiments (seed 000, line 610) and keeps the scaler."""
    rng = np.random.default_rng(3)
    d = Dataset.from_arrays(rng.normal(5, 3, size=(30, 3)), rng.integers(0, 2, 30))
    prepared = get_formulation("olct", depth=1).prepare(d)
    np.testing.assert_allclose(prepared.X, StandardScaler().fit_transform(d.X), atol=1e-12)
    np.testing.assert_array_equal(prepared.y, d.y)
    new = rng.normal(0, 1, size=(4, 3))
    np.testing.assert_allclose(prepared.meta["scaler"].transform(new), StandardScaler().fit(d.X).transform(new))


@settings(max_examples=40, deadline=None)
@given(n_pos=st.integers(2, 60), n_neg=st.integers(2, 60), frac=st.floats(0.05, 0.95), seed=st.integers(0, 10**6))
def test_subsample_is_stratified_reproducible_and_without_repeats(n_pos, n_neg, frac, seed):
    N = n_pos + n_neg
    y = np.array([1] * n_pos + [0] * n_neg)
    np.random.default_rng(seed).shuffle(y)
    X = np.arange(N, dtype=float)[:, None]  # the row number, to identify rows
    d = Dataset.from_arrays(X, y)
    n = max(2, int(frac * N))
    s = d.subsample(n, seed=seed)
    rows = s.X[:, 0].astype(int)
    if n >= N:
        assert s.n_samples == N
        return
    assert s.n_samples == n and len(set(rows)) == n
    np.testing.assert_array_equal(s.y, d.y[rows])  # rows keep their labels
    pos = int((s.y == 1).sum())
    assert abs(pos - n * n_pos / N) <= 1.0 and 1 <= pos <= n - 1  # each class in proportion (and present)
    np.testing.assert_array_equal(d.subsample(n, seed=seed).X, s.X)


def test_subsample_limits():
    d = Dataset.from_arrays(np.arange(10.0)[:, None], [0, 1] * 5)
    assert d.subsample(10) is d and d.subsample(50) is d
    with pytest.raises(DataError, match="positive"):
        d.subsample(0)


@pytest.mark.parametrize("test_size,N", [(0.2, 400), (0.25, 101), (0.5, 30), (0.1, 57)])
def test_split_sizes_disjoint_stratified(test_size, N):
    rng = np.random.default_rng(int(test_size * 100))
    y = np.where(rng.random(N) < 0.3, 1, 0)
    d = Dataset.from_arrays(np.arange(N, dtype=float)[:, None], y)
    tr, te = d.split(test_size, seed=2)
    assert te.n_samples == round(test_size * N) and tr.n_samples + te.n_samples == N
    assert set(tr.X[:, 0]).isdisjoint(te.X[:, 0]) and set(tr.X[:, 0]) | set(te.X[:, 0]) == set(range(N))
    assert abs((te.y == 1).sum() - te.n_samples * (d.y == 1).mean()) <= 1.0
    _, te2 = d.split(test_size, seed=2)
    np.testing.assert_array_equal(te.X, te2.X)
    assert not np.array_equal(d.split(test_size, seed=3)[1].X, te.X)


@pytest.mark.parametrize("test_size,N,match", [(0.0, 20, "in \\(0, 1\\)"), (1.0, 20, "in \\(0, 1\\)"),
                                               (0.1, 5, "too few")])
def test_split_refuses_bad_sizes(test_size, N, match):
    d = Dataset.from_arrays(np.arange(N, dtype=float)[:, None], [0, 1] * (N // 2) + [0] * (N % 2))
    with pytest.raises(DataError, match=match):
        d.split(test_size)


@pytest.mark.parametrize("kind", ["standard", "minmax", "none"])
def test_scaler_keeps_ordinary_columns_with_a_tiny_middle_spread(kind):
    """Only huge raw values are refused: a column of ordinary magnitude whose middle half spans 2e-16
    (found by hypothesis in the risk-score tests) is the data, which an affine scaling cannot squash."""
    X = np.array([[0.0], [0.0], [2.220446049250313e-16], [0.0], [1.0], [1.0]])
    s = Scaler(kind).fit(X)
    assert np.all(np.isfinite(s.transform(X)))


def test_models_predict_labels_of_mixed_types():
    """A positive class defined by a rule is text ('1|2|3|4') beside an integer negative class (heart): numpy has
    no common type for them, so predict gave a DTypePromotionError; labels are text then, as labels_of gives."""
    from treeopt_dsl.data import pick_labels

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    import dataclasses

    data = Dataset.from_arrays(X, np.where(X[:, 0] > 0, 1, 0))
    res = get_formulation("oct", depth=1).solve(data, time_limit=20)
    model = dataclasses.replace(res.model, classes=(0, "1|2|3|4"))  # as loaded for heart by the manifest's rule
    mixed = dataclasses.replace(data, classes=(0, "1|2|3|4"))
    np.testing.assert_array_equal(model.predict(X), mixed.labels_of(data.y))
    assert set(model.predict(X).tolist()) == {"0", "1|2|3|4"}
    assert pick_labels((0, "1|2"), np.array([True, False])).tolist() == ["1|2", "0"]
    assert pick_labels((-1, 1), np.array([True, False])).tolist() == [1, -1]


@settings(max_examples=60, deadline=None)
@given(X=arrays(np.int64, st.tuples(st.integers(1, 25), st.integers(1, 3)), elements=st.integers(0, 2)),
       seed=st.integers(0, 10))
def test_compressed_merges_identical_samples_and_keeps_their_weight(X, seed):
    """``Dataset.compressed``: one row per distinct (features, label), weighing the group's total weight, in the
    order of the groups' first rows; every weighted sum over samples is unchanged; compressing twice is once."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    y = rng.integers(0, 2, n)
    y[0] = 1 - y[-1] if n > 1 else y[0]
    if np.unique(y).size < 2:
        return
    w = rng.integers(1, 4, n).astype(float)
    d = Dataset.from_arrays(X.astype(float), y, sample_weight=w)
    c = d.compressed()
    key = [tuple(r) + (lab,) for r, lab in zip(d.X.tolist(), d.y.tolist(), strict=True)]
    firsts = sorted({k: i for i, k in reversed(list(enumerate(key)))}.values())
    assert c.X.tolist() == d.X[firsts].tolist() and c.y.tolist() == d.y[firsts].tolist()
    for row, lab, weight in zip(c.X.tolist(), c.y.tolist(), c.weights.tolist(), strict=True):
        assert weight == sum(wi for k, wi in zip(key, w, strict=True) if k == (*row, lab))
    assert c.weights.sum() == pytest.approx(w.sum())
    assert (c.weights[:, None] * c.X).sum(0) == pytest.approx((w[:, None] * d.X).sum(0))
    assert c.compressed() is c
    assert (c is d) == (len(firsts) == n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_split_keeps_a_single_row_class_in_training(seed):
    """Issue 36: the only positive row used to be held out (each class forced into the test part), leaving one
    class to train on and an IndexError in the CART start."""
    d = Dataset.from_arrays(np.arange(20.0)[:, None], [0] * 5 + [1] + [0] * 14)
    tr, te = d.split(0.2, seed=seed)
    assert (tr.y > 0).sum() == 1 and tr.X[tr.y > 0, 0].tolist() == [5.0]
    assert te.n_samples == 4 and (te.y < 0).all()


def test_split_leaving_a_class_without_training_rows_is_refused():
    d = Dataset.from_arrays(np.arange(12.0)[:, None], [0, 1, 2, 3] * 3, multiclass=True)
    with pytest.raises(DataError, match=r"80% test split of 12 rows in 4 classes.*no training row.*--test-size"):
        d.split(0.8)
    tr, _ = d.split(0.6)
    assert sorted(np.unique(tr.y).tolist()) == [0, 1, 2, 3]
