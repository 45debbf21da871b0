"""What each solver is, whichever route drives it: its own option names, the values it takes, what its answers
mean, and how to ask it whether an option exists. One place per solver, read by every route.

A route (the direct APIs in :mod:`treeopt_dsl.backends.highs`, ``gurobi``, ``scip``; python-mip; linopy; pyomo;
CasADi) puts a model into its solver; a :class:`Dialect` turns the common options (:class:`~treeopt_dsl.backends.base.
SolveOptions`) into the solver's own parameters with the solver's quirks (a seed range, a tolerance floor, a
tolerance read relative to a row's size, an integrality tolerance derived from the feasibility one), so that two
routes to the same solver ask it the same thing. A route whose library spells the options its own way (python-mip's
model attributes, CasADi's ``ipopt.`` prefix) maps :meth:`Dialect.values` to its spelling.

>>> dialect("gurobi").names["gap"], dialect("cbc").names["time_limit"]
('MIPGap', 'sec')
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from treeopt_dsl.backends.native import importable, new_highs
from treeopt_dsl.errors import OptionError
from treeopt_dsl.ir import StandardForm


class UnknownOption(KeyError):
    """Raised by :meth:`Backend.set_option` for a name the solver does not know (the template turns it
    into an :class:`OptionError` with suggestions)."""


#: the common options a dialect maps (the numeric fields of SolveOptions)
COMMON = ("time_limit", "gap", "threads", "seed", "feasibility_tol", "integrality_tol")


@dataclass(frozen=True)
class Dialect:
    """A solver's own character, shared by every route that drives it.

    ``names``: common option -> the solver's parameter name. ``seed_range``: seeds are taken modulo its width
    (Gurobi takes ``[0, 2e9)``, SCIP ``[0, 2^31)``), or raised to its lower end when it has none (CBC: ``0`` means
    "the clock", so 1). ``time_floor``: the smallest time limit the solver takes (Ipopt refuses 0).
    ``tol_floor``: the smallest tolerance the solver accepts (Gurobi: ``1e-9``). ``integrality_from_feasibility``:
    without an integrality tolerance the solver gets ``min(1e-6, 10 * feasibility_tol)`` (HiGHS' MIP feasibility
    tolerance is separate from its primal one). ``relative_feasibility``: see :meth:`tolerances`.

    ``proves_mip``: whether its ``optimal`` on a MILP is taken as a proof. When it is not, the solve pipeline
    (:func:`treeopt_dsl.solve.solve_built`) never reports its claim as ``optimal``: it has the claim checked by
    ``verifier`` (a second solve from the claimed point, within what is left of the time limit) and drops the
    solver's own bound, which is not a bound either (``why`` says what was measured).

    ``warm``: the solver's own settings for a start that is a solution (a warm chain, a fitted model), for the
    multistart that hands it such starts. Ipopt's: the default barrier parameter (``mu_init`` 0.1) and bound push
    move such a point far into the interior, and with a steep split CDF (gamma = 512) the first steps then reach
    the empty tree ``a = 0``, a stationary point for every lambda > 0 (docs/sorct.md, "Warm chains"); random points
    keep Ipopt's defaults."""

    solver: str
    names: Mapping[str, str] = field(default_factory=dict)
    seed_range: tuple[int, int | None] | None = None
    time_floor: float = 0.0
    tol_floor: float = 0.0
    integrality_from_feasibility: bool = False
    relative_feasibility: bool = False
    proves_mip: bool = True
    verifier: str | None = None
    why: str = ""
    warm: Mapping[str, Any] = field(default_factory=dict)

    def tolerances(self, sf: StandardForm, feasibility_tol: float | None, integrality_tol: float | None
                   ) -> dict[str, float]:
        """The common tolerances (absolute, :class:`~treeopt_dsl.formulation.Numerics`) as this solver reads them.

        A relative solver holds a row of size ``s`` (its bounds, its activity) to ``s * t`` and checks integrality
        with the same ``t``; on a MILP it gets ``t = min(feasibility_tol, integrality_tol)``. The integrality
        tolerance is ``eps / (4 M)`` for a model with big-M rows, and those rows are the largest (their size is
        about ``M``), so ``M t <= eps / 4`` keeps every sample out of the gap ``(0, eps)`` as the model needs. Read
        as absolute, SCIP's ``feastol = 1e-7`` let OLCT's rows (``M = 100``) be off by ``1e-5 = eps``: points
        that route samples across the gap (uncertified) and one suboptimal tree called optimal, in 7 of 300
        random instances (tests/backends/conformance/test_random_optima.py). Dividing by the largest row bound instead
        (``1e-9``) left MARGOT's MIQP unable to close a ``6e-8`` gap in 60 s."""
        out = {k: float(v) for k, v in (("feasibility_tol", feasibility_tol), ("integrality_tol", integrality_tol))
               if v is not None}
        if self.integrality_from_feasibility and "feasibility_tol" in out and "integrality_tol" not in out:
            out["integrality_tol"] = min(1e-6, out["feasibility_tol"] * 10)
        if self.relative_feasibility and sf.is_mip and "integrality_tol" in out:
            out["feasibility_tol"] = min(out.get("feasibility_tol", np.inf), out["integrality_tol"])
        if not sf.is_mip or self.relative_feasibility:
            out.pop("integrality_tol", None)  # an LP has none; a relative solver reads feastol for both
        return {k: max(self.tol_floor, v) for k, v in out.items()}

    def values(self, sf: StandardForm, options: Any) -> dict[str, Any]:
        """The common options given in ``options`` (:data:`COMMON`), with the values this solver takes."""
        out: dict[str, Any] = {}
        if options.time_limit is not None:
            out["time_limit"] = max(self.time_floor, float(options.time_limit))
        if options.gap is not None:
            out["gap"] = float(options.gap)
        if options.threads is not None:
            out["threads"] = int(options.threads)
        if options.seed is not None:
            seed = int(options.seed)
            if self.seed_range is not None:
                lo, hi = self.seed_range
                seed = max(lo, seed) if hi is None else lo + seed % (hi - lo)
            out["seed"] = seed
        out.update(self.tolerances(sf, options.feasibility_tol, options.integrality_tol))
        return out

    def native(self, sf: StandardForm, options: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
        """:meth:`values` under the solver's own names (those it has a name for, ``skip`` left out), plus what the
        solver needs besides (:meth:`extras`)."""
        out = {self.names[k]: v for k, v in self.values(sf, options).items() if k in self.names and k not in skip}
        out.update(self.extras(sf, out))
        return out

    def extras(self, sf: StandardForm, native: dict[str, Any]) -> dict[str, Any]:
        """Parameters this solver needs beyond the common ones, given the ``native`` ones chosen."""
        if self.solver != "scip":
            return {}
        out: dict[str, Any] = {}
        if native.get("numerics/feastol", 1.0) < 1e-9:  # SCIP's epsilon (1e-9 by default) may not exceed feastol
            out["numerics/epsilon"] = native["numerics/feastol"]
        if sf.is_quadratic or sf.nonlinear or sf.nl_constraints:
            # SCIP 10's NLP heuristics (Ipopt with MUMPS and METIS) corrupted the heap on MARGOT over tic-tac-toe
            # (SIGABRT "free(): invalid pointer" in METIS_NodeND, or a hang at 0% CPU: all 10 of the runner's
            # attempts, 2 of 4 runs in one process; none of 11 with them off: docs/experiments.md). Our starts give
            # SCIP its incumbent; a caller can turn them back on with the same names.
            out.update({f"heuristics/{h}/freq": -1 for h in SCIP_NLP_HEURISTICS})
        return out

    def check_option(self, name: str, value: Any) -> None:
        """Refuse an option name this solver does not know, asking the solver library itself where it can tell
        (HiGHS, Gurobi, SCIP): :class:`~treeopt_dsl.backends.base.UnknownOption` or
        :class:`~treeopt_dsl.errors.OptionError`; other solvers' names are not checked (the modelling layers pass
        them through by name)."""
        if self.solver == "highs" and importable("highspy"):
            import highspy  # a core dependency; imported where the option is checked

            if new_highs().getOptionType(name)[0] != highspy.HighsStatus.kOk:
                raise UnknownOption(name)
        elif self.solver == "gurobi" and importable("gurobipy"):
            import gurobipy as gp  # optional: the gurobi extra

            with gp.Env(empty=True) as env:
                env.setParam("OutputFlag", 0)
                env.start()
                try:
                    env.setParam(name, value)
                except gp.GurobiError as exc:
                    if "Unknown parameter" in str(exc):
                        raise UnknownOption(name) from None
                    raise OptionError(f"Gurobi refused {name}={value!r}: {exc}") from None
        elif self.solver == "scip" and importable("pyscipopt"):
            import pyscipopt  # optional: the scip extra

            try:
                pyscipopt.Model().setParam(name, value)
            except (KeyError, LookupError):
                raise UnknownOption(name) from None

    def option_names(self) -> list[str]:
        """The option names the solver's library lists (for suggestions), or its common ones."""
        with contextlib.suppress(Exception):
            if self.solver == "highs":
                return [n for n in dir(new_highs().getOptions()) if not n.startswith("_")]
            if self.solver == "scip":
                import pyscipopt  # optional: the scip extra

                return list(pyscipopt.Model().getParams())
            if self.solver == "gurobi":
                import gurobipy as gp  # optional: the gurobi extra

                return [p for p in dir(gp.GRB.Param) if p[:1].isupper()]
        return list(self.names.values())


#: SCIP's heuristics that solve NLPs with its bundled Ipopt (off for quadratic and nonlinear models)
SCIP_NLP_HEURISTICS = ("subnlp", "nlpdiving", "mpec", "multistart")

#: CBC's branch and bound prunes subtrees that hold the optimum of small big-M tree models (docs/DESIGN.md,
#: "CBC's optimality claims"): measured on 80 random OCT/OLCT instances of 15 rows, 6 wrong claims with the
#: route's tolerances, 2-8 with every combination of switches tried (threads 0/1/2, preprocessing, cuts,
#: heuristics, mini branch and bound, strong branching, presolve, scaling off; CBC's default tolerances) and 2 with
#: CBC 2.10.3 (2019), while the same MPS file gives HiGHS, SCIP and Gurobi the optimum and CBC itself accepts
#: the optimal point at the optimal objective when its integers are fixed.
CBC_WHY = ("CBC's branch and bound has been measured calling suboptimal trees optimal (its bound lies above the "
           "true optimum; docs/DESIGN.md, \"CBC's optimality claims\")")

DIALECTS: dict[str, Dialect] = {
    "highs": Dialect("highs", {"time_limit": "time_limit", "gap": "mip_rel_gap", "threads": "threads",
                               "seed": "random_seed", "feasibility_tol": "primal_feasibility_tolerance",
                               "integrality_tol": "mip_feasibility_tolerance"}, integrality_from_feasibility=True),
    "gurobi": Dialect("gurobi", {"time_limit": "TimeLimit", "gap": "MIPGap", "threads": "Threads", "seed": "Seed",
                                 "feasibility_tol": "FeasibilityTol", "integrality_tol": "IntFeasTol"},
                      seed_range=(0, 2_000_000_000), tol_floor=1e-9),
    "scip": Dialect("scip", {"time_limit": "limits/time", "gap": "limits/gap", "threads": "lp/threads",
                             "seed": "randomization/randomseedshift", "feasibility_tol": "numerics/feastol"},
                    seed_range=(0, 2**31), relative_feasibility=True),
    "cbc": Dialect("cbc", {"time_limit": "sec", "gap": "ratioGap", "threads": "threads", "seed": "randomCbcSeed",
                           "feasibility_tol": "primalTolerance", "integrality_tol": "integerTolerance"},
                   seed_range=(1, None), tol_floor=1e-9, proves_mip=False, verifier="highs", why=CBC_WHY),
    "ipopt": Dialect("ipopt", {"time_limit": "max_wall_time", "feasibility_tol": "constr_viol_tol"}, time_floor=1e-3,
                     warm={"mu_init": 1e-6, "warm_start_init_point": "yes"}),
}


def dialect(solver: str) -> Dialect:
    """The :class:`Dialect` of ``solver`` (a solver the library does not know is taken at its word)."""
    return DIALECTS.get(solver.lower(), Dialect(solver.lower()))
