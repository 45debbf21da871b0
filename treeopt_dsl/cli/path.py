"""``treeopt path``: a regularization path (S-ORCT), multistart at every (lambda_L, lambda_G)."""

from __future__ import annotations

import argparse
from typing import Any

from treeopt_dsl.cli.common import (
    EXIT_NO_SOLUTION,
    EXIT_OK,
    UsageError,
    check_paths,
    data_info,
    formulation_params,
    load_data,
    print_json,
)
from treeopt_dsl.defaults import SOLVER
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.formulations.sorct import run_path
from treeopt_dsl.starts.multistart import NAMED_GRIDS, plot_path


def lambda_grid(text: str, kind: str) -> list[float] | str:
    """A grid's name (:data:`~treeopt_dsl.starts.multistart.NAMED_GRIDS`: ``paper``, ``paper-ends``) or
    comma-separated values."""
    if text.strip().lower() in NAMED_GRIDS:
        return text.strip().lower()
    try:
        return [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise UsageError(f"--lambda-{kind} takes comma-separated numbers, 'paper' or 'paper-ends', got {text!r}"
                         ) from None


def run(args: argparse.Namespace) -> int:
    """``treeopt path``."""
    params = formulation_params(args)
    spec = get_formulation(args.formulation, **params)
    if not {"lambda_l", "lambda_g"} <= set(spec.values):
        raise UsageError(f"{spec.name} has no lambda_l / lambda_g parameters; `treeopt path` walks S-ORCT's grid")
    if args.n_starts < 1:
        raise UsageError("--n-starts must be at least 1")
    if args.fresh is not None and args.fresh < 0:
        raise UsageError("--fresh must be at least 0")
    check_paths(args)
    data = load_data(args, spec)
    if not 0 < args.test_size < 1:
        raise UsageError(f"--test-size must be in (0, 1), got {args.test_size}")
    lam_l, lam_g = lambda_grid(args.lambda_l, "l"), lambda_grid(args.lambda_g, "g")
    quiet = args.quiet or args.json

    def show(pt: Any) -> None:
        if not quiet:
            r = pt.to_dict()
            print(f"lambda_L {r['lambda_l']:<10.4g} lambda_G {r['lambda_g']:<10.4g} {r['status']:<13} "
                  f"obj {r['objective'] if r['objective'] is None else round(r['objective'], 5)!s:<9} "
                  f"dL {r.get('delta_l', float('nan')):5.1f}% dG {r.get('delta_g', float('nan')):5.1f}% "
                  f"train {r.get('train_accuracy', float('nan')):.3f} test {r.get('test_accuracy', float('nan')):.3f} "
                  f"(expected {r.get('test_expected_accuracy', float('nan')):.3f}) "
                  f"{r['time_per_start_s']:.2f} s/start  won: {r['won']}", flush=True)

    path, train, test = run_path(spec.name, data, lam_l, lam_g, params=params, test_size=args.test_size,
                                 seed=args.seed, n_starts=args.n_starts, fresh=args.fresh,
                                 solver=spec.default_solver if args.solver in (None, SOLVER) else args.solver,
                                 backend=args.backend, time_limit=args.start_time_limit,
                                 on_point=show)
    out: dict[str, Any] = {"formulation": spec.name, "params": spec.values, "data": data_info(data),
                           "n_train": train.n_samples, "n_test": test.n_samples,
                           "path": [p.to_dict() for p in path]}
    if args.plot:
        plot_path(path).savefig(args.plot, dpi=120)
        out["plot"] = args.plot
        if not quiet:
            print(f"wrote {args.plot}")
    if args.json:
        print_json(out)
    return EXIT_OK if all(p.result.status.has_solution for p in path) else EXIT_NO_SOLUTION
