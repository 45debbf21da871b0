"""``treeopt born-again``: the smallest tree that reproduces a forest, from the command line.

    treeopt born-again FOREST.txt --objective depth                        # a BA-Trees forest file
    treeopt born-again forest.joblib --objective leaves --heuristic         # a pickled scikit-learn forest
    treeopt born-again FOREST.txt --prune --train TRAIN.csv --test TEST.csv --output tree.txt --json
    treeopt born-again FOREST.txt --objective leaves --train TRAIN.csv --plot tree.png   # names from the header

The model is a forest in the BA-Trees text format (``.txt``) or a pickled scikit-learn ``RandomForestClassifier``
/ ``ExtraTreesClassifier`` / ``DecisionTreeClassifier`` (``.pkl``, ``.pickle``, ``.joblib``: unpickling runs
code, so only load your own files). Data files are CSV with a header; the label is ``--label`` (default: the
column named ``Class``, as every command reads a CSV file), the other columns are the features in the forest's order.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from treeopt_dsl.bornagain.baformat import read_ba_forest, write_ba_forest
from treeopt_dsl.bornagain.dp import OBJECTIVES, born_again
from treeopt_dsl.bornagain.ensemble import Ensemble
from treeopt_dsl.bornagain.faithful import check_faithful
from treeopt_dsl.bornagain.heuristic import born_again_heuristic
from treeopt_dsl.bornagain.prune import prune_empty_splits
from treeopt_dsl.cli.common import EXIT_NO_SOLUTION, EXIT_OK, EXIT_UNCERTIFIED, check_writable_options, time_left
from treeopt_dsl.datasets.csvfile import default_label
from treeopt_dsl.defaults import SOLVER
from treeopt_dsl.errors import DataError, TreeoptError

#: the MILP solver of the heuristic's homogeneity proofs under ``--solver auto`` (small MILPs: HiGHS)
HEURISTIC_SOLVER = "highs"

__all__ = ["load_ensemble", "read_csv", "run", "scores"]




def load_ensemble(path: str | Path) -> Ensemble:
    """A BA-Trees forest file or a pickled scikit-learn tree model, as an :class:`Ensemble`."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"model file {p} does not exist")
    if p.suffix.lower() in (".pkl", ".pickle", ".joblib"):
        import joblib  # reads plain pickles too

        try:
            model = joblib.load(p)
        except (pickle.UnpicklingError, EOFError, ValueError) as exc:
            raise DataError(f"{p}: not a pickled model ({exc})") from None
        return Ensemble.from_sklearn(model)
    return read_ba_forest(p)


def read_csv(path: str | Path, label: str | None, n_features: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Features, labels and feature names of a CSV file with a header (the BA-Trees datasets' layout)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"data file {p} does not exist")
    try:
        with p.open(encoding="utf-8") as fh:
            header = [h.strip() for h in fh.readline().strip().split(",")]
        if label is None:
            label = default_label(header, str(p))
        if label not in header:
            raise DataError(f"{p}: no column {label!r} (columns: {', '.join(header)})")
        with warnings.catch_warnings():  # a header-only file: refused below in one line, not warned about
            warnings.filterwarnings("ignore", message="loadtxt: input contained no data", category=UserWarning)
            data = np.loadtxt(p, delimiter=",", skiprows=1, ndmin=2, encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{p} is not a text file: a CSV file with a header is expected") from None
    except ValueError as exc:
        raise DataError(f"{p}: not a numeric CSV file ({exc})") from None
    if data.shape[0] == 0:
        raise DataError(f"{p}: no data rows (only a header): the samples are needed")
    if data.shape[1] != len(header):
        raise DataError(f"{p}: {data.shape[1]} columns in the rows, {len(header)} in the header")
    k = header.index(label)
    X = np.delete(data, k, axis=1)
    if X.shape[1] != n_features:
        raise DataError(f"{p}: {X.shape[1]} feature columns, the forest has {n_features}")
    return X, data[:, k], [h for i, h in enumerate(header) if i != k]


def scores(y: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    """Accuracy and macro F1 (the mean of the per-class F1), the figures of the paper's Table 4."""
    from sklearn.metrics import f1_score

    y, pred = np.asarray(y).astype(int), np.asarray(pred).astype(int)
    return {"accuracy": float(np.mean(y == pred)), "f1": float(f1_score(y, pred, average="macro", zero_division=0))}


def run(args: argparse.Namespace) -> int:
    """The ``born-again`` command; returns the exit status."""
    if args.prune and not args.train:
        raise TreeoptError("--prune needs --train TRAIN.csv (the training samples that decide empty splits)")
    if args.objective not in OBJECTIVES:  # checked before the forest is read
        raise TreeoptError(f"--objective must be one of {', '.join(OBJECTIVES)}, got {args.objective!r}")
    check_writable_options(args, output="the tree", plot="the plot")
    ens = load_ensemble(args.model)
    # the data files are read before the dynamic program: a bad file is refused before the work, not after it
    train = read_csv(args.train, args.label, ens.n_features) if args.train else None
    test = read_csv(args.test, args.label, ens.n_features) if args.test else None
    if args.heuristic:
        left = time_left(args, args.time_limit)  # --time-limit bounds the whole command, the heuristic included
        tree, stats = born_again_heuristic(ens, n_cells=args.n_cells, seed=args.seed,
                                           solver=HEURISTIC_SOLVER if args.solver == SOLVER else args.solver,
                                           deadline=None if left is None else time.perf_counter() + left)
        out: dict[str, Any] = {"method": "heuristic", "time_s": round(stats["time_s"], 4),
                               "proofs": stats["proofs"], "counterexamples": stats["counterexamples"],
                               "status": "faithful" if stats.get("complete", True) else
                               f"time_limit ({stats.get('unproven_leaves', 0)} region(s) left unproven: majority "
                               "leaves)"}
    else:
        res = born_again(ens, args.objective, time_limit=time_left(args, args.time_limit))
        if res.tree is None:
            print(f"treeopt: the dynamic program stopped at the time limit ({args.time_limit} s) without a tree; "
                  "try --heuristic", file=sys.stderr)
            return EXIT_NO_SOLUTION
        tree = res.tree
        out = {"method": f"dp ({res.method})", "status": res.status, "time_s": round(res.time, 4),
               "regions": res.n_regions}
    faithful = check_faithful(tree, ens)
    out.update({"model": str(args.model), "objective": args.objective, "trees": ens.n_trees,
                "depth": tree.depth, "leaves": tree.n_leaves, "faithful": faithful.ok,
                "faithful_check": faithful.method, "cells_checked": faithful.n_cells})
    final, names = tree, None
    if train is not None:
        X, _, names = train
        if args.prune:
            final = prune_empty_splits(tree, X)
            out["pruned"] = {"depth": final.depth, "leaves": final.n_leaves}
    if test is not None:
        X, y, names = test
        out["test"] = {"forest": scores(y, ens.predict(X)), "born_again": scores(y, tree.predict(X))}
        if args.prune:
            out["test"]["pruned"] = scores(y, final.predict(X))
    if names is not None and ens.feature_names is None:  # the CSV header names the forest's features
        tree.feature_names = final.feature_names = tuple(names)
    if args.plot:
        shown = train[0] if train is not None else None  # leaves with the training samples reaching them
        final.plot(max_leaves=max(64, final.n_leaves), X=shown).savefig(args.plot, dpi=110)
        out["plot"] = args.plot
    if args.output:
        write_ba_forest(final, args.output, dataset_name=Path(args.train).name if args.train else "")
        out["output"] = args.output
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        if not args.quiet:
            print(final.text())
        what = "pruned tree" if args.prune else "born-again tree"
        print(f"{what}: depth {final.depth}, {final.n_leaves} leaves"
              + (f" (before pruning: depth {tree.depth}, {tree.n_leaves} leaves)" if args.prune else ""))
        print(f"{out['method']}, {out['status']}, {out['time_s']} s; faithful to the {ens.n_trees}-tree forest: "
              f"{'yes' if faithful.ok else 'NO'} ({faithful.method}, {faithful.n_cells} cells)")
        for name, sc in out.get("test", {}).items():
            print(f"test {name}: accuracy {sc['accuracy']:.4f}, F1 {sc['f1']:.4f}")
    return EXIT_OK if faithful.ok else EXIT_UNCERTIFIED
