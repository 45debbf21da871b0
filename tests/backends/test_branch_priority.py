"""Branching priorities (``VarFamily.priority`` -> ``StandardForm.priority`` -> the backends with the feature
``"priority"``): the lattice master of ``ors loss="true"`` branches on its support indicators first (issue 34,
docs/blocks.md "The designs measured"). Each test reads back what the solver holds, so it fails when the priorities
are lost on the way."""

from __future__ import annotations

import re

import numpy as np
import pytest
from brute_force import brute_force_ors_true, installed, risk_data

from treeopt_dsl import Dataset
from treeopt_dsl.blocks import L0
from treeopt_dsl.errors import FormulationError, ModelError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.formulations.risk import SUPPORT_PRIORITY
from treeopt_dsl.ir.model import Model
from treeopt_dsl.ir.standard_form import compile_model


def _lattice_master() -> tuple[object, np.ndarray, np.ndarray]:
    """The ``ors`` lattice master on small data: its standard form, the support columns and the points' columns."""
    X, y = risk_data(0)
    spec = get_formulation("ors", T=2, A="-3..3", loss="true", proof="lcpa", cardinality="at_most")
    built = spec.formulation().build(spec.prepare(Dataset.from_arrays(X, y)))
    sf = compile_model(built.model)
    return sf, built.model.variables["s_used"].ids.ravel(), built.model.variables["s"].ids.ravel()


def test_priorities_compile_per_column_and_default_to_none():
    m = Model("p")
    m.add_variables("u", ("i",), {"i": 3}, kind="binary", priority=7)
    m.add_variables("v", ("i",), {"i": 2}, kind="integer", lower=-2, upper=2)
    sf = compile_model(m)
    assert sf.priority is not None and sf.priority.tolist() == [7, 7, 7, 0, 0]
    plain = Model("q")
    plain.add_variables("v", ("i",), {"i": 2}, kind="integer", lower=-2, upper=2)
    assert compile_model(plain).priority is None  # no family asks: nothing is passed on


@pytest.mark.parametrize("bad", [-1, 1.5, True, "high"])
def test_a_bad_priority_is_refused_naming_it(bad):
    with pytest.raises(ModelError, match=r"priority of 'u'.*integer >= 0"):
        Model("p").add_variables("u", ("i",), {"i": 2}, kind="binary", priority=bad)
    with pytest.raises(FormulationError, match="branch_priority of L0 must be an integer >= 0"):
        L0(of="s", budget=2, branch_priority=bad)


def test_the_lattice_master_puts_its_support_first():
    sf, support, points = _lattice_master()
    assert sf.priority is not None
    assert np.all(sf.priority[support] == SUPPORT_PRIORITY) and np.all(sf.priority[points] == 0)
    assert int(np.count_nonzero(sf.priority)) == support.size  # nothing else (theta, beta) gets one


@pytest.mark.skipif(not installed("gurobi"), reason="gurobi is not installed")
def test_gurobi_holds_the_priorities():
    from treeopt_dsl.backends.gurobi import to_gurobi

    sf, support, points = _lattice_master()
    m = to_gurobi(sf, names=False)
    held = np.array(m.getAttr("BranchPriority", m.getVars()))
    assert np.array_equal(held, sf.priority)
    assert np.all(held[support] == SUPPORT_PRIORITY) and np.all(held[points] == 0)


@pytest.mark.skipif(not installed("scip"), reason="scip is not installed")
def test_scip_offers_only_the_support_as_first_candidates():
    """SCIP has no getter of a priority: a branching rule reads, at the first node whose LP is fractional in both
    families, which candidates SCIP ranks in its top priority class (``npriocands`` of ``getLPBranchCands``)."""
    import pyscipopt

    from treeopt_dsl.backends.scip import ScipBackend

    m = pyscipopt.Model()
    m.hideOutput()
    # max 3 s + 2 a, s integer in [0, 3] with s <= 3 a, a binary, 2 s + 3 a <= 5.5: the LP optimum has both
    # families fractional at the root
    mm = Model("p")
    s = mm.add_variables("s", ("i",), {"i": 2}, kind="integer", lower=0, upper=3)
    a = mm.add_variables("a", ("i",), {"i": 2}, kind="binary", priority=5)
    mm.add_constraints("link", s <= a * 3.0)
    mm.add_constraints("cap", (s * 2.0 + a * 3.0).sum("i") <= 5.5)
    mm.add_objective(s * -3.0 + a * -2.0, "obj")
    sf = compile_model(mm)
    seen: list[tuple[set[str], int]] = []

    class Spy(pyscipopt.Branchrule):
        def branchexeclp(self, allowaddcons: bool) -> dict[str, object]:
            cands, _, _, _, nprio, _ = self.model.getLPBranchCands()
            seen.append(({c.name.removeprefix("t_") for c in cands[:nprio]}, len(cands)))
            return {"result": pyscipopt.SCIP_RESULT.DIDNOTRUN}

    run = type("R", (), {"sf": sf, "options": type("O", (), {"time_limit": None, "warm_start": None})(),
                         "data": {}, "model": None})()
    ScipBackend().load_model(run)
    run.model.includeBranchrule(Spy(), "spy", "reads the candidates", priority=10**6, maxdepth=-1, maxbounddist=1.0)
    for p in ("presolving/maxrounds", "separating/maxrounds", "separating/maxroundsroot"):
        run.model.setParam(p, 0)
    run.model.optimize()
    names = {v.name for v in run.data["vars"][a.ids.ravel()[0]:a.ids.ravel()[-1] + 1]}
    both = [first for first, n in seen if n > len(first)]  # nodes where lower-priority candidates were waiting
    assert both, "no node had candidates of both families: the test's model does not test the ranking"
    assert all(first <= names for first in both)  # only support columns in the top class


@pytest.mark.skipif(not installed("gurobi"), reason="gurobi is not installed")
@pytest.mark.parametrize(("given", "held"), [({}, 3), ({"MIPFocus": 1}, 1)])
def test_the_lattice_master_takes_the_bound_focus_unless_the_user_sets_it(given, held):
    """Gurobi's ``bound_focus`` (MIPFocus 3) reaches the lattice master's solve, read from Gurobi's own log; a
    value the user gives wins; the optimum is still brute force's."""
    from treeopt_dsl.backends.gurobi import GurobiBackend
    from treeopt_dsl.result import Status

    assert GurobiBackend.bound_focus_for("gurobi") == {"MIPFocus": 3}
    X, y = risk_data(0)
    lines: list[str] = []
    spec = get_formulation("ors", T=2, A="-3..3", loss="true", proof="lcpa", cardinality="at_most")
    res = spec.solve(Dataset.from_arrays(X, y), solver="gurobi", time_limit=60, log_callback=lines.append, **given)
    assert any(re.fullmatch(rf"MIPFocus\s+{held}\s*", line) for line in lines)  # Gurobi's non-default parameters
    assert "Using branch priorities." in lines  # and the support's priorities
    best, _, _ = brute_force_ors_true(X, y, 2, range(-3, 4))
    assert res.status is Status.OPTIMAL and best - 1e-7 <= res.objective <= best + 1e-4 * max(1.0, best)
