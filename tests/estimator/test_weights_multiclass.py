"""Sample weights and class weights in every loss and estimator; multiclass trees (OCT's leaf classes, one-vs-rest,
S-ORCT's estimator). Optima are checked against brute force, integer weights against repeated rows."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from treeopt_dsl import Dataset
from treeopt_dsl.errors import CapabilityError, DataError
from treeopt_dsl.estimator import (
    CategoricalTreeClassifier,
    OptimalTreeClassifier,
    RandomizedTreeClassifier,
    RiskScoreClassifier,
)
from treeopt_dsl.exact import maybe_solve_dp
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.result import Status


def weighted_brute_force(X: np.ndarray, codes: np.ndarray, w: np.ndarray, depth: int) -> float:
    """``min sum_i w_i [leaf class != y_i]`` over every axis-aligned tree of depth <= ``depth`` (any number of
    classes): at each node a leaf labelled by its weighted majority, or every (feature, midpoint) cut with the best
    subtrees below. Independent of the MILP and of the DP."""
    K = int(codes.max()) + 1
    cuts = [(j, t) for j in range(X.shape[1]) for t in np.convolve(np.unique(X[:, j]), [0.5, 0.5], "valid")]

    def best(rows: np.ndarray, h: int) -> float:
        mass = np.bincount(codes[rows], weights=w[rows], minlength=K)
        leaf = float(mass.sum() - mass.max()) if rows.size else 0.0
        if h == 0 or leaf == 0:
            return leaf
        out = leaf
        for j, t in cuts:
            right = X[rows, j] > t
            out = min(out, best(rows[~right], h - 1) + best(rows[right], h - 1))
        return out

    return best(np.arange(codes.size), depth)


def tiny(seed: int, n: int = 12, K: int = 2, p: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(n, p)).astype(float)
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)  # every class present
    return X, y


def solve_oct(d: Dataset, depth: int, solver: str = "highs", **kw: object) -> object:
    return get_formulation("oct", depth=depth).solve(d, solver=solver, time_limit=120, **kw)


# ---------------------------------------------------------------- Dataset
def test_dataset_carries_the_weights() -> None:
    X, y = tiny(0, n=20)
    w = np.arange(1.0, 21.0)
    d = Dataset.from_arrays(X, y, sample_weight=w)
    assert np.array_equal(d.take(np.array([3, 1])).sample_weight, [4.0, 2.0])
    tr, te = d.split(0.25, seed=1)
    assert np.array_equal(np.sort(np.concatenate([tr.sample_weight, te.sample_weight])), w)
    sub = d.subsample(10, seed=2)
    assert sub.sample_weight.size == 10 and set(sub.sample_weight) <= set(w)
    assert Dataset.from_arrays(X, y).sample_weight is None and not Dataset.from_arrays(X, y).weighted
    with pytest.raises(DataError, match="non-negative"):
        Dataset.from_arrays(X, y, sample_weight=-w)
    with pytest.raises(DataError, match="one weight per sample"):
        Dataset.from_arrays(X, y, sample_weight=w[:3])


# ---------------------------------------------------------------- weighted optima
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("depth", [1, 2])
def test_weighted_oct_equals_brute_force(seed: int, depth: int) -> None:
    X, y = tiny(seed, n=12)
    w = np.random.default_rng(100 + seed).uniform(0.2, 3.0, size=y.size)
    d = Dataset.from_arrays(X, y, sample_weight=w)
    res = solve_oct(d, depth, warm_start=None)
    assert res.status is Status.OPTIMAL and res.certificate.ok
    assert res.objective == pytest.approx(weighted_brute_force(X, y, w, depth), abs=1e-6)
    # the certificate is the weighted error of the returned model, counted here from its predictions
    wrong = res.model.predict(X) != d.labels_of(d.y)
    assert res.certificate.objective_decoded == pytest.approx(float(np.sum(w * wrong)), abs=1e-6)


@pytest.mark.parametrize("formulation", ["oct", "olct"])
def test_integer_weights_equal_repeated_rows(formulation: str) -> None:
    X, y = tiny(5, n=14)
    w = np.random.default_rng(7).integers(1, 4, size=y.size)
    weighted = Dataset.from_arrays(X, y, sample_weight=w)
    repeated = Dataset.from_arrays(np.repeat(X, w, axis=0), np.repeat(y, w))
    # minmax: the same scaling for both (standard scaling is fitted on the rows, unweighted: docs/weights.md)
    spec = get_formulation(formulation, depth=1, scaling="minmax")
    a = spec.solve(weighted, time_limit=120, warm_start=None)
    b = get_formulation(formulation, depth=1, scaling="minmax").solve(repeated, time_limit=120, warm_start=None)
    assert a.status is Status.OPTIMAL and b.status is Status.OPTIMAL
    assert a.objective == pytest.approx(b.objective, rel=1e-6, abs=1e-6)


def test_weights_change_the_optimum() -> None:
    """A heavy minority flips the tree: the weights reach the objective (not only the certificate)."""
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    y = np.array([0, 0, 0, 1, 0, 0])
    plain = solve_oct(Dataset.from_arrays(X, y), 1, warm_start=None)
    heavy = solve_oct(Dataset.from_arrays(X, y, sample_weight=[1, 1, 1, 10, 1, 1]), 1, warm_start=None)
    assert plain.objective == pytest.approx(1.0) and heavy.objective == pytest.approx(2.0)
    assert heavy.model.predict(X[3:4])[0] == 1


def test_risk_score_integer_weights_equal_repeated_rows() -> None:
    X, y = tiny(3, n=16, p=3)
    w = np.random.default_rng(3).integers(1, 3, size=y.size)
    kw = dict(T=1, A="-2..2", tangents="V1")
    a = get_formulation("ors", **kw).solve(Dataset.from_arrays(X, y, sample_weight=w), time_limit=120)
    b = get_formulation("ors", **kw).solve(Dataset.from_arrays(np.repeat(X, w, 0), np.repeat(y, w)), time_limit=120)
    assert a.status is Status.OPTIMAL and b.status is Status.OPTIMAL and a.certificate.ok
    assert a.objective == pytest.approx(b.objective, rel=1e-6, abs=1e-6)


def test_categorical_integer_weights_equal_repeated_rows() -> None:
    X, y = tiny(4, n=16, p=3)
    w = np.random.default_rng(4).integers(1, 4, size=y.size)
    kw = dict(shape="2", n_bins=4)
    a = get_formulation("odt_categorical", **kw).solve(Dataset.from_arrays(X, y, sample_weight=w), time_limit=120)
    b = get_formulation("odt_categorical", **kw).solve(Dataset.from_arrays(np.repeat(X, w, 0), np.repeat(y, w)),
                                                       time_limit=120)
    assert a.status is Status.OPTIMAL and b.status is Status.OPTIMAL and a.certificate.ok
    assert a.objective == pytest.approx(b.objective, abs=1e-6)


def test_sorct_weighted_cost_is_the_repeated_rows_cost() -> None:
    """S-ORCT's expected cost (a weighted mean) at the same decisions equals the cost on repeated rows."""
    from treeopt_dsl.models.embed import from_decisions

    X, y = tiny(6, n=10, K=3, p=2)
    w = np.array([1, 2, 3, 1, 2, 3, 1, 2, 3, 1])
    spec = get_formulation("sorct", depth=2, n_starts=1)
    a = spec.build(Dataset.from_arrays(X, y, multiclass=True, sample_weight=w))
    b = get_formulation("sorct", depth=2, n_starts=1).build(
        Dataset.from_arrays(np.repeat(X, w, 0), np.repeat(y, w), multiclass=True))
    rng = np.random.default_rng(0)
    dec = {"a": rng.uniform(-1, 1, (3, 2)), "mu": rng.uniform(-1, 1, 3), "C": np.eye(3)[:, [0, 1, 2, 2]]}
    # both scaled alike: the repeated rows have the same min and max
    xa, xb = from_decisions(a, dec), from_decisions(b, dec)
    assert float(a.compile().objective(xa)) == pytest.approx(float(b.compile().objective(xb)), rel=1e-9)


# ---------------------------------------------------------------- the DP route and weights
def test_dp_takes_any_weights_at_depth_2_and_integer_ones_deeper() -> None:
    """Depth 1-2 (the count weighs every row): any weights, the weighted brute-force optimum, on the direct route
    and through the built model; depth 3 (STreeD counts rows): integer weights as repeated rows, fractional ones
    refused, and the automatic start then skips the DP and the MILP proves the optimum."""
    X, y = tiny(8, n=12)
    w = np.random.default_rng(8).integers(1, 4, size=y.size)
    res = solve_oct(Dataset.from_arrays(X, y, sample_weight=w), 3, solver="streed")
    assert res.status is Status.OPTIMAL and res.certificate.ok
    assert res.objective == pytest.approx(weighted_brute_force(X, y, w.astype(float), 3))
    frac = Dataset.from_arrays(X, y, sample_weight=w + 0.5)
    for depth in (1, 2):
        direct = solve_oct(frac, depth, solver="streed")
        built = maybe_solve_dp(get_formulation("oct", depth=depth).build(frac), "streed")
        for r in (direct, built):
            assert r.status is Status.OPTIMAL and r.certificate.ok
            assert r.objective == pytest.approx(weighted_brute_force(X, y, w + 0.5, depth), abs=1e-9)
    with pytest.raises(CapabilityError, match="not integers"):
        solve_oct(frac, 3, solver="streed")
    auto = solve_oct(frac, 3, warm_start="auto")  # the DP start is skipped, the MILP proves
    assert "not integers" in str(auto.start["candidates"]["dp"])
    assert auto.status is Status.OPTIMAL
    assert auto.objective == pytest.approx(weighted_brute_force(X, y, w + 0.5, 3), abs=1e-6)


# ---------------------------------------------------------------- multiclass trees
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("depth", [1, 2])
def test_multiclass_oct_equals_brute_force(seed: int, depth: int) -> None:
    X, y = tiny(20 + seed, n=12, K=3)
    d = Dataset.from_arrays(X, y, multiclass=True)
    best = weighted_brute_force(X, y, np.ones(y.size), depth)
    milp = solve_oct(d, depth, warm_start=None)
    dp = solve_oct(d, depth, solver="streed")
    for res in (milp, dp):
        assert res.status is Status.OPTIMAL and res.certificate.ok
        assert res.objective == pytest.approx(best, abs=1e-6)
        assert np.sum(res.model.predict(X) != y) == pytest.approx(best)


def test_multiclass_weighted_oct_equals_brute_force() -> None:
    X, y = tiny(30, n=12, K=4)
    w = np.random.default_rng(30).uniform(0.5, 2.0, size=y.size)
    res = solve_oct(Dataset.from_arrays(X, y, multiclass=True, sample_weight=w), 2, warm_start=None)
    assert res.status is Status.OPTIMAL and res.certificate.ok
    assert res.objective == pytest.approx(weighted_brute_force(X, y, w, 2), abs=1e-6)


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_multiclass_oct_on_real_data_is_optimal(name: str) -> None:
    from treeopt_dsl.datasets import load

    d = load(name, multiclass=True)
    assert d.n_classes == 3
    res = solve_oct(d, 2, warm_start="auto")
    assert res.status is Status.OPTIMAL and res.certificate.ok
    codes = d.class_index
    wrong = res.model.predict(d.X) != np.asarray(d.classes)[codes]
    assert res.objective == pytest.approx(float(wrong.sum()))
    depth1 = solve_oct(d, 1, warm_start=None)  # the MILP alone proves depth 1
    assert depth1.status is Status.OPTIMAL and depth1.certificate.ok
    assert depth1.objective == pytest.approx(weighted_brute_force(d.X, codes, np.ones(codes.size), 1))


def test_multiclass_tree_enumeration_is_exhaustive_at_depth_1() -> None:
    """The brute force itself, against an explicit enumeration of every depth-1 tree and leaf labelling."""
    X, y = tiny(40, n=10, K=3)
    best = np.inf
    for j in range(X.shape[1]):
        for t in np.unique(X[:, j]):
            right = X[:, j] > t
            for a, b in itertools.product(range(3), repeat=2):
                best = min(best, float(np.sum(np.where(right, b, a) != y)))
    assert weighted_brute_force(X, y, np.ones(y.size), 1) == best


def test_estimator_multiclass_native_and_one_vs_rest() -> None:
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X, y = X[::3], y[::3]
    oct_ = OptimalTreeClassifier(formulation="oct", depth=2, time_limit=60).fit(X, y)
    assert oct_.result_.status is Status.OPTIMAL and oct_.tree_.leaf_classes is not None
    proba = oct_.predict_proba(X)
    assert proba.shape == (y.size, 3) and np.array_equal(oct_.classes_[np.argmax(proba, 1)], oct_.predict(X))
    ovr = OptimalTreeClassifier(formulation="olct", depth=1, time_limit=60).fit(X, y)
    assert len(ovr.estimators_) == 3
    scores = np.column_stack([e.decision_function(X) for e in ovr.estimators_])
    assert np.array_equal(ovr.predict(X), ovr.classes_[np.argmax(scores, 1)])
    assert ovr.predict_proba(X).shape == (y.size, 3)


# ---------------------------------------------------------------- GridSearchCV with weights on every estimator
def _binary(n: int = 36) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(n, 3)).astype(float)
    y = ((X[:, 0] + rng.integers(0, 2, size=n)) > 2).astype(int)
    return X, y, rng.integers(1, 3, size=n).astype(float)


def _estimators() -> list[object]:
    from treeopt_dsl.bornagain.estimator import BornAgainClassifier
    from treeopt_dsl.estimator.memetic import TAOClassifier, TMOClassifier

    return [OptimalTreeClassifier(formulation="oct", depth=1, time_limit=30, class_weight="balanced"),
            RiskScoreClassifier(T=1, A="-2..2", tangents="V1", time_limit=30, class_weight="balanced"),
            CategoricalTreeClassifier(shape="1", n_bins=3, time_limit=30, class_weight="balanced"),
            RandomizedTreeClassifier(depth=1, n_starts=2, class_weight="balanced"),
            BornAgainClassifier(class_weight="balanced", time_limit=30),
            TAOClassifier(depth=1, class_weight="balanced"),
            TMOClassifier(depth=1, n_trees=4, n_generations=1, class_weight="balanced")]


@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
def test_grid_search_with_sample_weight_and_balanced_classes(est: object) -> None:
    X, y, w = _binary()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(est, {"class_weight": ["balanced", None]}, cv=2).fit(X, y, sample_weight=w)
    assert gs.predict(X).shape == y.shape


def test_class_weight_is_sample_weight_per_class() -> None:
    """class_weight={0: a, 1: b} gives the same optimum as the equivalent sample_weight."""
    X, y, _ = _binary(24)
    a = OptimalTreeClassifier(formulation="oct", depth=1, time_limit=30, class_weight={0: 1.0, 1: 3.0},
                              warm_start=None).fit(X, y)
    b = OptimalTreeClassifier(formulation="oct", depth=1, time_limit=30, warm_start=None).fit(
        X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    assert a.result_.objective == pytest.approx(b.result_.objective)
    assert a.result_.objective == pytest.approx(weighted_brute_force(X, y, np.where(y == 1, 3.0, 1.0), 1))
