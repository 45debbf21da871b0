"""``treeopt fit tmo`` and ``treeopt fit tao``: the heuristic trees from the command line.

    treeopt fit tmo --data ionosphere --depth 3          # k = 100, n_gen = 5, CR = 0.75 ([aldinucci-memetic] §4)
    treeopt fit tmo --data phishing --depth 4 --param n_trees=50 --param schedule=generational --param n_jobs=2
    treeopt fit tao --data sonar --depth 2 --json                     # CART, then TAO

The data, split and output options are ``treeopt fit``'s (``--data --positive --sample --seed --test-size
--json --quiet --time-limit``); ``--param KEY=VALUE`` sets the estimator's parameters
(:class:`~treeopt_dsl.estimator.memetic.TMOClassifier`, :class:`~treeopt_dsl.estimator.memetic.TAOClassifier`).
Solver options do not apply (there is no solver) and are refused. Ctrl-C during TMO keeps the best tree so far.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from treeopt_dsl.cli.common import (
    EXIT_INTERRUPTED,
    UsageError,
    check_paths,
    data_info,
    load_data,
    parse_param_items,
    print_json,
    rows_line,
    time_left,
)
from treeopt_dsl.defaults import SOLVER
from treeopt_dsl.estimator.memetic import TAOClassifier, TMOClassifier
from treeopt_dsl.models.metrics import metrics

#: ``--param`` keys per command and how to read them (``depth`` also comes from ``--depth``)
PARAMS: dict[str, dict[str, Any]] = {
    "tao": {"depth": int, "max_iter": int, "variant": str},
    "tmo": {"depth": int, "n_trees": int, "n_generations": int, "crossover_rate": float, "schedule": str,
            "n_jobs": int, "variant": str},
}


def _params(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {} if args.depth is None else {"depth": args.depth}
    out.update(parse_param_items(args.param, PARAMS[args.formulation], args.formulation))
    return out


def _refuse_solver_options(args: argparse.Namespace) -> None:
    given = [f"--{k.replace('_', '-')}" for k in ("backend", "gap", "threads", "output")
             if getattr(args, k, None) is not None]
    if getattr(args, "solver", SOLVER) not in (None, SOLVER):
        given.insert(0, "--solver")
    if getattr(args, "warm_start", "auto") not in ("auto", "none"):
        given.append("--warm-start")
    if getattr(args, "refine", False):
        given.append("--refine")
    if given:
        raise UsageError(f"{args.formulation} has no solver: {', '.join(given)} "
                         f"{'does' if len(given) == 1 else 'do'} not apply (the data, split and output options do)")


def run(args: argparse.Namespace) -> int:
    """Run ``treeopt fit tmo|tao``; returns the exit status (0, or 130 when Ctrl-C stopped TMO early)."""
    _refuse_solver_options(args)
    if not 0 < args.test_size < 1:
        raise UsageError(f"--test-size must be in (0, 1), got {args.test_size}")
    params = _params(args)
    max_iter = params.pop("max_iter", None)
    check_paths(args)
    data = load_data(args)
    train, test = data.split(args.test_size, seed=args.seed)
    quiet = args.quiet or args.json
    t0 = time.perf_counter()
    if args.formulation == "tao":
        est: Any = TAOClassifier(random_state=args.seed, **params, **({} if max_iter is None else
                                                                       {"max_iter": max_iter}))
        est.fit(train.X, train.labels_of(train.y))
        report: dict[str, Any] = {"cart_error": est.cart_error_, "history": est.history_}
        stopped = "completed"
    else:
        est = TMOClassifier(random_state=args.seed, time_limit=time_left(args, args.time_limit), **params)

        def show(e: dict[str, Any]) -> None:
            if not quiet:
                print(f"generation {e['generation']:>3}: best train accuracy {e['best']:.4f}, population mean "
                      f"{e['mean']:.4f}, {e['replaced']} replaced, {e['time_s']:.1f} s", file=sys.stderr, flush=True)

        est.fit(train.X, train.labels_of(train.y), callback=show)
        r = est.result_
        report = {"fitness": r.fitness, "initial_best": r.initial_best, "history": r.history, "n_tao": r.n_tao,
                  "stopped": r.stopped}
        stopped = r.stopped
    fit_s = time.perf_counter() - t0
    names = getattr(data, "feature_names", None)
    if names is not None and len(names) == data.n_features:
        est.tree_.feature_names = tuple(str(n) for n in names)
    values = {k: v for k, v in est.get_params().items()}
    out = {"fitter": args.formulation, "params": values, "data": data_info(data), "status": "feasible",
           "message": "a heuristic tree: no bound, no optimality claim", "fit_s": round(fit_s, 4),
           "n_train": train.n_samples, "n_test": test.n_samples, args.formulation: report,
           "tree": est.tree_.text(), "n_leaves": est.tree_.n_leaves, "tree_depth": est.tree_.depth,
           "metrics": {"train": metrics(est, train), "test": metrics(est, test)}}
    if args.json:
        print_json(out)
    else:
        name = {"tao": "TAO (CART, then Tree Alternating Optimization)", "tmo": "TMO (memetic, [aldinucci-memetic])"}
        print(rows_line(data))
        print(f"split       {train.n_samples:,} training rows, {test.n_samples:,} test rows (stratified, --test-size "
              f"{args.test_size:g}, --seed {args.seed})")
        print(f"{name[args.formulation]} on {data.name} ({train.n_samples} training samples), depth "
              f"{est.tree_.depth}, {est.tree_.n_leaves} leaves, {fit_s:.2f} s" +
              ("" if stopped == "completed" else f" (stopped: {stopped}, best tree so far)"))
        if not args.quiet:
            print(est.tree_.text())
        print(f"{'':<8} {'accuracy':>9} {'balanced':>9} {'AUC':>7}")
        for part in ("train", "test"):
            m = out["metrics"][part]
            print(f"{part:<8} {m['accuracy']:9.4f} {m['balanced_accuracy']:9.4f} {m.get('auc', float('nan')):7.4f}")
    if stopped == "interrupted":
        print("treeopt: interrupted (Ctrl-C): returning the best tree found so far", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0
