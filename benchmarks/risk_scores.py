"""Risk scores on the shared datasets (thesis §4.4-4.5): ORS on binary data, OGRS on continuous data.

    .venv/bin/python benchmarks/risk_scores.py                         # the issue's grid (300 s per solve)
    .venv/bin/python benchmarks/risk_scores.py --time-limit 30 --sample 1000   # a shorter run
    treeopt experiment run experiments/risk_scores.toml                # the same grid from its config

* ORS with ``T`` in {3, 5} on the risk-slim binarized copies of mushrooms,
  breast-wisconsin-original, spambase and adult, tangent sets V0 versus V3;
* OGRS with 3 rules on breast, heart, pima and wholesale, started rule by rule (thesis lines
  1473-1490; the start's one-rule solves are included in the task's time, not in ``runtime_s``).

80/20 stratified split (seed 0), HiGHS. Reported: exact training log-loss (mean over samples, of the
decoded model, not of the piecewise-linear surrogate), test AUC, solve time, final gap. The grid runs on
the experiment runner (``treeopt_dsl.experiments``): each solve in its own process, each finished solve a
row of the SQLite store at once, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cli_paths import refuse_unwritable

ORS_DATA = ("mushrooms", "breast-wisconsin-original", "spambase", "adult")
OGRS_DATA = ("breast", "heart", "pima", "wholesale")


def grid_text(ors_data: list[str], ogrs_data: list[str], time_limit: float, sample: int | None) -> str:
    """The benchmark's grid as an experiment TOML (``experiments/risk_scores.toml`` is the default one)."""
    ds = [f'{{ name = "{d}", variant = "riskslim" }}' for d in ors_data] + [f'"{d}"' for d in ogrs_data]
    lines = ["# benchmarks/risk_scores.py's grid (written by grid_text: edit the script, not this file)",
             "[experiment]", 'name = "risk_scores"', f"time_limit = {float(time_limit)!r}", "threads = 1",
             'metrics = ["auc", "logloss", "accuracy"]', "", "[data]", f"datasets = [{', '.join(ds)}]",
             "seeds = [0]", "test_size = 0.2"] + ([f"sample = {sample}"] if sample else [])
    for T in (3, 5):
        for v in ("V0", "V3"):
            lines += ["", "[[method]]", f'name = "ors.T{T}.{v}"', 'formulation = "ors"',
                      f'params = {{ T = {T}, tangents = "{v}" }}', 'warm_start = "none"',
                      f"datasets = [{', '.join(repr(d).replace(chr(39), chr(34)) for d in ors_data)}]"]
    lines += ["", "[[method]]", 'name = "ogrs.T3.V3"', 'formulation = "ogrs"', 'params = { T = 3, tangents = "V3" }',
              'warm_start = "greedy"  # rule by rule (thesis lines 1473-1490)',
              f"datasets = [{', '.join(repr(d).replace(chr(39), chr(34)) for d in ogrs_data)}]"]
    return "\n".join(lines) + "\n"


def table(rows: list[dict]) -> str:
    out = ["| formulation | dataset | T | V | N train | status | time s | gap | train log-loss | test AUC |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for row in sorted(rows, key=lambda r: (r["method"], r["dataset"])):
        p = row.get("params") or row.get("task_params") or {}
        gap = "-" if row.get("gap") is None else f"{row['gap']:.3f}"
        out.append(f"| {row['method'].split('.')[0]} | {row['dataset']} | {p.get('T')} | {p.get('tangents')} | "
                   f"{row.get('n_train')} | {row.get('status')} | {row.get('runtime_s') or float('nan'):.1f} | {gap} | "
                   f"{row.get('train_logloss', float('nan')):.4f} | {row.get('test_auc', float('nan')):.3f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from treeopt_dsl.experiments import run_grid_text

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--sample", type=int, default=None, help="subsample large data sets to this many rows")
    ap.add_argument("--ors-data", nargs="+", default=list(ORS_DATA))
    ap.add_argument("--ogrs-data", nargs="+", default=list(OGRS_DATA))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/risk_scores.sqlite"), help="results store")
    ap.add_argument("--write-grid", type=Path, help="only write the grid TOML here")
    args = ap.parse_args(argv)
    text = grid_text(args.ors_data, args.ogrs_data, args.time_limit, args.sample)
    if args.write_grid:
        refuse_unwritable(ap, "--write-grid", args.write_grid, "the grid")
        args.write_grid.write_text(text)
        return 0
    refuse_unwritable(ap, "--out", args.out, "the results store")  # refused by name before any task
    summary, rows = run_grid_text(text, args.out, "risk_scores", jobs=args.jobs)
    print(summary.line())
    print(table(rows))
    return 130 if summary.interrupted else 0


if __name__ == "__main__":
    raise SystemExit(main())
