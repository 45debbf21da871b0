"""Where the open instances' gaps come from: the continuous relaxation of OLCT and ors against what is known.

    .venv/bin/python benchmarks/root_bounds.py                   # OLCT on Table 3.1 x seeds 0-4, ors on three sets
    .venv/bin/python benchmarks/root_bounds.py --olct-seeds 0 --ors-datasets heart

**OLCT** (depth 2, the grid's settings: derived big-M, |w| <= 10, split columns; 80/20 split by seed): the LP
relaxation's bound (``treeopt_dsl.solve.relaxation_bound``), the root node's own LP (the level-0 term
``C_1 sum_i xi_i1 + ||w_1||_1`` alone, minimized over the root's split by
:func:`treeopt_dsl.starts.node_lp.node_lp`), and, from the 300-s grid's rows (``--grid``), the best objective and
the branch-and-bound bound at the limit. When the first two are equal, the relaxation holds nothing of the deeper
levels' loss (3.15): fractional routing lets every level-1 row go slack, and the whole of the level-1 loss is left
to branching on the routing indicators.

**ors** (T = 5, ``risk_peers.py``'s datasets and rows: spambase at 2000): the LP bound against the proven
optimum. The relaxation of the card (4.2)-(4.3) is its convex hull (tested), so the root gap is the convex
loss' over that hull, not a weakness of the rows.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from cli_paths import refuse_missing, refuse_unwritable

TABLE31 = ("breast", "climate", "haberman", "heart", "ionosphere", "parkinsons", "sonar", "spectf", "tic-tac-toe",
           "wholesale")
GRID = ("benchmarks/results/tree_solve_olct_columns_300s_2026-11-24.jsonl",
        "benchmarks/results/tree_solve_olct_columns_300s_seeds234_2026-11-24.jsonl")
OLCT = {"depth": 2, "big_m": "derived", "w_bound": 10.0, "b_bound": "auto", "split_columns": True}


def root_lp(built) -> float:
    """The root node's own term of OLCT's objective, minimized over the root's split alone."""
    from treeopt_dsl.starts.node_lp import NodeProblems

    nodes = NodeProblems(built)
    rows = np.arange(built.ctx.data.n_samples)
    w, b = nodes.solve(1, 0, rows)
    return nodes.value(1, rows, w, b)


def grid_rows(paths: list[str]) -> dict[tuple[str, int], dict]:
    out = {}
    for path in paths:
        if not Path(path).exists():
            continue
        for line in Path(path).read_text().splitlines():
            r = json.loads(line)
            name, seed = r["id"].split("-", 1)[1].rsplit("-s", 1)
            out[(name, int(seed.split("-")[0]))] = r
    return out


def olct(datasets: list[str], seeds: list[int], grid: dict) -> list[dict]:
    from treeopt_dsl.datasets import load
    from treeopt_dsl.formulations import get_formulation
    from treeopt_dsl.solve import relaxation_bound

    rows = []
    for name in datasets:
        data = load(name)
        for seed in seeds:
            train, _ = data.split(0.2, seed=seed)
            built = get_formulation("olct", **OLCT).build(train)
            lp = relaxation_bound(built)
            ref = grid.get((name, seed), {})
            rows.append({"formulation": "olct", "dataset": name, "seed": seed, "lp_bound": lp.bound,
                         "root_lp": root_lp(built), "objective": ref.get("objective"), "bound": ref.get("bound"),
                         "status": ref.get("status")})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def ors(datasets: list[str], T: int, time_limit: float, sample: int) -> list[dict]:
    from treeopt_dsl.datasets import load
    from treeopt_dsl.formulations import get_formulation
    from treeopt_dsl.solve import relaxation_bound

    rows = []
    for name in datasets:
        data = load(name)
        if data.n_samples > sample:  # as risk_peers.py
            data = data.subsample(sample, seed=0)
        spec = get_formulation("ors", T=T)
        lp = relaxation_bound(spec.build(data))
        res = spec.solve(data, time_limit=time_limit, threads=1)
        rows.append({"formulation": "ors", "dataset": name, "lp_bound": lp.bound, "objective": res.objective,
                     "bound": res.bound, "status": res.status.value,
                     "runtime_s": res.runtime_s})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| formulation | dataset | seed | LP bound | root node's LP | B&B bound at the limit | best objective | "
             "status | root gap | closed by B&B |", "|---|---|--:|--:|--:|--:|--:|---|--:|--:|"]
    for r in rows:
        obj, lp, bb = r["objective"], r["lp_bound"], r["bound"]
        gap = (obj - lp) / obj if obj else float("nan")
        closed = (bb - lp) / (obj - lp) if obj and bb is not None and obj > lp else float("nan")
        root = f"{r['root_lp']:.2f}" if "root_lp" in r else "-"
        lines.append(f"| {r['formulation']} | {r['dataset']} | {r.get('seed', '-')} | {lp:.2f} | {root} | "
                     f"{bb if bb is None else round(bb, 2)} | {obj if obj is None else round(obj, 2)} | "
                     f"{r['status']} | {gap:.3f} | {closed:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--olct-datasets", nargs="*", default=list(TABLE31))
    ap.add_argument("--olct-seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--grid", nargs="*", default=list(GRID), help="the 300-s grid's rows (JSON lines)")
    ap.add_argument("--ors-datasets", nargs="*", default=["breast-wisconsin-original", "heart", "spambase"])
    ap.add_argument("--T", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=150.0, help="seconds per ors solve")
    ap.add_argument("--sample", type=int, default=2000, help="ors: rows at most (spambase: 2000, as risk_peers.py)")
    ap.add_argument("--json-out", help="write the rows as JSON lines")
    args = ap.parse_args(argv)
    # the defaults may be absent
    refuse_missing(ap, "--grid", [p for p in args.grid if p not in GRID], "give the 300-s grid's rows, JSON lines")
    refuse_unwritable(ap, "--json-out", args.json_out, "the rows")  # refused before the solves, not after all of them
    rows = olct(args.olct_datasets, args.olct_seeds, grid_rows(args.grid))
    rows += ors(args.ors_datasets, args.T, args.time_limit, args.sample)
    print(table(rows))
    equal = [r for r in rows if "root_lp" in r and abs(r["lp_bound"] - r["root_lp"]) <= 1e-6 * max(1.0, r["root_lp"])]
    if any("root_lp" in r for r in rows):
        print(f"\nOLCT: the LP bound equals the root node's own LP on {len(equal)} of "
              f"{sum('root_lp' in r for r in rows)} instances")
    if args.json_out:
        Path(args.json_out).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
