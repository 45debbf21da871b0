"""The ``treeopt`` command's arguments, every subcommand's in one light module (building the parser imports no
solver, engine or scikit-learn: ``treeopt --help`` answers at once)."""

from __future__ import annotations

import argparse
from typing import Any

from treeopt_dsl import __version__
from treeopt_dsl.cli.common import (
    Parser,
    exit_codes_text,
    gap_arg,
    max_thresholds_arg,
    threads_arg,
    time_limit_arg,
)
from treeopt_dsl.defaults import (
    BINARIZE,
    GRID_TIME_LIMIT,
    PATH_TIME_LIMIT,
    REPORT_PROFILES,
    SEED,
    SOLVER,
    TEST_SIZE,
    TIME_LIMIT,
)
from treeopt_dsl.registry import WARM_STARTS

__all__ = ["SHARED", "add_born_again", "add_experiment", "add_shared", "build_parser"]


def _seconds(value: float | None) -> str:
    """A default time limit as ``--help`` shows it."""
    return "none, no limit" if value is None else f"{value:g}"


#: every option more than one subcommand takes: its flags and argparse keywords, declared once so that one name has
#: one meaning, one default (from :mod:`treeopt_dsl.defaults`) and one help text on every subcommand
#: (``tests/cli/test_parsers.py`` walks the parser to keep it so; docs/DESIGN.md, "Command line", is the table)
SHARED: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "json": (("--json",), dict(action="store_true", help="print one JSON object on stdout and nothing else "
                                                         "(progress and messages go to stderr)")),
    "quiet": (("--quiet", "-q"), dict(action="store_true", help="print the result only: no progress on stderr, no "
                                                                "tree or model text (the summary lines stay)")),
    "data": (("--data",), dict(required=True, help="breast-cancer, a MANIFEST.toml dataset, or a .csv path")),
    "data_dir": (("--data-dir",), dict(help="data directory (default: $TREEOPT_DATA_DIR or ../shared/data)")),
    "label": (("--label",), dict(metavar="COLUMN", help="the label column of a CSV file (default: the column named "
                                                        "'Class' when the file has one, else required)")),
    "seed": (("--seed",), dict(type=int, default=SEED, help=f"seed of everything random the command does: --sample, "
                                                            f"the split, the starts; born-again: the heuristic's "
                                                            f"cells (default {SEED})")),
    "test_size": (("--test-size",), dict(type=float, default=TEST_SIZE,
                                         help=f"fraction of the rows held out for testing, stratified (default "
                                              f"{TEST_SIZE:g}; [blanquero-2020-sorct]: 0.25)")),
    "solver": (("--solver",), dict(default=SOLVER,
                                   help="auto (default: the fastest exact engine that proves the composition, else "
                                        "the formulation's solver, HiGHS or Ipopt; the result says which and why), or "
                                        "a named route: highs, cbc, gurobi, scip, ipopt, streed (exact DP: the count "
                                        "and STreeD), contree (exact, ConTree on continuous features); born-again "
                                        "--heuristic: the MILP solver of its proofs (auto: HiGHS)")),
    "backend": (("--backend",), dict(help="force a backend (default: the fastest capable one)")),
    "time_limit": (("--time-limit",), dict(type=time_limit_arg, default=TIME_LIMIT, metavar="SEC",
                                           help=f"seconds >= 0 for the command's work (default {TIME_LIMIT:g}; "
                                                "'none': no limit); at the limit the best answer found so far is "
                                                "returned (born-again's exact dynamic program has none before its "
                                                "end: exit 1; --heuristic is quick)")),
    "output": (("--output", "-o"), dict(metavar="FILE", help="write the result to FILE, checked before any work: "
                                                             "compile, solve, fit: the model, FILE.lp or FILE.mps "
                                                             "(.gz compresses; fit: the training part's); fit cct/crt: "
                                                             "the trees as FILE.json; born-again: the tree in the "
                                                             "BA-Trees format")),
    "plot": (("--plot",), dict(metavar="FILE", help="draw the result to this image (matplotlib; the suffix picks the "
                                                    "format): path: sparsity and accuracy along the path; "
                                                    "born-again: the tree")),
    "experiment": (("--experiment",), dict(help="only this experiment's rows (a store can hold several)")),
}


def add_shared(parser: Any, *names: str) -> None:
    """Add the :data:`SHARED` options ``names`` to ``parser`` (a parser or an argument group), as declared."""
    for name in names:
        flags, kwargs = SHARED[name]
        parser.add_argument(*flags, dest=name, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="treeopt", description="Optimal trees and risk scores composed from blocks.",
               epilog=exit_codes_text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"treeopt-dsl {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    f = sub.add_parser("formulations", help="list formulations and their parameters")
    add_shared(f, "json")
    s = sub.add_parser("solvers", help="list solvers and backends, installed or not, and what each can do")
    add_shared(s, "json")
    d = sub.add_parser("datasets", help="list the bundled and shared datasets")
    add_shared(d, "data_dir", "json")

    for name, help_ in (("compile", "build the model and report its size; write it as .lp/.mps"),
                        ("solve", "solve on all of the (sampled) data"),
                        ("fit", "split, solve on the training part, report train/test metrics"),
                        ("path", "a regularization path (S-ORCT): multistart at every (lambda_L, lambda_G), "
                                 "each pair warm-started from the previous one")):
        c = sub.add_parser(name, help=help_)
        c.add_argument("formulation", help="a formulation (`treeopt formulations`)" + (
            "; or tmo / tao (memetic and alternating-optimization trees), cct / crt (contextual trees)"
            if name == "fit" else ""))
        g = c.add_argument_group("data")
        add_shared(g, "data", "data_dir", "label")
        g.add_argument("--positive", help="class mapped to +1 (required for multiclass data: one vs rest)")
        g.add_argument("--variant", help="a variant of a manifest dataset (e.g. a binarized copy)")
        g.add_argument("--sample", type=int, help="subsample N rows (stratified), as the papers do")
        add_shared(g, "seed")
        m = c.add_argument_group("formulation")
        m.add_argument("--depth", type=int, help="tree depth (same as --param depth=N)")
        m.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="formulation parameter")
        m.add_argument("--binarize", choices=BINARIZE, default=None,
                       help="ors: none (default, the thesis: points on the scaled features), quantile (points on "
                            "conditions feature >= t in the data's units: a card to score by hand) or stump (one "
                            "condition per feature, at its log-loss stump's cut: the thesis' binarization for LCPA)")
        m.add_argument("--max-cuts", type=max_thresholds_arg, default=None, metavar="K",
                       help="ors --binarize quantile: at most K cuts per continuous feature, at its quantiles "
                            "(default 3)")
        if name in ("solve", "fit"):
            m.add_argument("--refine", action="store_true",
                           help="olct, olct_univariate: after the solve, refit each last-layer node as an exact "
                                "l1-logistic regression on the samples reaching it (thesis Remark 1; the exact "
                                "objective can only decrease); the objective, bound and certificate stay the MILP's")
        add_shared(c, "json")
        if name == "compile":
            add_shared(c, "output")
            c.add_argument("--no-names", action="store_true", help="write x0.., c0.. instead of readable names")
            c.add_argument("--lp-bound", action="store_true",
                           help="also solve the continuous relaxation (HiGHS) and print its bound: how tight the "
                                "composition is before branching")
            add_shared(c.add_argument_group("output"), "quiet")
            continue
        o = c.add_argument_group("solver")
        add_shared(o, "solver", "backend")
        if name == "path":  # a path runs --n-starts local solves at every pair: its limit is per start
            o.add_argument("--start-time-limit", type=time_limit_arg, default=PATH_TIME_LIMIT, metavar="SEC",
                           help=f"seconds per start (default {_seconds(PATH_TIME_LIMIT)}: each start stops at "
                                "Ipopt's max_iter, as the paper)")
            v = c.add_argument_group("output")
            add_shared(v, "quiet", "plot")
            add_shared(c, "test_size")
            c.add_argument("--lambda-l", default="0", help="lambda_L grid: comma-separated values, or 'paper' "
                           "(0 then 2^r / (p |tau_B|), r = -12..3, [blanquero-2020-sorct] line 398)")
            c.add_argument("--lambda-g", default="0", help="lambda_G grid: values or 'paper' (0 then 2^r / p)")
            c.add_argument("--n-starts", type=int, default=20,
                           help="random initial points at the first pair; the best this many solutions of a "
                                "pair start the next")
            c.add_argument("--fresh", type=int, default=None,
                           help="new random points at every later pair besides the chained ones (default: "
                                "--n-starts; 0: the paper's chain alone)")
            continue
        add_shared(o, "time_limit")
        o.add_argument("--gap", type=gap_arg, default=None, help="relative MIP gap >= 0 at which to stop (0.01 = 1%%)")
        o.add_argument("--threads", type=threads_arg, default=None, help="solver threads >= 0 (0: the solver's choice)")
        o.add_argument("--max-thresholds", type=max_thresholds_arg, default=None, metavar="K",
                       help="--solver streed: at most K quantile cuts per feature (an approximation: the result "
                            "is feasible, not optimal) instead of every midpoint; for deep trees on continuous "
                            "data, whose exact binarization STreeD cannot hold in memory")
        o.add_argument("--warm-start", choices=WARM_STARTS, default="auto",
                       help="auto (default): the best of CART, the greedy per-node starts and the exact DP tree, "
                            "a short TMO run, then TAO from the best, in the formulation's own objective (tree "
                            "formulations); none: the papers' plain runs; greedy; greedy_lp (OLCT: each node's "
                            "part of the objective solved as an LP); cart; tao (TAO from CART); tmo "
                            "(the memetic tree: 100 trees, 5 generations); beam (risk scores: the "
                            "beam-search score card, also what auto uses for ors)")
        add_shared(o, "output")
        o.add_argument("--card-out", metavar="FILE", help="ors, ogrs: also write the score card, FILE.json or "
                                                          "FILE.csv (checked before the solve)")
        if name in ("solve", "fit"):
            o.add_argument("--calibration-plot", metavar="FILE", help="also draw the reliability diagram (observed "
                           "frequency against predicted probability, 10 equal-mass bins, the ECE) of the fitted "
                           "model to FILE.png (fit: train and test; matplotlib; checked before the solve)")
        v = c.add_argument_group("output")
        add_shared(v, "quiet")
        v.add_argument("--verbose", "-v", action="store_true", help="show the solver's log on stderr")
        v.add_argument("--log", help="write the solver's log to this file")
        if name == "fit":
            add_shared(c, "test_size")

    add_born_again(sub)
    add_experiment(sub)
    k = sub.add_parser("completion", help="print a shell completion script (bash or zsh)",
                       description="Print a static completion script made from this parser: subcommands, options, "
                                   "choices, formulation and solver names. bash: `treeopt completion bash > "
                                   "~/.local/share/bash-completion/completions/treeopt`; zsh: `source <(treeopt "
                                   "completion zsh)` in ~/.zshrc.")
    k.add_argument("shell", choices=("bash", "zsh"), help="the shell")
    return p


def add_born_again(sub: Any) -> None:
    """Register ``born-again`` on the ``treeopt`` sub-command parser."""
    c = sub.add_parser("born-again", help="the smallest single tree with exactly a forest's decision function "
                                          "(Vidal & Schiffer 2020)")
    c.add_argument("model", help="a BA-Trees forest file (.txt) or a pickled scikit-learn forest (.pkl/.joblib)")
    c.add_argument("--objective", default="depth", metavar="OBJECTIVE",
                   help="depth, leaves, or depth-leaves (depth then leaves); default depth")
    c.add_argument("--heuristic", action="store_true",
                   help="the faithful greedy construction (§4.5) instead of the exact dynamic program")
    c.add_argument("--n-cells", type=int, default=100, help="random cells per region of the heuristic (default 100)")
    add_shared(c, "solver", "seed", "time_limit")
    c.add_argument("--prune", action="store_true", help="remove splits with no training sample on a side (--train)")
    c.add_argument("--train", metavar="CSV", help="training CSV file (for --prune; its header names the features)")
    c.add_argument("--test", metavar="CSV", help="test CSV file: accuracy and F1 of the forest and the trees")
    add_shared(c, "label", "output", "plot", "json", "quiet")


def add_experiment(sub: Any) -> None:
    """Register ``experiment`` (with ``run``, ``tasks``, ``report``, ``export``) on the ``treeopt`` sub-command
    parser."""
    c = sub.add_parser("experiment", help="run a TOML grid of solves into a results store; report on it")
    s = c.add_subparsers(dest="experiment_command", required=True)
    r = s.add_parser("run", help="run the grid's unfinished tasks (each in its own process)")
    r.add_argument("grid", help="the grid file (TOML, see docs/experiments.md)")
    r.add_argument("--store", help="SQLite results file (default: <grid name>.sqlite in the current directory)")
    r.add_argument("--jobs", "-j", type=int, default=1, help="tasks at a time (dask: LocalCluster workers)")
    r.add_argument("--executor", choices=("local", "dask"), default="local")
    r.add_argument("--scheduler", help="a Dask scheduler address (with --executor dask; default: a LocalCluster)")
    r.add_argument("--retries", type=int, default=None, help="reruns of a task whose worker died (default: grid's)")
    r.add_argument("--retry-failed", action="store_true", help="also rerun tasks stored as failed")
    r.add_argument("--solve-time-limit", type=float, default=None, metavar="SEC",
                   help="override every solve's time limit (new task ids; default: the grid's own, "
                        f"[experiment] time_limit, else {GRID_TIME_LIMIT:g} s)")
    r.add_argument("--memory-mb", type=int, default=None, help="override every task's memory limit")
    r.add_argument("--task-timeout", type=float, default=None, metavar="SEC",
                   help="kill a task after SEC seconds of wall time (default: the grid's task_timeout, else 1.5 x "
                        "its solves' limits plus a per-solve overhead; the task ids stay the same)")
    r.add_argument("--only", action="append", default=[], help="run only tasks whose id contains this (repeatable)")
    add_shared(r, "quiet")
    t = s.add_parser("tasks", help="list the grid's tasks (validates the grid; runs nothing)")
    t.add_argument("grid")
    add_shared(t, "json")
    p = s.add_parser("report", help="performance profiles, cumulative gaps and a markdown table from a store")
    p.add_argument("store", help="the SQLite results file")
    p.add_argument("--profile", action="append", choices=REPORT_PROFILES,
                   help="which plots (repeatable; default all): time = performance profile of the runtime "
                        "(unproven = failed), objective / accuracy = cumulative gap from the best, sparsity = "
                        "performance profile of the features per split, exact = cumulative gap of a logistic "
                        "tree's exact objective (the true log-loss; only rows that record it)")
    p.add_argument("--by", default="method", help="the column compared (default method; e.g. formulation)")
    p.add_argument("--out", help="directory of the plots and report.md (default: <store>_report)")
    p.add_argument("--format", choices=("png", "svg"), default="png")
    p.add_argument("--paper", help="a paper's table (CSV: dataset,method,metric,value) to print ours beside")
    p.add_argument("--method", action="append", dest="methods", metavar="NAME",
                   help="only this method's rows (repeatable; default all): a store several grids ran into holds "
                        "each grid's methods")
    p.add_argument("--against", metavar="NAME",
                   help="pair every other value of --by with this one, instance by instance: test accuracy higher / "
                        "lower and the sign test, runtime ratio where both proved, exact objective lower / higher")
    add_shared(p, "experiment")
    e = s.add_parser("export", help="the store's rows as one table: CSV, or Parquet (needs pyarrow)")
    e.add_argument("store", help="the SQLite results file")
    e.add_argument("--to", required=True, metavar="FILE", help="FILE.csv or FILE.parquet (checked before reading)")
    add_shared(e, "experiment")
