"""What each solver is, whichever route drives it: one place for a solver's claims that the library does not take
on trust, and why.

A route (:mod:`treeopt_dsl.backends.highs`, ``mip``, ``linopy``, ``pyomo``, ...) maps the common options to a
solver; a :class:`Dialect` says what that solver's answers mean, so that every route driving it is read alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from treeopt_dsl.ir import StandardForm


@dataclass(frozen=True)
class Dialect:
    """A solver's own character, shared by every route that drives it.

    ``proves_mip``: whether its ``optimal`` on a MILP is taken as a proof. When it is not, the solve pipeline
    (:func:`treeopt_dsl.solve.solve_built`) never reports its claim as ``optimal``: it has the claim checked by
    ``verifier`` (a second solve from the claimed point, within what is left of the time limit) and drops the
    solver's own bound, which is not a bound either (``why`` says what was measured).

    ``relative_feasibility``: the solver compares a row with its bounds relative to their size (SCIP:
    ``|activity - rhs| <= feastol * max(1, |activity|, |rhs|)``) and checks integrality with the same tolerance;
    :meth:`tolerances` turns the library's absolute tolerances into such a solver's."""

    solver: str
    proves_mip: bool = True
    verifier: str | None = None
    why: str = ""
    relative_feasibility: bool = False

    def tolerances(self, sf: StandardForm, feasibility_tol: float | None, integrality_tol: float | None
                   ) -> dict[str, float]:
        """The common tolerances (absolute, :class:`~treeopt_dsl.formulation.Numerics`) as this solver reads them.

        A relative solver holds a row of size ``s`` (its bounds, its activity) to ``s * t`` and checks integrality
        with the same ``t``; on a MILP it gets ``t = min(feasibility_tol, integrality_tol)``. The integrality
        tolerance is ``eps / (4 M)`` for a model with big-M rows, and those rows are the largest (their size is
        about ``M``), so ``M t <= eps / 4`` keeps every sample out of the gap ``(0, eps)`` as the model needs. Read
        as absolute, SCIP's ``feastol = 1e-7`` let OLCT's rows (``M = 100``) be off by ``1e-5 = eps``: points
        that route samples across the gap (uncertified) and one suboptimal tree called optimal, in 7 of 300
        random instances (tests/conformance/test_random_optima.py). Dividing by the largest row bound instead
        (``1e-9``) left MARGOT's MIQP unable to close a ``6e-8`` gap in 60 s."""
        out = {k: float(v) for k, v in (("feasibility_tol", feasibility_tol), ("integrality_tol", integrality_tol))
               if v is not None}
        if self.relative_feasibility and sf.is_mip and "integrality_tol" in out:
            out["feasibility_tol"] = min(out.get("feasibility_tol", np.inf), out["integrality_tol"])
        return out




#: CBC's branch and bound prunes subtrees that hold the optimum of small big-M tree models (docs/DESIGN.md,
#: "CBC's optimality claims"): measured on 80 random OCT/OLCT instances of 15 rows, 6 wrong claims with the
#: route's tolerances, 2-8 with every combination of switches tried (threads 0/1/2, preprocessing, cuts,
#: heuristics, mini branch and bound, strong branching, presolve, scaling off; CBC's default tolerances) and 2 with
#: CBC 2.10.3 (2019), while the same MPS file gives HiGHS, SCIP and Gurobi the optimum and CBC itself accepts
#: the optimal point at the optimal objective when its integers are fixed.
CBC_WHY = ("CBC's branch and bound has been measured calling suboptimal trees optimal (its bound lies above the "
           "true optimum; docs/DESIGN.md, \"CBC's optimality claims\")")

DIALECTS: dict[str, Dialect] = {
    "highs": Dialect("highs"),
    "gurobi": Dialect("gurobi"),
    "scip": Dialect("scip", relative_feasibility=True),
    "cbc": Dialect("cbc", proves_mip=False, verifier="highs", why=CBC_WHY),
    "ipopt": Dialect("ipopt"),
}


def dialect(solver: str) -> Dialect:
    """The :class:`Dialect` of ``solver`` (a solver the library does not know is taken at its word)."""
    return DIALECTS.get(solver.lower(), Dialect(solver.lower()))
