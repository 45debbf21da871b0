"""The continuous relaxation's bound (``treeopt_dsl.solve.relaxation_bound``, ``treeopt compile --lp-bound``): the LP
of the compiled matrix solved independently, below every proven optimum, a clear error where there is none."""

from __future__ import annotations

import json

import numpy as np
import pytest
from brute_force import linprog_relaxation

from treeopt_dsl import Dataset
from treeopt_dsl.cli import main
from treeopt_dsl.errors import CapabilityError, OptionError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.solve import relaxation_bound


def data(n: int = 30, p: int = 3, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] - 0.7 * X[:, 1] + rng.normal(0, 0.8, n) > 0, 1, -1)
    return Dataset.from_arrays(X, y)


@pytest.mark.parametrize(("name", "kw"), [("olct", {"depth": 1}), ("olct", {"depth": 2, "big_m": 100.0}),
                                          ("oct", {"depth": 1}), ("ors", {"T": 2, "A": "-2..2"})])
def test_the_bound_is_the_lp_of_the_matrix_and_below_the_optimum(name, kw):
    built = get_formulation(name, **kw).build(data())
    r = relaxation_bound(built)
    assert r.status == "optimal" and r.seconds >= 0
    assert r.bound == pytest.approx(linprog_relaxation(built.compile()), rel=1e-7, abs=1e-7)
    if kw.get("depth", 1) == 1:  # proven quickly: the relaxation is below the MILP's optimum
        res = get_formulation(name, **kw).solve(data(), time_limit=60, gap=0.0)
        assert res.status.value == "optimal"
        assert r.bound <= res.objective + 1e-6


def test_the_qp_relaxation_of_margot_bounds_its_optimum():
    pytest.importorskip("pyscipopt")
    d = data(16, 2, seed=1)
    spec = get_formulation("margot", depth=1)
    r = relaxation_bound(spec.build(d))
    assert r.status == "optimal"
    res = spec.solve(d, solver="scip", time_limit=60, gap=0.0, warm_start=None)
    assert res.status.value == "optimal"
    assert 0.0 <= r.bound <= res.objective + 1e-6


def test_no_relaxation_for_a_nonlinear_model_and_a_bad_limit():
    with pytest.raises(CapabilityError, match="NLP"):
        relaxation_bound(get_formulation("sorct", depth=1).build(data()))
    with pytest.raises(OptionError, match="time_limit"):
        relaxation_bound(get_formulation("oct", depth=1).build(data()), time_limit=-1)


def test_compile_prints_the_bound(capsys):
    argv = ["compile", "olct", "--data", "breast-cancer", "--sample", "60", "--depth", "1", "--lp-bound"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lp_bound_status"] == "optimal"
    from treeopt_dsl.datasets import load

    built = get_formulation("olct", depth=1).build(load("breast-cancer").subsample(60, seed=0))
    assert out["lp_bound"] == pytest.approx(relaxation_bound(built).bound, rel=1e-9)
    assert main(argv) == 0
    assert f"LP relaxation bound {out['lp_bound']:.6g} (optimal, HiGHS" in capsys.readouterr().out
