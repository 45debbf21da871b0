"""Every export solves natively to the DSL's optimum and maps back onto the formulation's columns.

OLCT depth 1 on 12 samples is built once and solved by the library's own path (HiGHS, gap 0); each
``to_*`` model is then solved through its library -- with HiGHS wherever the library drives it
(highspy, linopy, pyomo, python-mip), Gurobi for gurobipy -- mapped back with
:func:`treeopt_dsl.export.from_native`, and must give the same objective, both as the library
reports it and as the standard form evaluates the mapped-back point, which must also satisfy every
row and decode into a tree.
"""

from __future__ import annotations

import numpy as np
import pytest

from treeopt_dsl import export
from treeopt_dsl.datasets import load
from treeopt_dsl.errors import ModelError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.result import Status

from .models import empty_row_infeasible


@pytest.fixture(scope="module")
def olct():
    data = load("breast-cancer").subsample(12, seed=3)
    built = get_formulation("olct", depth=1).build(data)
    ref = built.solve(solver="highs", time_limit=60, gap=0.0)
    assert ref.status is Status.OPTIMAL
    built.data_X = data.X  # for the decoded tree's predictions
    return built, ref, built.ctx.numerics.solver_tolerances()


def _check(built, ref, x: np.ndarray, native_objective: float) -> None:
    sf = built.compile()
    assert x.shape == (sf.n_cols,) and np.all(np.isfinite(x))
    assert native_objective == pytest.approx(ref.objective, rel=1e-6, abs=1e-6)
    assert sf.objective(x) == pytest.approx(ref.objective, rel=1e-6, abs=1e-6)
    ax = sf.A @ x
    assert np.all(ax >= sf.row_lower - 1e-5) and np.all(ax <= sf.row_upper + 1e-5)
    ints = sf.integrality.astype(bool)
    assert np.all(np.abs(x[ints] - np.round(x[ints])) <= 1e-5)
    tree = built.decode(x)
    assert tree.predict(built.data_X).shape == (built.data_X.shape[0],)


def test_to_highs(olct) -> None:
    built, ref, tol = olct
    h = export.to_highs(built)
    h.setOptionValue("output_flag", False)
    h.setOptionValue("primal_feasibility_tolerance", tol["feasibility_tol"])
    h.setOptionValue("mip_feasibility_tolerance", tol["integrality_tol"])
    h.setOptionValue("mip_rel_gap", 0.0)
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    _check(built, ref, export.from_native(built, h), h.getInfo().objective_function_value)


def test_to_linopy(olct) -> None:
    built, ref, tol = olct
    m = export.to_linopy(built)
    sf = built.compile()
    assert set(m.variables) == {b.name for b in sf.columns}  # families keep their names
    status, cond = m.solve("highs", output_flag=False, mip_rel_gap=0.0,
                           primal_feasibility_tolerance=tol["feasibility_tol"],
                           mip_feasibility_tolerance=tol["integrality_tol"])
    assert (status, cond) == ("ok", "optimal")
    # linopy's objective leaves the constant out (its solver interfaces reject one)
    _check(built, ref, export.from_native(built, m), float(m.objective.value) + sf.c0)


def test_to_pyomo(olct) -> None:
    import pyomo.environ as pe
    from pyomo.contrib.solver.common.factory import SolverFactory

    built, ref, tol = olct
    m = export.to_pyomo(built)
    sf = built.compile()
    assert {b.name for b in sf.columns} <= {v.name for v in m.component_objects(pe.Var)}
    opt = SolverFactory("highs")  # pyomo.contrib.solver's HiGHS interface
    res = opt.solve(m, rel_gap=0.0, solver_options={"primal_feasibility_tolerance": tol["feasibility_tol"],
                                                     "mip_feasibility_tolerance": tol["integrality_tol"]})
    assert res.termination_condition.name == "convergenceCriteriaSatisfied"
    _check(built, ref, export.from_native(built, m), pe.value(m.objective))


@pytest.mark.solver("highs")
def test_to_mip(olct) -> None:
    from treeopt_dsl.errors import SolverNotAvailable

    built, ref, tol = olct
    if not export.mip_highs_available():
        with pytest.raises(SolverNotAvailable, match="highsbox"):
            export.to_mip(built, solver_name="HIGHS")
        pytest.skip("python-mip 2.0 finds no HiGHS C library here: `pip install highsbox`")
    m = export.to_mip(built, solver_name="HIGHS")
    m.verbose = 0
    m.infeas_tol, m.integer_tol, m.max_mip_gap = tol["feasibility_tol"], tol["integrality_tol"], 0.0
    import mip

    assert m.optimize(max_seconds=60) == mip.OptimizationStatus.OPTIMAL
    _check(built, ref, export.from_native(built, m), m.objective_value)  # the constant term is kept


@pytest.mark.solver("gurobi")
def test_to_gurobi(olct) -> None:
    built, ref, tol = olct
    m = export.to_gurobi(built)
    m.Params.OutputFlag = 0
    m.Params.FeasibilityTol = max(1e-9, tol["feasibility_tol"])
    m.Params.IntFeasTol = max(1e-9, tol["integrality_tol"])
    m.Params.MIPGap = 0.0
    m.optimize()
    assert m.Status == 2  # GRB.OPTIMAL
    _check(built, ref, export.from_native(built, m), m.ObjVal)


def test_names_follow_the_families(olct) -> None:
    """HiGHS, python-mip and Gurobi columns carry ``StandardForm.col_names()``; mapping a name -> value
    dict back puts each value in its column."""
    built, _, _ = olct
    sf = built.compile()
    h = export.to_highs(built)
    names = [h.getColName(j)[1] for j in range(h.getNumCol())]
    assert names == sf.col_names().tolist()  # the formulation's names are valid file names already
    vals = np.arange(sf.n_cols, dtype=float)
    assert np.array_equal(export.values_from_names(built, dict(zip(names, vals, strict=True))), vals)


def test_exports_refuse_a_row_they_cannot_carry() -> None:
    """A term-less row ``0 >= 1`` would vanish from a linopy or pyomo model (both drop term-less rows)
    and leave it wrongly feasible: the export says so instead."""
    sf = empty_row_infeasible().sf
    with pytest.raises(ModelError, match="no terms"):
        export.to_linopy(sf)
    with pytest.raises(ModelError, match="no terms"):
        export.to_pyomo(sf)


def test_from_native_rejects_other_objects(olct) -> None:
    with pytest.raises(ModelError, match="from_native"):
        export.from_native(olct[0], object())
