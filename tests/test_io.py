"""LP/MPS writers: every file read back by HiGHS (and SCIP) gives the direct solve's optimum."""

from __future__ import annotations

import gzip

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
from treeopt_dsl.io import write_model
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


def test_margot_mps_holds_the_hessian(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    d = Dataset.from_arrays(X, np.where(X[:, 0] > 0, 1, -1))
    sf = get_formulation("margot", depth=1).build(d).compile()
    assert sf.problem_class == "MIQP"
    path = write_model(sf, tmp_path / "margot.mps")
    assert "QUADOBJ" in path.read_text()
    h = highspy.Highs()
    h.silent()
    h.readModel(str(path))
    hess = h.getModel().hessian_
    H = sp.csc_matrix((hess.value_, hess.index_, hess.start_), shape=(hess.dim_, hess.dim_)).toarray()
    full = np.tril(H) + np.tril(H, -1).T  # HiGHS keeps the lower triangle
    np.testing.assert_allclose(full, sf.Q.toarray())


@pytest.mark.parametrize("name", ["olct", "oct"])
@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_tree_formulations_round_trip(tmp_path, name, suffix):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(16, 2))
    d = Dataset.from_arrays(X, np.where(X[:, 0] + 0.4 * rng.normal(size=16) > 0, 1, -1))
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
    pyscipopt = pytest.importorskip("pyscipopt", reason="SCIP is installed by the [scip] extra")
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
    return StandardForm(sp.csr_matrix(A), rl, ru, lo_i, up_i, np.zeros(n, np.int8), c, c0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sf=box_lps())
def test_random_lps_round_trip(tmp_path, sf):
    ref = get_backend("highs").solve(sf, "highs", SolveOptions())
    for suffix in (".lp", ".mps"):
        path = write_model(sf, tmp_path / f"r{suffix}")
        h = highspy.Highs()
        h.silent()
        h.readModel(str(path))
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        if ref.status.value == "optimal":
            assert status == "Optimal"
            assert h.getInfo().objective_function_value == pytest.approx(ref.objective, abs=1e-7)
        else:
            assert status != "Optimal"
