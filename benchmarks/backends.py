"""Formulation to solver-ready model through every backend: OLCT depth 2 on N x p synthetic data.

    .venv/bin/python benchmarks/backends.py [--n 5000] [--p 50] [--routes ...]

Each route runs in a fresh interpreter (so peak memory is its own) and reports:

* ``build``: data -> built formulation -> standard form (the same for every route);
* ``export``: standard form -> the native model (``to_highs``, ``to_gurobi``, ``to_mip``,
  ``to_linopy``, ``to_pyomo``; SCIP reads the MPS file the writer produces);
* ``handoff``: native model -> loaded in a solver, ready to solve (linopy: ``to_highspy``; pyomo:
  ``appsi`` HiGHS ``set_instance``; Gurobi: ``update``; the others are loaded by the export);
* peak RSS (``ru_maxrss``) of the process.

Ratios are against the direct HiGHS route measured in the same run. Gurobi's pip licence is
size-limited: building the model works, solving it would not.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time

ROUTES = ("highs", "gurobi", "scip", "mip", "linopy", "pyomo")


def _data(n: int, p: int):
    import numpy as np

    from treeopt_dsl import Dataset

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, :3].sum(1) + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return Dataset.from_arrays(X, y)


def run_route(route: str, n: int, p: int) -> dict:
    from treeopt_dsl import export
    from treeopt_dsl.formulations import get_formulation

    d = _data(n, p)
    t0 = time.perf_counter()
    sf = get_formulation("olct", depth=2).build(d).compile()
    t1 = time.perf_counter()
    handoff = 0.0
    if route == "highs":
        export.to_highs(sf)
    elif route == "gurobi":
        m = export.to_gurobi(sf)
        t2 = time.perf_counter()
        m.update()
        handoff = time.perf_counter() - t2
    elif route == "scip":
        import tempfile
        from pathlib import Path

        import pyscipopt

        from treeopt_dsl.io import write_mps

        with tempfile.TemporaryDirectory() as tmp:
            path = write_mps(sf, Path(tmp) / "m.mps", names=False)
            m = pyscipopt.Model()
            m.hideOutput()
            m.readProblem(str(path))
    elif route == "mip":
        export.to_mip(sf)
    elif route == "linopy":
        m = export.to_linopy(sf)
        t2 = time.perf_counter()
        m.to_highspy()
        handoff = time.perf_counter() - t2
    elif route == "pyomo":
        from pyomo.contrib.appsi.solvers import Highs

        m = export.to_pyomo(sf)
        t2 = time.perf_counter()
        Highs().set_instance(m)
        handoff = time.perf_counter() - t2
    else:
        raise SystemExit(f"unknown route {route}")
    t3 = time.perf_counter()
    return {"route": route, "build_s": t1 - t0, "export_s": t3 - t1 - handoff, "handoff_s": handoff,
            "total_s": t3 - t0, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "nnz": sf.nnz}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--p", type=int, default=50)
    ap.add_argument("--routes", nargs="+", default=list(ROUTES), choices=ROUTES)
    ap.add_argument("--one", choices=ROUTES, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_route(args.one, args.n, args.p)))
        return 0
    rows = []
    for r in args.routes:
        proc = subprocess.run([sys.executable, __file__, "--one", r, "--n", str(args.n), "--p", str(args.p)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            rows.append({"route": r, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1]})
        else:
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    base = next((x["total_s"] for x in rows if x["route"] == "highs" and "total_s" in x), None)
    print(f"# OLCT depth 2, N = {args.n}, p = {args.p} ({platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}); each route in a fresh interpreter")
    print("| route | build s | export s | handoff s | total s | x direct HiGHS | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    for x in rows:
        if "error" in x:
            print(f"| {x['route']} | failed: {x['error']} | | | | | |")
            continue
        ratio = x["total_s"] / base if base else float("nan")
        print(f"| {x['route']} | {x['build_s']:.3f} | {x['export_s']:.3f} | {x['handoff_s']:.3f} | "
              f"{x['total_s']:.3f} | {ratio:.2f} | {x['peak_rss_mb']:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
