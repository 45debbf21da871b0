"""Every default a face reads and every check of a common option, defined once.

The command line, the scikit-learn estimators, the experiment runner and the formulations' ``solve`` read their
defaults here and check ``time_limit``, ``gap``, ``threads`` and ``seed`` with the functions below (the backends'
:class:`~treeopt_dsl.backends.base.SolveOptions` too), so that the same value means the same on every face and a bad
one gets the same :class:`~treeopt_dsl.errors.OptionError`.

>>> check_time_limit(None), check_time_limit(2)
(None, 2.0)
>>> check_time_limit(-1)
Traceback (most recent call last):
...
treeopt_dsl.errors.OptionError: time_limit must be a number >= 0 (seconds) or None (no limit), got -1
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import numpy as np

try:
    import resource  # POSIX: the address-space limit (ulimit -v) of this process
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

from treeopt_dsl.errors import OptionError
from treeopt_dsl.numeric import finite_real

#: seconds after which ``treeopt solve`` / ``fit`` / ``born-again`` stop when ``--time-limit`` is not given (the one
#: default of ``--time-limit``: born-again's exact dynamic program, which has no answer before its end, exits 1 at it)
TIME_LIMIT = 300.0
#: the seed of everything random a command does when ``--seed`` is not given (``--sample``, the split, the starts,
#: born-again's cells)
SEED = 0
#: the share of the rows ``treeopt fit`` and ``treeopt path`` hold out for testing (stratified; ``--test-size``).
#: [blanquero-2020-sorct] holds out 25% (``treeopt path ... --test-size 0.25``)
TEST_SIZE = 0.2
#: ``treeopt path``'s ``--start-time-limit`` is seconds *per start* (a path runs ``--n-starts`` local solves at every
#: pair); none by default, as the paper's runs: each start ends at Ipopt's iteration limit (``max_iter``)
PATH_TIME_LIMIT: float | None = None
#: the estimators' default ``time_limit`` (a grid search fits many models)
ESTIMATOR_TIME_LIMIT = 60.0
#: an experiment grid's default ``time_limit`` per solve (``[experiment] time_limit``)
GRID_TIME_LIMIT = 60.0
#: the plots of ``treeopt experiment report --profile`` (:mod:`treeopt_dsl.experiments.report`): performance profiles
#: of the runtime and of the features per split; cumulative gaps of the test balanced accuracy, of the objective and
#: of ``exact`` (a logistic tree's exact objective, the true log-loss: thesis Figures 3.7c and 3.8b)
REPORT_PROFILES = ("time", "accuracy", "sparsity", "objective", "exact")
#: how ``ors`` reads the features (``binarize``, the CLI's ``--binarize``): ``none`` (scaled, the thesis), ``quantile``
#: (0/1 threshold columns at quantiles: a card to score by hand) or ``stump`` (one 0/1 column per feature at its
#: log-loss decision stump's cut: the thesis' binarization before LCPA, seed 000 line 1487)
BINARIZE = ("none", "quantile", "stump")
#: a cell reproduces a paper's accuracy when ours is within this many percentage points of the published figure
#: (issue 33; ``treeopt experiment report --paper`` and ``benchmarks/reproduction_causes.py`` count by it)
WITHIN_POINTS = 1.5
#: the exact DP route's limit when the call gives none (the engine runs in a thread it cannot interrupt)
DP_TIME_LIMIT = 600.0
#: the solver of the faces (the CLI's ``--solver``, the estimators, ``FormulationSpec.solve``): the route registry
#: chooses (:func:`treeopt_dsl.backends.plan_route`: the fastest exact engine that proves the composition, else the
#: formulation's own solver)
SOLVER = "auto"
#: solver threads when none are asked for (``None``: the solver's own choice)
THREADS: int | None = None

# ----------------------------------------------------------------------------------------------- start budgets
#: the share of a call's ``time_limit`` the automatic start may spend before its optional candidates are skipped
#: (the first candidate always runs; the solver gets what is left, ``FormulationSpec.solve``)
START_SHARE = 0.25
#: what a call keeps from its solver for what follows it (decoding, the certificate, the metrics):
#: ``min(FINISH_RESERVE * time_limit, FINISH_RESERVE_MAX, FINISH_BASE_S + FINISH_PER_CELL_S * n * p * nodes)``
#: (:func:`finish_reserve`). Measured on OLCT/adult (36,178 training rows x 104, load 4): decoding and certifying
#: took 2.35 s at depth 2 (3 branch nodes) and 4.8 s at depth 3 (7), about 2e-7 s per sample, feature and branch
#: node; the base adds the second a backend's guard waits for a solver that does not read its clock before it
#: returns without it (``limit_grace_s``; HiGHS in presolve). With 0.25 s + 5e-7 s x n x p (no nodes, no grace)
#: OLCT/adult at depth 3 ended 4.7 s past a 60 s limit.
FINISH_RESERVE = 0.1
FINISH_RESERVE_MAX = 10.0
FINISH_BASE_S = 1.25
FINISH_PER_CELL_S = 2e-7


def finish_reserve(time_limit: float, n_samples: int, n_features: int, n_nodes: int = 1) -> float:
    """Seconds of ``time_limit`` kept from the solver for decoding and certifying its answer (see above);
    ``n_nodes``: the tree's branch nodes (1 for a model without a tree).

    >>> round(finish_reserve(60, 36178, 104, 7), 2), round(finish_reserve(120, 36178, 104, 3), 2)
    (6.0, 3.51)
    >>> round(finish_reserve(60, 200, 30, 3), 2), round(finish_reserve(5, 200, 30, 3), 2)
    (1.25, 0.5)
    """
    by_size = FINISH_BASE_S + FINISH_PER_CELL_S * n_samples * n_features * max(1, int(n_nodes))
    return min(FINISH_RESERVE * time_limit, FINISH_RESERVE_MAX, by_size)


#: seconds the exact DP tree may take as a candidate of the automatic start
DP_START_TIME = 5.0
#: sweeps over the support of the risk scores' coordinate descent (the beam-search start's polish) at most: its
#: work is bounded by sweeps, not seconds, so a start is the same on any machine (measured: 1-2 sweeps on heart,
#: breast-wisconsin-original and spambase at T = 5)
RISK_DESCENT_SWEEPS = 100

#: rows a node's problem of the ``greedy`` and ``greedy_lp`` starts is solved on at most (a stratified sample, the
#: same for a seed on any machine: work, not seconds): on adult's 45,222 rows the root's LP ran for minutes and
#: MARGOT's linear SVMs took 62 s; at 2,000 rows a node LP takes about 1 s, an SVM or logistic regression 0.1 s
NODE_ROWS = 2000
#: TMO as a candidate of the automatic start: a budget that keeps it within about a second
#: (``warm_start="tmo"`` runs the paper's k = 100 trees, 5 generations)
AUTO_TMO: dict[str, Any] = {"n_trees": 20, "n_generations": 2, "time_limit": 1.0}

# ----------------------------------------------------------------------------------------------------- memory
#: the share of the memory available when a solve starts that an engine or a model may plan to use (the rest is
#: left to Python, the data and the machine's other work)
MEMORY_SHARE = 0.75
#: the environment variable that sets that budget outright (``"4G"``, ``"512M"``, bytes)
MEMORY_ENV = "TREEOPT_MEMORY_LIMIT"
#: seconds for which a reading of the available memory is reused: one call of the exact route asks for the budget
#: up to four times (each engine's estimate, the size check, the binarization's check) within milliseconds
MEMORY_READ_MAX_AGE_S = 1.0
#: the last reading of the available memory: ``(time.monotonic(), bytes)``
_AVAILABLE: list[tuple[float, int]] = []


#: bytes a tree MILP's build holds per (sample, feature, branch node): its routing rows carry each sample's features
#: at each branch node (OLCT on adult, 36,178 x 104: depth 2 held 1.8 GB, depth 3 3.7 GB, that is 128-145 bytes a
#: nonzero with 1.1 nonzeros a cell; MARGOT's hinge at every level makes 1.7): 225 keeps the estimate above both
BUILD_BYTES_PER_CELL = 225.0


def memory_budget() -> int:
    """Bytes a solve may plan to use: :data:`MEMORY_ENV` when set, else :data:`MEMORY_SHARE` of the memory
    available now (``MemAvailable`` of ``/proc/meminfo``, the address-space limit when lower; the physical memory
    where neither is readable). What an engine would need above it is refused before it starts
    (:class:`~treeopt_dsl.errors.ModelTooLarge`, naming what would fit). The available memory is read at most once
    per :data:`MEMORY_READ_MAX_AGE_S` (once per call of the exact route).

    >>> import os; os.environ[MEMORY_ENV] = "1.5G"; memory_budget() == int(1.5 * 2**30)
    True
    >>> del os.environ[MEMORY_ENV]
    """
    text = os.environ.get(MEMORY_ENV, "").strip()
    if text:
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)[bB]?", text)
        if m is None:
            raise OptionError(f"{MEMORY_ENV} must be bytes or a number with a unit (512M, 4G), got {text!r}")
        return int(float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " "))
    now = time.monotonic()
    if not _AVAILABLE or now - _AVAILABLE[0][0] > MEMORY_READ_MAX_AGE_S:
        _AVAILABLE[:] = [(now, _available())]
    return int(MEMORY_SHARE * _AVAILABLE[0][1])


def _available() -> int:
    """Bytes available now: ``MemAvailable`` of ``/proc/meminfo``, the address-space limit when lower, the physical
    memory where neither is readable."""
    avail = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            avail = 8 * 2**30  # nothing readable: a laptop's memory
    if resource is not None:
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft not in (resource.RLIM_INFINITY, -1):
            avail = min(avail, int(soft))
    return int(avail)


def memory_text(n_bytes: float) -> str:
    """``n_bytes`` as text for messages, in GB from a gigabyte on, else in MB.

    >>> memory_text(2.3 * 2**30), memory_text(1.7e6), memory_text(4e8)
    ('2.3 GB', '1.6 MB', '381 MB')
    """
    value, unit = (n_bytes / 2**30, "GB") if n_bytes >= 2**30 else (n_bytes / 2**20, "MB")
    return f"{value:.2g} {unit}" if value < 10 else f"{value:.0f} {unit}"


def check_number(name: str, value: Any, allowed: str, minimum: float = 0.0, integer: bool = False) -> float:
    """``value`` as a float when it is a finite number ``>= minimum`` (a whole number if asked), else an
    :class:`OptionError` naming ``name`` and what is ``allowed``."""
    ok = finite_real(value) and float(value) >= minimum
    if ok and integer:
        ok = float(value) == int(value) and not isinstance(value, (float, np.floating))
    if not ok:
        raise OptionError(f"{name} must be {allowed}, got {value!r}")
    return float(value)


def check_time_limit(value: Any, name: str = "time_limit") -> float | None:
    """Seconds ``>= 0`` (``0`` stops at once with what presolve found), or ``None`` for no limit."""
    if value is None:
        return None
    return check_number(name, value, "a number >= 0 (seconds) or None (no limit)")


def check_gap(value: Any, name: str = "gap") -> float | None:
    """A relative MIP gap ``>= 0`` (``0.01`` for 1%), or ``None`` for the solver's default."""
    return None if value is None else check_number(name, value, "a number >= 0 (relative MIP gap, e.g. 0.01 for 1%)")


def check_threads(value: Any, name: str = "threads") -> int | None:
    """An integer ``>= 0`` (``0``: the solver's own choice), or ``None``."""
    if value is None:
        return None
    return int(check_number(name, value, "an integer >= 0 (0 = the solver's choice)", integer=True))


def check_seed(value: Any, name: str = "seed") -> int | None:
    """An integer ``>= 0``, or ``None``."""
    return None if value is None else int(check_number(name, value, "an integer >= 0", integer=True))


def check_tolerance(value: Any, name: str) -> float | None:
    """A tolerance: a number ``> 0``, or ``None``."""
    if value is None:
        return None
    out = check_number(name, value, "a number > 0")
    if out == 0:
        raise OptionError(f"{name} must be a number > 0, got {value!r}")
    return out
