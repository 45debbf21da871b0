"""Routings of ``oct`` (big-M, FlowOCT's flows, BendersOCT's lazy cuts) against ODTlearn's FlowOCT, on the issue's
binary datasets at depth 2 and 3, every MILP run from no start (the papers' runs), with the exact DP optimum
(STreeD through the library's route) as the reference (issue 14, part 3).

    .venv/bin/python benchmarks/flow_routing.py                                  # 7 datasets x depth 2, 3; 30 s
    .venv/bin/python benchmarks/flow_routing.py --datasets votes monks-3 --depths 2 --time-limit 10

Per dataset and depth, on the same 0/1 matrix ``treeopt_dsl.exact.binarize(X)`` (every cut of every feature;
the binary datasets' own columns):

* ``bigm``: ``oct`` as Bertsimas & Dunn (``--param cuts=all``), HiGHS;
* ``flow`` / ``benders``: ``oct --param routing=flow|benders``, HiGHS (Benders by row generation: HiGHS has no
  lazy-constraint callback) and ``benders`` on SCIP (lazy cuts in a SCIP constraint handler);
* ODTlearn 1.1 ``FlowOCT(solver="cbc", _lambda=0)`` on the same matrix, in its own environment (``.venv-odtlearn``:
  it pins python-mip 1.15). ODTlearn's ``BendersOCT`` on CBC ran past its time limit without returning on a
  200 x 8 toy matrix here (killed at 200 s for a 30 s limit), so it is not run.

All runs: 1 thread, ``--time-limit`` seconds. Columns: training errors, status, wall time; ratios are errors over
the DP optimum. ``--json-out`` appends one JSON line per (dataset, depth).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from cli_paths import refuse_unwritable
from peer_envs import peer_python

DATASETS = ("monks-1", "monks-3", "tic-tac-toe", "breast-wisconsin-original", "votes", "krkp", "mushrooms")
#: (label, routing, solver)
ROUTES = (("bigm", "bigm", "highs"), ("flow", "flow", "highs"), ("benders", "benders", "highs"),
          ("benders-scip", "benders", "scip"))

ODTLEARN = r"""
import json, sys, time
import numpy as np, pandas as pd
from odtlearn.flow_oct import FlowOCT
d = np.load(sys.argv[1])
Z, y, depth, limit = d["Z"], d["y"], int(d["depth"]), float(d["limit"])
t = time.perf_counter()
m = FlowOCT(solver="cbc", depth=depth, _lambda=0, time_limit=limit, num_threads=1, verbose=False)
m.fit(pd.DataFrame(Z), y)
secs = time.perf_counter() - t
err = int(np.sum(np.asarray(m.predict(pd.DataFrame(Z))) != y))
print(json.dumps({"time_s": secs, "errors": err, "status": str(m._solver.model.status).split(".")[-1]}))
"""


def errors_of(result: Any, X: np.ndarray, y: np.ndarray) -> int | None:
    if result.model is None:
        return None
    labels = np.asarray(result.model.classes)[(y > 0).astype(int)]
    return int(np.sum(np.asarray(result.model.predict(X)) != labels))


def odtlearn(Z: np.ndarray, y01: np.ndarray, depth: int, limit: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.npz"
        np.savez(path, Z=Z.astype(np.int8), y=y01, depth=depth, limit=limit)
        try:
            out = subprocess.run([str(peer_python("odtlearn")), "-c", ODTLEARN, str(path)], capture_output=True,
                                 text=True, timeout=limit * 3 + 60)
        except subprocess.TimeoutExpired:
            return {"status": f"no answer in {limit * 3 + 60:.0f} s (killed)"}
    if out.returncode != 0:
        return {"status": "failed: " + (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(dataset: str, depth: int, limit: float) -> dict[str, Any]:
    from treeopt_dsl.datasets import load
    from treeopt_dsl.exact import binarize, maybe_solve_dp
    from treeopt_dsl.formulations import get_formulation

    d = load(dataset)
    X, y = d.X, np.asarray(d.y)
    bz = binarize(X)
    row: dict[str, Any] = {"dataset": dataset, "n": d.n_samples, "cols": bz.n_columns, "depth": depth,
                           "time_limit": limit}
    t = time.perf_counter()
    opt = maybe_solve_dp(get_formulation("oct", depth=depth).build(d), "streed", time_limit=limit)  # every cut
    row.update(dp_err=errors_of(opt, X, y), dp_status=opt.status.value, dp_s=time.perf_counter() - t)
    for label, routing, solver in ROUTES:
        spec = get_formulation("oct", depth=depth, routing=routing, cuts="all")
        t = time.perf_counter()
        try:
            res = spec.solve(d, solver=solver, time_limit=limit, threads=1, warm_start=None)
            row.update({f"{label}_err": errors_of(res, X, y), f"{label}_status": res.status.value,
                        f"{label}_bound": res.bound, f"{label}_s": time.perf_counter() - t})
        except Exception as exc:  # a model too large for a route is a row, not the end of the run
            row.update({f"{label}_err": None, f"{label}_status": f"{type(exc).__name__}: {exc}"[:80],
                        f"{label}_bound": None, f"{label}_s": time.perf_counter() - t})
    peer = odtlearn(bz.Z, (y > 0).astype(np.int32), depth, limit)
    row.update(odtlearn_err=peer.get("errors"), odtlearn_status=peer.get("status"), odtlearn_s=peer.get("time_s"))
    return row


def table(rows: list[dict[str, Any]]) -> str:
    labels = [r[0] for r in ROUTES] + ["odtlearn"]
    head = "| dataset | n | cols | d | DP opt | " + " | ".join(f"{lb} err (s, status)" for lb in labels) + " |"
    out = [head, "|---|--:|--:|--:|--:|" + "---|" * len(labels)]
    for r in rows:
        cells = []
        for lb in labels:
            e, s, st = r.get(f"{lb}_err"), r.get(f"{lb}_s"), r.get(f"{lb}_status")
            ratio = "" if e is None or not r["dp_err"] else f" ×{e / r['dp_err']:.2f}"
            cells.append(f"{'-' if e is None else e}{ratio} ({'-' if s is None else f'{s:.1f}'}, {st})")
        out.append(f"| {r['dataset']} | {r['n']} | {r['cols']} | {r['depth']} | {r['dp_err']} | " + " | ".join(cells)
                   + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--json-out", type=Path)
    a = ap.parse_args(argv)
    refuse_unwritable(ap, "--json-out", a.json_out, "the rows")  # refused before the first dataset, not after it
    rows = []
    for ds in a.datasets:
        for depth in a.depths:
            r = run(ds, depth, a.time_limit)
            rows.append(r)
            print("# " + json.dumps(r), flush=True)
            if a.json_out:
                with a.json_out.open("a") as fh:
                    fh.write(json.dumps(r) + "\n")
    print()
    print(table(rows))
    for lb in [r[0] for r in ROUTES] + ["odtlearn"]:
        proven = sum(1 for r in rows if r.get(f"{lb}_status") in ("optimal", "OPTIMAL"))
        at_opt = sum(1 for r in rows if r.get(f"{lb}_err") is not None and r[f"{lb}_err"] == r["dp_err"])
        print(f"{lb:>12}: proven {proven}/{len(rows)}, at the DP optimum {at_opt}/{len(rows)}")


if __name__ == "__main__":
    main()
