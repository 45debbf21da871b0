"""Nonlinear expression nodes evaluate exactly as the same formula written with numpy."""

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treeopt_dsl.errors import ModelError
from treeopt_dsl.ir import Model
from treeopt_dsl.ir import nonlinear as nl

finite = st.floats(-3, 3, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.data())
def test_path_probability_matches_numpy(n: int, depth: int, data: st.DataObject) -> None:
    """prod over a path of logistic(slope * (a·x - mu)), the S-ORCT routing probability."""
    m = Model()
    a = m.add_variables("a", ("node", "feature"), {"node": depth, "feature": 2})
    mu = m.add_variables("mu", ("node",), {"node": depth})
    X = data.draw(arrays(float, (n, 2), elements=finite))
    slope = data.draw(st.floats(0.5, 8))
    x = data.draw(arrays(float, (m.n_vars,), elements=finite))
    expr = nl.prod(nl.logistic((a.dot(xr.DataArray(X, dims=("sample", "feature")), "feature") - mu) * slope), "node")
    A, M = x[: 2 * depth].reshape(depth, 2), x[2 * depth :]
    expected = np.prod(1 / (1 + np.exp(-slope * (X @ A.T - M))), axis=1)
    got = expr.evaluate(x)
    assert expr.dims == ("sample",)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(arrays(float, (3,), elements=finite))
def test_arithmetic_and_unary_ops(x: np.ndarray) -> None:
    m = Model()
    v = m.add_variables("v", ("i",), {"i": 3})
    e = 2.0 * nl.exp(v) - nl.log1p(v * v) / 3.0 + nl.softplus(-v) + v
    expected = 2 * np.exp(x) - np.log1p(x * x) / 3 + np.logaddexp(0, -x) + x
    np.testing.assert_allclose(e.evaluate(x), expected, rtol=1e-12)
    np.testing.assert_allclose(nl.nlsum(e).evaluate(x), expected.sum(), rtol=1e-12)
    assert set(e.variables().tolist()) == {0, 1, 2}


def test_nonlinear_objective_makes_an_nlp_and_keeps_linear_rows() -> None:
    m = Model()
    v = m.add_variables("v", ("i",), {"i": 2}, lower=-1, upper=1)
    m.add_constraints("cap", v.sum() <= 1)
    m.add_objective(nl.softplus(-v), "loss")
    m.add_objective(v.sum() * 0.5, "lin")
    sf = m.compile()
    assert sf.problem_class == "NLP"
    assert sf.A.shape == (1, 2)
    x = np.array([0.3, -0.2])
    assert sf.objective(x) == pytest.approx(np.logaddexp(0, -x).sum() + 0.5 * x.sum())
    assert m.objective_value(x) == pytest.approx(sf.objective(x))


def test_reduce_over_unknown_dimension_is_an_error() -> None:
    m = Model()
    v = m.add_variables("v", ("i",), {"i": 2})
    with pytest.raises(ModelError, match="cannot reduce"):
        nl.prod(v, "j")


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.data())
def test_casadi_translation_evaluates_like_numpy(n: int, data: st.DataObject) -> None:
    """Every node kind through the CasADi translator (gathers, sparse sums, products along a
    dimension, a quadratic leaf, constants broadcast) gives the IR's numpy value."""
    pytest.importorskip("casadi", reason="the NLP route needs `pip install treeopt-dsl[nlp]`")
    import casadi as ca

    from treeopt_dsl.backends.nlp import CasadiTranslator

    m = Model()
    a = m.add_variables("a", ("node", "feature"), {"node": 3, "feature": 2})
    mu = m.add_variables("mu", ("node",), {"node": 3})
    X = data.draw(arrays(float, (n, 2), elements=finite))
    D = xr.DataArray(data.draw(arrays(float, (3, 2), elements=st.floats(0.1, 2))), dims=("node", "leaf"))
    x = data.draw(arrays(float, (m.n_vars,), elements=st.floats(-1, 1)))
    lin = a.dot(xr.DataArray(X, dims=("sample", "feature")), "feature") - mu
    e = nl.prod(nl.logistic(lin * 1.5) * D + 0.5, "node")  # (sample, leaf)
    e = e / (1.0 + nl.exp(-e)) - nl.log1p(e) + nl.softplus(e * 0.3) - nl.log(e + 2.0)
    quad = (mu * mu) * 0.7 + mu
    total = nl.nlsum(e, "sample").sum() + nl.nlsum(quad * nl.logistic(mu), "node") - nl.prod(-nl.exp(mu), "node")
    xs = ca.SX.sym("x", m.n_vars)
    tr = CasadiTranslator(xs, m.n_vars)
    for expr in (e, total):
        f = ca.Function("f", [xs], [tr(expr)])
        got = np.asarray(f(x)).ravel()
        np.testing.assert_allclose(got, np.ravel(expr.evaluate(x)), rtol=1e-10, atol=1e-12)


def test_nonlinear_constraints_travel_beside_the_standard_form() -> None:
    m = Model()
    v = m.add_variables("v", ("i",), {"i": 2}, lower=-1, upper=1)
    m.add_constraints("lin", v.sum() <= 1)
    c = m.add_constraints("curve", nl.exp(v) >= xr.DataArray([1.0, 2.0], dims=("i",)))
    x = np.array([0.0, 0.0])
    np.testing.assert_allclose(c.violation(x), [0.0, 1.0])
    assert m.max_violation(x) == pytest.approx(1.0)
    sf = m.compile()
    assert sf.problem_class == "NLP" and sf.A.shape == (1, 2) and set(sf.nl_constraints) == {"curve"}
    with pytest.raises(ModelError, match=r"already exists|taken"):
        m.add_constraints("lin", nl.exp(v) <= 3.0)
