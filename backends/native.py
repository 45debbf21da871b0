"""What touches the solvers' native libraries, below every route: whether a library imports, where a C solver's
output goes (never the process' standard output: ``--json`` prints exactly one document there), and the HiGHS model
every HiGHS route and check starts from (made without the banner highspy prints)."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix

from treeopt_dsl.ir import StandardForm
from treeopt_dsl.result import Status

__all__ = ["captured_stdout", "importable", "load_highs", "new_highs", "redirect_fd1", "settle_infeasible_or_unbounded",
           "silent_stdout", "solver_stdout"]


def importable(module: str) -> bool:
    """Whether ``module`` imports (a backend is available when its solver library does)."""
    try:
        importlib.import_module(module)
    except (ImportError, OSError):  # OSError: a bundled solver library failed to load
        return False
    return True


@contextlib.contextmanager
def redirect_fd1(target: str | int) -> Iterator[None]:
    """Point the process' file descriptor 1 (where C solvers print) at ``target`` (a path or a file
    descriptor) for the block. A no-op when fd 1 is closed."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:
        yield
        return
    fd = os.open(target, os.O_WRONLY) if isinstance(target, str) else target
    try:
        os.dup2(fd, 1)
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        if isinstance(target, str):
            os.close(fd)


def solver_stdout(verbose: bool) -> contextlib.AbstractContextManager[None]:
    """Solver output off standard output: to standard error when ``verbose``, else discarded."""
    return redirect_fd1(2 if verbose else os.devnull)


def silent_stdout() -> contextlib.AbstractContextManager[None]:
    """Discard what the block prints on file descriptor 1 (e.g. the banner ``highspy.Highs()`` prints)."""
    return redirect_fd1(os.devnull)


@contextlib.contextmanager
def captured_stdout(path: Path, echo: bool = False) -> Iterator[None]:
    """Redirect the process' file descriptor 1 (where C solvers print) into ``path`` for the block."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(path, "w") as fh:
        os.dup2(fh.fileno(), 1)
        try:
            yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
    if echo:
        sys.stderr.write(path.read_text(errors="replace"))


def new_highs() -> Any:
    """A ``highspy.Highs`` with its output off, made without printing on standard output."""
    import highspy

    with silent_stdout():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def load_highs(sf: StandardForm) -> Any:
    """A ``highspy.Highs`` holding the standard form (no solve)."""
    import highspy

    h = new_highs()
    A = sf.A
    inf = h.inf
    integrality = sf.integrality.astype(np.int32)
    args = (sf.n_cols, sf.n_rows, A.nnz)
    bounds = (np.clip(sf.col_lower, -inf, inf), np.clip(sf.col_upper, -inf, inf),
              np.clip(sf.row_lower, -inf, inf), np.clip(sf.row_upper, -inf, inf))
    if sf.is_quadratic:
        Q = sf.Q.tocsc()
        from scipy.sparse import tril

        L = tril(Q, format="csc")  # HiGHS: ½ xᵀQx with the lower triangle, column-wise
        status = h.passModel(*args, L.nnz, 2, 1, 1, float(sf.c0), sf.c.astype(float), *bounds,
                             *_csr(A), L.indptr[:-1].astype(np.int32) if L.nnz else np.zeros(sf.n_cols, np.int32),
                             L.indices.astype(np.int32), L.data, integrality)
    else:
        status = h.passModel(*args, 2, 1, float(sf.c0), sf.c.astype(float), *bounds, *_csr(A), integrality)
    if status == highspy.HighsStatus.kError:
        raise RuntimeError("HiGHS rejected the model")
    return h


def _csr(A: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row starts, column indices and values as HiGHS takes them (int32, float64), without copies
    when the standard form already holds them so."""
    return (np.asarray(A.indptr[:-1], dtype=np.int32), np.asarray(A.indices, dtype=np.int32),
            np.asarray(A.data, dtype=np.float64))


def settle_infeasible_or_unbounded(sf: StandardForm) -> Status:
    """HiGHS may say "infeasible or unbounded"; a feasibility solve (zero objective) tells which."""
    import highspy

    h = load_highs(replace(sf, c=np.zeros_like(sf.c), Q=None))
    h.run()
    return Status.UNBOUNDED if h.getModelStatus() == highspy.HighsModelStatus.kOptimal else Status.INFEASIBLE


class IncrementalLP:
    """The LP relaxation of a standard form held in one ``highspy.Highs`` that rows are appended to and that is
    re-solved from its last basis (the cutting-plane loops of :mod:`treeopt_dsl.lazy`: a re-load per round costs
    more than the tiny LP itself). ``solve()`` returns the optimal point and objective, or ``None`` when HiGHS
    did not end optimal (an unbounded or infeasible relaxation, a time limit)."""

    def __init__(self, sf: StandardForm, time_limit: float | None = None) -> None:
        self.h = load_highs(replace(sf, integrality=np.zeros_like(sf.integrality)))
        self.h.setOptionValue("output_flag", False)
        if time_limit is not None:
            self.h.setOptionValue("time_limit", max(1e-3, float(time_limit)))

    def solve(self) -> tuple[np.ndarray, float] | None:
        import highspy

        self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        return np.array(self.h.getSolution().col_value, dtype=float), float(self.h.getInfo().objective_function_value)

    def add_rows(self, A: object, lower: np.ndarray, upper: np.ndarray) -> None:
        """Append the rows ``lower <= A x <= upper`` (``A`` CSR over every column)."""
        A = csr_matrix(A)
        inf = self.h.inf
        self.h.addRows(A.shape[0], np.clip(lower, -inf, inf), np.clip(upper, -inf, inf), A.nnz, *_csr(A))
