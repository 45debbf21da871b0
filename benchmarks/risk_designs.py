"""Designs to raise the lower bound of the LCPA master of ``ors loss="true"`` (issue 34), each measured as
risk_cards.py measures ours (T = 5, A = -5..5, the beam start, one thread, the time limit for the whole call):

    .venv/bin/python benchmarks/risk_designs.py DESIGN DATA[,DATA...] [TIME_LIMIT] [SOLVER] [NAME=VALUE ...]

DESIGN names what changes from the route shipped before it (docs/blocks.md, "The designs measured"); a design name
holding ``prio`` keeps the support's branching priority (the default since), any other sets it to 0; only
``shipped`` (the route shipped since: the priority and the backend's bound focus, Gurobi ``MIPFocus=3``) keeps the
backends' ``bound_focus``:

* ``base``: the route shipped before (no priority, no bound focus);
* ``shipped_prio``: the route shipped since;
* ``prio``: the support indicators ``a_j`` branched first (``formulations.risk.SUPPORT_PRIORITY``);
* ``chain``: RiskSLIM's chained bounds with its L0 weight ~0 (the loss between the relaxation phase's LP bound and
  the start's true loss), as the bounds of ``theta`` before the branch and bound;
* ``NAME=VALUE`` after the solver: the master solver's options (e.g. Gurobi ``MIPFocus=3``).

A row per data set is appended to ``results/risk_designs_T5_<date>.jsonl`` (``--out`` to change), with the load.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import risk_cards as rc

import treeopt_dsl.formulations.risk as risk_mod
import treeopt_dsl.lazy as lazy
from treeopt_dsl.backends.base import Backend


def chained_bounds() -> None:
    """``theta`` bounded below by the relaxation phase's LP bound and above by the start's true loss (RiskSLIM's
    ``chained_updates`` with ``c0`` -> 0: its L0 links vanish and only the loss' bounds are left)."""
    original = lazy.relaxation_cuts

    def relaxation_cuts(built: Any, sf: Any, time_limit: float | None, start: Any = None) -> tuple[Any, dict]:
        sf, info = original(built, sf, time_limit, start)
        th = built.ctx["theta"].ids.ravel()
        lo, hi = sf.col_lower.copy(), sf.col_upper.copy()
        if info.get("bound") is not None:
            lo[th] = info["bound"] - 1e-6 * max(1.0, abs(info["bound"]))
        if start is not None:
            ub = float(sf.objective(start))
            hi[th] = ub + 1e-6 * max(1.0, abs(ub))
        info["chain"] = [float(lo[th][0]), float(hi[th][0])]
        return replace(sf, col_lower=lo, col_upper=hi), info

    lazy.relaxation_cuts = relaxation_cuts


def main() -> None:
    design, datasets = sys.argv[1], sys.argv[2].split(",")
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 120.0
    solver = sys.argv[4] if len(sys.argv) > 4 else "gurobi"
    options = {k: rc._number(v) for k, v in (o.split("=", 1) for o in sys.argv[5:])}
    if "prio" not in design:
        risk_mod.SUPPORT_PRIORITY = 0
    if "shipped" not in design:  # the backends' bound focus off: only the NAME=VALUE options given here
        Backend.bound_focus_for = classmethod(lambda cls, solver: {})
    if "chain" in design:
        chained_bounds()
    out = Path(__file__).parent / "results" / f"risk_designs_T5_{time.strftime('%Y-%m-%d')}.jsonl"
    rc.warm_up()
    for ds in datasets:
        r = rc.run(ds, 5, limit, 3, 2000, "lcpa", solver, peers=("ours",), solver_options=options)
        r.update(design=design, load_after=os.getloadavg())
        print(design, solver, ds, r["status"], "gap", r["gap"], "bound", r["bound"], "loss", r["loss"],
              "time", round(r["time_s"], 1), "cpu", round(r["cpu_s"], 1), "load", round(r["load"], 2), flush=True)
        with out.open("a") as fh:
            fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
