"""Günlük et al. (seed 002) with HiGHS: the model enhancements (Table 2) and depth-2 test accuracy (Table 8).

    .venv/bin/python benchmarks/odt_categorical.py                          # the full grid (long: 300 s per solve)
    .venv/bin/python benchmarks/odt_categorical.py --experiments table2 --table2-datasets tic-tac-toe \\
        --time-limit 30 --jobs 2                                            # a taste
    .venv/bin/python benchmarks/odt_categorical.py --summary benchmarks/results/odt_categorical_reduced.jsonl
    .venv/bin/python benchmarks/odt_categorical.py --write-grid experiments/   # only the grids (gunluk_table*.toml)
    treeopt experiment run experiments/gunluk_table8.toml --store benchmarks/results/odt_categorical.sqlite

* ``table2`` (grid ``gunluk_table2``): depth-3 trees ("3") on 200 stratified samples of two shared datasets
  (``sample = 200``, no test part), one method per column of Table 2: Nothing / No anchor / No relax / No
  strength / All (``formulations.categorical.TABLE2``). By default every ``c`` and (7) are kept
  (``drop_c=False``) and the deletion (14) is left to the solver's presolve, as in the paper ("performed
  automatically by CPLEX", so not a column of Table 2); ``--table2-drop-c`` applies (14) in every column
  instead. Recorded: time, status, HiGHS branch-and-bound nodes and LP iterations (the runner's ``nodes`` and
  ``lp_iterations``; the paper reports CPLEX's LPs).
* ``table8`` (grid ``gunluk_table8``): depth-2 trees, all enhancements, no feature selection: per split (the
  seed), a stratified 90/10 split (``test_size = 0.1``: ``Dataset.split(0.1, seed=split)``), ``min(90%, 600)``
  stratified training samples for the ODT (its ``train_sample = 600``), accuracy on the 10% test part; beside
  it scikit-learn's CART of depth 3 (method ``CART-D3``) trained on the whole 90% (the paper's CART-D3 column
  is R's rpart).

No warm start (the paper's protocol). The grids run on the experiment runner (``treeopt_dsl.experiments``,
:func:`grid_text`; the defaults are ``experiments/gunluk_table2.toml`` and ``experiments/gunluk_table8.toml``):
each solve in its own process, each finished solve a row of the SQLite store (``--out``) at once, so an
interrupted run resumes (``--jobs N`` runs N at a time). ``--summary FILE`` prints the tables from a store or
from the JSON-lines rows of the runs before the runner, with the paper's numbers beside ours.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
from cli_paths import refuse_missing, refuse_unwritable

from treeopt_dsl.experiments.report import read_paper
from treeopt_dsl.io import atomic_binary

TABLE8_DATASETS = ("breast-wisconsin-original", "krkp", "mushrooms", "tic-tac-toe", "monks-1", "votes",
                   "spect-heart", "student-alcohol", "a1a")
TABLE2_DATASETS = ("breast-wisconsin-original", "tic-tac-toe")

#: the published numbers, one home: experiments/papers/gunluk_*.csv (each value checked against the seed by
#: tests/test_reproduction.py)
PAPERS = Path(__file__).resolve().parent.parent / "experiments" / "papers"


def _paper_cells(name: str) -> dict[tuple[str, str, str], tuple[float, str]]:
    """(dataset, method, metric) -> (value, note) of one published-numbers file."""
    return {(r["dataset"], r["method"], r["metric"]): (float(r["value"]), r.get("note") or "")
            for r in read_paper(PAPERS / name)}


def _table2() -> dict[str, dict[str, tuple[int | None, int]]]:
    """Table 2 (depth 3, 200 samples, CPLEX 12.6.1, 8 cores): seconds (None at the 3 h limit) and CPLEX's LPs."""
    out: dict[str, dict[str, tuple[int | None, int]]] = {}
    for (ds, method, _), (v, note) in _paper_cells("gunluk_tables2_3.csv").items():
        if method.endswith("-200"):
            lps = int(re.search(r"(\d+) LPs", note).group(1))  # type: ignore[union-attr]
            out.setdefault(ds, {})[method.removesuffix("-200").replace("-", " ")] = (
                None if "limit" in note else int(v), lps)
    return out


def _pct(cells: dict[tuple[str, str, str], tuple[float, str]], ds: str, method: str) -> tuple[float, float]:
    """(train, test) accuracy in % of one method of a Table 8-11 file."""
    train, test = (round(100 * cells[ds, method, f"{k}_accuracy"][0], 1) for k in ("train", "test"))
    return train, test


_T8, _T10 = _paper_cells("gunluk_table8_all.csv"), _paper_cells("gunluk_table10.csv")
_T8_SETS = list(dict.fromkeys(ds for ds, m, _ in _T8 if m == "ODT-D2"))
PAPER_TABLE2 = _table2()
#: the paper's Table 8 (30 min limit): depth-2 train (test) accuracy and CART-D3 train (test), in %
PAPER_TABLE8 = {ds: (_pct(_T8, ds, "ODT-D2"), _pct(_T8, ds, "CART-D3")) for ds in _T8_SETS}
#: Table 10 (5 min limit) depth-2 column: the limit our default run uses
PAPER_TABLE10_D2 = {ds: _pct(_T10, ds, "ODT-D2") for ds in dict.fromkeys(ds for ds, m, _ in _T10 if m == "ODT-D2")}


#: the data sets the paper read from one file of those the data directory stacks (seed 002 Table 1: 'monks-1 432
#: 50% 17 6', the 432-row UCI test file; the data directory stacks the 124-row training file before it)
PAPER_FILES = {"monks-1": "monks-1.test"}


def _data_entry(name: str) -> str | dict[str, str]:
    """The grid's ``[data]`` entry of one data set: its name, or a table reading the paper's file
    (:data:`PAPER_FILES`)."""
    return {"name": name, "file": PAPER_FILES[name]} if name in PAPER_FILES else name


#: the columns of Table 2, in the paper's order (``formulations.categorical.TABLE2``'s keys)
CONFIGS = ("Nothing", "No anchor", "No relax", "No strength", "All")
#: each experiment's grid name (``experiments/<name>.toml`` is its default grid)
GRIDS = {"table2": "gunluk_table2", "table8": "gunluk_table8"}


def grid_text(experiment: str, datasets: list[str], seeds: int, time_limit: float, threads: int = 1, *,
              configs: tuple[str, ...] | list[str] = CONFIGS, samples: int = 200, shape: str | None = None,
              drop_c: bool = False, train_samples: int = 600) -> str:
    """One experiment's grid as an experiment TOML (``experiments/gunluk_table2.toml`` / ``gunluk_table8.toml``
    are the defaults). ``table2``: one method per column of ``configs``, ``samples`` stratified rows (seeds
    0 .. ``seeds`` - 1), shape ``shape`` (default "3"). ``table8``: the ODT of shape ``shape`` (default "2") on
    at most ``train_samples`` rows of each 90% part and CART-D3 on the whole 90%, ``seeds`` splits."""
    from treeopt_dsl.experiments import toml_value
    from treeopt_dsl.formulations.categorical import TABLE2

    name = GRIDS[experiment]
    what = "Table 2: the enhancements" if experiment == "table2" else "Table 8: depth-2 test accuracy"
    lines = [f"# benchmarks/odt_categorical.py's grid: Günlük et al. {what}",
             "# (written by grid_text: edit the script, not this file)",
             f"#   treeopt experiment run experiments/{name}.toml",
             *(["#   treeopt experiment report STORE --profile accuracy --paper experiments/papers/gunluk_table8.csv"]
               if experiment == "table8" else []),
             "[experiment]", f'name = "{name}"', f"time_limit = {float(time_limit)!r}", f"threads = {threads}"]
    if experiment == "table2":
        lines += ["", "[data]", f"datasets = {toml_value([_data_entry(d) for d in datasets], indent=12)}",
                  f"seeds = {toml_value(list(range(seeds)))}", f"sample = {samples}",
                  "test_size = 0  # the solve is the measure: time, status, nodes, LP iterations"]
        for cfg in configs:
            params = {"shape": shape or "3", "drop_c": drop_c, **TABLE2[cfg]}
            lines += ["", "[[method]]", f'name = "{cfg.replace(" ", "-")}"', 'formulation = "odt_categorical"',
                      f"params = {toml_value(params)}", 'warm_start = "none"']
        return "\n".join(lines) + "\n"
    shape = shape or "2"
    lines += ['metrics = ["accuracy", "balanced_accuracy"]', "", "[data]",
              f"datasets = {toml_value([_data_entry(d) for d in datasets], indent=12)}",
              f"seeds = {toml_value(list(range(seeds)))}", "test_size = 0.1  # Dataset.split(0.1, seed=split)", "",
              "[[method]]", f'name = "ODT-D{re.sub(r"[^A-Za-z0-9_.+-]", "_", shape)}"',
              'formulation = "odt_categorical"', f"params = {toml_value({'shape': shape})}", 'warm_start = "none"',
              f"train_sample = {train_samples}  # min(90%, {train_samples}) stratified training rows", "",
              "[[method]]", 'name = "CART-D3"  # on the whole 90%: rpart (the paper\'s), subset splits of a factor',
              'estimator = "rpart"', "params = { max_depth = 3 }", "",
              "[[method]]", 'name = "CART-D3-onehot"  # scikit-learn on the one-hot columns (before 2026-11-28)',
              'estimator = "cart"', "params = { max_depth = 3 }"]
    return "\n".join(lines) + "\n"


def table_rows(store_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The store's rows in the summary's shape (the JSON-lines rows of the runs before the runner): one row per
    Table 2 solve; per Table 8 split, the ODT's row with CART-D3's accuracies beside it."""
    out, cart = [], {}
    for r in store_rows:
        if r.get("experiment") == GRIDS["table8"] and r.get("method") == "CART-D3":
            cart[(r["dataset"], r["seed"])] = r
    for r in store_rows:
        p = r.get("params") or r.get("task_params") or {}
        base = {"dataset": r["dataset"], "status": r.get("status"), "runtime_s": r.get("runtime_s"),
                "objective": r.get("objective"), "bound": r.get("bound"), "gap": r.get("gap"),
                "nodes": r.get("nodes"), "time_limit": (r.get("options") or {}).get("time_limit")}
        if r.get("experiment") == GRIDS["table2"]:
            out.append({"experiment": "table2", "config": r["method"].replace("-", " "), "seed": r["seed"],
                        "shape": p.get("shape"), "drop_c": p.get("drop_c"), "lp_iterations": r.get("lp_iterations"),
                        "n": r.get("n_train"), **base})
        elif r.get("experiment") == GRIDS["table8"] and str(r.get("method")).startswith("ODT"):
            c = cart.get((r["dataset"], r["seed"]), {})
            out.append({"experiment": "table8", "split": r["seed"], "shape": p.get("shape"),
                        "n_train": r.get("n_train"), "n_test": r.get("n_test"), **base,
                        **({"train_acc": r.get("train_accuracy"), "test_acc": r.get("test_accuracy")} if r.get("ok")
                           else {}),
                        "cart_d3_train_acc": c.get("train_accuracy", np.nan),
                        "cart_d3_test_acc": c.get("test_accuracy", np.nan)})
    return out


def export_rows(rows: list[dict[str, Any]], path: Path) -> None:
    """The summary's rows as JSON lines (NaN as null), written atomically."""
    def clean(v: Any) -> Any:
        return None if isinstance(v, float) and math.isnan(v) else v

    with atomic_binary(path) as f:
        f.write("".join(json.dumps({k: clean(v) for k, v in r.items()}) + "\n" for r in rows).encode())


def _num(v: float | None) -> str:
    return "-" if v is None else f"{0.0 if abs(v) < 5e-7 else v:.1f}"


def summary(rows: list[dict]) -> str:
    out = ["Table 2 (200 samples): ours = HiGHS seconds / B&B nodes ('*' = time limit: best tree's training "
           "errors and the lower bound); paper (depth 3 only) = CPLEX seconds / LPs"]
    t2 = [r for r in rows if r["experiment"] == "table2"]
    for ds, shape, drop in sorted({(r["dataset"], r.get("shape", "3"), r.get("drop_c", True)) for r in t2}):
        out.append(f"  {ds}, shape {shape}, " + ("c dropped by (14)" if drop else "every c kept, with (7)"))
        for cfg in ("Nothing", "No anchor", "No relax", "No strength", "All"):
            rs = [r for r in t2 if r["dataset"] == ds and r["config"] == cfg and r.get("shape", "3") == shape
                  and r.get("drop_c", True) == drop]
            if not rs:
                continue
            ours = ", ".join(f"{r['runtime_s']:.0f}/{r['nodes']}" if r["status"] == "optimal" else
                             f"*/{r['nodes']} (errors {_num(r['objective'])}, bound {_num(r['bound'])})"
                             for r in rs)
            p = PAPER_TABLE2.get(ds, {}).get(cfg) if shape == "3" else None
            paper = "-" if p is None else ("*" if p[0] is None else str(p[0])) + f"/{p[1]}"
            out.append(f"    {cfg:<12} ours {ours:<40} paper {paper}")
    t8 = [r for r in rows if r["experiment"] == "table8"]
    if t8:
        out.append("Table 8, depth 2: mean train (test) accuracy in %; CART-D3: scikit-learn (ours), rpart (paper)")
        for ds in sorted({r["dataset"] for r in t8}):
            rs = [r for r in t8 if r["dataset"] == ds and "test_acc" in r]
            if not rs:
                continue
            tr, te = 100 * np.mean([r["train_acc"] for r in rs]), 100 * np.mean([r["test_acc"] for r in rs])
            ctr, cte = 100 * np.mean([r["cart_d3_train_acc"] for r in rs]), 100 * np.mean([r["cart_d3_test_acc"]
                                                                                          for r in rs])
            opt = sum(r["status"] == "optimal" for r in rs)
            unc = sum(r["status"] == "uncertified" for r in rs)  # a failed certificate is never optimal
            p = PAPER_TABLE8.get(ds)
            paper = "-" if p is None else f"{p[0][0]} ({p[0][1]})   CART {p[1][0]} ({p[1][1]})"
            out.append(f"  {ds:<26} ours {tr:5.1f} ({te:5.1f})  CART {ctr:5.1f} ({cte:5.1f})  "
                       f"[{len(rs)} splits, {opt} optimal, {unc} uncertified, "
                       f"mean {np.mean([r['runtime_s'] for r in rs]):.0f} s]"
                       f"   paper {paper}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from treeopt_dsl.experiments import load_rows, run_grid_text

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per solve (default 300)")
    ap.add_argument("--datasets", default=",".join(TABLE8_DATASETS), help="Table 8 datasets (comma-separated)")
    ap.add_argument("--table2-datasets", default=",".join(TABLE2_DATASETS), help="Table 2 datasets")
    ap.add_argument("--table2-configs", default=",".join(CONFIGS))
    ap.add_argument("--splits", type=int, default=5, help="train/test splits of Table 8 (default 5)")
    ap.add_argument("--table2-seeds", type=int, default=1, help="subsamples of 200 per Table 2 dataset")
    ap.add_argument("--table2-samples", type=int, default=200)
    ap.add_argument("--table2-shape", default="3", help="tree shape of the Table 2 runs (the paper: depth 3)")
    ap.add_argument("--table2-drop-c", action="store_true",
                    help="apply (14) in every Table 2 column (default: keep every c and (7), and leave the deletion "
                         "to the solver's presolve, as the paper did with CPLEX)")
    ap.add_argument("--train-samples", type=int, default=600, help="ODT training samples, min(90%%, N)")
    ap.add_argument("--shape", default="2", help="Table 8 tree shape (default 2)")
    ap.add_argument("--experiments", default="table2,table8")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="solves in parallel (processes)")
    ap.add_argument("--executor", choices=("local", "dask"), default="local")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/odt_categorical.sqlite"), help="results store")
    ap.add_argument("--write-grid", type=Path, metavar="PATH",
                    help="only write the grids: into a directory (gunluk_table2.toml, gunluk_table8.toml), or one "
                         "experiment's to a .toml file")
    ap.add_argument("--summary", type=Path, metavar="FILE",
                    help="only print the tables from FILE: a store (.sqlite) or the old rows (.jsonl)")
    ap.add_argument("--export", type=Path, metavar="JSONL",
                    help="also write the summary's rows as JSON lines (the shape of benchmarks/results/"
                         "odt_categorical_*.jsonl), atomically")
    args = ap.parse_args(argv)
    refuse_missing(ap, "--summary", args.summary, "give a store (.sqlite) or the old rows (.jsonl)")
    outputs = [("--export", args.export, "the summary's rows")]  # refused here, not after the grid ran
    if args.write_grid is not None and args.write_grid.suffix == ".toml":
        outputs.append(("--write-grid", args.write_grid, "the grid"))
    if not args.summary and args.write_grid is None:
        outputs.append(("--out", args.out, "the results store"))
    for option, path, what in outputs:
        refuse_unwritable(ap, option, path, what)
    if args.summary:
        rows = load_rows(args.summary)
        rows = rows if args.summary.suffix == ".jsonl" else table_rows(rows)
        if args.export:
            export_rows(rows, args.export)
        print(summary(rows))
        return 0
    exps = [e.strip() for e in args.experiments.split(",") if e.strip()]
    if any(e not in GRIDS for e in exps):
        ap.error(f"--experiments: choose among {', '.join(GRIDS)}")
    texts = {e: grid_text(e, [d for d in (args.table2_datasets if e == "table2" else args.datasets).split(",") if d],
                          args.table2_seeds if e == "table2" else args.splits, args.time_limit, args.threads,
                          configs=[c.strip() for c in args.table2_configs.split(",") if c.strip()],
                          samples=args.table2_samples, shape=args.table2_shape if e == "table2" else args.shape,
                          drop_c=args.table2_drop_c, train_samples=args.train_samples) for e in exps}
    if args.write_grid:
        if args.write_grid.suffix == ".toml":
            if len(texts) != 1:
                ap.error("--write-grid FILE.toml takes one experiment (--experiments table2 or table8)")
            args.write_grid.write_text(next(iter(texts.values())))
        else:
            args.write_grid.mkdir(parents=True, exist_ok=True)
            for e, text in texts.items():
                (args.write_grid / f"{GRIDS[e]}.toml").write_text(text)
        return 0
    rows, interrupted = [], False
    for e, text in texts.items():
        run, got = run_grid_text(text, args.out, GRIDS[e], executor=args.executor, jobs=args.jobs)
        print(run.line())
        rows += got
        if run.interrupted:
            interrupted = True
            break
    if args.export:
        export_rows(table_rows(rows), args.export)
    print(summary(table_rows(rows)))
    return 130 if interrupted else 0


if __name__ == "__main__":
    raise SystemExit(main())
