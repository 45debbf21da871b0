"""``treeopt solve`` and ``treeopt fit``: a formulation solved on the data, or on its training part with test
metrics."""

from __future__ import annotations

import argparse
from typing import Any

from treeopt_dsl.cli.common import (
    UsageError,
    calibration_outputs,
    card_outputs,
    check_paths,
    finish,
    formulation_params,
    load_data,
    rows_line,
    run_solve,
    summary,
    write_model_file,
)
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.metrics import metrics
from treeopt_dsl.registry import REFINE, load


def cmd_solve(args: argparse.Namespace) -> int:
    spec = get_formulation(args.formulation, **formulation_params(args))
    if args.refine:  # OLCT's refinement, imported only when asked for
        load(REFINE["check"])(spec)
    check_paths(args)
    data = load_data(args, spec)
    res = run_solve(spec, data, args)
    if args.refine:
        res = load(REFINE["refit"])(res)
    extra = write_model_file(res.built, args.output) if res.built is not None else {}
    if res.model is not None:
        extra["metrics"] = {"train": metrics(res.model, data)}
        extra.update(card_outputs(res.model, args.card_out))
        extra.update(calibration_outputs(res.model, {"train": data}, args.calibration_plot))
    if not args.json:
        print("\n".join([rows_line(data), *summary(res)]))
        if res.model is not None and not args.quiet:
            print(res.model.text())
        if "card_out" in extra:
            print(f"wrote the score card to {extra['card_out']}")
        if "calibration_plot" in extra:
            print(f"wrote the reliability diagram to {extra['calibration_plot']}")
    return finish(res, spec, data, args, extra)


def cmd_fit(args: argparse.Namespace) -> int:
    if not 0 < args.test_size < 1:
        raise UsageError(f"--test-size must be in (0, 1), got {args.test_size}")
    spec = get_formulation(args.formulation, **formulation_params(args))
    if args.refine:  # OLCT's refinement, imported only when asked for
        load(REFINE["check"])(spec)
    check_paths(args)
    data = load_data(args, spec)
    train, test = data.split(args.test_size, seed=args.seed)
    res = run_solve(spec, train, args)
    if args.refine:
        res = load(REFINE["refit"])(res)
    extra: dict[str, Any] = {"n_train": train.n_samples, "n_test": test.n_samples}
    if res.built is not None:
        extra.update(write_model_file(res.built, args.output))  # the model solved: the training part
    if res.model is not None:
        extra["metrics"] = {"train": metrics(res.model, train), "test": metrics(res.model, test)}
        extra.update(card_outputs(res.model, args.card_out))
        extra.update(calibration_outputs(res.model, {"train": train, "test": test}, args.calibration_plot))
    if not args.json:
        print("\n".join([rows_line(data), f"split       {train.n_samples:,} training rows, {test.n_samples:,} test "
                                            f"rows (stratified, --test-size {args.test_size:g}, --seed {args.seed})",
                          *summary(res)]))
        if res.model is not None:
            if not args.quiet:
                print(res.model.text())
            cal = extra.get("calibration")
            binary = "tpr" in extra["metrics"]["train"]  # sensitivity / specificity of the positive class
            print(f"{'':<8} {'accuracy':>9} {'balanced':>9} {'AUC':>7}" + (f" {'TPR':>7} {'TNR':>7}" if binary else "")
                  + ("" if cal is None else
                     f" {'log-loss':>9} {'ECE':>7}  (ECE: {cal['train']['bins']} equal-mass bins)"))
            for part in ("train", "test"):
                m = extra["metrics"][part]
                print(f"{part:<8} {m['accuracy']:9.4f} {m['balanced_accuracy']:9.4f} {m.get('auc', float('nan')):7.4f}"
                      + (f" {m['tpr']:7.4f} {m['tnr']:7.4f}" if binary else "")
                      + ("" if cal is None else f" {cal[part]['log_loss']:9.4f} {cal[part]['ece']:7.4f}"))
        if "card_out" in extra:
            print(f"wrote the score card to {extra['card_out']}")
        if "calibration_plot" in extra:
            print(f"wrote the reliability diagram to {extra['calibration_plot']}")
    return finish(res, spec, data, args, extra)


def run(args: argparse.Namespace) -> int:
    """``treeopt solve`` or ``treeopt fit`` (a formulation; ``fit tmo|tao|cct|crt`` run in their own modules)."""
    return cmd_fit(args) if args.command == "fit" else cmd_solve(args)
