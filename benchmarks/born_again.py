"""Born-again tree ensembles (Vidal & Schiffer, ICML 2020) on the paper's forests: Tables 2, 3 and 4.

    .venv/bin/python benchmarks/born_again.py                                  # all 6 datasets x 10 folds x D, L, DL
    .venv/bin/python benchmarks/born_again.py --datasets HT CP FI --time-limit 60
    .venv/bin/python benchmarks/born_again.py --datasets SE PD --objectives depth --json-out /tmp/ba.jsonl
    .venv/bin/python benchmarks/born_again.py --datasets BC --folds 1 5 9 --time-limit 900
    .venv/bin/python benchmarks/born_again.py --peer-binary /tmp/batrees/bornAgain     # beside the authors' C++
    .venv/bin/python benchmarks/born_again.py --scalability --peer-binary /tmp/batrees/bornAgain --time-limit 120

The authors' C++ (the peer): ``fetch`` github:vidalt/BA-Trees, then ``make`` in ``src/born_again_dp`` (g++ only,
no CPLEX needed for the exact DP); it is built beside the project, never committed. Its time is its own
``clock()`` around the construction (CPU seconds, reading the forest excluded); ours is the wall time of
``born_again`` (grid, filtering, DP, tree).

For every forest ``<data>/ba-trees/forests/<DATASET>/<DATASET>.RF<k>.txt`` (10 trees of depth 3 trained on
fold k) and objective (D: depth, L: leaves, DL: depth then leaves) the script builds the born-again tree with
:func:`treeopt_dsl.bornagain.born_again` (per-run ``--time-limit``), checks it is faithful on every cell
(:func:`~treeopt_dsl.bornagain.check_faithful`), and prints per dataset the average depth / number of leaves
beside the paper's Table 2 (difference in brackets; the averages are over the folds that finished, their
number is shown when some did not) and the time per forest. For the depth objective it also prunes the tree
with the fold's training split (:func:`~treeopt_dsl.bornagain.prune_empty_splits`; the paper's Table 3) and
reports accuracy and F1 of the forest, the born-again tree and the pruned tree on the test split (Table 4).
F1 is the macro F1 (the average of the per-class F1; it reproduces the paper's figures for the binary data
sets, e.g. HTRU2's 0.909 beside an accuracy of 0.977). ``--json-out`` appends one JSON line per run.

The data directory comes from ``treeopt_dsl.datasets.data_dir()`` (``--data-dir`` or ``TREEOPT_DATA_DIR``).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from cli_paths import refuse_unwritable
from sklearn.metrics import accuracy_score, f1_score

from treeopt_dsl.bornagain import born_again, check_faithful, prune_empty_splits, read_ba_forest
from treeopt_dsl.datasets import data_dir
from treeopt_dsl.experiments.report import read_paper

DATASETS = {"BC": "Breast-Cancer-Wisconsin", "CP": "COMPAS-ProPublica", "FI": "FICO", "HT": "HTRU2",
            "PD": "Pima-Diabetes", "SE": "Seeds"}
OBJECTIVES = {"D": "depth", "L": "leaves", "DL": "depth-leaves"}
#: the paper's Tables 2-4 as data, one home (each cell checked against the seed by tests/test_reproduction.py)
PAPER_CSV = Path(__file__).resolve().parent.parent / "experiments" / "papers" / "born_again_tables2_4.csv"


_CELLS = {(r["dataset"], r["method"], r["metric"]): float(r["value"]) for r in read_paper(PAPER_CSV)}
# Table 2 (seed 003 lines 286-291): (depth, leaves) averaged over the 10 folds, per objective
PAPER_T2 = {c: {o: (_CELLS[c, f"BA-{o}", "depth"], _CELLS[c, f"BA-{o}", "n_leaves"]) for o in OBJECTIVES}
            for c in DATASETS}
# Table 3 (lines 333-338): BA+P (depth, leaves) of the depth-objective tree pruned with the training split
PAPER_T3 = {c: (_CELLS[c, "BA+P", "depth"], _CELLS[c, "BA+P", "n_leaves"]) for c in DATASETS}
# Table 4 (lines 345-350): accuracy, F1 of RF, BA-tree, BA+P on the test splits
PAPER_T4 = {c: tuple(_CELLS[c, m, k] for m in ("RF", "BA", "BA+P") for k in ("test_accuracy", "test_f1"))
            for c in DATASETS}


def load_split(base: Path, name: str, kind: str, fold: int) -> tuple[np.ndarray, np.ndarray]:
    data = np.loadtxt(base / "datasets" / name / f"{name}.{kind}{fold}.csv", delimiter=",", skiprows=1)
    return data[:, :-1], data[:, -1].astype(int)


def f1(y: np.ndarray, p: np.ndarray) -> float:
    return float(f1_score(y, p, average="macro", zero_division=0))


PEER_OBJ = {"D": 0, "L": 1, "DL": 2}
PEER_MEMORY = 8 * 2**30  # bytes of address space for the C++ peer
PEER_TIMEOUT = 600  # seconds


def run_peer(binary: str | None, forest: Path, obj: str) -> dict[str, Any]:
    """The authors' C++ (``bornAgain FOREST OUT -obj k -trees T``, built from vidalt/BA-Trees): its depth, leaves and
    time (its own ``clock()`` CPU seconds around the construction, read from ``OUT.out``)."""
    if binary is None:
        return {}
    import resource
    import subprocess
    import tempfile

    def limit() -> None:  # the C++ DP can take all the memory (BC folds 2-3 were OOM-killed at 19 GB)
        resource.setrlimit(resource.RLIMIT_AS, (PEER_MEMORY, PEER_MEMORY))

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        t0 = time.perf_counter()
        try:
            n_trees = next(line.split(":")[1].strip() for line in forest.read_text().splitlines()
                           if line.startswith("NB_TREES"))  # its -trees defaults to 10, whatever the file holds
            subprocess.run([binary, str(forest), str(out), "-obj", str(PEER_OBJ[obj]), "-trees", n_trees], check=True,
                           capture_output=True, timeout=PEER_TIMEOUT, preexec_fn=limit)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            return {"peer_status": f"failed: {type(exc).__name__}"}
        wall = time.perf_counter() - t0
        f = (out.parent / "run.out").read_text().strip().split(",")
    return {"peer_status": "optimal", "peer_depth": int(f[6]), "peer_leaves": int(f[8]), "peer_time": float(f[10]),
            "peer_wall": round(wall, 4)}


def run_one(base: Path, code: str, fold: int, obj: str, args: argparse.Namespace) -> dict[str, Any]:
    name = DATASETS[code]
    forest = base / "forests" / name / f"{name}.RF{fold}.txt"
    ens = read_ba_forest(forest)
    res = born_again(ens, OBJECTIVES[obj], method=args.method, time_limit=args.time_limit,
                     max_table_regions=args.max_table_regions, paper_bounds=args.paper_bounds)
    row: dict[str, Any] = {"dataset": code, "fold": fold, "objective": obj, "status": res.status,
                           "depth": res.depth, "leaves": res.n_leaves, "time": round(res.time, 3),
                           "time_dp": round(res.time_dp, 3), "method": res.method, "cells": res.n_cells,
                           "cells_filtered": res.n_cells_filtered, "regions": res.n_regions, "calls": res.n_calls}
    row.update(run_peer(args.peer_binary, forest, obj))
    if res.tree is None:
        return row
    row["faithful"] = bool(check_faithful(res.tree, ens).ok)
    if obj == "D":
        Xtr, _ = load_split(base, name, "train", fold)
        Xte, yte = load_split(base, name, "test", fold)
        pruned = prune_empty_splits(res.tree, Xtr)
        row.update(pruned_depth=pruned.depth, pruned_leaves=pruned.n_leaves)
        for key, model in (("rf", ens), ("ba", res.tree), ("bap", pruned)):
            pred = model.predict(Xte)
            row[f"acc_{key}"] = float(accuracy_score(yte, pred))
            row[f"f1_{key}"] = f1(yte, pred)
    return row


def fmt(v: float, ref: float, nd: int = 1) -> str:
    return f"{v:.{nd}f} ({v - ref:+.{nd}f})"


def summarize(rows: list[dict[str, Any]], codes: list[str], objs: list[str]) -> None:
    print("\nTable 2: born-again tree depth / leaves, averages over the finished folds (difference to the paper)")
    print(f"{'data':4} {'obj':3} {'done':>5} {'depth':>14} {'paper':>6} {'leaves':>18} {'paper':>8} "
          f"{'s/forest':>9} {'max s':>7}")
    for code in codes:
        for obj in objs:
            rs = [r for r in rows if r["dataset"] == code and r["objective"] == obj]
            ok = [r for r in rs if r["status"] == "optimal"]
            if not rs:
                continue
            pd_, pl = PAPER_T2[code][obj]
            if ok:
                d = float(np.mean([r["depth"] for r in ok]))
                lv = float(np.mean([r["leaves"] for r in ok]))
                t = [r["time"] for r in ok]
                peer = ""
                if ok and all("peer_time" in r for r in ok):
                    same = sum(r["peer_depth"] == r["depth"] and r["peer_leaves"] == r["leaves"] for r in ok)
                    pt = [max(r["peer_time"], 1e-4) for r in ok]
                    peer = (f"  C++ {np.mean(pt):.4f} s, ours / C++ {np.exp(np.mean(np.log(np.divide(t, pt)))):.1f}x "
                            f"(geo-mean), same tree size {same}/{len(ok)}")
                print(f"{code:4} {obj:3} {len(ok):>2}/{len(rs):<2} {fmt(d, pd_):>14} {pd_:>6.1f} {fmt(lv, pl):>18} "
                      f"{pl:>8.1f} {np.mean(t):>9.2f} {max(t):>7.1f}{peer}")
            else:
                print(f"{code:4} {obj:3} {0:>2}/{len(rs):<2} {'-':>14} {pd_:>6.1f} {'-':>18} {pl:>8.1f}")
            bad = [r["fold"] for r in ok if not r.get("faithful", True)]
            if bad:
                print(f"     NOT FAITHFUL on folds {bad}")
    drows = [r for r in rows if r["objective"] == "D" and r["status"] == "optimal"]
    if not drows:
        return
    print("\nTable 3 (T3): the depth-objective tree pruned with the training split, depth / leaves (difference to "
          "the paper);\nTable 4 (T4): test accuracy / F1 of the forest, the born-again tree and the pruned tree "
          "(the paper in brackets)")
    for code in codes:
        rs = [r for r in drows if r["dataset"] == code]
        if not rs:
            continue
        pd_, pl = PAPER_T3[code]
        d = float(np.mean([r["pruned_depth"] for r in rs]))
        lv = float(np.mean([r["pruned_leaves"] for r in rs]))
        print(f"T3 {code:3} folds {len(rs):>2}: BA+P depth {fmt(d, pd_)}  leaves {fmt(lv, pl)}")
        vals = [float(np.mean([r[k] for r in rs])) for k in ("acc_rf", "f1_rf", "acc_ba", "f1_ba", "acc_bap", "f1_bap")]
        ref = PAPER_T4[code]
        cells = "  ".join(f"{lab} {v:.3f} [{p:.3f}]" for lab, v, p in zip(
            ("RF acc", "F1", "BA acc", "F1", "BA+P acc", "F1"), vals, ref, strict=True))
        print(f"T4 {code:3} folds {len(rs):>2}: {cells}")


def scalability(args: argparse.Namespace) -> int:
    """Figure 3 of the paper: time of the DP (depth objective) against samples, features and trees, around the
    baseline n = 2500, p = 10, T = 10 (scikit-learn ``make_classification``, each feature binned into ten ordinal
    levels as the paper's data, a random forest of depth 3 turned
    into a hard-vote forest written in the BA-Trees format, so the C++ peer runs the very same forest)."""
    import tempfile

    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.preprocessing import KBinsDiscretizer

    from treeopt_dsl.bornagain import Ensemble, write_ba_forest
    from treeopt_dsl.errors import ModelTooLarge

    grid = [("n", n, 10, 10) for n in (500, 1000, 2500, 5000, 10000)] + \
           [("p", 2500, p, 10) for p in (5, 10, 15, 20)] + [("T", 2500, 10, t) for t in (5, 10, 15, 20)]
    print(f"{'vary':4} {'n':>6} {'p':>3} {'T':>3} {'seed':>4} {'ours s':>8} {'C++ s':>8} {'ratio':>7} depth leaves")
    for vary, n, p, trees in [g for g in grid if g[0] in args.vary]:
        for seed in range(args.seeds):
            X, y = make_classification(n_samples=n, n_features=p, n_informative=max(2, p // 2), random_state=seed)
            # "continuous variables binned into ten ordinal scales" (seed 003, Data Preparation)
            X = KBinsDiscretizer(n_bins=10, encode="ordinal", strategy="quantile").fit_transform(X)
            rf = RandomForestClassifier(n_estimators=trees, max_depth=3, random_state=seed).fit(X, y)
            soft = Ensemble.from_sklearn(rf)
            hard = Ensemble.hard_vote(soft.trees, n_classes=soft.n_classes, n_features=p)
            with tempfile.TemporaryDirectory() as tmp:
                path = write_ba_forest(hard, Path(tmp) / "forest.txt")
                ens = read_ba_forest(path)
                t0 = time.perf_counter()
                try:
                    res = born_again(ens, "depth", time_limit=args.time_limit)
                    mine = {"status": res.status, "depth": res.depth, "leaves": res.n_leaves,
                            "time": round(res.time, 4)}
                except ModelTooLarge:  # beyond the dense grid's cell budget
                    mine = {"status": "too_large", "depth": None, "leaves": None,
                            "time": round(time.perf_counter() - t0, 4)}
                row = {"study": "scalability", "vary": vary, "n": n, "p": p, "trees": trees, "seed": seed, **mine,
                       **run_peer(args.peer_binary, path, "D")}
            peer = row.get("peer_time", np.nan)
            ratio = row["time"] / max(peer, 1e-4)
            print(f"{vary:4} {n:>6} {p:>3} {trees:>3} {seed:>4} {row['time']:>8.3f} {peer:>8.4f} "
                  f"{ratio:>7.0f} {row['depth']} {row['leaves']} {row['status']}", flush=True)
            if args.json_out:
                with open(args.json_out, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--objectives", nargs="+", default=list(OBJECTIVES), choices=list(OBJECTIVES))
    ap.add_argument("--folds", nargs="+", type=int, default=list(range(1, 11)))
    ap.add_argument("--time-limit", type=float, default=600.0, help="wall seconds per DP run (default 600)")
    ap.add_argument("--method", default="auto", choices=["auto", "recursion", "table"])
    ap.add_argument("--max-table-regions", type=int, default=300_000_000)
    ap.add_argument("--paper-bounds", action="store_true",
                    help="DL with the recursion: the authors' (invalid for DL) lower bound, reproducing their figures")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--json-out", default=None, help="append one JSON line per run to this file")
    ap.add_argument("--peer-binary", default=None,
                    help="the authors' bornAgain executable (built from vidalt/BA-Trees src/born_again_dp with make): "
                         "run on the same forests, its sizes and times beside ours")
    ap.add_argument("--seeds", type=int, default=3, help="--scalability: forests per grid point (default 3)")
    ap.add_argument("--vary", nargs="+", default=["n", "p", "T"], choices=["n", "p", "T"],
                    help="--scalability: which of samples, features, trees to vary (default all)")
    ap.add_argument("--scalability", action="store_true",
                    help="the paper's Figure 3 study on synthetic data instead of the paper's forests")
    args = ap.parse_args(argv)
    refuse_unwritable(ap, "--json-out", args.json_out, "the rows")  # refused before any run, not after the first one
    if args.peer_binary is not None and shutil.which(args.peer_binary) is None:
        ap.error(f"--peer-binary {args.peer_binary}: no such executable (give the bornAgain built from "
                 "vidalt/BA-Trees src/born_again_dp with make)")
    root = data_dir(args.data_dir)
    if root is None or not (root / "ba-trees" / "forests").is_dir():
        print("the ba-trees data directory is not available (set TREEOPT_DATA_DIR or --data-dir)", file=sys.stderr)
        return 2
    base = root / "ba-trees"
    rows: list[dict[str, Any]] = []
    if args.scalability:
        return scalability(args)
    print(f"# {platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, "
          f"time limit {args.time_limit:g} s per run")
    for code in args.datasets:
        for obj in args.objectives:
            for fold in args.folds:
                t0 = time.perf_counter()
                row = run_one(base, code, fold, obj, args)
                row["time_total"] = round(time.perf_counter() - t0, 3)
                rows.append(row)
                print(f"{code} {obj:2} fold {fold:2}: {row['status']:10} depth {row['depth']} leaves {row['leaves']} "
                      f"{row['time']:.2f}s ({row['method']}, {row['regions']} regions, "
                      f"{row['cells_filtered']}/{row['cells']} cells)", flush=True)
                if args.json_out:
                    with open(args.json_out, "a") as fh:
                        fh.write(json.dumps(row) + "\n")
    summarize(rows, args.datasets, args.objectives)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
