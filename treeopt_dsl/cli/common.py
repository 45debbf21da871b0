"""What every ``treeopt`` subcommand shares: the usage error and exit statuses, the option types, reading
``--data`` and ``--param``, checking output paths before any work, running a solve with progress, and printing
its summary or JSON document. Public, so that each subcommand's module (:mod:`treeopt_dsl.cli`) uses the same."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import math
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

from treeopt_dsl.backends import engines
from treeopt_dsl.datasets import load
from treeopt_dsl.defaults import SOLVER, check_gap, check_threads, check_time_limit
from treeopt_dsl.errors import OptionError, TreeoptError
from treeopt_dsl.formulations import REGISTRY, get_formulation
from treeopt_dsl.io import LAZY_EXPORT, atomic_binary, check_writable, file_format, write_model
from treeopt_dsl.models.calibration import plot_reliability
from treeopt_dsl.models.card import card_format
from treeopt_dsl.models.metrics import calibration_metrics, positive_column
from treeopt_dsl.numeric import jsonable
from treeopt_dsl.progress import Progress
from treeopt_dsl.result import Status
from treeopt_dsl.solve import failure_message

#: exit status: done; no solution (or some experiment task failed); a bad input (any TreeoptError, a usage error)
EXIT_OK, EXIT_NO_SOLUTION, EXIT_USAGE = 0, 1, 2
#: exit status of an interrupted solve (Ctrl-C, or SIGTERM during a solve) and of SIGTERM outside one
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143
#: exit status of a result whose certificate failed (printed, but not to be trusted)
EXIT_UNCERTIFIED = 3
#: every exit status of ``treeopt`` and what it means (``treeopt --help`` lists them)
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "done (an optimal result, or a feasible one stopped at the time limit)",
    EXIT_NO_SOLUTION: "no solution (infeasible, unbounded, a time limit before any solution; born-again: the DP "
                      "stopped without a tree; experiment run: a task failed)",
    EXIT_USAGE: "a bad input: one line `treeopt: error: ...` naming the option or file and what is allowed "
                "(checked before any work)",
    EXIT_UNCERTIFIED: "the answer is not certified (the decoded model does not reproduce the solver's; born-again: "
                      "the tree is not faithful to the forest); the result is still printed",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C, or SIGTERM during a solve): the best solution so far is printed",
    EXIT_TERMINATED: "SIGTERM outside a solve",
}


#: a process older than this at ``treeopt``'s start is not a fresh command (an embedding program): its clock
#: starts at :func:`treeopt_dsl.cli.main` instead of at the process' start
FRESH_PROCESS_S = 120.0


def process_started() -> float:
    """The :func:`time.perf_counter` instant at which this process started, so that ``--time-limit`` bounds the whole
    command, Python's start, imports and reading the data included (Linux: the start time in ``/proc/self/stat``
    against ``CLOCK_BOOTTIME``); now, where that cannot be read or the process is older than
    :data:`FRESH_PROCESS_S` (the command run inside a longer program).

    >>> started = process_started()   # the process' start, or now in a process older than FRESH_PROCESS_S
    >>> 0.0 <= time.perf_counter() - started < FRESH_PROCESS_S
    True
    """
    now = time.perf_counter()
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0.0 <= age <= FRESH_PROCESS_S else now


def time_left(args: argparse.Namespace, limit: float | None) -> float | None:
    """What is left of ``limit`` seconds (``None``: no limit) on the command's clock (``args.started``, set by
    :func:`treeopt_dsl.cli.main`): the budget handed to a fit that has no clock origin of its own. Never below 0.

    >>> time_left(argparse.Namespace(started=time.perf_counter() - 2.0), 10.0) < 8.01
    True
    """
    started = getattr(args, "started", None)
    if limit is None or started is None:
        return limit
    return max(0.0, float(limit) - (time.perf_counter() - started))


def timing_text(timing: dict[str, float] | None) -> str:
    """Where a call's time went, for the ``time`` line: the MILP route's build and starts, or an exact engine's
    search and certificate (:attr:`~treeopt_dsl.result.SolveResult.timing`).

    >>> timing_text({"prepare": 0.001, "search": 0.25, "certify": 0.002, "total": 0.253})
    '; call 0.25 s (prepare 0.001 s, search 0.25 s, certify 0.002 s)'
    """
    if timing is None:
        return ""
    load = f"start and read {timing['before']:.2g} s, " if timing.get("before") else ""
    if "prepare_build" in timing:
        return (f"; call {timing['total']:.2f} s ({load}build {timing['prepare_build']:.2f} s, starts "
                f"{timing['start']:.2f} s)")
    return (f"; call {timing['total']:.2g} s ({load}prepare {timing['prepare']:.2g} s, search "
            f"{timing['search']:.2g} s, certify {timing['certify']:.2g} s)")


def exit_codes_text() -> str:
    """:data:`EXIT_CODES` as the epilog of ``treeopt --help`` (one entry per status, wrapped at 79 columns)."""
    entries = (textwrap.fill(text, 79, initial_indent=f"  {code:<5}", subsequent_indent=" " * 7)
               for code, text in EXIT_CODES.items())
    return "exit status:\n" + "\n".join(entries)


class UsageError(TreeoptError):
    """A command-line usage error (exit status 2)."""


class Terminated(BaseException):
    """SIGTERM arrived outside a solve (raised by the handler :func:`main` installs; exit 143)."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _option(check: Any, text: str, name: str, number: Any = float) -> Any:
    """``text`` read by ``number`` and checked by ``check`` (:mod:`treeopt_dsl.defaults`, the one check of each
    option), or an argparse error with the check's words."""
    try:
        value = number(text)
    except ValueError:
        value = math.nan if number is float else text
    try:
        return check(value, name)
    except OptionError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace(" or None (", " or 'none' (")) from None


def time_limit_arg(text: str) -> float | None:
    """``--time-limit``: seconds >= 0, or ``none`` (also ``inf``) for no limit."""
    if text.strip().lower() in ("none", "inf", "infinity"):
        return None
    return _option(check_time_limit, text, "--time-limit")


def gap_arg(text: str) -> float | None:
    """``--gap``: a relative MIP gap >= 0 (0.01 = 1%)."""
    return _option(check_gap, text, "--gap")


def max_thresholds_arg(text: str) -> int:
    """``--max-thresholds``: an integer >= 1 (threshold columns per feature for the DP route)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs an integer >= 1 (cuts per feature); got {text!r}")
    return value


def threads_arg(text: str) -> int | None:
    """``--threads``: an integer >= 0 (0: the solver's choice)."""
    return _option(check_threads, text, "--threads", int)


def print_json(obj: dict[str, Any]) -> None:
    print(json.dumps(jsonable(obj), indent=None, allow_nan=False))


def parse_param_items(items: list[str] | None, parsers: dict[str, Any], who: str, hint: str = "") -> dict[str, Any]:
    """``--param KEY=VALUE`` items read by ``parsers[KEY]`` (text -> value): the one place every command reads
    them. A :class:`UsageError` (exit 2) names a malformed item, an unknown key with the allowed ones, or a
    value its parser refuses."""
    params: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"--param needs KEY=VALUE, got {item!r}")
        key, value = (t.strip() for t in item.split("=", 1))
        if key not in parsers:
            raise UsageError(f"{who} has no parameter {key!r}; its parameters are {sorted(parsers)}{hint}")
        try:
            params[key] = parsers[key](value)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"bad value for --param {key}: {value!r} ({exc})") from None
    return params


def formulation_params(args: argparse.Namespace) -> dict[str, Any]:
    spec_cls = get_formulation(args.formulation).__class__ if args.formulation else None
    known = {p.name: p for p in spec_cls.params} if spec_cls else {}
    params: dict[str, Any] = {}
    if args.depth is not None:
        if "depth" not in known:
            raise UsageError(f"{args.formulation} has no depth parameter")
        params["depth"] = args.depth
    params.update(parse_param_items(args.param, {k: p.parse for k, p in known.items()}, args.formulation,
                                    " (`treeopt formulations` lists them)"))
    for flag in ("binarize", "max_cuts"):  # ors' card options as flags (the same as --param binarize=...)
        value = getattr(args, flag, None)
        if value is None:
            continue
        if flag not in known:
            raise UsageError(f"--{flag.replace('_', '-')} applies to ors (points on conditions in the data's units), "
                             f"not {args.formulation}")
        params[flag] = value
    if params.get("max_cuts") is not None and params.get("binarize", "none") == "none":
        raise UsageError("--max-cuts needs --binarize quantile (it is the number of quantile cuts per feature)")
    assert REGISTRY  # the registry is imported for its side effect of listing formulations
    return params


def load_data(args: argparse.Namespace, spec: Any = None) -> Any:
    """The dataset of ``--data``; every class kept when the formulation handles several (``--positive``
    makes it binary)."""
    multiclass = bool(getattr(spec, "multiclass", False)) and args.positive is None
    d = load(args.data, data_dir=args.data_dir, label=args.label, positive=args.positive, variant=args.variant,
             multiclass=multiclass)
    d = dataclasses.replace(d, meta={**d.meta, "n_rows_loaded": d.n_samples})  # before --sample: rows_report
    if args.sample is not None:
        if args.sample < 4:
            raise UsageError("--sample needs at least 4 rows")
        d = d.subsample(args.sample, seed=args.seed)
    return d


def data_info(d: Any) -> dict[str, Any]:
    """The JSON document's ``data``: name, size, classes, the column each feature comes from and where the rows went
    (:func:`rows_report`)."""
    return {"name": d.name, "n_samples": d.n_samples, "n_features": d.n_features, "classes": list(d.classes),
            "feature_names": [str(f) for f in d.feature_names], "rows": rows_report(d)}


def rows_report(d: Any) -> dict[str, Any]:
    """Where the rows of the files went, from the loader's record (``Dataset.meta``): ``read`` (rows in the files),
    ``dropped_missing`` (a missing value in a used column: the formulations need complete rows; by class where the
    label is known), ``filtered_out`` (the manifest's filter), ``loaded`` (what is left), ``sampled`` (``--sample``,
    stratified) and ``used`` (the rows the command works on, before a train/test split).

    >>> import numpy as np
    >>> from treeopt_dsl.data import Dataset
    >>> d = Dataset.from_arrays(np.zeros((5, 1)), [0, 1, 0, 1, 0])
    >>> d = dataclasses.replace(d, meta={"n_rows_read": 8, "dropped_missing": 3})
    >>> rows_report(d)
    {'read': 8, 'dropped_missing': 3, 'filtered_out': 0, 'loaded': 5, 'sampled': None, 'used': 5}
    """
    meta = d.meta or {}
    loaded = int(meta.get("n_rows_loaded", d.n_samples))
    dropped, filtered = int(meta.get("dropped_missing", 0) or 0), int(meta.get("filtered_out", 0) or 0)
    out: dict[str, Any] = {"read": int(meta.get("n_rows_read", loaded + dropped)), "dropped_missing": dropped,
                           "filtered_out": filtered, "loaded": loaded,
                           "sampled": d.n_samples if d.n_samples != loaded else None, "used": d.n_samples}
    if meta.get("dropped_missing_by_class"):
        out["dropped_missing_by_class"] = dict(meta["dropped_missing_by_class"])
    return out


def rows_line(d: Any) -> str:
    """:func:`rows_report` as the text output's ``data`` line.

    >>> import numpy as np
    >>> from treeopt_dsl.data import Dataset
    >>> d = Dataset.from_arrays(np.zeros((5, 1)), [0, 1, 0, 1, 0], name="t")
    >>> d = dataclasses.replace(d, meta={"n_rows_read": 8, "dropped_missing": 3,
    ...                                  "dropped_missing_by_class": {"+1": 1, "-1": 2}})
    >>> rows_line(d)
    'data        t: 5 of 8 rows used, 1 feature; 3 dropped: a missing value in a used column (+1: 1, -1: 2)'
    """
    return rows_text(d.name, rows_report(d), d.n_features)


def rows_text(name: str, r: dict[str, Any], n_features: int) -> str:
    """The ``data`` line of a :func:`rows_report` ``r`` (also for data that is not a :class:`Dataset`: the
    regression sets of ``treeopt fit crt``).

    >>> r = {"read": 50, "dropped_missing": 0, "filtered_out": 0, "loaded": 50, "sampled": 30, "used": 30,
    ...      "sampling": "uniform"}
    >>> rows_text("f", r, 2)
    'data        f: 30 of 50 rows used, 2 features; --sample drew 30 of the 50 complete rows (uniform)'
    """
    text = (f"data        {name}: {r['used']:,} of {r['read']:,} rows used, {n_features:,} "
            f"feature{'s' if n_features != 1 else ''}")
    why = []
    if r["dropped_missing"]:
        by = r.get("dropped_missing_by_class")
        why.append(f"{r['dropped_missing']:,} dropped: a missing value in a used column"
                   + (f" ({', '.join(f'{k}: {v:,}' for k, v in by.items())})" if by else ""))
    if r["filtered_out"]:
        why.append(f"{r['filtered_out']:,} left out by the manifest's filter")
    if r["sampled"] is not None:
        why.append(f"--sample drew {r['sampled']:,} of the {r['loaded']:,} complete rows "
                   f"({r.get('sampling', 'stratified')})")
    return text + ("; " + "; ".join(why) if why else "")


#: the formulations whose model is a score card (``--card-out``)
CARD_FORMULATIONS = ("ors", "ogrs")


def check_paths(args: argparse.Namespace) -> None:
    """Refuse unwritable ``--output``, ``--log`` and ``--plot`` paths before any work (exit 2)."""
    if getattr(args, "output", None):
        try:
            file_format(args.output)
        except TreeoptError as exc:
            raise UsageError(f"--output: {exc}") from None
        check_writable(args.output, "the model (--output)")
        if any(str(kv).replace(" ", "") == "routing=benders" for kv in (getattr(args, "param", None) or [])):
            raise UsageError(f"--output: {LAZY_EXPORT}")
    if getattr(args, "card_out", None):
        if args.formulation not in CARD_FORMULATIONS:
            raise UsageError(f"--card-out writes a risk score's card ({', '.join(CARD_FORMULATIONS)}), not a "
                             f"{args.formulation} model")
        try:
            card_format(args.card_out)
        except TreeoptError as exc:
            raise UsageError(f"--card-out: {exc}") from None
        check_writable(args.card_out, "the score card (--card-out)")
    check_writable_options(args, log="the solver log", plot="the plot", calibration_plot="the reliability diagram")


def check_writable_options(args: argparse.Namespace, **what: str) -> None:
    """Refuse, before any work, each named option's path that cannot be written: its directory is missing or
    not writable, or it is a directory (a :class:`~treeopt_dsl.errors.ModelError` naming the option; exit 2).
    ``what`` maps an option's attribute to what it writes; unset options are skipped.

    >>> check_writable_options(argparse.Namespace(output=None, plot="/missing/dir/t.png"), plot="the plot")
    Traceback (most recent call last):
    ...
    treeopt_dsl.errors.ModelError: cannot write the plot (--plot) to '/missing/dir/t.png': the directory \
'/missing/dir' does not exist; create it first (mkdir -p) or choose another path
    """
    for option, thing in what.items():
        path = getattr(args, option, None)
        if path:
            check_writable(path, f"{thing} (--{option.replace('_', '-')})")


def open_progress(args: argparse.Namespace) -> tuple[Any, Any]:
    try:
        log_file = open(args.log, "w", encoding="utf-8") if args.log else None
    except OSError as exc:
        raise UsageError(f"cannot write the solver log (--log) to {args.log!r}: {exc.strerror or exc}") from None
    stream = None if args.quiet else sys.stderr
    return Progress(stream=stream, log_file=log_file, echo=args.verbose and not args.quiet), log_file


def run_solve(spec: Any, data: Any, args: argparse.Namespace) -> Any:
    solver = solver_of(spec, args)
    dp_only = {}
    if getattr(args, "max_thresholds", None) is not None:
        owners = sorted(name for name, engine in engines().items() if "max_thresholds" in engine.options)
        if solver.lower() not in owners:
            raise UsageError(f"--max-thresholds applies to --solver {' or '.join(owners)} (the exact route), not "
                             f"{solver}")
        dp_only["max_thresholds"] = args.max_thresholds
    progress, log_file = open_progress(args)
    try:
        res = spec.solve(data, solver=solver, backend=args.backend, time_limit=args.time_limit,
                         started=getattr(args, "started", None),
                         gap=args.gap, threads=args.threads, seed=args.seed, log_callback=progress,
                         progress=progress.event, warm_start=None if args.warm_start == "none" else args.warm_start,
                         **dp_only)
    finally:
        progress.close()
        if log_file is not None:
            log_file.close()
    return res


def solver_of(spec: Any, args: argparse.Namespace) -> str:
    """``--solver``, default :data:`treeopt_dsl.defaults.SOLVER` (``auto``: the route registry chooses)."""
    return args.solver or SOLVER


def summary(res: Any) -> list[str]:
    def num(v: Any) -> str:
        return "-" if v is None else f"{v:.6g}"

    lines = [f"status      {res.status.value}",
             f"objective   {num(res.objective)}   bound {num(res.bound)}   gap {num(res.gap)}",
             f"time        solve {res.runtime_s:.2f} s, compile {res.compile_s:.2f} s ({res.solver} via {res.backend})"
             + ("" if res.incumbent_time_s is None else
                f"; final incumbent at {res.incumbent_time_s:.2f} s, "
                + ("proof" if res.status.value == "optimal" else "no better one in the next")  # unproven: no proof
                + f" {max(0.0, res.runtime_s - res.incumbent_time_s):.2f} s")
             + timing_text(getattr(res, "timing", None)),
             size_line(res.size)]
    if res.warm_start_accepted is not None:
        lines.append(f"warm start  {'accepted' if res.warm_start_accepted else 'NOT accepted'} by the solver")
    st = getattr(res, "start", None)
    if st is not None and st.get("chosen") is not None:
        tried = ", ".join(f"{k} {v:.6g}" if isinstance(v, float) else f"{k} ({v})"
                          for k, v in st.get("candidates", {}).items())
        lines.append(f"start       {st['chosen']} at objective {st['objective']:.6g}"
                     + (f", improved by {res.improvement:.6g}" if res.improvement is not None else "")
                     + (f" [tried: {tried}; {st.get('time_s', 0.0):.2f} s]" if tried else ""))
    if res.certificate is not None:
        prefix = "certificate" if res.certificate.ok else "WARNING: certificate failed:"
        lines.append(f"{prefix} {res.certificate}")
    oa = getattr(res, "outer_approximation", None)
    if oa is not None and oa.get("method") == "lcpa":  # ors loss=true proof=lcpa: what is proven, with how many cuts
        relax = oa.get("relaxation") or {}
        lines.append(f"loss        {res.message.split('; ')[0]}: lattice cutting planes, {oa['cuts']} cut(s) at "
                     f"integer cards, {relax.get('cuts', 0)} on the relaxation first")
    elif oa is not None:  # ors loss=true proof=outer: what is proven, in how many MILPs
        lines.append(f"loss        {res.message.split('; ')[0]}: {oa['iterations']} MILP solve(s), "
                     f"{oa['rows_added']} tangent row(s) added")
    elif res.message.startswith("optimal in "):  # a loss proven in its surrogate (ors loss=tangent, olct)
        lines.append(f"loss        {res.message.split('; ')[0]}")
    ms = getattr(res, "multiplier_search", None)
    if ms is not None:  # ors multiplier=auto: the multiplier the proof is at, chosen before it
        lines.append(f"multiplier  chosen with the start's card before the solve (FasterRisk's star-ray search, "
                     f"{ms['seconds']:.2f} s): {ms['multiplier']:.6g}, the start's true log-loss {ms['loss']:.6g}; "
                     "the status is the card's at this multiplier")
    cal = getattr(res, "scale_search", None)
    if cal is not None:  # ors scale=search: a calibration step after the proof, said as such
        lines.append(f"scale       searched after the solve (a calibration step, not part of the proof): multiplier "
                     f"{cal['multiplier_before']:.6g} -> {cal['multiplier']:.6g}, intercept "
                     f"{cal['intercept_before']:.6g} -> {cal['intercept']:.6g}, true log-loss "
                     f"{cal['loss_before']:.6g} -> {cal['loss_after']:.6g}; the points are the solve's")
    ref = getattr(res, "refinement", None)
    if ref is not None:
        lines.append(f"refined     last layer (thesis Remark 1), after the certificate's tree: exact objective "
                     f"{ref['exact_objective_before']:.6g} -> {ref['exact_objective']:.6g}, {ref['nodes_refitted']} "
                     f"of {ref['nodes']} nodes refitted")
    if res.status in (Status.TIME_LIMIT, Status.FEASIBLE, Status.INTERRUPTED) and res.message:  # why no proof
        lines.append(f"note        {res.message}")
    lines.extend(notes(res))
    return lines


def notes(res: Any) -> list[str]:
    """The lines a status depends on: which route ``--solver auto`` took and why, a verifier's check of a solver's
    claim, and the cuts the model cannot express (the JSON's ``route``, ``verification`` and ``resolution``)."""
    out = []
    route = getattr(res, "route", None)
    if route is not None:
        out.append(f"route       {route['why']}")
    v = getattr(res, "verification", None)
    if v is not None and v.get("objective") is not None:
        out.append(f"verified    {res.solver} claimed {v['claimed_status']} at {v['claimed_objective']:.6g}; "
                   f"{v['by']} ended {v['status']} at {v['objective']:.6g} in {v.get('time_s', 0.0):.2f} s "
                   f"({res.solver}'s bound is not taken: docs/DESIGN.md, \"CBC's optimality claims\")")
    elif v is not None:
        out.append(f"verified    {res.solver} claimed {v['claimed_status']}; {v['status']} "
                   f"({res.solver}'s bound is not taken)")
    r = getattr(res, "resolution", None)
    if r is not None:
        feats = ", ".join(f"{k} {n}" for k, n in r["features"].items())
        out.append(f"resolution  {r['unseparable_pairs']} pair(s) of distinct training values lie closer than "
                   f"eps/w_bound = {r['smallest_cut_gap']:.2g} (scaled; {feats}): no split of this model separates "
                   "them, so the optimum is over the cuts it can express (oct: --param cuts=all expresses every cut)")
    return out


def size_line(size: dict[str, Any]) -> str:
    if str(size.get("problem_class", "")).startswith("DP:"):  # the DP route answered without building the MILP
        return (f"model       DP over {size.get('n_threshold_columns')} threshold columns of {size.get('n_samples')} "
                "samples (no MILP built; --output builds and writes it)")
    return (f"model       {size.get('n_variables')} variables, {size.get('n_constraints')} constraints, "
            f"{size.get('n_nonzeros')} nonzeros, {size.get('n_integer')} integer")


def card_outputs(model: Any, path: str | None) -> dict[str, Any]:
    """A risk score's card in the JSON document (``card``) and, with ``--card-out``, written to its file."""
    if model is None or not hasattr(model, "card"):
        return {}
    card = model.card()
    out: dict[str, Any] = {"card": card.to_dict()}
    if path:
        out["card_out"] = str(card.save(path))
    return out


def calibration_outputs(model: Any, parts: dict[str, Any], path: str | None) -> dict[str, Any]:
    """The log-loss and ECE of ``model`` on each named part (``calibration`` in the JSON document) and, with
    ``--calibration-plot``, the reliability diagram of every part written to ``path``."""
    if model is None:
        return {}
    out: dict[str, Any] = {}
    cal = {part: calibration_metrics(model, d) for part, d in parts.items()}
    if all(v is not None for v in cal.values()):
        out["calibration"] = cal
    if path:
        if "calibration" not in out:
            raise UsageError("--calibration-plot needs a binary model with probabilities (predict_proba)")
        curves = {part: (np.asarray(d.y) > 0, model.predict_proba(d.X)[:, positive_column(model, d)])
                  for part, d in parts.items()}
        fig = plot_reliability(curves, title=f"reliability of P({next(iter(parts.values())).classes[1]})")
        out["calibration_plot"] = str(save_figure(fig, path, "the reliability diagram (--calibration-plot)"))
    return out


def save_figure(fig: Any, path: str | Path, what: str = "the figure") -> Path:
    """``fig`` written to ``path`` atomically, in the format its suffix names (``.png``, ``.pdf``, ``.svg``)."""
    p = check_writable(path, what)
    buf = io.BytesIO()
    fig.savefig(buf, format=p.suffix.lstrip(".").lower() or "png", dpi=110)
    with atomic_binary(p) as fh:
        fh.write(buf.getvalue())
    return p


def write_model_file(built: Any, output: str | None, names: bool = True) -> dict[str, Any]:
    if not output:
        return {}

    t = time.perf_counter()
    path = write_model(built, output, names=names)
    return {"output": str(path), "write_s": round(time.perf_counter() - t, 4)}


def result_dict(res: Any, spec: Any, data: Any, args: argparse.Namespace) -> dict[str, Any]:
    d = res.to_dict()
    d.update(formulation=spec.name, params=spec.values, data=data_info(data))
    return d


def finish(res: Any, spec: Any, data: Any, args: argparse.Namespace, extra: dict[str, Any]) -> int:
    """Print the JSON document (with ``--json``) and one stderr line for an unusual ending; the exit status."""
    out = {**result_dict(res, spec, data, args), **extra}
    if args.json:
        print_json(out)
    if res.status in (Status.INTERRUPTED, Status.INTERRUPTED_NO_SOLUTION):
        term = "SIGTERM" in (res.message or "")  # the backend's message names the signal
        what = "terminated (SIGTERM)" if term else "interrupted (Ctrl-C)"
        kept = ("returning the best tree found so far" if res.status is Status.INTERRUPTED else "no solution yet")
        print(f"treeopt: {what}: {kept}", file=sys.stderr)
        return EXIT_TERMINATED if term else EXIT_INTERRUPTED
    if res.status is Status.UNCERTIFIED:
        why = str(res.certificate) if res.certificate is not None else "no certificate details"
        print(f"treeopt: certificate failed: the decoded model does not reproduce the solver's answer ({why}); "
              "the result is printed but not certified", file=sys.stderr)
        return EXIT_UNCERTIFIED
    if not res.status.has_solution:
        print(f"treeopt: {failure_message(res)}", file=sys.stderr)
        return EXIT_NO_SOLUTION
    return EXIT_OK
