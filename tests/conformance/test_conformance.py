"""Every installed (backend, solver) pair against the battery in :mod:`models`.

Pairs come from ``treeopt_dsl.backends.BACKENDS`` (a backend module added later joins by itself).
A pair that cannot take a model's problem class is *not* skipped: its test asserts that the registry
refuses it with ``CapabilityError``; a pair without warm-start support asserts that the backend
reports the start as not accepted. Only a solver that is not installed here is skipped, with the
pip extra in the reason.
"""

from __future__ import annotations

import numpy as np
import pytest

from treeopt_dsl.backends import BACKENDS, SolveOptions, get_backend
from treeopt_dsl.errors import CapabilityError
from treeopt_dsl.result import Status

from .models import CASES, Case

PAIRS = [(b, s) for b in BACKENDS for s in b.solvers]
PAIR_IDS = [f"{b.name}-{s}" for b, s in PAIRS]
SLOW = {"time_limit_incumbent", "time_limit_no_incumbent"}


def _installed(backend: type, solver: str) -> bool:
    check = getattr(backend, "solver_available", None)
    return bool(check(solver)) if check is not None else bool(backend.available())


def _classes(backend: type, solver: str) -> frozenset[str]:
    f = getattr(backend, "classes_for", None)
    return f(solver) if f is not None else backend.problem_classes


def _features(backend: type, solver: str) -> frozenset[str]:
    f = getattr(backend, "features_for", None)
    return f(solver) if f is not None else backend.features


def _require(backend: type, solver: str) -> None:
    if not _installed(backend, solver):
        pytest.skip(f"{solver} through backend {backend.name!r} is not installed here: "
                    f"`pip install treeopt-dsl[{backend.extra}]`"
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
        for (b, s), pid in zip(PAIRS, PAIR_IDS, strict=True):
            out.append(pytest.param(b, s, name, id=f"{pid}-{name}", marks=marks))
    return out


@pytest.mark.parametrize(("backend", "solver", "name"), _params())
def test_battery(backend: type, solver: str, name: str) -> None:
    _require(backend, solver)
    case = CASES[name]()
    sf = case.sf
    if sf.problem_class not in _classes(backend, solver):
        # unsupported: the registry must say so before any work
        with pytest.raises(CapabilityError):
            get_backend(solver, backend.name, sf)
        return
    be = get_backend(solver, backend.name, sf)
    assert isinstance(be, backend)
    opts = dict(case.options)
    honours_start = "warm_start" in _features(backend, solver)
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
    elif raw.status in (Status.INFEASIBLE, Status.TIME_LIMIT_NO_SOLUTION):
        assert raw.x is None and raw.objective is None  # (an unbounded LP may come with a feasible point)


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
    for b, s in PAIRS:
        if not _installed(b, s) or "MILP" not in _classes(b, s):
            continue
        r = solve_built(built, s, b.name, time_limit=120, gap=1e-9)
        assert r.status is Status.OPTIMAL, (b.name, s, r.status, r.message)
        assert r.objective == pytest.approx(ref.objective, rel=1e-5, abs=1e-6), (b.name, s)
        assert r.certificate is not None and r.certificate.objective_decoded == pytest.approx(
            r.objective, rel=1e-5, abs=1e-6)
        checked.append((b.name, s))
    assert ("direct", "highs") in checked and len(checked) >= 2
