"""The conformance battery: small models built with the IR, each with its known answer.

Every function returns a :class:`Case` -- ``(model, status, objective)`` plus the options the case
needs. Expected objectives are computed here independently of any backend: by enumeration (the
integer models), in closed form (the LP, the QP, bounds only) or with SciPy's Hungarian algorithm
(the assignment LP), never copied from a solver's output.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from treeopt_dsl.ir import Model, StandardForm
from treeopt_dsl.result import Status


@dataclass
class Case:
    model: Model | StandardForm
    status: Status
    objective: float | None
    #: SolveOptions fields for the solve (e.g. a time limit)
    options: dict[str, Any] = field(default_factory=dict)
    #: a full column vector handed over as the warm start (None: no warm start)
    warm_start: np.ndarray | None = None
    #: absolute tolerance of the objective comparison
    tol: float = 1e-6
    #: statuses also accepted (a solver may legitimately do better than the limit the case sets)
    also: tuple[Status, ...] = ()

    @property
    def sf(self) -> StandardForm:
        return self.model if isinstance(self.model, StandardForm) else self.model.compile()


def lp() -> Case:
    """max 3x + 2y s.t. x + y <= 4, x + 3y <= 6, 1 <= x - y <= 2 (ranged), x <= 3; at (3, 1): -11."""
    m = Model("lp")
    v = m.add_variables("v", ("k",), {"k": ["x", "y"]}, lower=0, upper=xr.DataArray([3.0, np.inf], dims="k"))
    x, y = v.sel(k="x"), v.sel(k="y")
    m.add_constraints("cap", x + y <= 4)
    m.add_constraints("mix", x + 3 * y <= 6)
    from treeopt_dsl.ir import Constraint

    m.add_constraints("band", Constraint.ranged(1.0, x - y, 2.0))
    m.add_objective(-3 * x - 2 * y, "profit")
    # vertices of the polygon, checked by enumeration of the active pairs would also give -11 at (3, 1)
    return Case(m, Status.OPTIMAL, -11.0)


def _int_brute(c: np.ndarray, A: np.ndarray, b: np.ndarray, lo: int, hi: int,
               f: Callable[[np.ndarray], float] | None = None) -> float:
    grid = np.array(list(itertools.product(range(lo, hi + 1), repeat=len(c))), dtype=float)
    ok = np.all(grid @ A.T <= b + 1e-9, axis=1)
    vals = grid[ok] @ c if f is None else np.array([f(g) for g in grid[ok]])
    return float(vals.min())


_KA = np.array([[2.0, 3, 1], [4, 1, 2], [3, 4, 2]])
_KB = np.array([5.0, 11, 8])
_KC = np.array([-5.0, -4, -3])


def milp_gap() -> Case:
    """Integer knapsack (Chvátal's example): the LP relaxation is fractional, the integer optimum is -13."""
    m = Model("milp_gap")
    x = m.add_variables("x", ("item",), {"item": ["a", "b", "c"]}, kind="integer", lower=0, upper=5)
    res = xr.DataArray(_KA, dims=("res", "item"), coords={"res": ["r1", "r2", "r3"], "item": ["a", "b", "c"]})
    m.add_constraints("use", (x * res).sum("item") <= xr.DataArray(_KB, dims="res", coords={"res": ["r1", "r2", "r3"]}))
    m.add_objective(x.dot(xr.DataArray(_KC, dims="item", coords={"item": ["a", "b", "c"]}), "item"), "value")
    return Case(m, Status.OPTIMAL, _int_brute(_KC, _KA, _KB, 0, 5))


_T = np.array([1.4, -2.6, 0.7])


def qp() -> Case:
    """min (x - 1)² + (y - 2)² s.t. x + y <= 2: the projection (0.5, 1.5), objective 0.5."""
    m = Model("qp")
    v = m.add_variables("v", ("k",), {"k": ["x", "y"]}, lower=-10, upper=10)
    t = xr.DataArray([1.0, 2.0], dims="k", coords={"k": ["x", "y"]})
    d = v - t
    m.add_constraints("cap", v.sum("k") <= 2)
    m.add_objective((d * d).sum("k"), "dist")
    return Case(m, Status.OPTIMAL, 0.5, tol=1e-5)


def miqp() -> Case:
    """min Σ (x_i - t_i)² with x integer in [-3, 3], Σ x <= 0 and x_0 - x_2 >= 1 (enumerated)."""
    m = Model("miqp")
    x = m.add_variables("x", ("i",), {"i": 3}, kind="integer", lower=-3, upper=3)
    d = x - xr.DataArray(_T, dims="i", coords={"i": np.arange(3)})
    m.add_constraints("budget", x.sum("i") <= 0)
    m.add_constraints("order", x.isel(i=0) - x.isel(i=2) >= 1)
    m.add_objective((d * d).sum("i"), "dist")
    A = np.array([[1.0, 1, 1], [-1, 0, 1]])
    b = np.array([0.0, -1])
    best = _int_brute(np.zeros(3), A, b, -3, 3, f=lambda g: float(((g - _T) ** 2).sum()))
    return Case(m, Status.OPTIMAL, best, tol=1e-5)


def infeasible() -> Case:
    """x + y >= 3 and x + y <= 2."""
    m = Model("infeasible")
    v = m.add_variables("v", ("k",), {"k": 2}, lower=0, upper=10)
    m.add_constraints("low", v.sum() >= 3)
    m.add_constraints("high", v.sum() <= 2)
    m.add_objective(v.sum(), "obj")
    return Case(m, Status.INFEASIBLE, None)


def infeasible_milp() -> Case:
    """2x + 2y = 3 with x, y integer: LP-feasible, integer-infeasible."""
    m = Model("infeasible_milp")
    v = m.add_variables("v", ("k",), {"k": 2}, kind="integer", lower=0, upper=10)
    m.add_constraints("odd", (2 * v).sum() == 3)
    m.add_objective(v.sum(), "obj")
    return Case(m, Status.INFEASIBLE, None)


def unbounded() -> Case:
    """min -x - y s.t. x - y <= 1, x, y >= 0 (the ray (1, 1))."""
    m = Model("unbounded")
    v = m.add_variables("v", ("k",), {"k": ["x", "y"]}, lower=0)
    m.add_constraints("diff", v.sel(k="x") - v.sel(k="y") <= 1)
    m.add_objective(-1 * v.sum(), "obj")
    return Case(m, Status.UNBOUNDED, None)


def assignment_cost(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, 50, size=(n, n)).astype(float)


def equality_heavy(n: int = 6, seed: int = 3) -> Case:
    """An n x n assignment LP (2n equality rows); its optimum by SciPy's Hungarian algorithm."""
    from scipy.optimize import linear_sum_assignment

    cost = assignment_cost(n, seed)
    r, c = linear_sum_assignment(cost)
    m = Model("assignment")
    labels = {"worker": [f"w{i}" for i in range(n)], "job": [f"j{i}" for i in range(n)]}
    x = m.add_variables("assign", ("worker", "job"), labels, lower=0, upper=1)
    m.add_constraints("one_job", x.sum("job") == 1)
    m.add_constraints("one_worker", x.sum("worker") == 1)
    m.add_objective(x * xr.DataArray(cost, dims=("worker", "job"), coords=labels), "cost")
    return Case(m, Status.OPTIMAL, float(cost[r, c].sum()))


def bounds_only() -> Case:
    """No rows: min c.x over a box (a continuous family and an integer family with fractional bounds);
    optimum Σ min(c lo, c up) with the integer bounds rounded inwards."""
    m = Model("bounds_only")
    c = np.array([2.0, -1.5, 0.0, 3.0])
    lo, up = np.array([-1.0, 0.0, -2.0, 0.5]), np.array([4.0, 2.5, 2.0, 7.0])
    x = m.add_variables("x", ("i",), {"i": 4}, lower=xr.DataArray(lo, dims="i"), upper=xr.DataArray(up, dims="i"))
    ci = np.array([1.0, -2.0, 0.5])
    loi, upi = np.array([-1.5, 0.2, 0.3]), np.array([2.7, 3.9, 4.0])
    z = m.add_variables("z", ("j",), {"j": 3}, kind="integer", lower=xr.DataArray(loi, dims="j"),
                        upper=xr.DataArray(upi, dims="j"))
    m.add_objective(x.dot(xr.DataArray(c, dims="i"), "i"), "obj")
    m.add_objective(z.dot(xr.DataArray(ci, dims="j"), "j"), "obj_int")
    best = np.minimum(c * lo, c * up).sum() + np.minimum(ci * np.ceil(loi), ci * np.floor(upi)).sum()
    return Case(m, Status.OPTIMAL, float(best))


def _lp_brute(c: np.ndarray, G: np.ndarray, h: np.ndarray) -> float:
    """min c.x s.t. G x <= h (bounded, full column rank) by enumerating every vertex."""
    n, best = len(c), np.inf
    for S in itertools.combinations(range(len(h)), n):
        M = G[list(S)]
        if abs(np.linalg.det(M)) < 1e-9:
            continue
        x = np.linalg.solve(M, h[list(S)])
        if np.all(G @ x <= h + 1e-9):
            best = min(best, float(c @ x))
    return best


_RR = np.array([[1.0, 1, 0], [0, 1, -1], [1, 0, 1]])
_RLO, _RHI = np.array([1.0, -1, 0]), np.array([2.0, 3, 4])
_RC = np.array([1.0, -1, 2])


def ranged_rows() -> Case:
    """A family of three ranged rows ``lo <= R x <= hi`` over a box: at the optimum one row sits at its
    upper side and another at its lower side (vertex enumeration gives the answer)."""
    m = Model("ranged")
    x = m.add_variables("x", ("i",), {"i": 3}, lower=-5, upper=5)
    R = xr.DataArray(_RR, dims=("r", "i"), coords={"r": ["a", "b", "c"], "i": np.arange(3)})
    lab = {"r": ["a", "b", "c"]}
    from treeopt_dsl.ir import Constraint

    m.add_constraints("band", Constraint.ranged(xr.DataArray(_RLO, dims="r", coords=lab), (x * R).sum("i"),
                                                xr.DataArray(_RHI, dims="r", coords=lab)))
    m.add_objective(x.dot(xr.DataArray(_RC, dims="i"), "i"), "obj")
    G = np.vstack([_RR, -_RR, np.eye(3), -np.eye(3)])
    h = np.concatenate([_RHI, -_RLO, np.full(3, 5.0), np.full(3, 5.0)])
    return Case(m, Status.OPTIMAL, _lp_brute(_RC, G, h))


def free_rows() -> Case:
    """Rows without bounds: a family whose middle entries are dropped (``where``), so the compiled
    rows skip them, plus an explicit ``-inf <= a.x <= inf`` row in the standard form that a backend
    must accept and ignore. Without the free rows the model is the ranged case, same optimum."""
    from dataclasses import replace

    import scipy.sparse as sp

    m = Model("free_rows")
    x = m.add_variables("x", ("i",), {"i": 3}, lower=-5, upper=5)
    R = np.vstack([_RR[:1], [[3.0, -7, 1]], _RR[1:2], [[-2.0, 5, 4]], _RR[2:]])  # rows 1 and 3 are cut (free)
    lo = np.concatenate([_RLO[:1], [0.0], _RLO[1:2], [0.0], _RLO[2:]])
    hi = np.concatenate([_RHI[:1], [0.0], _RHI[1:2], [0.0], _RHI[2:]])
    lab = {"r": np.arange(5)}
    from treeopt_dsl.ir import Constraint

    con = Constraint.ranged(xr.DataArray(lo, dims="r", coords=lab),
                            (x * xr.DataArray(R, dims=("r", "i"), coords={**lab, "i": np.arange(3)})).sum("i"),
                            xr.DataArray(hi, dims="r", coords=lab))
    m.add_constraints("band", con.where(xr.DataArray([True, False, True, False, True], dims="r", coords=lab)))
    m.add_objective(x.dot(xr.DataArray(_RC, dims="i"), "i"), "obj")
    sf = m.compile()
    assert sf.n_rows == 3  # the two cut entries are gone
    A = sp.vstack([sf.A, sp.csr_matrix(np.array([[1.0, 1.0, 1.0]]))], format="csr")
    A.indices, A.indptr = A.indices.astype(np.int32), A.indptr.astype(np.int32)
    sf = replace(sf, A=A, row_lower=np.append(sf.row_lower, -np.inf), row_upper=np.append(sf.row_upper, np.inf))
    return Case(sf, Status.OPTIMAL, ranged_rows().objective)


def bare_standard_form() -> Case:
    """The ranged case as a hand-made standard form without family blocks (no names, no coordinates):
    backends and exports fall back to generic names and must still solve every row and column."""
    from dataclasses import replace

    case = ranged_rows()
    return Case(replace(case.sf, columns=[], rows=[]), Status.OPTIMAL, case.objective)


def empty_rows() -> Case:
    """Rows whose coefficients are all zero: ``0 <= 3`` (feasible, a backend must not choke on a row
    without terms) next to the knapsack; the optimum is the knapsack's."""
    case = milp_gap()
    m = case.model
    assert isinstance(m, Model)
    x = m["x"]
    m.add_constraints("nothing", 0 * x.sum() <= 3)
    m.add_constraints("nothing_eq", 0 * x.sum() == 0)
    sf = m.compile()
    assert np.all(np.diff(sf.A.indptr)[-2:] == 0)
    return Case(m, Status.OPTIMAL, case.objective)


def empty_row_infeasible() -> Case:
    """An LP that is infeasible only through a row without terms: ``0 >= 1``."""
    m = Model("empty_infeasible")
    v = m.add_variables("v", ("k",), {"k": 2}, lower=0, upper=1)
    m.add_constraints("ok", v.sum() <= 2)
    m.add_constraints("never", 0 * v.sum() >= 1)
    m.add_objective(v.sum(), "obj")
    return Case(m, Status.INFEASIBLE, None)


def objective_constant() -> Case:
    """The knapsack MILP plus a constant 41.5 in the objective: objective and bound carry the constant."""
    case = milp_gap()
    m = case.model
    assert isinstance(m, Model)
    m.add_objective(41.5, "fixed_cost")
    assert m.compile().c0 == 41.5
    return Case(m, Status.OPTIMAL, case.objective + 41.5)


def objective_constant_lp() -> Case:
    """The LP case minus a constant 2.25: an LP's reported objective carries the constant too."""
    case = lp()
    m = case.model
    assert isinstance(m, Model)
    m.add_objective(-2.25, "offset")
    return Case(m, Status.OPTIMAL, case.objective - 2.25)


# ---------------------------------------------------------------------------- market split
def market_split(m_rows: int = 6, seed: int = 0, planted: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A Cornuéjols–Dawande market-split instance: ``A x = b``, ``x`` binary, ``n = 10 (m - 1)``,
    ``a_ij`` uniform on 0..99. ``planted=True`` takes ``b = A x*`` for a random ``x*`` (feasible by
    construction, returned as the third item); otherwise ``b_i = ⌊Σ_j a_ij / 2⌋`` as in the paper."""
    rng = np.random.default_rng(seed)
    n = 10 * (m_rows - 1)
    A = rng.integers(0, 100, size=(m_rows, n)).astype(float)
    xs = (rng.random(n) < 0.5).astype(float)
    b = A @ xs if planted else np.floor(A.sum(1) / 2)
    return A, b, xs


def _split_model(A: np.ndarray, b: np.ndarray, slack: bool) -> Model:
    mr, n = A.shape
    m = Model("market_split")
    x = m.add_variables("x", ("j",), {"j": n}, kind="binary")
    a = xr.DataArray(A, dims=("i", "j"), coords={"i": np.arange(mr), "j": np.arange(n)})
    rhs = xr.DataArray(b, dims="i", coords={"i": np.arange(mr)})
    if slack:  # min Σ |Ax - b|: x = 0 is feasible at once, optimality is the hard part
        s = m.add_variables("s", ("i", "side"), {"i": mr, "side": ["over", "under"]}, lower=0)
        m.add_constraints("split", (x * a).sum("j") - s.sel(side="over") + s.sel(side="under") == rhs)
        m.add_objective(s.sum(), "deviation")
    else:  # pure feasibility: any feasible point is optimal (objective 0)
        m.add_constraints("split", (x * a).sum("j") == rhs)
        m.add_objective(0 * x.sum(), "zero")
    return m


#: time limit (s) of the two limit cases
LIMIT_S = 1.0


def time_limit_incumbent() -> Case:
    """Market split with slacks, 7 rows / 60 binaries (the paper's b): an incumbent at once, no proof
    of optimality within the limit. Expected: TIME_LIMIT (the objective is checked against the point)."""
    A, b, _ = market_split(7, seed=1, planted=False)
    return Case(_split_model(A, b, slack=True), Status.TIME_LIMIT, None, options={"time_limit": LIMIT_S})


def time_limit_no_incumbent() -> Case:
    """Planted market split, 7 rows / 60 binaries, objective 0: finding any feasible point is the
    whole difficulty, so no solver has one within the limit. Expected: TIME_LIMIT_NO_SOLUTION."""
    A, b, _ = market_split(7, seed=2, planted=True)
    return Case(_split_model(A, b, slack=False), Status.TIME_LIMIT_NO_SOLUTION, None, options={"time_limit": LIMIT_S})


def warm_start() -> Case:
    """The previous instance with its planted solution as the warm start: a solver that honours it
    has a feasible (hence optimal, objective 0) point at once and stops OPTIMAL (or at the limit with
    that incumbent)."""
    A, b, xs = market_split(7, seed=2, planted=True)
    m = _split_model(A, b, slack=False)
    return Case(m, Status.OPTIMAL, 0.0, options={"time_limit": LIMIT_S}, warm_start=xs.copy(),
                also=(Status.TIME_LIMIT,))


#: the battery, by name
CASES: dict[str, Callable[[], Case]] = {
    "lp": lp, "milp_gap": milp_gap, "qp": qp, "miqp": miqp, "infeasible": infeasible,
    "infeasible_milp": infeasible_milp, "unbounded": unbounded, "equality_heavy": equality_heavy,
    "bounds_only": bounds_only, "ranged_rows": ranged_rows, "free_rows": free_rows,
    "bare_standard_form": bare_standard_form, "empty_rows": empty_rows,
    "empty_row_infeasible": empty_row_infeasible, "objective_constant": objective_constant,
    "objective_constant_lp": objective_constant_lp, "time_limit_incumbent": time_limit_incumbent,
    "time_limit_no_incumbent": time_limit_no_incumbent, "warm_start": warm_start,
}
