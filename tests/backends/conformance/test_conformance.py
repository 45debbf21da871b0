"""Every (backend, solver) pair of ``available_solvers()`` against the battery in :mod:`models`.

Pairs are read from ``treeopt_dsl.backends.available_solvers()`` at collection time (a backend
module added later joins by itself). A pair that cannot take a model's problem class is *not*
skipped: its test asserts that the registry refuses it with ``CapabilityError`` (and
:func:`test_backend_refuses_class` that the backend itself does, when called directly); a pair
without warm-start support asserts that the backend reports the start as not accepted. Only a
solver that is not installed here is skipped, with the pip extra in the reason.
"""

from __future__ import annotations

import numpy as np
import pytest

from treeopt_dsl.backends import BACKENDS, SolveOptions, available_solvers, get_backend
from treeopt_dsl.errors import CapabilityError
from treeopt_dsl.result import Status

from .models import CASES, Case

ROWS = available_solvers()
PAIR_IDS = [f"{r['backend']}-{r['solver']}" for r in ROWS]
SLOW = {"time_limit_incumbent", "time_limit_no_incumbent"}
#: one model of each problem class, for the refusal test
BY_CLASS = {"LP": "lp", "MILP": "milp_gap", "QP": "qp", "MIQP": "miqp"}


def _backend_class(row: dict) -> type:
    """The class behind a row (several backends share the name ``direct``: match the solver too)."""
    return next(b for b in BACKENDS if b.name == row["backend"] and row["solver"] in b.solvers)


def _require(row: dict) -> None:
    if not row["installed"]:
        solver = row["solver"]
        pytest.skip(f"{solver} through backend {row['backend']!r} is not installed here: "
                    f"`pip install treeopt-dsl[{row['extra']}]`"
                    + (f" plus an `{solver}` executable on PATH" if solver == "ipopt" else ""))


def _check_point(case: Case, x: np.ndarray, objective: float) -> None:
    """The returned point satisfies the model (rows, bounds, integrality) and has the reported value."""
    sf = case.sf
    ax = sf.A @ x
    scale = 1 + np.abs(x).max(initial=0)
    assert np.all(ax >= sf.row_lower - 1e-6 * scale) and np.all(ax <= sf.row_upper + 1e-6 * scale)
    assert np.all(x >= sf.col_lower - 1e-6) and np.all(x <= sf.col_upper + 1e-6)
    ints = sf.integrality.astype(bool)
    assert np.all(np.abs(x[ints] - np.round(x[ints])) <= 1e-5)
    assert sf.objective(x) == pytest.approx(objective, abs=1e-6 * (1 + abs(objective)))


def _params() -> list:
    out = []
    for name in CASES:
        marks = [pytest.mark.slow] if name in SLOW else []
        for row, pid in zip(ROWS, PAIR_IDS, strict=True):
            out.append(pytest.param(row, name, id=f"{pid}-{name}", marks=marks))
    return out


@pytest.mark.parametrize(("row", "name"), _params())
def test_battery(row: dict, name: str) -> None:
    _require(row)
    backend, solver = _backend_class(row), row["solver"]
    case = CASES[name]()
    sf = case.sf
    if sf.problem_class not in row["problem_classes"]:
        # unsupported: the registry must say so before any work
        with pytest.raises(CapabilityError):
            get_backend(solver, backend.name, sf)
        return
    be = get_backend(solver, backend.name, sf)
    assert isinstance(be, backend)
    opts = dict(case.options)
    honours_start = "warm_start" in row["features"]
    if case.warm_start is not None and not honours_start:
        opts["time_limit"] = 0.2  # only the report is checked: keep it short
    raw = be.solve(sf, solver, SolveOptions(warm_start=case.warm_start, **opts))
    if case.warm_start is not None:
        assert raw.warm_start_accepted is honours_start, "the backend must report whether it used the start"
        if not honours_start:
            return
    assert raw.status is case.status or raw.status in case.also, (raw.status, raw.message)
    if case.objective is not None:
        assert raw.objective == pytest.approx(case.objective, abs=case.tol * (1 + abs(case.objective)))
    if raw.status.has_solution:
        assert raw.x is not None and raw.objective is not None
        _check_point(case, raw.x, raw.objective)
        if raw.bound is not None:  # a lower bound of a minimization
            assert raw.bound <= raw.objective + 1e-6 * (1 + abs(raw.objective))
        if raw.status is Status.OPTIMAL and raw.gap is not None:
            assert raw.gap <= 1e-4 + 1e-9
        if raw.status is Status.OPTIMAL and sf.is_mip and raw.bound is not None:  # the bound carries c0 too
            assert raw.bound == pytest.approx(raw.objective, rel=1e-4, abs=1e-6)
    elif raw.status in (Status.INFEASIBLE, Status.TIME_LIMIT_NO_SOLUTION):
        assert raw.x is None and raw.objective is None  # (an unbounded LP may come with a feasible point)


def _refusals() -> list:
    out = []
    for row, pid in zip(ROWS, PAIR_IDS, strict=True):
        for pc, name in BY_CLASS.items():
            if pc not in row["problem_classes"]:
                out.append(pytest.param(row, name, id=f"{pid}-{pc}"))
    return out


@pytest.mark.parametrize(("row", "name"), _refusals())
def test_backend_refuses_class(row: dict, name: str) -> None:
    """Called directly (not through the registry), a backend refuses a class it does not claim with
    ``CapabilityError`` -- instead of dropping the quadratic part or the integrality and answering
    another problem."""
    _require(row)
    sf = CASES[name]().sf
    with pytest.raises(CapabilityError):
        _backend_class(row)().solve(sf, row["solver"], SolveOptions(time_limit=5))


# ------------------------------------------------------------------------------- exports
def test_to_linopy_names_map_back() -> None:
    """``to_linopy``: families keep their names and labels; the solution maps onto the coordinates."""
    pytest.importorskip("linopy")
    from scipy.optimize import linear_sum_assignment

    from treeopt_dsl.backends.linopy import to_linopy

    from .models import assignment_cost, equality_heavy

    case = equality_heavy(5, seed=11)
    lm = to_linopy(case.sf)
    var = lm.variables["assign"]
    assert tuple(var.dims) == ("worker", "job")
    assert list(var.coords["job"].values) == [f"j{i}" for i in range(5)]
    assert set(lm.constraints) >= {"one_job", "one_worker"}
    lm.solve("highs")
    sol = var.solution
    cost = assignment_cost(5, 11)  # the same matrix the case was built from
    assert float((sol.transpose("worker", "job").values * cost).sum()) == pytest.approx(case.objective)
    # the labels carry the meaning: worker w_i does the job the Hungarian algorithm gives it
    r, j = linear_sum_assignment(cost)
    chosen = {f"w{a}": f"j{b}" for a, b in zip(r, j, strict=True)}
    for w, job in chosen.items():
        assert float(sol.sel(worker=w, job=job)) == pytest.approx(1.0, abs=1e-6)
    # a constraint added by hand is honoured: forbid w0's best job, the optimum cannot improve
    lm.add_constraints(var.sel(worker="w0", job=chosen["w0"]) == 0, name="forbid")
    lm.solve("highs")
    assert float(var.solution.sel(worker="w0", job=chosen["w0"])) == pytest.approx(0.0, abs=1e-6)
    assert float(lm.objective.value) >= case.objective - 1e-6


def test_to_pyomo_names_map_back() -> None:
    """``to_pyomo``: indexed Vars named after the families, indexed by coordinate labels."""
    pytest.importorskip("pyomo")
    import pyomo.environ as pe

    from treeopt_dsl.backends.pyomo import to_pyomo

    from .models import lp, milp_gap

    case = milp_gap()
    pm = to_pyomo(case.sf)
    assert set(pm.x.index_set()) == {"a", "b", "c"}
    assert set(pm.use.index_set()) == {"r1", "r2", "r3"}
    res = pe.SolverFactory("appsi_highs").solve(pm)
    assert str(res.solver.termination_condition) == "optimal"
    assert pe.value(pm.objective) == pytest.approx(case.objective)
    x = np.array([v.value for v in pm.x_cols])
    assert case.model.objective_value(x) == pytest.approx(case.objective)
    # add a constraint by hand: item "a" at most 1 -> enumerate the restricted problem independently
    pm.cap_a = pe.Constraint(expr=pm.x["a"] <= 1)
    pe.SolverFactory("appsi_highs").solve(pm)
    from .models import _KA, _KB, _KC, _int_brute

    A = np.vstack([_KA, [1.0, 0, 0]])
    assert pe.value(pm.objective) == pytest.approx(_int_brute(_KC, A, np.append(_KB, 1.0), 0, 5))
    # the ranged row of the LP case stays one ranged constraint
    pl = to_pyomo(lp().sf)
    assert pl.band.lower == pytest.approx(1.0) and pl.band.upper == pytest.approx(2.0)


# ------------------------------------------------------------------------------- cross-backend OLCT
def _olct_built(depth: int):
    from sklearn.datasets import load_breast_cancer

    from treeopt_dsl.data import Dataset
    from treeopt_dsl.formulations import get_formulation

    X, y = load_breast_cancer(return_X_y=True)
    d = Dataset.from_arrays(X[:, :6], y).subsample(20, 0)
    return get_formulation("olct", depth=depth).build(d)


@pytest.mark.parametrize("depth", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_olct_same_optimum_everywhere(depth: int) -> None:
    """OLCT on 20 samples: every installed MILP-capable pair reaches the same optimal objective."""
    from treeopt_dsl.solve import solve_built

    built = _olct_built(depth)
    ref = solve_built(built, "highs", "direct", time_limit=120)
    assert ref.status is Status.OPTIMAL and ref.certificate is not None and ref.certificate.ok
    checked = []
    for row in ROWS:
        b, s = row["backend"], row["solver"]
        if not row["installed"] or "MILP" not in row["problem_classes"]:
            continue
        r = solve_built(built, s, b, time_limit=120, gap=1e-9)
        assert r.status is Status.OPTIMAL, (b, s, r.status, r.message)
        assert r.objective == pytest.approx(ref.objective, rel=1e-5, abs=1e-6), (b, s)
        assert r.certificate is not None and r.certificate.objective_decoded == pytest.approx(
            r.objective, rel=1e-5, abs=1e-6)
        checked.append((b, s))
    assert ("direct", "highs") in checked and len(checked) >= 2
