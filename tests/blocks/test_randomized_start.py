"""S-ORCT's starts are moved onto the leaves' class-probability constraints before Ipopt sees them (issue 35).

A random start draws every ``C_kt`` uniformly in [0, 1]; when Ipopt ended worse than such a start, the start was kept,
and the fitted tree's leaf probabilities did not sum to one (the gallery's picture: 0.88 + 0.34 on one leaf,
``UncertifiedWarning`` in scikit-learn's warm-start checks). The projection is checked against a brute-force
simplex projection, the starts against the model's own rows, and the gallery's fit end to end.
"""

from __future__ import annotations

import itertools
import re
import warnings

import numpy as np
import pytest

from treeopt_dsl.blocks.randomized import project_leaf_classes
from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import UncertifiedWarning
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.solve import as_start
from treeopt_dsl.starts.multistart import random_start


def _simplex_brute_force(c: np.ndarray) -> np.ndarray:
    """The Euclidean projection of ``c`` onto the probability simplex by trying every support."""
    best, dist = None, np.inf
    for r in range(1, c.size + 1):
        for S in itertools.combinations(range(c.size), r):
            v = np.zeros_like(c)
            v[list(S)] = c[list(S)] - (c[list(S)].sum() - 1.0) / r
            if v.min() >= -1e-12 and np.sum((v - c) ** 2) < dist:
                best, dist = v, np.sum((v - c) ** 2)
    return best


def _feasible(P: np.ndarray, tol: float = 1e-9) -> bool:
    return bool(np.all(P >= -tol) and np.all(P <= 1 + tol) and np.allclose(P.sum(axis=0), 1.0, atol=tol)
                and np.all(P.sum(axis=1) >= 1.0 - tol))


def _qp(C: np.ndarray) -> np.ndarray:
    """The Euclidean projection onto (2), (3), (6) by a general-purpose solver (SLSQP), for comparison."""
    from scipy.optimize import minimize

    K, L = C.shape
    cons = [{"type": "eq", "fun": lambda v: v.reshape(K, L).sum(axis=0) - 1.0},
            {"type": "ineq", "fun": lambda v: v.reshape(K, L).sum(axis=1) - 1.0}]
    r = minimize(lambda v: np.sum((v - C.ravel()) ** 2), np.full(K * L, 1.0 / K), jac=lambda v: 2 * (v - C.ravel()),
                 bounds=[(0.0, 1.0)] * (K * L), constraints=cons, method="SLSQP", options={"ftol": 1e-14,
                                                                                          "maxiter": 500})
    assert r.success, r.message
    return r.x.reshape(K, L)


@pytest.mark.parametrize("K, L", [(2, 2), (2, 4), (3, 4), (3, 8), (4, 4), (5, 8)])
def test_projection_is_feasible_and_the_nearest_point(K, L):
    rng = np.random.default_rng(K * 100 + L)
    for _ in range(15):
        C = rng.uniform(size=(K, L)) * rng.choice([0.3, 1.0, 3.0])
        P = project_leaf_classes(C)
        assert _feasible(P)
        np.testing.assert_allclose(P, _qp(C), atol=1e-5)  # SLSQP's own accuracy
        S = np.column_stack([_simplex_brute_force(C[:, t]) for t in range(L)])
        if np.all(S.sum(axis=1) >= 1.0):  # the columns' projection is feasible: it is the answer, exactly
            np.testing.assert_allclose(P, S, atol=1e-9)


def test_a_feasible_c_is_left_alone():
    C = np.array([[1.0, 0.0, 0.7, 0.0], [0.0, 1.0, 0.3, 0.0], [0.0, 0.0, 0.0, 1.0]])
    np.testing.assert_allclose(project_leaf_classes(C), C, atol=1e-15)


def _built(K: int = 2, depth: int = 1):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 3))
    y = np.minimum((X[:, 0] * K).astype(int), K - 1)
    data = Dataset.from_arrays(X, y, multiclass=K > 2)
    spec = get_formulation("sorct", depth=depth, gamma=32, n_starts=2)
    return spec.build(data)


@pytest.mark.parametrize("K, depth", [(2, 1), (3, 2)])
def test_every_start_handed_to_the_solver_satisfies_the_models_rows(K, depth):
    built = _built(K, depth)
    rng = np.random.default_rng(1)
    C = built.model.variables["C"]
    for _ in range(5):
        x = random_start(built, rng)
        assert np.abs(C.values(x).sum(axis=0) - 1.0).max() > 0.05  # the random draw is off the rows (2)
        assert "leaf_one_class" in built.model.worst_violation(x)[0]
        start = as_start(built, x).x
        assert built.model.max_violation(start) <= 1e-9  # every row of the model, not only C's
        np.testing.assert_array_equal(built.model.variables["a"].values(start), built.model.variables["a"].values(x))
        # a feasible start passes through untouched
        np.testing.assert_array_equal(as_start(built, start).x, start)


def test_the_gallery_fit_is_certified_and_its_leaves_sum_to_one():
    pytest.importorskip("casadi")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.text import Text
    from sklearn.datasets import load_breast_cancer

    from treeopt_dsl.estimator import RandomizedTreeClassifier

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)  # docs/gallery.py's "sorct" entry
    X, y = X.iloc[::5, :10], np.where(y[::5] == 1, "benign", "malignant")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncertifiedWarning)  # was: kept a start violating (2) by 0.79
        clf = RandomizedTreeClassifier(depth=1, n_starts=2, time_limit=20).fit(X, y)
    assert clf.result_.certificate.ok
    np.testing.assert_allclose(clf.result_.model.C.sum(axis=0), 1.0, atol=1e-6)
    fig = clf.result_.model.plot()
    leaves = [t.get_text() for t in fig.findobj(Text) if re.search(r"benign: [\d.]+\nmalignant: [\d.]+", t.get_text())]
    assert len(leaves) == 2
    for text in leaves:  # what the picture prints, two decimals each
        assert sum(float(v) for v in re.findall(r": ([\d.]+)", text)) == pytest.approx(1.0, abs=0.011)


def test_a_given_start_off_the_rows_is_projected_before_ipopt():
    pytest.importorskip("casadi")
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(60, 3))
    data = Dataset.from_arrays(X, (X[:, 0] + 0.2 * X[:, 1] > 0.6).astype(int))
    spec = get_formulation("sorct", depth=1, gamma=32, n_starts=1)
    start = {"a": np.array([[1.0, 0.2, 0.0]]), "mu": np.array([0.3]), "C": np.array([[0.9, 0.3], [0.4, 0.2]])}
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncertifiedWarning)
        res = spec.solve(data, warm_start=start, seed=0)
    assert res.certificate.ok and res.status.value in ("local_optimum", "feasible")
    np.testing.assert_allclose(res.model.C.sum(axis=0), 1.0, atol=1e-6)
    built = spec.build(data)
    C = built.model.variables["C"]
    x0 = np.full(built.model.n_vars, np.nan)
    for name, v in start.items():
        x0[built.model.variables[name].ids] = v
    moved = C.values(as_start(built, x0).x)
    np.testing.assert_allclose(moved, project_leaf_classes(start["C"]))  # what Ipopt was handed
    assert res.start["objective"] == pytest.approx(built.model.objective_value(as_start(built, x0).x))
