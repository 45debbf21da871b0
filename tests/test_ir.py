"""The IR against dense numpy: compiled rows times a point equal the expression computed from raw arrays."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treeopt_dsl.errors import ModelError
from treeopt_dsl.ir import Model

FLOATS = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@st.composite
def problems(draw):
    na, nb, nc, nk = (draw(st.integers(1, 4)) for _ in range(4))
    return {
        "na": na, "nb": nb, "nc": nc, "nk": nk,
        "D": draw(arrays(float, (na, nb), elements=FLOATS)),
        "K": draw(arrays(float, (nb, nk), elements=FLOATS)),
        "mask": draw(arrays(bool, (na, nb))),
        "s": draw(FLOATS), "c0": draw(FLOATS),
        "pick": draw(st.integers(0, na - 1)), "col": draw(st.integers(0, nc - 1)),
        "xv": draw(arrays(float, (na, nb), elements=FLOATS)),
        "yv": draw(arrays(float, (nb, nc), elements=FLOATS)),
    }


def build(P: dict):
    m = Model("prop")
    labels_a = np.array([f"a{i}" for i in range(P["na"])])
    x = m.add_variables("x", ("a", "b"), {"a": labels_a, "b": P["nb"]}, lower=-100, upper=100)
    y = m.add_variables("y", ("b", "c"), {"b": P["nb"], "c": P["nc"]}, kind="integer", lower=-5, upper=5)
    D = xr.DataArray(P["D"], dims=("a", "b"))
    K = xr.DataArray(P["K"], dims=("b", "k"))
    mask = xr.DataArray(P["mask"].astype(float), dims=("a", "b"))
    exprs = {
        # scaling by labeled data, broadcasting a reduced family over a missing dim, constants
        "broadcast": (x * D + y.sum("c") - P["c0"],
                      lambda X, Y: P["D"] * X + Y.sum(1)[None, :] - P["c0"]),
        # contraction with a data array (X·w)
        "dot": (x.dot(K, "b"), lambda X, Y: X @ P["K"]),
        # repeated variables in one row are merged; isel; scalar scaling
        "merge": ((x + x).sum("a") * P["s"] + y.isel(c=P["col"]) - x.sum("a"),
                  lambda X, Y: (2 * P["s"] - 1) * X.sum(0) + Y[:, P["col"]]),
        # product with a 0/1 mask, then a sum: z @ mask.T
        "mask": ((x * mask).sum("b"), lambda X, Y: (X * P["mask"]).sum(1)),
        # selection by label
        "sel": (x.sel(a=f"a{P['pick']}") * 3.0 - y.sum("c"), lambda X, Y: 3 * X[P["pick"]] - Y.sum(1)),
        # where: terms kept where the mask holds, 0 elsewhere
        "where": ((x - 2.0).where(xr.DataArray(P["mask"], dims=("a", "b"))),
                  lambda X, Y: np.where(P["mask"], X - 2.0, 0.0)),
        # negation and transposition
        "neg": ((-(x * D)).transpose("b", "a"), lambda X, Y: -(P["D"] * X).T),
    }
    return m, x, y, exprs


@settings(max_examples=60, deadline=None)
@given(P=problems())
def test_compiled_rows_equal_dense_numpy(P):
    m, x, y, exprs = build(P)
    for name, (e, _) in exprs.items():
        m.add_constraints(f"r_{name}", e <= 1e6)  # the row body is the expression minus its constant
    sf = m.compile()
    point = np.zeros(sf.n_cols)
    point[x.ids.ravel()] = P["xv"].ravel()
    point[y.ids.ravel()] = P["yv"].ravel()
    Ax = sf.A @ point
    assert sf.A.indices.dtype == np.int32 and sf.A.data.dtype == np.float64
    for name, (e, oracle) in exprs.items():
        want = oracle(P["xv"], P["yv"])
        np.testing.assert_allclose(e.evaluate(point), want, rtol=1e-9, atol=1e-9)
        block = next(b for b in sf.rows if b.name == f"r_{name}")
        rows = block.index.ravel()
        kept = rows >= 0
        const = np.broadcast_to(e.const, e.shape).ravel()
        np.testing.assert_allclose(Ax[rows[kept]] + const[kept], np.asarray(want).ravel()[kept], rtol=1e-9, atol=1e-8)
        # upper bound: e <= 1e6 becomes body <= 1e6 - const
        np.testing.assert_allclose(sf.row_upper[rows[kept]], 1e6 - const[kept])
    # no duplicate column within a row
    for r in range(sf.n_rows):
        cols = sf.A.indices[sf.A.indptr[r]:sf.A.indptr[r + 1]]
        assert len(np.unique(cols)) == len(cols)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 5), c=arrays(float, 5, elements=FLOATS), q=arrays(float, 5, elements=FLOATS),
       v=arrays(float, 5, elements=FLOATS), k=FLOATS)
def test_objective_linear_and_quadratic_terms(n, c, q, v, k):
    m = Model("obj")
    x = m.add_variables("x", ("i",), {"i": n})
    C = xr.DataArray(c[:n], dims=("i",))
    Q = xr.DataArray(q[:n], dims=("i",))
    m.add_objective(x * C + k, "lin")
    m.add_objective((x * x) * Q, "diag")
    m.add_objective(x.sum() * x.sum(), "square")
    sf = m.compile()
    xv = v[:n]
    want = c[:n] @ xv + k * n + q[:n] @ xv**2 + xv.sum() ** 2
    assert sf.objective(xv) == pytest.approx(want, rel=1e-9, abs=1e-9)
    assert sf.c0 == pytest.approx(k * n)
    if sf.Q is not None:
        np.testing.assert_allclose(sf.Q.toarray(), sf.Q.toarray().T)
    terms = m.objective_terms(xv)
    assert sum(terms.values()) == pytest.approx(want, rel=1e-9, abs=1e-9)


def _rows_have_repeats(e) -> bool:
    v = np.where(e.vars >= 0, e.vars, -1).reshape(-1, e.n_terms) if e.n_terms else np.zeros((1, 0))
    s = np.sort(v, axis=1)
    return bool(np.any((s[:, 1:] == s[:, :-1]) & (s[:, 1:] >= 0)))


@settings(max_examples=60, deadline=None)
@given(P=problems())
def test_distinct_flag_never_lies(P):
    """An expression that claims distinct ids per row has none repeated (the compiler trusts it)."""
    from treeopt_dsl.ir import linsum

    _, x, y, exprs = build(P)
    extra = {
        "dup": x + x, "sum_dup": (x + x).sum("a"), "sel_rep": x.isel(a=[0, 0]).sum("a"),
        "dot_plus": x.dot(xr.DataArray(P["K"], dims=("b", "k")), "b") + y.isel(c=0).sum("b"),
        "linsum": linsum(x.sum("b"), y.sum("c").sum("b"), -(x * 2.0).sum("b")),
        "bcast_sum": (x * xr.DataArray(np.ones(3), dims=("z",))).sum("z"),
    }
    for name, e in [*((n, ex) for n, (ex, _) in exprs.items()), *extra.items()]:
        if e.distinct:
            assert not _rows_have_repeats(e), name
    assert extra["dot_plus"].distinct  # the common case is recognized: X·w plus another family
    assert not extra["sum_dup"].distinct and not extra["bcast_sum"].distinct


@settings(max_examples=30, deadline=None)
@given(P=problems())
def test_linsum_equals_the_chained_sum(P):
    from treeopt_dsl.ir import linsum

    m, x, y, exprs = build(P)
    a, b, c = exprs["broadcast"][0], exprs["mask"][0], exprs["where"][0]
    point = np.zeros(m.n_vars)
    point[x.ids.ravel()] = P["xv"].ravel()
    point[y.ids.ravel()] = P["yv"].ravel()
    chained = a + b - c + 2.5
    fused = linsum(a, b, -c, 2.5)
    assert fused.dims == chained.dims and fused.n_terms == chained.n_terms
    np.testing.assert_allclose(fused.evaluate(point), chained.evaluate(point), rtol=1e-12, atol=1e-12)


def test_senses_and_ranged_rows():
    m = Model("senses")
    x = m.add_variables("x", ("i",), {"i": 3}, lower=0, upper=1)
    m.add_constraints("le", x * 2.0 <= 1.0)
    m.add_constraints("ge", x + 1.0 >= 0.5)
    m.add_constraints("eq", x.sum() == 2.0)
    from treeopt_dsl.ir.constraints import Constraint

    m.add_constraints("rng", Constraint.ranged(-1.0, x - 3.0, 4.0))
    sf = m.compile()
    rows = {b.name: b.index.ravel() for b in sf.rows}
    np.testing.assert_array_equal(sf.row_upper[rows["le"]], 1.0)
    assert np.all(np.isneginf(sf.row_lower[rows["le"]]))
    np.testing.assert_array_equal(sf.row_lower[rows["ge"]], -0.5)
    assert sf.row_lower[rows["eq"]][0] == sf.row_upper[rows["eq"]][0] == 2.0
    np.testing.assert_array_equal(sf.row_lower[rows["rng"]], 2.0)
    np.testing.assert_array_equal(sf.row_upper[rows["rng"]], 7.0)


def test_names_on_demand_and_kinds():
    m = Model("names")
    m.add_variables("w", ("node", "feature"), {"node": 2, "feature": 3}, lower=-1, upper=1)
    z = m.add_variables("z", ("sample",), {"sample": 2}, kind="binary")
    m.add_constraints("one", z.sum() == 1)
    sf = m.compile()
    assert list(sf.col_names()[:4]) == ["w_0_0", "w_0_1", "w_0_2", "w_1_0"]
    assert list(sf.col_names()[-2:]) == ["z_0", "z_1"]
    assert list(sf.row_names()) == ["one"]
    assert sf.integrality.tolist() == [0] * 6 + [1, 1]
    assert sf.col_upper[-1] == 1 and sf.col_lower[-1] == 0


def test_errors_are_clear():
    m = Model("err")
    x = m.add_variables("x", ("i",), {"i": 2})
    with pytest.raises(ModelError, match="already exists"):
        m.add_variables("x", ("i",), {"i": 2})
    with pytest.raises(ModelError, match="finite"):
        x * xr.DataArray([1.0, np.nan], dims=("i",))
    with pytest.raises(ModelError, match="cannot sum over"):
        x.sum("nope")
    with pytest.raises(ModelError, match="comparison"):
        m.add_constraints("bad", x.sum())
