"""Native models for researchers: each export solves to the DSL's optimum and maps back by name."""

from __future__ import annotations

import numpy as np
import pytest

from treeopt_dsl import export
from treeopt_dsl.datasets import load
from treeopt_dsl.formulations import get_formulation


@pytest.fixture(scope="module")
def built_and_ref():
    built = get_formulation("oct", depth=1).build(load("breast-cancer").subsample(16, seed=2))
    ref = built.solve(time_limit=60, gap=0.0)
    assert ref.status.value == "optimal"
    return built, ref


def check(built, ref, values: dict) -> None:
    x = export.values_from_names(built, values)
    assert np.all(np.isfinite(x))
    sf = built.compile()
    assert sf.objective(x) == pytest.approx(ref.objective, abs=1e-6)
    tree = built.decode(x)
    assert tree.predict(load("breast-cancer").X[:5]).shape == (5,)


def test_to_highs(built_and_ref):
    built, ref = built_and_ref
    h = export.to_highs(built)
    h.silent()
    tol = built.ctx.numerics.solver_tolerances()  # eps of the model versus the solver's tolerances
    h.setOptionValue("primal_feasibility_tolerance", tol["feasibility_tol"])
    h.setOptionValue("mip_feasibility_tolerance", tol["integrality_tol"])
    h.run()
    sol = h.getSolution().col_value
    names = [h.getColName(j)[1] for j in range(h.getNumCol())]
    check(built, ref, dict(zip(names, sol, strict=True)))


@pytest.mark.solver("cbc")
def test_to_mip(built_and_ref):
    built, ref = built_and_ref
    m = export.to_mip(built)
    tol = built.ctx.numerics.solver_tolerances()
    m.infeas_tol, m.integer_tol = tol["feasibility_tol"], tol["integrality_tol"]
    m.optimize()
    assert m.objective_value == pytest.approx(ref.objective, abs=1e-6)  # the constant term is kept
    check(built, ref, {v.name: v.x for v in m.vars})


@pytest.mark.solver("gurobi")
def test_to_gurobi(built_and_ref):
    built, ref = built_and_ref
    m = export.to_gurobi(built)
    m.Params.OutputFlag = 0
    tol = built.ctx.numerics.solver_tolerances()
    m.Params.FeasibilityTol = max(1e-9, tol["feasibility_tol"])
    m.Params.IntFeasTol = max(1e-9, tol["integrality_tol"])
    m.optimize()
    check(built, ref, {v.VarName: v.X for v in m.getVars()})


def test_to_pyomo_and_to_linopy_keep_family_names(built_and_ref):
    built, _ = built_and_ref
    pm = export.to_pyomo(built)
    assert hasattr(pm, "w") and hasattr(pm, "b")
    lm = export.to_linopy(built)
    assert "w" in lm.variables and set(lm.variables["w"].dims) == {"node", "feature"}
