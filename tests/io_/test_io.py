"""LP/MPS writers: every file read back by HiGHS (and SCIP) gives the direct solve's optimum."""

from __future__ import annotations

import gzip
import re

import highspy
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treeopt_dsl import Dataset
from treeopt_dsl.backends import SolveOptions, get_backend
from treeopt_dsl.errors import CapabilityError, ModelError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.io import lp, mps, write_model
from treeopt_dsl.io._text import names, safe_names
from treeopt_dsl.ir import Model, StandardForm

FORMATS = [".lp", ".mps", ".mps.gz", ".lp.gz"]


def read_and_solve(path) -> tuple[highspy.Highs, float]:
    h = highspy.Highs()
    h.silent()
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk, f"HiGHS could not read {path}"
    h.setOptionValue("mip_rel_gap", 0.0)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal, h.modelStatusToString(h.getModelStatus())
    return h, h.getInfo().objective_function_value


def read_arrays(path, sf: StandardForm) -> dict[str, np.ndarray]:
    """HiGHS' reading of ``path`` as arrays in ``sf``'s column order (the LP format orders columns by
    first appearance, so they are matched by name)."""
    h = highspy.Highs()
    h.silent()
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    lp = h.getModel().lp_
    mat = lp.a_matrix_
    shape = (lp.num_row_, lp.num_col_)
    if mat.format_ == highspy.MatrixFormat.kColwise:
        A = sp.csc_matrix((mat.value_, mat.index_, mat.start_), shape=shape)
    else:
        A = sp.csr_matrix((mat.value_, mat.index_, mat.start_), shape=shape)
    order = {name: j for j, name in enumerate(lp.col_names_)}
    cn, _ = names(sf, True)
    perm = np.array([order[n] for n in cn.tolist()])
    integrality = np.array([int(v) for v in lp.integrality_] or [0] * lp.num_col_)
    return {"A": A.tocsc()[:, perm].tocsr(), "c": np.array(lp.col_cost_)[perm], "offset": lp.offset_,
            "col_lower": np.array(lp.col_lower_)[perm], "col_upper": np.array(lp.col_upper_)[perm],
            "row_lower": np.array(lp.row_lower_), "row_upper": np.array(lp.row_upper_),
            "integrality": integrality[perm], "row_names": list(lp.row_names_)}


def direct(sf: StandardForm) -> float:
    raw = get_backend("highs").solve(sf, "highs", SolveOptions(gap=0.0))
    assert raw.status.value == "optimal"
    return float(raw.objective)


def every_bound_kind() -> StandardForm:
    """min x0 - 2 x1 + x2 + 3 x3 - x4 + 7 (constant) over all bound kinds, ranged/equality/free-sided rows."""
    A = sp.csr_matrix(np.array([
        [1.0, 1.0, 0.0, 0.0, 0.0],   # ranged  -1 <= x0 + x1 <= 4
        [0.0, 1.0, -1.0, 0.0, 0.0],  # <=      x1 - x2 <= 2
        [1.0, 0.0, 0.0, 1.0, 1.0],   # >=      x0 + x3 + x4 >= -3
        [0.0, 0.0, 1.0, 1.0, 0.0],   # ==      x2 + x3 == 1.5
    ]))
    return StandardForm(
        A, np.array([-1.0, -np.inf, -3.0, 1.5]), np.array([4.0, 2.0, np.inf, 1.5]),
        np.array([-np.inf, 0.0, -2.0, -1.0, 2.5]),   # free, default, lower, lower, fixed
        np.array([np.inf, 3.0, np.inf, 10.0, 2.5]),  #                upper-bounded ...
        np.zeros(5, np.int8), np.array([1.0, -2.0, 1.0, 3.0, -1.0]), 7.0)


@pytest.mark.parametrize("suffix", FORMATS)
def test_lp_with_every_bound_kind_round_trips(tmp_path, suffix):
    sf = every_bound_kind()
    # x0 is free with cost +1, bounded below only through row 0 (x0 >= -1 - x1) and row 2
    path = write_model(sf, tmp_path / f"m{suffix}")
    h, obj = read_and_solve(path)
    assert obj == pytest.approx(direct(sf), abs=1e-9)
    assert h.getNumRow() == (4 if ".mps" in suffix else 5)  # LP writes the ranged row twice


@pytest.mark.parametrize("suffix", FORMATS[:2])
def test_milp_with_integrality_gap_round_trips(tmp_path, suffix):
    # max x + y s.t. 2x + 2y <= 3, x,y integer in [0, 5]: LP optimum 1.5, MILP optimum 1
    sf = StandardForm(sp.csr_matrix(np.array([[2.0, 2.0]])), np.array([-np.inf]), np.array([3.0]),
                      np.zeros(2), np.array([5.0, np.inf]), np.ones(2, np.int8), np.array([-1.0, -1.0]))
    _, obj = read_and_solve(write_model(sf, tmp_path / f"m{suffix}"))
    assert obj == pytest.approx(-1.0)
    assert obj == pytest.approx(direct(sf))


@pytest.mark.parametrize("suffix", FORMATS[:2])
def test_convex_qp_round_trips(tmp_path, suffix):
    m = Model("qp")
    x = m.add_variables("x", ("i",), {"i": 3}, lower=-5.0, upper=5.0)
    target = np.array([1.0, -2.0, 0.5])
    m.add_objective((x * x) * 2.0, "quad")             # 2 ||x||^2
    m.add_objective(x * (-4.0 * target), "lin")         # -4 t·x  -> optimum x = t, value -2||t||^2
    m.add_objective(x.sum() * x.sum() * 0.5, "cross")    # couples the entries (off-diagonal Q)
    m.add_constraints("cap", x.sum() <= 10.0)
    sf = m.compile()
    assert sf.problem_class == "QP"
    _, obj = read_and_solve(write_model(sf, tmp_path / f"q{suffix}"))
    assert obj == pytest.approx(direct(sf), rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_margot_file_holds_the_hessian(tmp_path, suffix):
    """MARGOT is an MIQP (HiGHS cannot solve it): check that HiGHS reads back our Q exactly."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    d = Dataset.from_arrays(X, np.where(X[:, 0] > 0, 1, -1))
    sf = get_formulation("margot", depth=1).build(d).compile()
    assert sf.problem_class == "MIQP"
    path = write_model(sf, tmp_path / f"margot{suffix}")
    assert ("QUADOBJ" if suffix == ".mps" else "] / 2") in path.read_text()
    h = highspy.Highs()
    h.silent()
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    model = h.getModel()
    hess = model.hessian_
    H = sp.csc_matrix((hess.value_, hess.index_, hess.start_), shape=(hess.dim_, hess.dim_)).toarray()
    full = np.tril(H) + np.tril(H, -1).T  # HiGHS keeps the lower triangle
    order = {n: j for j, n in enumerate(model.lp_.col_names_)}
    perm = np.array([order[n] for n in names(sf, True)[0].tolist()])
    np.testing.assert_allclose(full[np.ix_(perm, perm)], sf.Q.toarray(), rtol=1e-15, atol=0)
    np.testing.assert_array_equal(np.array([int(v) for v in model.lp_.integrality_])[perm], sf.integrality)


@pytest.mark.parametrize("name", ["olct", "oct"])
@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_tree_formulations_round_trip(tmp_path, name, suffix):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 2))
    d = Dataset.from_arrays(X, np.where(X[:, 0] + 0.4 * rng.normal(size=20) > 0, 1, -1))
    built = get_formulation(name, depth=1).build(d)
    res = built.solve(gap=0.0, time_limit=60)
    assert res.status.value == "optimal"
    h, obj = read_and_solve(write_model(built, tmp_path / f"{name}{suffix}"))
    assert obj == pytest.approx(res.objective, rel=1e-6, abs=1e-7)
    assert h.getNumCol() == built.compile().n_cols


def test_awkward_feature_names_stay_valid_and_unique(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 3))
    d = Dataset.from_arrays(X, np.where(X[:, 0] > 0, 1, -1), feature_names=["blood pressure", "a-b.c", "ünï"])
    built = get_formulation("olct", depth=1).build(d)
    for suffix in (".lp", ".mps"):
        path = write_model(built, tmp_path / f"n{suffix}")
        text = path.read_text(encoding="ascii")  # every name is ASCII
        assert "blood" not in text
        h, _ = read_and_solve(path)
        names = [h.getColName(j)[1] for j in range(h.getNumCol())]
        assert len(set(names)) == len(names) == built.compile().n_cols


def test_names_false_writes_generic_names(tmp_path):
    sf = every_bound_kind()
    text = write_model(sf, tmp_path / "g.lp", names=False).read_text()
    assert " x0" in text and " c0:" in text


def test_gzip_really_compresses(tmp_path):
    path = write_model(every_bound_kind(), tmp_path / "z.mps.gz")
    assert gzip.open(path, "rt").read().startswith("NAME")


def test_bad_suffix_and_bad_object_and_nonlinear(tmp_path):
    with pytest.raises(ModelError, match=r"\.lp, \.mps"):
        write_model(every_bound_kind(), tmp_path / "m.txt")
    with pytest.raises(ModelError, match="cannot write a"):
        write_model(object(), tmp_path / "m.lp")
    with pytest.raises(ModelError, match="cannot write"):
        write_model(every_bound_kind(), tmp_path / "missing-dir" / "m.lp")
    m = Model("nl")
    x = m.add_variables("x", ("i",), {"i": 2}, lower=0.0, upper=1.0)
    from treeopt_dsl.ir.nonlinear import exp, nlsum

    m.add_objective(nlsum(exp(x)), "nl")
    with pytest.raises(CapabilityError, match="nonlinear"):
        write_model(m, tmp_path / "m.mps")


@pytest.mark.solver("scip")
def test_scip_reads_our_files(tmp_path):
    import pyscipopt

    sf = every_bound_kind()
    for suffix in (".lp", ".mps"):
        path = write_model(sf, tmp_path / f"s{suffix}")
        m = pyscipopt.Model()
        m.hideOutput()
        m.readProblem(str(path))
        m.optimize()
        assert m.getStatus() == "optimal"
        assert m.getObjVal() == pytest.approx(direct(sf), abs=1e-7)


@st.composite
def box_lps(draw):
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 5))
    elems = st.floats(-5, 5, allow_nan=False).map(lambda v: round(v, 3))
    A = np.array(draw(st.lists(st.lists(elems, min_size=n, max_size=n), min_size=m, max_size=m)))
    A[np.abs(A) < 0.5] = 0.0
    lo = np.array(draw(st.lists(st.sampled_from([-np.inf, -3.0, 0.0, 1.0]), min_size=n, max_size=n)))
    width = np.array(draw(st.lists(st.sampled_from([0.0, 2.0, 5.0]), min_size=n, max_size=n)))
    lo = np.where(np.isinf(lo), -4.0, lo)  # a box keeps every LP bounded
    up = lo + width
    x0 = lo + width / 2  # rows built around a feasible point
    act = A @ x0
    kind = np.array(draw(st.lists(st.sampled_from(["le", "ge", "eq", "range"]), min_size=m, max_size=m)))
    rl = np.where(np.isin(kind, ["ge", "eq", "range"]), act - np.where(kind == "eq", 0, 1), -np.inf)
    ru = np.where(np.isin(kind, ["le", "eq", "range"]), act + np.where(kind == "eq", 0, 1), np.inf)
    c = np.array(draw(st.lists(elems, min_size=n, max_size=n)))
    integer = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=np.int8)
    integer[(np.floor(up) < np.ceil(lo))] = 0
    lo_i = np.where(integer.astype(bool), np.ceil(lo), lo)
    up_i = np.where(integer.astype(bool), np.floor(up), up)
    c0 = draw(elems)
    return StandardForm(sp.csr_matrix(A), rl, ru, lo_i, up_i, integer, c, c0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sf=box_lps())
def test_random_lps_round_trip(tmp_path, sf):
    ref = get_backend("highs").solve(sf, "highs", SolveOptions(gap=0.0))
    for suffix in (".lp", ".mps"):
        path = write_model(sf, tmp_path / f"r{suffix}")
        h = highspy.Highs()
        h.silent()
        h.setOptionValue("mip_rel_gap", 0.0)
        assert h.readModel(str(path)) == highspy.HighsStatus.kOk
        assert h.getNumCol() == sf.n_cols
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        if ref.status.value == "optimal":
            assert status == "Optimal"
            assert h.getInfo().objective_function_value == pytest.approx(ref.objective, abs=1e-7)
        else:
            assert status != "Optimal"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sf=box_lps(), chunk=st.integers(1, 4))
def test_writers_in_small_pieces_write_the_same_file(monkeypatch, sf, chunk):
    """Both writers make their text a few thousand entries at a time: cut into pieces of 1-4 entries
    (cuts inside and between rows and columns, at empty rows, ranged rows and integer markers), the
    file is byte for byte the one written in one piece."""
    for module, write in ((lp, lp.lp_bytes), (mps, mps.mps_bytes)):
        monkeypatch.setattr(module, "CHUNK", 1 << 30)
        whole = write(sf)
        monkeypatch.setattr(module, "CHUNK", chunk)
        assert write(sf) == whole


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_olct_arrays_read_back_bit_identical(tmp_path, suffix):
    """Not only the optimum: HiGHS reads back exactly our matrix, costs, bounds and integrality."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 3)) * np.array([1e-3, 1.0, 1e4])  # values of every magnitude
    d = Dataset.from_arrays(X, np.where(rng.random(20) < 0.5, 1, -1))
    sf = get_formulation("olct", depth=1).build(d).compile()
    got = read_arrays(write_model(sf, tmp_path / f"olct{suffix}"), sf)
    np.testing.assert_array_equal(got["c"], sf.c)
    assert got["offset"] == sf.c0
    np.testing.assert_array_equal(got["col_lower"], sf.col_lower)
    np.testing.assert_array_equal(got["col_upper"], sf.col_upper)
    np.testing.assert_array_equal(got["integrality"], sf.integrality)
    if suffix == ".mps":  # the LP file splits ranged rows; OLCT has none, so the rows match one to one
        A = got["A"]
    else:
        assert not np.any(np.isfinite(sf.row_lower) & np.isfinite(sf.row_upper) & (sf.row_lower != sf.row_upper))
        order = {n: i for i, n in enumerate(got["row_names"])}
        A = got["A"][[order[n] for n in names(sf, True)[1].tolist()]]
    assert (A != sf.A).nnz == 0  # exact equality of every coefficient (shortest repr round-trips)
    if suffix == ".mps":
        np.testing.assert_array_equal(got["row_lower"], sf.row_lower)
        np.testing.assert_array_equal(got["row_upper"], sf.row_upper)


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_alternating_integer_columns_and_unused_columns(tmp_path, suffix):
    """Integer runs that start at column 0, alternate and end at the last column get their MARKERs
    right; a column that no row and no cost mentions still exists in the file."""
    integrality = np.array([1, 0, 1, 1, 0, 0, 1], np.int8)
    A = sp.csr_matrix(np.array([[1.0, 2.0, 0.0, -1.0, 0.0, 0.0, 3.0],
                                [0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]]))  # column 4 and 5: no entry
    c = np.array([-1.0, 0.5, -2.0, 0.0, 0.0, 1.0, -1.0])  # column 4: no cost either
    sf = StandardForm(A, np.array([-np.inf, 0.5]), np.array([7.5, 3.0]), np.array([0, 0, -2, -3, 0, 1.5, 0.0]),
                      np.array([4, 2.5, 2, np.inf, np.inf, 4, 1.0]), integrality, c, -1.25)
    path = write_model(sf, tmp_path / f"alt{suffix}")
    got = read_arrays(path, sf)
    np.testing.assert_array_equal(got["integrality"], integrality)
    np.testing.assert_array_equal(got["col_lower"], sf.col_lower)
    np.testing.assert_array_equal(got["col_upper"], sf.col_upper)
    _, obj = read_and_solve(path)
    assert obj == pytest.approx(direct(sf), abs=1e-9)
    if suffix == ".mps":
        text = path.read_text()
        assert text.count("'INTORG'") == 3 and text.count("'INTEND'") == 3


def test_safe_names_is_vectorized_sanitizing():
    raw = np.array(["w_0", "a-b", "a.b", "a_b", "ünï", "1st", "", None, "end", "inflow", "NaN_3", "x" * 300,
                    "Free", "w_0"], dtype=object)
    out = safe_names(raw, "x")
    assert len(set(out.tolist())) == out.size  # unique
    assert all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", s) and len(s) <= 120 for s in out.tolist())
    assert out[0] == "w_0" and out[3] == "a_b"  # valid names stay as they are (first occurrence wins)
    assert out[-1] != "w_0"
    assert out[1] != out[2] and out[1].startswith("a_b") and out[2].startswith("a_b")
    for i in (8, 9, 10, 12):  # keywords and number-like prefixes get the prefix
        assert out[i].startswith("x_"), out[i]


def awkward_model() -> Model:
    """Families named like LP keywords, number words, unicode; a row named like the objective."""
    m = Model("ünï model")
    fams = [m.add_variables(name, ("i",), {"i": ["a b", "c-d"]}, lower=-1.0, upper=2.0)
            for name in ("end", "inflow", "_private", "ünï", "x__n_", "Größe", "free", "st")]
    e = m.add_variables("e", (), {}, lower=-1.0, upper=1.0, kind="integer")
    for k, f in enumerate(fams):
        m.add_objective(f * float(k + 1) - f.sum() * 0.5, f"o{k}")
        m.add_constraints(f"bal{k}", f.sum() <= 1.5)
    m.add_objective(e * 0.5, "oe")
    m.add_constraints("obj", fams[0].sum() + fams[1].sum() + e >= -1.0)
    return m


def test_awkward_family_names_round_trip_through_highs_and_scip(tmp_path):
    import pyscipopt

    sf = awkward_model().compile()
    ref = direct(sf)
    for suffix in (".lp", ".mps"):
        path = write_model(sf, tmp_path / f"awk{suffix}")
        h, obj = read_and_solve(path)
        assert obj == pytest.approx(ref, abs=1e-9)
        col_names = [h.getColName(j)[1] for j in range(h.getNumCol())]
        assert len(set(col_names)) == sf.n_cols
        assert all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", s) for s in col_names)
        s = pyscipopt.Model()
        s.hideOutput()
        s.readProblem(str(path))
        s.optimize()
        assert s.getObjVal() == pytest.approx(ref, abs=1e-7)


@pytest.mark.solver("gurobi")
def test_gurobi_reads_our_files(tmp_path):
    """Gurobi reads both formats with our names; the objective constant only from MPS (see lp.py)."""
    import gurobipy as gp

    for sf in (awkward_model().compile(), every_bound_kind()):
        ref = direct(sf)
        suffixes = (".lp", ".mps") if sf.c0 == 0 else (".mps",)
        for suffix in suffixes:
            path = write_model(sf, tmp_path / f"g{suffix}")
            with gp.Env(params={"OutputFlag": 0}) as env, gp.read(str(path), env=env) as m:
                m.optimize()
                assert m.Status == gp.GRB.OPTIMAL
                assert m.ObjVal == pytest.approx(ref, abs=1e-7)
                ranged = np.isfinite(sf.row_lower) & np.isfinite(sf.row_upper) & (sf.row_lower < sf.row_upper)
                assert m.NumVars == sf.n_cols + int(ranged.sum())  # Gurobi adds a range variable per ranged row


@pytest.mark.solver("cbc")
def test_cbc_reads_our_files(tmp_path):
    """CBC (python-mip) reads both formats with our names (it drops objective constants: c0 = 0 here)."""
    import mip

    sf = awkward_model().compile()
    assert sf.c0 == 0
    ref = direct(sf)
    for suffix in (".lp", ".mps"):
        m = mip.Model(solver_name="CBC")
        m.verbose = 0
        m.read(str(write_model(sf, tmp_path / f"cbc{suffix}")))
        assert m.optimize() == mip.OptimizationStatus.OPTIMAL
        assert m.objective_value == pytest.approx(ref, abs=1e-7)
        assert m.num_cols == sf.n_cols


def test_nan_coefficients_and_empty_model_are_refused(tmp_path):
    sf = every_bound_kind()
    sf.c = sf.c.copy()
    sf.c[0] = np.nan
    with pytest.raises(ModelError, match="NaN or inf"):
        write_model(sf, tmp_path / "nan.mps")
    empty = StandardForm(sp.csr_matrix((0, 0)), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0),
                         np.zeros(0, np.int8), np.zeros(0))
    with pytest.raises(ModelError, match="no variables"):
        write_model(empty, tmp_path / "empty.lp")
