"""Time to proven optimality for depth-2 OLCT and OCT: paper's M vs derived M vs derived M + greedy start.

    .venv/bin/python benchmarks/tree_solve.py                       # the issue's grid (long: up to 120 solves x 60 s)
    .venv/bin/python benchmarks/tree_solve.py --datasets haberman --seeds 0 --time-limit 10   # a taste
    treeopt experiment run experiments/tree_solve.toml --store benchmarks/results/tree_solve.sqlite   # the same grid

Grid: formulations {olct, oct, octh, margot} x datasets x seeds (80/20 stratified split, standardized on the
training part) x configurations:

* ``paper``:   the papers' constant M = 100, no warm start, the split repeated in every row as printed;
* ``derived``: per-row big-M from the bounds (OLCT: |w| <= 10, b auto; OCT: |w| <= 1, b auto);
* ``derived+greedy``: the same with the greedy warm start (seed 000 lines 657-663);
* ``derived+auto``: the library's default start (the best of CART, greedy, the exact DP tree and TAO);
* ``columns+auto`` / ``expression+auto``: the same with the split values as columns (``split_columns``, OLCT's
  default) or as an expression repeated in every row that uses them (the other trees' default).

The grid runs on the experiment runner (``treeopt_dsl.experiments``): one method per formulation and
configuration (``olct.paper``, ``oct.derived+greedy``, ...), each solve in its own process, each finished
solve a row of the SQLite store at once, so an interrupted run resumes where it stopped (``--jobs N``
runs N at a time). Every row also records CART's and the greedy start's objective in the formulation's own
objective (``references``); the summary counts the answers no worse than both (issue 14's target: all).
``--datasets table31`` runs the thesis' Table 3.1 datasets. The summary prints, per formulation and
configuration, how many instances were proven optimal, the geometric mean of the time (time limit for
unproven ones) and its speed-up over ``paper``, the mean final gap, and the mean test balanced accuracy.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from cli_paths import refuse_unwritable

DATASETS = ("haberman", "wholesale", "heart", "parkinsons", "climate")
#: the thesis' Table 3.1 datasets (OLCT vs MARGOT vs OCT-H), those in the data directory
TABLE31 = ("breast", "climate", "haberman", "heart", "ionosphere", "parkinsons", "sonar", "spectf", "tic-tac-toe",
           "wholesale")
CONFIGS = {
    "paper": {"big_m": 100.0, "split_columns": False},  # the thesis' model in its own row layout
    "derived": {"big_m": "derived"},
    "derived+greedy": {"big_m": "derived"},
    "derived+auto": {"big_m": "derived"},  # the library's default start (CART, greedy, DP, TAO: the best)
    "columns+auto": {"big_m": "derived", "split_columns": True},  # the split values as columns (olct's default)
    "expression+auto": {"big_m": "derived", "split_columns": False},  # the split as an expression in every row
}
BOUNDS = {"olct": {"w_bound": 10.0, "b_bound": "auto"}, "oct": {"w_bound": 1.0, "b_bound": "auto"},
          "octh": {"w_bound": 1.0, "b_bound": "auto"}, "margot": {"w_bound": 10.0, "b_bound": "auto"}}
#: MARGOT is an MIQP (squared l2): HiGHS solves MILPs and continuous QPs only, so its methods run on SCIP
SOLVERS = {"margot": "scip"}
START = {"paper": "none", "derived": "none", "derived+greedy": "greedy", "derived+auto": "auto", "columns+auto": "auto",
         "expression+auto": "auto"}


def grid_text(formulations: list[str], datasets: list[str], seeds: list[int], configs: list[str], time_limit: float,
              threads: int) -> str:
    """The benchmark's grid as an experiment TOML (``experiments/tree_solve.toml`` is the default one)."""
    from treeopt_dsl.experiments import toml_value

    lines = ["# benchmarks/tree_solve.py's grid (written by grid_text: edit the script, not this file)",
             "[experiment]", 'name = "tree_solve"', f"time_limit = {float(time_limit)!r}", f"threads = {threads}",
             "retries = 1", "", "[data]", f"datasets = {toml_value(list(datasets))}",
             f"seeds = {toml_value(list(seeds))}", "test_size = 0.2"]
    for f in formulations:
        for c in configs:
            params = {"depth": 2, **CONFIGS[c], **(BOUNDS[f] if CONFIGS[c]["big_m"] == "derived" else {})}
            lines += ["", "[[method]]", f'name = "{f}.{c}"', f'formulation = "{f}"', f"params = {toml_value(params)}",
                      f'warm_start = "{START[c]}"', 'references = ["cart", "greedy"]']
            if f in SOLVERS:
                lines.append(f'solver = "{SOLVERS[f]}"')
    return "\n".join(lines) + "\n"


def _no_worse(r: dict) -> bool:
    """Whether the answer is at least as good as CART's and the greedy start's, in the formulation's objective."""
    refs = [v for v in (r.get("references") or {}).values() if isinstance(v, (int, float))]
    if r.get("objective") is None:
        return False
    return all(r["objective"] <= v + 1e-6 * max(1.0, abs(v)) for v in refs)


def summarize(rows: list[dict], time_limit: float) -> str:
    out = ["| formulation | config | proven optimal | uncertified | geo-mean time (s) | speed-up vs paper | mean gap "
           "| test bal. acc. | <= CART and greedy |", "|---|---|---|---|---|---|---|---|---|"]
    for f in sorted({r["method"].split(".", 1)[0] for r in rows}):
        base = None
        for c in CONFIGS:
            rs = [r for r in rows if r["method"] == f"{f}.{c}"]
            if not rs:
                continue
            t = np.array([r.get("runtime_s") or time_limit if r.get("status") == "optimal" else time_limit for r in rs])
            geo = float(np.exp(np.mean(np.log(np.maximum(t, 1e-3)))))
            base = geo if c == "paper" else base
            gaps = [r["gap"] for r in rs if r.get("gap") is not None]
            accs = [r["test_balanced_accuracy"] for r in rs if r.get("test_balanced_accuracy") is not None]
            n_opt = sum(r.get("status") == "optimal" for r in rs)
            n_unc = sum(r.get("status") == "uncertified" for r in rs)  # a failed certificate is never optimal
            n_ok = sum(_no_worse(r) for r in rs)
            speedup = f"{base / geo:.2f}x" if base else "-"  # "-": the paper's configuration was not run
            out.append(f"| {f} | {c} | {n_opt}/{len(rs)} | {n_unc} | {geo:.2f} | {speedup} | "
                       f"{(np.mean(gaps) if gaps else float('nan')):.3f} | "
                       f"{(np.mean(accs) if accs else float('nan')):.3f} | {n_ok}/{len(rs)} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from treeopt_dsl.experiments import run_grid_text

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--formulations", nargs="+", default=["olct", "oct"])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), help="names, or 'table31'")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="solves in parallel (processes)")
    ap.add_argument("--executor", choices=("local", "dask"), default="local")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/tree_solve.sqlite"), help="results store")
    ap.add_argument("--write-grid", type=Path, help="only write the grid TOML here")
    args = ap.parse_args(argv)
    if args.datasets == ["table31"]:
        args.datasets = list(TABLE31)
    text = grid_text(args.formulations, args.datasets, args.seeds, args.configs, args.time_limit, args.threads)
    if args.write_grid:
        refuse_unwritable(ap, "--write-grid", args.write_grid, "the grid")
        args.write_grid.write_text(text)
        return 0
    refuse_unwritable(ap, "--out", args.out, "the results store")  # refused by name before any task
    summary, rows = run_grid_text(text, args.out, "tree_solve", executor=args.executor, jobs=args.jobs)
    print(summary.line())
    print(summarize(rows, args.time_limit))
    return 130 if summary.interrupted else 0


if __name__ == "__main__":
    raise SystemExit(main())
