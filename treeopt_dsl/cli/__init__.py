"""The ``treeopt`` command.

    treeopt formulations | solvers | datasets
    treeopt compile FORMULATION --data D [--depth N] [--param K=V ...] [--output FILE.lp|FILE.mps] [--json]
    treeopt solve   FORMULATION --data D [...] [--solver S] [--backend B] [--time-limit SEC] [--gap G]
                                [--threads K] [--warm-start greedy|cart] [--json]
    treeopt fit     FORMULATION --data D [...] [--test-size 0.2] [--seed S] [--json]
    treeopt path    FORMULATION --data D [...] --lambda-l GRID [--lambda-g GRID] [--n-starts K] [--plot F.png]
    treeopt born-again FOREST.txt|MODEL.joblib [--objective depth|leaves|depth-leaves] [--heuristic]
                                [--prune --train TRAIN.csv] [--test TEST.csv] [--output TREE.txt] [--json]
    treeopt experiment run|tasks|report ...
    treeopt completion bash|zsh                 # a shell completion script

Exit status and stderr (always one line ``treeopt: ...``; ``--debug`` shows the traceback instead; the list is
:data:`treeopt_dsl.cli.common.EXIT_CODES`, which ``treeopt --help`` prints):

* 0: done (an optimal result, or a feasible one stopped at the time limit);
* 1: the solve ended without a solution (infeasible, unbounded, time limit before any solution; ``born-again``:
  the dynamic program stopped without a tree; ``experiment run``: a task failed);
* 2: a bad input (``treeopt: error: ...``): unknown formulation, bad data, missing solver, bad
  parameter or option (negative ``--time-limit``/``--gap``/``--threads``), an unwritable
  ``--output``/``--log``/``--plot`` path (checked before any work);
* 3: the solver's answer is uncertified (the decoded model does not reproduce it; ``born-again``: the tree
  is not faithful to the forest); the result is still printed;
* 130: interrupted (Ctrl-C, or SIGTERM during a solve): the best solution found so far is printed as
  usual (summary or the JSON document);
* 143: SIGTERM outside a solve.

``solve`` and ``fit`` stop after ``--time-limit`` seconds (default :data:`treeopt_dsl.defaults.TIME_LIMIT`, 300 s;
``--time-limit none`` means no limit), counted from the process' start: Python's start, the imports and reading
the data are part of it (the ``time`` line says how much), and so are the starts, the solve, decoding and the
certificate. With ``--json`` stdout holds exactly one JSON document;
progress and messages go to stderr.
"""
from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
import time
from typing import Any

from treeopt_dsl.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Terminated,
    process_started,
)
from treeopt_dsl.cli.parsers import build_parser
from treeopt_dsl.errors import TreeoptError

__all__ = ["COMMANDS", "HEURISTIC_FITS", "build_parser", "main"]

#: the module of :mod:`treeopt_dsl.cli` that runs each subcommand (its ``run(args)`` returns the exit status).
#: Only the chosen one is imported: the subcommands' families import scikit-learn (0.5 s), PyTorch or Dask, and
#: ``treeopt formulations`` should not pay for them (``python -X importtime``: 0.5 s for the parser against 1.1 s
#: with every subcommand's module)
COMMANDS = {"formulations": "info", "solvers": "info", "datasets": "info", "compile": "model", "solve": "solve",
            "fit": "solve", "path": "path", "born-again": "bornagain", "experiment": "experiment",
            "completion": "completion"}
#: ``treeopt fit NAME`` for the seed systems that are not formulations (no solver at their core): NAME -> module
HEURISTIC_FITS = {"tmo": "memetic", "tao": "memetic", "cct": "contextual", "crt": "contextual"}


def command_module(args: Any) -> Any:
    """The module that runs the parsed command (:data:`COMMANDS`, :data:`HEURISTIC_FITS`)."""
    name = COMMANDS[args.command]
    if args.command == "fit" and getattr(args, "formulation", None) in HEURISTIC_FITS:
        name = HEURISTIC_FITS[args.formulation]
    return importlib.import_module(f"treeopt_dsl.cli.{name}")


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def console() -> None:
    """The ``treeopt`` executable: :func:`main`, then the exit; at once when a solver abandoned past its time limit
    or a stop still runs native code (:func:`treeopt_dsl.backends.base.exit_now_if_abandoned`), so the result
    printed is the end and the process is not aborted by the interpreter's shutdown."""
    code = main(started=process_started())
    backends = sys.modules.get("treeopt_dsl.backends.base")  # loaded only when a solver ran: --help stays light
    if backends is not None:
        backends.exit_now_if_abandoned(code)
    if "torch" in sys.modules:  # PyTorch's interpreter teardown took 1.5-3 s after the result was printed (fit
        # cct/crt), inside the command's --time-limit; every file is written and closed (atomically) by now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def main(argv: list[str] | None = None, started: float | None = None) -> int:
    """Run the ``treeopt`` command; returns the exit status (see the module docstring).

    Installs a SIGTERM handler for the duration of the call (main thread only; the previous handler is
    restored): SIGTERM outside a solve exits 143 with one line; during a solve the backends return the
    incumbent as ``interrupted`` (exit 130).

    ``started``: the :func:`time.perf_counter` instant at which the command's clock starts (``--time-limit``
    bounds everything after it; the executable passes the process' start, :func:`~treeopt_dsl.cli.common.
    process_started`); default: now.
    """
    started = time.perf_counter() if started is None else started
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        args = build_parser().parse_args(argv)
        args.started = started
        return int(command_module(args).run(args))
    except TreeoptError as exc:
        if debug:
            raise
        print(f"treeopt: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("treeopt: interrupted (Ctrl-C)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("treeopt: terminated (SIGTERM)", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return EXIT_OK
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
