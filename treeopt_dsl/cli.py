"""The ``treeopt`` command.

    treeopt formulations | solvers | datasets
    treeopt compile FORMULATION --data D [--depth N] [--param K=V ...] [--output FILE.lp|FILE.mps] [--json]
    treeopt solve   FORMULATION --data D [...] [--solver S] [--backend B] [--time-limit SEC] [--gap G]
                                [--threads K] [--warm-start greedy|cart] [--json]
    treeopt fit     FORMULATION --data D [...] [--test-size 0.2] [--seed S] [--json]
    treeopt path    FORMULATION --data D [...] --lambda-l GRID [--lambda-g GRID] [--n-starts K] [--plot F.png]
    treeopt born-again FOREST.txt|MODEL.joblib [--objective depth|leaves|depth-leaves] [--heuristic]
                                [--prune --data TRAIN.csv] [--test TEST.csv] [--output TREE.txt] [--json]

Exit status and stderr (always one line ``treeopt: ...``; ``--debug`` shows the traceback instead):

* 0: done (an optimal result, or a feasible one stopped at the time limit);
* 1: the solve ended without a solution (infeasible, unbounded, time limit before any solution);
* 2: a bad input (``treeopt: error: ...``): unknown formulation, bad data, missing solver, bad
  parameter or option (negative ``--time-limit``/``--gap``/``--threads``), an unwritable
  ``--output``/``--log``/``--plot`` path (checked before any work);
* 3: the solver's answer is uncertified (the decoded model does not reproduce it); the result is
  still printed;
* 130: interrupted (Ctrl-C, or SIGTERM during a solve): the best solution found so far is printed as
  usual (summary or the JSON document);
* 143: SIGTERM outside a solve.

``solve`` and ``fit`` stop after ``--time-limit`` seconds (default :data:`DEFAULT_TIME_LIMIT`, 300 s;
``--time-limit none`` means no limit). With ``--json`` stdout holds exactly one JSON document;
progress and messages go to stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
import time
from typing import Any

from treeopt_dsl import __version__
from treeopt_dsl.errors import TreeoptError
from treeopt_dsl.models.metrics import metrics
from treeopt_dsl.numeric import jsonable

WARM_STARTS = ("auto", "none", "greedy", "greedy_lp", "cart", "tao", "tmo", "beam")
#: seconds after which ``solve`` and ``fit`` stop when ``--time-limit`` is not given
DEFAULT_TIME_LIMIT = 300.0
#: exit status of an interrupted solve (Ctrl-C, or SIGTERM during a solve) and of SIGTERM outside one
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143
#: exit status of a result whose certificate failed (printed, but not to be trusted)
EXIT_UNCERTIFIED = 3


class UsageError(TreeoptError):
    """A command-line usage error (exit status 2)."""


class Terminated(BaseException):
    """SIGTERM arrived outside a solve (raised by the handler :func:`main` installs; exit 143)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(f"{message} (see `{self.prog} --help`)")


# ---------------------------------------------------------------------------------------------- option types
def _nonnegative(text: str, needs: str) -> float:
    """``text`` as a finite number >= 0, else an argparse error saying what the option ``needs``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"needs {needs}; got {text!r}")
    return value


def time_limit_arg(text: str) -> float | None:
    """``--time-limit``: seconds >= 0, or ``none`` (also ``inf``) for no limit."""
    if text.strip().lower() in ("none", "inf", "infinity"):
        return None
    return _nonnegative(text, "seconds >= 0, or 'none' for no limit")


def gap_arg(text: str) -> float:
    """``--gap``: a relative MIP gap >= 0 (0.01 = 1%)."""
    return _nonnegative(text, "a relative gap >= 0 (e.g. 0.01 for 1%)")


def max_thresholds_arg(text: str) -> int:
    """``--max-thresholds``: an integer >= 1 (threshold columns per feature for the DP route)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs an integer >= 1 (cuts per feature); got {text!r}")
    return value


def threads_arg(text: str) -> int:
    """``--threads``: an integer >= 0 (0: the solver's choice)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"needs an integer >= 0 (0: the solver's choice); got {text!r}")
    return value


# ---------------------------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="treeopt", description="Optimal trees and risk scores composed from blocks.")
    p.add_argument("--version", action="version", version=f"treeopt-dsl {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    f = sub.add_parser("formulations", help="list formulations and their parameters")
    f.add_argument("--json", action="store_true")
    s = sub.add_parser("solvers", help="list solvers and backends, installed or not, and what each can do")
    s.add_argument("--json", action="store_true")
    d = sub.add_parser("datasets", help="list the bundled and shared datasets")
    d.add_argument("--data-dir", help="data directory (default: $TREEOPT_DATA_DIR or ../shared/data)")
    d.add_argument("--json", action="store_true")

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
        g.add_argument("--data", required=True, help="breast-cancer, a MANIFEST.toml dataset, or a .csv path")
        g.add_argument("--data-dir", help="data directory (default: $TREEOPT_DATA_DIR or ../shared/data)")
        g.add_argument("--label", help="label column of a CSV file")
        g.add_argument("--positive", help="class mapped to +1 (required for multiclass data: one vs rest)")
        g.add_argument("--variant", help="a variant of a manifest dataset (e.g. a binarized copy)")
        g.add_argument("--sample", type=int, help="subsample N rows (stratified), as the papers do")
        g.add_argument("--seed", type=int, default=0, help="seed of --sample and of the split (default 0)")
        m = c.add_argument_group("formulation")
        m.add_argument("--depth", type=int, help="tree depth (same as --param depth=N)")
        m.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="formulation parameter")
        c.add_argument("--json", action="store_true", help="print one JSON object")
        if name == "compile":
            c.add_argument("--output", "-o", help="write the model: FILE.lp or FILE.mps (.gz compresses)")
            c.add_argument("--no-names", action="store_true", help="write x0.., c0.. instead of readable names")
            c.add_argument("--lp-bound", action="store_true",
                           help="also solve the continuous relaxation (HiGHS) and print its bound: how tight the "
                                "composition is before branching")
            continue
        o = c.add_argument_group("solver")
        o.add_argument("--solver", default=None,
                       help="highs, cbc, gurobi, scip, ipopt, or streed (exact dynamic programming for oct) "
                            "(default: the formulation's, highs or ipopt)")
        o.add_argument("--backend", help="force a backend (default: the fastest capable one)")
        if name == "path":
            o.add_argument("--time-limit", type=time_limit_arg, default=None, metavar="SEC",
                           help="seconds per start (default: none, no limit)")
        else:
            o.add_argument("--time-limit", type=time_limit_arg, default=DEFAULT_TIME_LIMIT, metavar="SEC",
                           help=f"seconds >= 0 (default {DEFAULT_TIME_LIMIT:g}; 'none': no limit); at the limit "
                                "the best solution found so far is returned")
        o.add_argument("--gap", type=gap_arg, default=None, help="relative MIP gap >= 0 at which to stop (0.01 = 1%%)")
        o.add_argument("--threads", type=threads_arg, default=None, help="solver threads >= 0 (0: the solver's choice)")
        if name in ("solve", "fit"):
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
        o.add_argument("--output", "-o", help="also write the model: FILE.lp or FILE.mps (.gz compresses; fit: the "
                                              "model of the training part); the path is checked before the solve")
        v = c.add_argument_group("output")
        v.add_argument("--quiet", "-q", action="store_true", help="print only the result")
        v.add_argument("--verbose", "-v", action="store_true", help="show the solver's log on stderr")
        v.add_argument("--log", help="write the solver's log to this file")
        if name in ("fit", "path"):
            c.add_argument("--test-size", type=float, default=0.2 if name == "fit" else 0.25,
                           help="fraction held out (default 0.2; path: 0.25 as [blanquero-2020-sorct])")
        if name == "path":
            c.add_argument("--lambda-l", default="0", help="lambda_L grid: comma-separated values, or 'paper' "
                           "(0 then 2^r / (p |tau_B|), r = -12..3, [blanquero-2020-sorct] line 398)")
            c.add_argument("--lambda-g", default="0", help="lambda_G grid: values or 'paper' (0 then 2^r / p)")
            c.add_argument("--n-starts", type=int, default=20,
                           help="random initial points at the first pair; the best this many solutions of a "
                                "pair start the next")
            c.add_argument("--fresh", type=int, default=None,
                           help="new random points at every later pair besides the chained ones (default: "
                                "--n-starts; 0: the paper's chain alone)")
            c.add_argument("--plot", help="save sparsity and accuracy along the path to this image (matplotlib)")
    from treeopt_dsl.bornagain.command import add_parser as add_born_again

    add_born_again(sub)
    from treeopt_dsl.experiments.command import add_parser as add_experiment

    add_experiment(sub)
    return p


# ---------------------------------------------------------------------------------------------- helpers
def _print_json(obj: dict[str, Any]) -> None:
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


def _params(args: argparse.Namespace) -> dict[str, Any]:
    from treeopt_dsl.formulations import REGISTRY, get_formulation

    spec_cls = get_formulation(args.formulation).__class__ if args.formulation else None
    known = {p.name: p for p in spec_cls.params} if spec_cls else {}
    params: dict[str, Any] = {}
    if args.depth is not None:
        if "depth" not in known:
            raise UsageError(f"{args.formulation} has no depth parameter")
        params["depth"] = args.depth
    params.update(parse_param_items(args.param, {k: p.parse for k, p in known.items()}, args.formulation,
                                    " (`treeopt formulations` lists them)"))
    assert REGISTRY  # the registry is imported for its side effect of listing formulations
    return params


def _data(args: argparse.Namespace, spec: Any = None) -> Any:
    """The dataset of ``--data``; every class kept when the formulation handles several (``--positive``
    makes it binary)."""
    from treeopt_dsl.datasets import load

    multiclass = bool(getattr(spec, "multiclass", False)) and args.positive is None
    d = load(args.data, data_dir=args.data_dir, label=args.label, positive=args.positive, variant=args.variant,
             multiclass=multiclass)
    if args.sample is not None:
        if args.sample < 4:
            raise UsageError("--sample needs at least 4 rows")
        d = d.subsample(args.sample, seed=args.seed)
    return d


def _data_info(d: Any) -> dict[str, Any]:
    return {"name": d.name, "n_samples": d.n_samples, "n_features": d.n_features, "classes": list(d.classes)}


def _check_paths(args: argparse.Namespace) -> None:
    """Refuse unwritable ``--output``, ``--log`` and ``--plot`` paths before any work (exit 2)."""
    from treeopt_dsl.io import check_writable, file_format

    if getattr(args, "output", None):
        try:
            file_format(args.output)
        except TreeoptError as exc:
            raise UsageError(f"--output: {exc}") from None
        check_writable(args.output, "the model (--output)")
        if any(str(kv).replace(" ", "") == "routing=benders" for kv in (getattr(args, "param", None) or [])):
            from treeopt_dsl.io import LAZY_EXPORT

            raise UsageError(f"--output: {LAZY_EXPORT}")
    if getattr(args, "log", None):
        check_writable(args.log, "the solver log (--log)")
    if getattr(args, "plot", None):
        check_writable(args.plot, "the plot (--plot)")


def _progress(args: argparse.Namespace) -> tuple[Any, Any]:
    from treeopt_dsl.progress import Progress

    try:
        log_file = open(args.log, "w", encoding="utf-8") if args.log else None
    except OSError as exc:
        raise UsageError(f"cannot write the solver log (--log) to {args.log!r}: {exc.strerror or exc}") from None
    stream = None if args.quiet else sys.stderr
    return Progress(stream=stream, log_file=log_file, echo=args.verbose and not args.quiet), log_file


def _solve(spec: Any, data: Any, args: argparse.Namespace) -> Any:
    solver = _solver(spec, args)
    dp_only = {}
    if getattr(args, "max_thresholds", None) is not None:
        if solver != "streed":
            raise UsageError(f"--max-thresholds applies to --solver streed (the DP route), not {solver}")
        dp_only["max_thresholds"] = args.max_thresholds
    progress, log_file = _progress(args)
    try:
        res = spec.solve(data, solver=solver, backend=args.backend, time_limit=args.time_limit,
                         gap=args.gap, threads=args.threads, seed=args.seed, log_callback=progress,
                         progress=progress.event, warm_start=None if args.warm_start == "none" else args.warm_start,
                         **dp_only)
    finally:
        progress.close()
        if log_file is not None:
            log_file.close()
    return res


def _solver(spec: Any, args: argparse.Namespace) -> str:
    return args.solver or getattr(spec, "default_solver", "highs")


def _summary(res: Any) -> list[str]:
    def num(v: Any) -> str:
        return "-" if v is None else f"{v:.6g}"

    lines = [f"status      {res.status.value}",
             f"objective   {num(res.objective)}   bound {num(res.bound)}   gap {num(res.gap)}",
             f"time        solve {res.runtime_s:.2f} s, compile {res.compile_s:.2f} s ({res.solver} via {res.backend})"
             + ("" if res.incumbent_time_s is None else
                f"; final incumbent at {res.incumbent_time_s:.2f} s, "
                + ("proof" if res.status.value == "optimal" else "no better one in the next")  # unproven: no proof
                + f" {max(0.0, res.runtime_s - res.incumbent_time_s):.2f} s"),
             _size_line(res.size)]
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
    lines.extend(_notes(res))
    return lines


def _notes(res: Any) -> list[str]:
    """The lines a status depends on: a verifier's check of a solver's claim, and the cuts the model cannot
    express (the same facts as the JSON's ``verification`` and ``resolution``)."""
    out = []
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


def _size_line(size: dict[str, Any]) -> str:
    if str(size.get("problem_class", "")).startswith("DP:"):  # the DP route answered without building the MILP
        return (f"model       DP over {size.get('n_threshold_columns')} threshold columns of {size.get('n_samples')} "
                "samples (no MILP built; --output builds and writes it)")
    return (f"model       {size.get('n_variables')} variables, {size.get('n_constraints')} constraints, "
            f"{size.get('n_nonzeros')} nonzeros, {size.get('n_integer')} integer")


def _write(built: Any, output: str | None, names: bool = True) -> dict[str, Any]:
    if not output:
        return {}
    from treeopt_dsl.io import write_model

    t = time.perf_counter()
    path = write_model(built, output, names=names)
    return {"output": str(path), "write_s": round(time.perf_counter() - t, 4)}


# ---------------------------------------------------------------------------------------------- commands
def cmd_formulations(args: argparse.Namespace) -> int:
    from treeopt_dsl.formulations import REGISTRY

    rows = [cls.describe() for cls in REGISTRY.values()]
    if args.json:
        _print_json({"formulations": rows})
        return 0
    for r in rows:
        print(f"{r['name']}: {r['summary']}")
        for p in r["params"]:
            print(f"    {p['name']:<14} default {p['default']!s:<10} {p['help']}")
    return 0


def cmd_solvers(args: argparse.Namespace) -> int:
    from treeopt_dsl.backends import available_solvers
    from treeopt_dsl.exact.dp import route

    rows = [*available_solvers(), route()]  # the MILP routes, then the exact DP route (axis-aligned 0-1 trees)
    if args.json:
        _print_json({"solvers": rows})
        return 0
    print(f"{'solver':<8} {'backend':<8} {'installed':<10} {'problem classes':<22} {'features':<50} extra")
    for r in rows:
        print(f"{r['solver']:<8} {r['backend']:<8} {'yes' if r['installed'] else 'no':<10} "
              f"{','.join(r['problem_classes']):<22} {','.join(r['features']):<50} [{r['extra']}]")
    return 0


def cmd_datasets(args: argparse.Namespace) -> int:
    from treeopt_dsl.datasets import list_datasets

    rows = list_datasets(args.data_dir)
    if args.json:
        _print_json({"datasets": rows})
        return 0
    for r in rows:
        print(f"{r['name']:<28} {r['n_rows']!s:>7} x {r['n_features']!s:<5} {r['task']:<10} {r['source']:<9} "
              f"{r.get('title', '')}")
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    from treeopt_dsl.formulations import get_formulation

    spec = get_formulation(args.formulation, **_params(args))
    _check_paths(args)
    data = _data(args, spec)
    t = time.perf_counter()
    built = spec.build(data)
    sf = built.compile()
    compile_s = time.perf_counter() - t
    out = {"formulation": spec.name, "params": spec.values, "data": _data_info(data), **sf.summary(),
           "compile_s": round(compile_s, 4), **_write(built, args.output, names=not args.no_names)}
    if args.lp_bound:
        from treeopt_dsl.relaxation import relaxation_bound

        out.update(relaxation_bound(sf).to_dict())
    if args.json:
        _print_json(out)
    else:
        print(f"{spec.name} on {data.name} ({data.n_samples} x {data.n_features}): {sf.n_cols} variables "
              f"({out['n_integer']} integer), {sf.n_rows} constraints, {sf.nnz} nonzeros, {sf.problem_class}; "
              f"built and compiled in {compile_s:.3f} s")
        if args.output:
            print(f"wrote {out['output']} in {out['write_s']:.3f} s")
        if args.lp_bound:
            print(f"{'LP' if sf.problem_class.endswith('LP') else 'QP'} relaxation bound {out['lp_bound']:.6g} "
                  f"({out['lp_bound_status']}, HiGHS, {out['lp_bound_s']:.2f} s)")
    return 0


def _result_dict(res: Any, spec: Any, data: Any, args: argparse.Namespace) -> dict[str, Any]:
    d = res.to_dict()
    d.update(formulation=spec.name, params=spec.values, data=_data_info(data))
    return d


def _finish(res: Any, spec: Any, data: Any, args: argparse.Namespace, extra: dict[str, Any]) -> int:
    """Print the JSON document (with ``--json``) and one stderr line for an unusual ending; the exit status."""
    from treeopt_dsl.result import Status
    from treeopt_dsl.solve import failure_message

    out = {**_result_dict(res, spec, data, args), **extra}
    if args.json:
        _print_json(out)
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
        return 1
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    from treeopt_dsl.formulations import get_formulation

    spec = get_formulation(args.formulation, **_params(args))
    _check_paths(args)
    data = _data(args, spec)
    res = _solve(spec, data, args)
    extra = _write(res.built, args.output) if res.built is not None else {}
    if res.model is not None:
        extra["metrics"] = {"train": metrics(res.model, data)}
    if not args.json:
        print("\n".join(_summary(res)))
        if res.model is not None and not args.quiet:
            print(res.model.text())
    return _finish(res, spec, data, args, extra)


#: ``treeopt fit NAME`` for the seed systems that are not formulations (no solver at their core): NAME ->
#: "module:function" taking the parsed arguments and returning the exit status
HEURISTIC_FITS = {"tmo": "treeopt_dsl.memetic.command:fit_command",
                  "tao": "treeopt_dsl.memetic.command:fit_command",
                  "cct": "treeopt_dsl.contextual.command:fit_command",
                  "crt": "treeopt_dsl.contextual.command:fit_command"}


def _heuristic_fit(args: argparse.Namespace) -> int:
    import importlib

    module, func = HEURISTIC_FITS[args.formulation].split(":")
    return int(getattr(importlib.import_module(module), func)(args))


def cmd_fit(args: argparse.Namespace) -> int:
    from treeopt_dsl.formulations import get_formulation

    if args.formulation in HEURISTIC_FITS:
        return _heuristic_fit(args)
    if not 0 < args.test_size < 1:
        raise UsageError(f"--test-size must be in (0, 1), got {args.test_size}")
    spec = get_formulation(args.formulation, **_params(args))
    _check_paths(args)
    data = _data(args, spec)
    train, test = data.split(args.test_size, seed=args.seed)
    res = _solve(spec, train, args)
    extra: dict[str, Any] = {"n_train": train.n_samples, "n_test": test.n_samples}
    if res.built is not None:
        extra.update(_write(res.built, args.output))  # the model solved: the training part
    if res.model is not None:
        extra["metrics"] = {"train": metrics(res.model, train), "test": metrics(res.model, test)}
    if not args.json:
        print("\n".join(_summary(res)))
        if res.model is not None:
            print(res.model.text())
            print(f"{'':<8} {'accuracy':>9} {'balanced':>9} {'AUC':>7}")
            for part in ("train", "test"):
                m = extra["metrics"][part]
                print(f"{part:<8} {m['accuracy']:9.4f} {m['balanced_accuracy']:9.4f} {m.get('auc', float('nan')):7.4f}")
    return _finish(res, spec, data, args, extra)


def _grid(text: str, kind: str) -> list[float] | str:
    """``paper`` (:func:`~treeopt_dsl.multistart.paper_grid`) or comma-separated values."""
    if text.strip().lower() == "paper":
        return "paper"
    try:
        return [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise UsageError(f"--lambda-{kind} takes comma-separated numbers or 'paper', got {text!r}") from None


def cmd_path(args: argparse.Namespace) -> int:
    from treeopt_dsl.formulations import get_formulation
    from treeopt_dsl.multistart import plot_path, run_path

    params = _params(args)
    spec = get_formulation(args.formulation, **params)
    if not {"lambda_l", "lambda_g"} <= set(spec.values):
        raise UsageError(f"{spec.name} has no lambda_l / lambda_g parameters; `treeopt path` walks S-ORCT's grid")
    if args.n_starts < 1:
        raise UsageError("--n-starts must be at least 1")
    if args.fresh is not None and args.fresh < 0:
        raise UsageError("--fresh must be at least 0")
    _check_paths(args)
    data = _data(args, spec)
    if not 0 < args.test_size < 1:
        raise UsageError(f"--test-size must be in (0, 1), got {args.test_size}")
    lam_l, lam_g = _grid(args.lambda_l, "l"), _grid(args.lambda_g, "g")
    quiet = args.quiet or args.json

    def show(pt: Any) -> None:
        if not quiet:
            r = pt.to_dict()
            print(f"lambda_L {r['lambda_l']:<10.4g} lambda_G {r['lambda_g']:<10.4g} {r['status']:<13} "
                  f"obj {r['objective'] if r['objective'] is None else round(r['objective'], 5)!s:<9} "
                  f"dL {r.get('delta_l', float('nan')):5.1f}% dG {r.get('delta_g', float('nan')):5.1f}% "
                  f"train {r.get('train_accuracy', float('nan')):.3f} test {r.get('test_accuracy', float('nan')):.3f} "
                  f"{r['time_per_start_s']:.2f} s/start  won: {r['won']}", flush=True)

    path, train, test = run_path(spec.name, data, lam_l, lam_g, params=params, test_size=args.test_size,
                                 seed=args.seed, n_starts=args.n_starts, fresh=args.fresh,
                                 solver=_solver(spec, args), backend=args.backend, time_limit=args.time_limit,
                                 on_point=show)
    out: dict[str, Any] = {"formulation": spec.name, "params": spec.values, "data": _data_info(data),
                           "n_train": train.n_samples, "n_test": test.n_samples,
                           "path": [p.to_dict() for p in path]}
    if args.plot:
        plot_path(path).savefig(args.plot, dpi=120)
        out["plot"] = args.plot
        if not quiet:
            print(f"wrote {args.plot}")
    if args.json:
        _print_json(out)
    return 0 if all(p.result.status.has_solution for p in path) else 1


def cmd_born_again(args: argparse.Namespace) -> int:
    from treeopt_dsl.bornagain.command import run

    return run(args)


def cmd_experiment(args: argparse.Namespace) -> int:
    from treeopt_dsl.experiments.command import run

    return run(args)


COMMANDS = {"formulations": cmd_formulations, "solvers": cmd_solvers, "datasets": cmd_datasets,
            "compile": cmd_compile, "solve": cmd_solve, "fit": cmd_fit, "path": cmd_path,
            "born-again": cmd_born_again, "experiment": cmd_experiment}


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    """Run the ``treeopt`` command; returns the exit status (see the module docstring).

    Installs a SIGTERM handler for the duration of the call (main thread only; the previous handler is
    restored): SIGTERM outside a solve exits 143 with one line; during a solve the backends return the
    incumbent as ``interrupted`` (exit 130).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except TreeoptError as exc:
        if debug:
            raise
        print(f"treeopt: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("treeopt: interrupted (Ctrl-C)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("treeopt: terminated (SIGTERM)", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
