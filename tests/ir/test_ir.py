"""The IR against dense numpy: compiled rows times a point equal the expression computed from raw arrays."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treeopt_dsl.errors import ModelError
from treeopt_dsl.ir import Constraint, Model, affine, linsum
from treeopt_dsl.ir.left_operands import defer_left_dataarrays
from treeopt_dsl.ir.nonlinear import logistic

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
    # (expression, factor) pairs are multiplied straight into the buffer: a factor over a new dimension
    k = xr.DataArray([0.5, -2.0, 3.0], dims=("piece",))
    pairs = linsum((a, k), (b, -1.5), (c, k * 2.0), 1.0)
    chained = a * k + b * -1.5 + (c * (k * 2.0)) + 1.0
    assert pairs.dims == chained.dims and pairs.n_terms == chained.n_terms
    np.testing.assert_allclose(pairs.evaluate(point), chained.evaluate(point), rtol=1e-12, atol=1e-12)
    m.add_constraints("pairs", pairs <= 0)
    m.add_constraints("chain", chained <= 0)
    sf = m.compile()
    rows = {r.name: r for r in sf.rows}
    A = sf.A.toarray()
    np.testing.assert_allclose(A[rows["pairs"].index.ravel()], A[rows["chain"].index.ravel()], atol=1e-12)


def test_senses_and_ranged_rows():
    m = Model("senses")
    x = m.add_variables("x", ("i",), {"i": 3}, lower=0, upper=1)
    m.add_constraints("le", x * 2.0 <= 1.0)
    m.add_constraints("ge", x + 1.0 >= 0.5)
    m.add_constraints("eq", x.sum() == 2.0)
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


# ---------------------------------------------------------------------------------------------------------------
# Random families and random expression trees, against an xarray oracle evaluated on a batch of points.
#
# Every IR expression is built together with an oracle: a function of the families' values as xarray DataArrays
# (with a leading batch dimension ``_pt``) that performs the same operation with xarray's own arithmetic. Evaluating
# the oracle at the origin and at the unit vectors gives the expression's constant and its dense Jacobian, which must
# equal the compiled constraint rows (and the objective's c, Q, c0) entry by entry.
# ---------------------------------------------------------------------------------------------------------------

POOL = ("i", "j", "k")
PT = "_pt"
SMALL = st.floats(-3, 3, allow_nan=False, allow_infinity=False).map(lambda v: round(v, 2))


class Universe:
    """A model with random families over a pool of named dimensions (shared coordinates)."""

    def __init__(self, sizes: dict[str, int], coords: dict[str, np.ndarray]) -> None:
        self.sizes, self.coords = sizes, coords
        self.model = Model("random")
        self.fams: list[tuple[str, tuple[str, ...]]] = []
        self.expected: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}

    def oracle_values(self, X: np.ndarray) -> dict[str, xr.DataArray]:
        """Each family's slice of every row of ``X`` (points), as a labeled DataArray over (_pt, *dims)."""
        out = {}
        for name, dims in self.fams:
            f = self.model.variables[name]
            block = X[:, f.offset:f.offset + f.size].reshape((X.shape[0],) + f.shape)
            out[name] = xr.DataArray(block, dims=(PT,) + dims, coords={d: self.coords[d] for d in dims})
        return out


def _data(draw, dims: tuple[str, ...], sizes: dict[str, int], coords: dict[str, np.ndarray] | None,
          elements=SMALL) -> xr.DataArray:
    shape = tuple(sizes[d] for d in dims)
    vals = draw(arrays(float, shape, elements=elements))
    return xr.DataArray(vals, dims=dims, coords=None if coords is None else {d: coords[d] for d in dims})


def _subset(draw, dims: tuple[str, ...], min_size: int = 0) -> tuple[str, ...]:
    perm = draw(st.permutations(dims))
    return tuple(perm[: draw(st.integers(min_size, len(dims)))])


@st.composite
def universes(draw) -> Universe:
    sizes = {d: draw(st.integers(1, 3)) for d in POOL}
    coords = {}
    for d, n in sizes.items():
        style = draw(st.sampled_from(["range", "shuffled", "str"]))
        perm = draw(st.permutations(range(n)))
        coords[d] = (np.arange(n) if style == "range" else np.array(perm) + 10 if style == "shuffled"
                     else np.array([f"{d}{v}" for v in perm]))
    U = Universe(sizes, coords)
    for k in range(draw(st.integers(1, 3))):
        name = f"v{k}"
        dims = _subset(draw, POOL)
        kind = draw(st.sampled_from(["continuous", "integer", "binary"]))
        shape = tuple(sizes[d] for d in dims)
        template = xr.DataArray(np.zeros(shape), dims=dims)

        def bound(lo: bool, dims=dims, template=template):
            rng_el = st.floats(-5, 0) if lo else st.floats(0, 5)
            style = draw(st.sampled_from(["none", "scalar", "labeled", "plain"] if dims else ["none", "scalar"]))
            if style == "none":
                return None, np.full(template.shape, -np.inf if lo else np.inf)
            if style == "scalar":
                v = draw(rng_el)
                return v, np.full(template.shape, v)
            if style == "labeled":  # by name, any subset of the family's dimensions, any order
                da = _data(draw, _subset(draw, dims), sizes, coords, rng_el)
            else:  # a plain array matches the trailing dimensions by position
                tail = dims[len(dims) - draw(st.integers(1, len(dims))):]
                da = _data(draw, tail, sizes, None, rng_el)
            want = xr.broadcast(da, template)[0].transpose(*dims).values
            return (da if style == "labeled" else da.values), want

        lo, lo_want = bound(True)
        up, up_want = bound(False)
        U.model.add_variables(name, dims, {d: coords[d] for d in dims}, kind=kind, lower=lo, upper=up)
        if kind == "binary":
            lo_want, up_want = np.maximum(lo_want, 0), np.minimum(up_want, 1)
        U.fams.append((name, dims))
        U.expected[name] = (lo_want, up_want, int(kind != "continuous"))
    return U


def _core(draw, U: Universe, depth: int):
    """A random expression with the pool's coordinates (so any two can be combined), and its oracle."""
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        name, _ = draw(st.sampled_from(U.fams))
        return U.model.variables[name], (lambda V, name=name: V[name])
    op = draw(st.sampled_from(["add", "sub", "neg", "scalar", "rscalar", "data", "plain", "const", "mask", "where",
                               "sum", "dot", "dot_sparse", "div", "transpose", "linsum"]))
    e, f = _core(draw, U, depth - 1)
    dims = e.to_expr().dims
    if op in ("add", "sub", "linsum"):
        e2, f2 = _core(draw, U, depth - 1)
        if op == "add":
            return e + e2, lambda V: f(V) + f2(V)
        if op == "sub":
            return e - e2, lambda V: f(V) - f2(V)
        s = draw(SMALL)
        return linsum(e, e2 * 2.0, s), lambda V: f(V) + 2.0 * f2(V) + s
    if op == "neg":
        return -e, lambda V: -f(V)
    if op in ("scalar", "rscalar"):
        s = draw(SMALL | st.just(0.0))  # 0 coefficients must vanish from the matrix
        return (e * s if op == "scalar" else np.float64(s) * e), lambda V: f(V) * s
    if op in ("data", "mask", "const"):  # labeled data over any pool dimensions: new ones broadcast
        el = st.sampled_from([0.0, 1.0]) if op == "mask" else SMALL
        D = _data(draw, _subset(draw, POOL), U.sizes, U.coords, el)
        if op == "const":
            return (e + D, lambda V: f(V) + D) if draw(st.booleans()) else (e - D, lambda V: f(V) - D)
        return e * D, lambda V: f(V) * D
    if op == "where":
        Mk = _data(draw, _subset(draw, POOL), U.sizes, U.coords, st.booleans()).astype(bool)
        return e.to_expr().where(Mk), lambda V: f(V).where(Mk, 0.0)
    if op == "div":
        D = _data(draw, _subset(draw, POOL), U.sizes, U.coords, st.sampled_from([-2.0, 0.5, 4.0]))
        return e / D, lambda V: f(V) / D
    if not dims:  # the remaining operations need a dimension
        return e, f
    if op == "plain":  # numpy array: positional, against the trailing dimensions
        tail = dims[len(dims) - draw(st.integers(1, len(dims))):]
        D = _data(draw, tail, U.sizes, None)
        return e * D.values, lambda V: f(V) * D
    if op == "sum":
        sub = _subset(draw, dims, 1)
        return e.sum(list(sub)), lambda V: f(V).sum(list(sub))
    if op in ("dot", "dot_sparse"):  # sparse data: the contraction keeps only its nonzero positions
        d = draw(st.sampled_from(dims))
        el = st.sampled_from([0.0, 0.0, 1.0, -2.5]) if op == "dot_sparse" else SMALL
        D = _data(draw, (d, *(x for x in _subset(draw, POOL) if x != d)), U.sizes, U.coords, el)
        return e.dot(D, d), lambda V: (f(V) * D).sum(d)
    perm = tuple(draw(st.permutations(dims)))
    return e.to_expr().transpose(*perm), lambda V: f(V).transpose(PT, *perm)


def _tail(draw, U: Universe, e, f, steps: int):
    """Unary operations that change coordinates (selections, renames) or add private dimensions."""
    for _ in range(steps):
        e = e.to_expr()
        dims = e.dims
        op = draw(st.sampled_from(["sel", "sel_list", "isel_list", "isel_bool", "isel_int", "take", "rename",
                                   "expand", "sum", "data", "where"]))
        if op == "expand":
            name = f"q{len(dims)}"
            if name in dims:
                continue
            # the oracle's new dimension gets the labels 0, 1 too (a label-less xarray dimension would
            # read a later sel by position, not by label)
            e, f = e.expand_dims(**{name: 2}), (lambda V, f=f, name=name: f(V).expand_dims({name: [0, 1]}))
            continue
        if not dims:
            continue
        d = draw(st.sampled_from(dims))
        n, labels = len(e.coords[d]), e.coords[d]
        if n == 0 or (op.startswith("sel") and np.unique(labels).size != n):  # label lookup needs unique labels
            continue
        if op == "sel":
            lab = labels[draw(st.integers(0, n - 1))]
            e, f = e.sel(**{d: lab}), (lambda V, f=f, d=d, lab=lab: f(V).sel({d: lab}))
        elif op == "sel_list":
            pick = labels[list(draw(st.permutations(range(n))))[: draw(st.integers(1, n))]]
            e, f = e.sel(**{d: list(pick)}), (lambda V, f=f, d=d, pick=pick: f(V).sel({d: list(pick)}))
        elif op == "isel_list":  # repeated positions: one id twice along d
            idx = np.array(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4)))
            e, f = e.isel(**{d: idx}), (lambda V, f=f, d=d, idx=idx: f(V).isel({d: idx}))
        elif op == "isel_bool":
            m = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
            e, f = e.isel(**{d: m}), (lambda V, f=f, d=d, m=m: f(V).isel({d: np.flatnonzero(m)}))
        elif op == "isel_int":
            k = draw(st.integers(0, n - 1))
            e, f = e.isel(**{d: k}), (lambda V, f=f, d=d, k=k: f(V).isel({d: k}))
        elif op == "take":
            idx = np.array(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3)))
            new = f"t{len(dims)}"
            if new in dims:
                continue
            nc = np.arange(idx.size) * 7
            e = e.take(d, idx, new, nc)

            def f(V, f=f, d=d, idx=idx, new=new, nc=nc):
                return f(V).isel({d: idx}).rename({d: new}).assign_coords({new: nc})

        elif op == "rename":
            new = f"r{len(dims)}"
            if new in dims:
                continue
            e, f = e.rename(**{d: new}), (lambda V, f=f, d=d, new=new: f(V).rename({d: new}))
        elif op == "sum":
            e, f = e.sum(d), (lambda V, f=f, d=d: f(V).sum(d))
        elif op == "data":  # data over the current dimensions, unlabeled: matched by name and position
            sub = _subset(draw, dims, 1)
            D = _data(draw, sub, dict(zip(dims, e.shape, strict=True)), None)
            e, f = e * D, (lambda V, f=f, D=D: f(V) * D)
        else:
            sub = _subset(draw, dims, 1)
            Mk = _data(draw, sub, dict(zip(dims, e.shape, strict=True)), None, st.booleans()).astype(bool)
            e, f = e.where(Mk), (lambda V, f=f, Mk=Mk: f(V).where(Mk, 0.0))
    return e.to_expr(), f


@st.composite
def random_cases(draw):
    U = draw(universes())
    exprs = []
    for _ in range(draw(st.integers(1, 3))):
        e, f = _core(draw, U, draw(st.integers(0, 3)))
        e, f = _tail(draw, U, e, f, draw(st.integers(0, 3)))
        exprs.append((e, f, draw(st.sampled_from(["<=", ">=", "==", "ranged", "rhs_data"]))))
    q1 = _core(draw, U, draw(st.integers(0, 2)))
    q2 = _core(draw, U, draw(st.integers(0, 2)))
    pts = draw(arrays(float, (3, U.model.n_vars), elements=FLOATS))
    return U, exprs, q1, q2, pts, draw(SMALL)


def _oracle(U: Universe, f, X: np.ndarray, dims: tuple[str, ...]) -> np.ndarray:
    """The oracle on every row of ``X``, as an array (_pt, *dims)."""
    out = f(U.oracle_values(X))
    if not isinstance(out, xr.DataArray):
        out = xr.DataArray(np.broadcast_to(out, (X.shape[0],)), dims=(PT,))
    out = out.broadcast_like(xr.DataArray(np.zeros(X.shape[0]), dims=(PT,)))
    assert set(out.dims) == {PT, *dims}
    return out.transpose(PT, *dims).values


def _violation_from_matrix(sf, block, x):
    """Row violations of one family computed from the standard form (A x against the row bounds)."""
    rows = block.index.ravel()
    ax = sf.A[rows] @ x
    return (np.maximum(sf.row_lower[rows] - ax, 0) + np.maximum(ax - sf.row_upper[rows], 0)).reshape(block.shape)


@settings(max_examples=150, deadline=None)
@given(case=random_cases())
def test_random_expressions_compile_to_their_dense_jacobian(case):
    """For random families and random expression trees, every compiled row equals the expression's gradient.

    The oracle (xarray) gives the constant (value at 0) and the Jacobian (value at e_j minus value at 0); the
    compiled rows must match both, the bounds must be the right-hand side minus the constant, rows must hold no
    repeated column, and ``LinExpr.evaluate`` must agree with the oracle at random points.
    """
    U, exprs, _, _, pts, rhs = case
    m, n = U.model, U.model.n_vars
    basis = np.vstack([np.zeros(n), np.eye(n)])
    checks = []
    for k, (e, f, sense) in enumerate(exprs):
        at = _oracle(U, f, np.vstack([basis, pts]), e.dims)
        const, jac, at_pts = at[0], at[1:n + 1] - at[0], at[n + 1:]
        for p, want in zip(pts, at_pts, strict=True):
            np.testing.assert_allclose(e.evaluate(p), want, rtol=1e-9, atol=1e-9 * (1 + np.abs(want).max(initial=0)))
        np.testing.assert_allclose(e.const, const, rtol=1e-12, atol=1e-12)
        if sense == "<=":
            con, lo, up = e <= rhs, -np.inf, rhs - const
        elif sense == ">=":
            con, lo, up = e >= rhs, rhs - const, np.inf
        elif sense == "==":
            con, lo, up = e == rhs, rhs - const, rhs - const
        elif sense == "ranged":
            con, lo, up = Constraint.ranged(rhs - 1.0, e, rhs + 1.0), rhs - 1.0 - const, rhs + 1.0 - const
        else:  # a labeled right-hand side over the expression's own dimensions
            R = xr.DataArray(np.linspace(-1, 1, const.size).reshape(const.shape), dims=e.dims)
            con, lo, up = e <= R, -np.inf, R.values - const
        m.add_constraints(f"c{k}", con)
        checks.append((f"c{k}", jac, np.broadcast_to(lo, const.shape), np.broadcast_to(up, const.shape)))
    sf = m.compile()
    assert sf.A.indices.dtype == np.int32 and sf.A.indptr.dtype == np.int32 and sf.A.data.dtype == np.float64
    assert sf.A.shape == (sum(b.size for b in sf.rows), n)
    dense = sf.A.toarray()
    for name, jac, lo, up in checks:
        block = next(b for b in sf.rows if b.name == name)
        rows = block.index.ravel()
        assert np.all(rows >= 0)  # a comparison keeps every row
        np.testing.assert_allclose(dense[rows], jac.reshape(n, -1).T, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(sf.row_lower[rows], lo.ravel(), rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(sf.row_upper[rows], up.ravel(), rtol=1e-12, atol=1e-9)
    for r in range(sf.n_rows):  # duplicates merged, zeros dropped
        cols = sf.A.indices[sf.A.indptr[r]:sf.A.indptr[r + 1]]
        assert len(np.unique(cols)) == len(cols)
    assert np.all(sf.A.data != 0.0)
    # the families still evaluate to the oracle after compile (dense ones now view the CSR arrays), and
    # their violations are the matrix's
    for (e, f, _), (name, jac, _, _) in zip(exprs, checks, strict=True):
        con, block = m.constraints[name], next(b for b in sf.rows if b.name == name)
        scale = 1 + np.abs(jac).max(initial=0)
        for p in pts:
            want = _oracle(U, f, p[None, :], e.dims)[0] - e.const
            np.testing.assert_allclose(con.expr.evaluate(p), want, rtol=1e-9,
                                       atol=1e-9 * (1 + np.abs(want).max(initial=0)))
            np.testing.assert_allclose(con.violation(p), _violation_from_matrix(sf, block, p), rtol=1e-9,
                                       atol=1e-9 * scale * (1 + np.abs(p).max()))
    # the columns: bounds (broadcast by name or position), kinds, binaries clipped to [0, 1]
    for name, _ in U.fams:
        fam = m.variables[name]
        lo_want, up_want, integer = U.expected[name]
        sl = slice(fam.offset, fam.offset + fam.size)
        np.testing.assert_array_equal(sf.col_lower[sl], lo_want.ravel())
        np.testing.assert_array_equal(sf.col_upper[sl], up_want.ravel())
        assert np.all(sf.integrality[sl] == integer)


@settings(max_examples=100, deadline=None)
@given(case=random_cases())
def test_random_objectives_compile_to_c_q_c0(case):
    """``sum(e1) + sum(e1 * e2 * D)`` compiles to the c, Q (symmetric) and c0 computed from the oracle's gradients."""
    U, _, (e1, f1), (e2, f2), pts, s = case
    m, n = U.model, U.model.n_vars
    D = xr.DataArray(np.linspace(0.5, 2.0, U.sizes["i"]), dims=("i",), coords={"i": U.coords["i"]})
    m.add_objective(e1, "lin")
    m.add_objective((e1 * e2) * D, "quad")
    m.add_objective(s, "offset")
    sf = m.compile()
    basis = np.vstack([np.zeros(n), np.eye(n)])
    V = U.oracle_values(basis)
    o1, o2 = f1(V), f2(V)
    o1 = o1 if isinstance(o1, xr.DataArray) else xr.DataArray(np.full(n + 1, o1), dims=(PT,))
    o2 = o2 if isinstance(o2, xr.DataArray) else xr.DataArray(np.full(n + 1, o2), dims=(PT,))
    a0, b0 = o1.isel({PT: 0}), o2.isel({PT: 0})
    ga = (o1.isel({PT: slice(1, None)}) - a0).rename({PT: "col"})
    gb = (o2.isel({PT: slice(1, None)}) - b0).rename({PT: "row"})
    # (a0 + ga x)(b0 + gb x) D summed: Hessian ga gb' + gb ga', gradient ga b0 + gb a0, constant a0 b0
    P = (ga * gb * D).transpose("row", "col", ...).values.reshape(n, n, -1).sum(-1)
    Q_want = P + P.T
    c_want = (ga.sum([d for d in ga.dims if d != "col"]).values
              + (ga * b0 * D).sum([d for d in (ga * b0 * D).dims if d != "col"]).values
              + (gb * a0 * D).sum([d for d in (gb * a0 * D).dims if d != "row"]).values)
    c0_want = float(a0.sum()) + float((a0 * b0 * D).sum()) + s
    Q = np.zeros((n, n)) if sf.Q is None else sf.Q.toarray()
    scale = 1 + np.abs(Q_want).max(initial=0)
    np.testing.assert_allclose(Q, Q_want, rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(Q, Q.T)
    np.testing.assert_allclose(sf.c, c_want, rtol=1e-9, atol=1e-9 * (1 + np.abs(c_want).max(initial=0)))
    assert sf.c0 == pytest.approx(c0_want, rel=1e-9, abs=1e-9)
    # both sides carry roundoff (a product that cancels, e.g. (0.1 v + 0.2 v - 0.3 v) w, may leave 1e-17)
    assert sf.is_quadratic == (sf.Q is not None and sf.Q.nnz > 0)
    assert bool(np.any(np.abs(Q) > 1e-12 * scale)) == bool(np.any(np.abs(Q_want) > 1e-12 * scale))
    for p in pts:  # and the value: c·x + ½ x'Qx + c0 against the oracle at random points
        Vp = U.oracle_values(p[None, :])
        val = xr.DataArray(f1(Vp)).sum() + (xr.DataArray(f1(Vp)) * xr.DataArray(f2(Vp)) * D).sum() + s
        assert sf.objective(p) == pytest.approx(float(val), rel=1e-9, abs=1e-7 * scale)
        assert m.objective_value(p) == pytest.approx(float(val), rel=1e-9, abs=1e-7 * scale)


def test_names_follow_family_and_positions_with_dropped_rows():
    """``col_names``/``row_names``: ``family_<pos>_<pos>`` in C order (positions, not labels, which may hold any
    character); rows dropped by ``Constraint.where`` have no name; a dimensionless family is just its name."""
    m = Model("names")
    w = m.add_variables("w", ("node", "feature"), {"node": ["a b", "c"], "feature": ["x:1", "y", "z"]})
    s = m.add_variables("s", (), {})
    keep = np.array([[True, False, True], [False, True, True]])
    m.add_constraints("cap", (w <= 1).where(xr.DataArray(keep, dims=("node", "feature"))))
    m.add_constraints("tot", w.sum("feature") + s >= 0)
    sf = m.compile()
    assert sf.col_names().tolist() == [f"w_{i}_{j}" for i in range(2) for j in range(3)] + ["s"]
    kept = [f"cap_{i}_{j}" for i in range(2) for j in range(3) if keep[i, j]]
    assert sf.row_names().tolist() == kept + ["tot_0", "tot_1"]
    cap = next(b for b in sf.rows if b.name == "cap")
    np.testing.assert_array_equal(cap.index >= 0, keep)
    assert sf.integrality.dtype == np.int8


def test_duplicate_terms_are_merged_and_cancelled_terms_vanish():
    m = Model("dup")
    x = m.add_variables("x", ("i",), {"i": 3})
    e = x + x * 2.0 - x.isel(i=[0, 0, 1]).sum("i").expand_dims(i=3).sum("i") * 0.0 + x.isel(i=[2, 2, 2]).sum("i")
    m.add_constraints("r", e - x * 3.0 <= 0)  # x_i (1 + 2 - 3) + 3 x_2: only the x_2 terms survive
    sf = m.compile()
    np.testing.assert_array_equal(sf.A.toarray(), [[0, 0, 3], [0, 0, 3], [0, 0, 3]])
    assert sf.nnz == 3 and sf.A.indices.dtype == np.int32


def test_dataarray_on_the_left_acts_like_on_the_right() -> None:
    """``D * x``, ``D + x``, ``D - x`` and ``D <= x`` with a DataArray on the left match by dimension name, as on
    the right (xarray's operators defer to our expressions: ``ir.left_operands``); quadratic and nonlinear
    expressions too; DataArray arithmetic among arrays is xarray's as before."""
    m = Model("left")
    x = m.add_variables("x", ("a", "b"), {"a": 2, "b": 3})
    D = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("a", "b"))
    Dt = D.transpose("b", "a")  # other order: matched by name, not position
    point = np.arange(6.0) + 1
    for left in (D, Dt):
        np.testing.assert_allclose((left * x).evaluate(point), (x * D).evaluate(point))
        np.testing.assert_allclose((left + x).evaluate(point), (x + D).evaluate(point))
        np.testing.assert_allclose((left - x).evaluate(point), (-x + D).evaluate(point))
    np.testing.assert_allclose((D * x.sum("b")).evaluate(point), (x.sum("b") * D).evaluate(point))
    mirrored, plain = D <= x, x >= D
    assert isinstance(mirrored, Constraint)
    np.testing.assert_array_equal(mirrored.lower, plain.lower)
    np.testing.assert_array_equal(mirrored.upper, plain.upper)
    assert isinstance(D == x, Constraint) and isinstance(D >= x, Constraint)
    q = x * x
    np.testing.assert_allclose((D * q).evaluate(point), (q * D).evaluate(point))
    nl = logistic(x * 1.0)
    np.testing.assert_allclose((D * nl).evaluate(point), (nl * D).evaluate(point))
    np.testing.assert_allclose((D / nl).evaluate(point), D.values / (0.5 * (1 + np.tanh(0.5 * point.reshape(2, 3)))))
    xr.testing.assert_equal(D * Dt, xr.DataArray(np.arange(6.0).reshape(2, 3) ** 2, dims=("a", "b")))
    assert bool((D == D).all()) and (D * 2.0).dims == ("a", "b")
    wrapped = xr.DataArray.__mul__
    defer_left_dataarrays()  # idempotent: the wrapped operator is not wrapped again
    assert xr.DataArray.__mul__ is wrapped and xr.DataArray.__mul__.defers_to_treeopt


def test_family_where_and_transpose_like_an_expression():
    m = Model("fam")
    x = m.add_variables("x", ("a", "b"), {"a": 2, "b": 3})
    mask = xr.DataArray([[True, False, True], [False, True, False]], dims=("a", "b"))
    point = np.arange(6.0) + 1
    np.testing.assert_allclose(x.where(mask).evaluate(point), np.where(mask.values, point.reshape(2, 3), 0.0))
    np.testing.assert_allclose(x.transpose("b", "a").evaluate(point), point.reshape(2, 3).T)


def test_sel_of_a_repeated_label_says_so():
    m = Model("rep")
    x = m.add_variables("x", ("a",), {"a": ["p", "q"]})
    with pytest.raises(ModelError, match=r"(?i)unique|more than once|repeated|ambiguous"):
        x.isel(a=[0, 0, 1]).sel(a="p")


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.integers(1, 3), st.booleans(), st.data())
def test_affine_equals_the_chained_contraction(n: int, p: int, k: int, with_b: bool, data: st.DataObject) -> None:
    """``affine(w, X, dim, b)`` (broadcast views, the floor's layout) is ``(w.dot(X) + b)`` transposed:
    same value at random points, same compiled rows, and id properties that hold."""
    m = Model("aff")
    w = m.add_variables("w", ("node", "feature"), {"node": k, "feature": p})
    b = m.add_variables("b", ("node",), {"node": k})
    X = xr.DataArray(data.draw(arrays(float, (n, p), elements=st.floats(-5, 5))), dims=("sample", "feature"))
    fast = affine(w, X, "feature", b if with_b else None)
    slow = w.dot(X, "feature") + b if with_b else w.dot(X, "feature")
    slow = slow.transpose("sample", "node")
    assert fast.dims == slow.dims == ("sample", "node")
    for _ in range(3):
        x = data.draw(arrays(float, (m.n_vars,), elements=st.floats(-3, 3)))
        np.testing.assert_allclose(fast.evaluate(x), slow.evaluate(x), rtol=1e-12, atol=1e-12)
    m.add_constraints("fast", fast <= 1.0)
    A = m.compile().A.toarray()
    m2 = Model("aff2")
    w2 = m2.add_variables("w", ("node", "feature"), {"node": k, "feature": p})
    b2 = m2.add_variables("b", ("node",), {"node": k})
    s2 = (w2.dot(X, "feature") + b2 if with_b else w2.dot(X, "feature")).transpose("sample", "node")
    m2.add_constraints("slow", s2 <= 1.0)
    np.testing.assert_allclose(A, m2.compile().A.toarray())
    assert fast.distinct and "sample" in fast.rep and "node" not in fast.rep
    with pytest.raises(ModelError, match="affine"):
        affine(w, X.rename(feature="f"), "feature")


def test_compile_refuses_non_finite_coefficients_made_by_hand():
    """The compiler's backstop: an expression built directly from arrays with NaN/inf is refused."""
    from treeopt_dsl.ir import LinExpr

    for bad in (np.inf, np.nan):
        m = Model("bad")
        x = m.add_variables("x", ("i",), {"i": 2})
        coef = np.array([[1.0], [bad]])
        e = LinExpr(("i",), x.coords, coef, x.ids[:, None], np.zeros(2))
        m.add_constraints("row", e <= 1.0)
        with pytest.raises(ModelError, match="NaN or inf"):
            m.compile()


# ---------------------------------------------------------------------------------------------- sparse data
def test_dot_with_a_mask_makes_terms_only_where_the_mask_is_nonzero():
    """``z.dot(mask)``: each row holds the masked variables (in order), padded with coefficient-0 terms to the
    longest row; a selection of equally long rows drops the padding with ``drop_zero_terms``."""
    m = Model()
    z = m.add_variables("z", ("s", "last"), {"s": 3, "last": 4})
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 0]], dtype=float)
    M = xr.DataArray(mask * np.array([1.0, 2.0, 3.0, 4.0]), dims=("node", "last"), coords={"node": [0, 1, 2, 3]})
    r = z.dot(M, "last")
    assert r.dims == ("s", "node") and r.n_terms == 4
    x = np.random.default_rng(0).normal(size=m.n_vars)
    np.testing.assert_allclose(r.evaluate(x), z.values(x) @ M.values.T)
    assert r.vars[1, 1, :2].tolist() == [z.ids[1, 0], z.ids[1, 1]] and np.all(r.coef[1, 1:, 2:] == 0)
    assert r.distinct and (z.to_expr() * M).sum("last").distinct
    two = r.sel(node=[1, 2]).drop_zero_terms()
    assert two.n_terms == 2 and np.all(two.coef != 0)
    np.testing.assert_allclose(two.evaluate(x), r.sel(node=[1, 2]).evaluate(x))
    one = r.sel(node=[3]).drop_zero_terms()
    assert one.n_terms == 1 and one.vars[:, 0, 0].tolist() == z.ids[:, 0].tolist()
    assert r.drop_zero_terms() is r  # nothing to drop: the same expression


def test_compile_lets_dense_families_view_the_matrix():
    """A family whose every term is a nonzero is written into the CSR arrays as it is; afterwards its terms
    are views of them (the model holds no second copy), with unchanged values."""
    m = Model()
    x = m.add_variables("x", ("i", "j"), {"i": 50, "j": 4})
    D = xr.DataArray(np.arange(1.0, 201.0).reshape(50, 4), dims=("i", "j"))
    c = m.add_constraints("rows", (x * D).sum("j") <= 1.0)
    gappy = m.add_constraints("gappy", x.where(xr.DataArray(np.arange(4) % 2 == 0, dims=("j",))).sum("j") >= 0)
    pt = np.random.default_rng(1).normal(size=m.n_vars)
    before = c.expr.evaluate(pt), gappy.expr.evaluate(pt)
    sf = m.compile()
    assert np.shares_memory(c.expr.coef, sf.A.data) and np.shares_memory(c.expr.vars, sf.A.indices)
    assert not np.shares_memory(gappy.expr.coef, sf.A.data)  # padded rows were gathered: left as they were
    np.testing.assert_allclose(c.expr.evaluate(pt), before[0])
    np.testing.assert_allclose(gappy.expr.evaluate(pt), before[1])
    np.testing.assert_array_equal(m.compile().A.toarray(), sf.A.toarray())  # compiling again: the same matrix


def test_labeled_data_with_other_labels_is_refused():
    """A DataArray labelling a shared dimension differently is an error, not a silent match by position."""
    m = Model()
    x = m.add_variables("x", ("node",), {"node": [0, 1, 2]})
    ok = x * xr.DataArray([1.0, 2.0, 3.0], dims=("node",), coords={"node": [0, 1, 2]})
    assert ok.coef[:, 0].tolist() == [1.0, 2.0, 3.0]
    assert (x * xr.DataArray([1.0, 2.0, 3.0], dims=("node",))).coef[:, 0].tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ModelError, match="labeled"):
        x * xr.DataArray([1.0, 2.0, 3.0], dims=("node",), coords={"node": [2, 1, 0]})
