"""linopy: the standard form rebuilt as a labeled linopy model, solved with linopy's solver interfaces.

linopy stores a linear expression exactly as the IR does -- ``coeffs``/``vars`` arrays with a
trailing ``_term`` axis (``vars == -1`` is padding) -- so :func:`to_linopy` hands each family over
as arrays, with no Python loop per row or nonzero: one linopy variable per column family (same
name, dims and coordinate labels) and one linopy constraint per row family, its terms scattered
from the CSR rows of that family (a ranged row ``l <= a.x <= u`` becomes a ``<=`` row in the family
plus a ``>=`` row in ``<family>__lower``, since linopy rows carry one sign).

A ``log_callback`` receives the solver's log after the solve (linopy writes it to a file), not
while it runs. Solvers: whichever of HiGHS, Gurobi, SCIP and CBC linopy finds. CBC is a command-line tool for
linopy; when no ``cbc`` is on ``PATH`` the one the ``cbcbox`` wheel ships is put on ``PATH`` for the
solve. What each route reports (linopy 0.10):

=========  ========================  ================  ====================================
solver     bound / gap               warm start        notes
=========  ========================  ================  ====================================
highs      dual bound and gap        yes (``.sol``)    direct API
gurobi     dual bound and gap        yes (``.mst``)    direct API; pip licence size limit
scip       from ``solver_model``     no (linopy logs   LP file; MIQP supported
                                     "not implemented")
cbc        bound from CBC's log      no (``-basisI``   MPS file; no quadratic objectives;
           ("Lower bound:")          is an LP basis)   status read from CBC's solution file
=========  ========================  ================  ====================================

Rows without terms never reach the solver (linopy drops them): one whose bounds exclude 0 makes the
model infeasible, which :func:`row_activity` finds before any solve (shared with the pyomo backend,
as are :func:`families` and :func:`column_families`, the family layout of both builders).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from treeopt_dsl.backends._exe import find_executable
from treeopt_dsl.backends.base import Backend, Outcome, Run, SolveOptions
from treeopt_dsl.backends.dialects import dialect
from treeopt_dsl.errors import CapabilityError, ModelError, ModelTooLarge, SolverNotAvailable
from treeopt_dsl.ir import StandardForm

_ALL = ("highs", "gurobi", "scip", "cbc")
_CLASSES = {"highs": frozenset({"LP", "MILP", "QP"}), "gurobi": frozenset({"LP", "MILP", "QP", "MIQP"}),
            "scip": frozenset({"LP", "MILP", "QP", "MIQP"}), "cbc": frozenset({"LP", "MILP"})}
_BASE_FEATURES = frozenset({"time_limit", "gap", "threads", "seed", "log", "export"})
_WARM = frozenset({"highs", "gurobi"})
#: what HiGHS / Gurobi log when they used the start
_START_SEEN = re.compile(r"MIP start solution is feasible|User MIP start produced solution|"
                         r"Loaded user MIP start with objective")


def _linopy_installed() -> bool:
    """Whether linopy is installed, without importing it (the import is paid where linopy is used)."""
    return importlib.util.find_spec("linopy") is not None


@contextlib.contextmanager
def _cbc_on_path() -> Iterator[None]:
    """Put the directory of a found ``cbc`` on ``PATH`` for linopy (which runs ``cbc`` by name)."""
    import shutil

    import linopy

    exe = find_executable("cbc")
    if exe is None or shutil.which("cbc"):
        yield
        return
    def refresh() -> None:
        with contextlib.suppress(AttributeError):  # linopy caches `shutil.which("cbc")`
            linopy.solvers.CBC.is_available.__func__.cache_clear()
        linopy.available_solvers.refresh()

    old = os.environ.get("PATH", "")
    os.environ["PATH"] = str(Path(exe).parent) + os.pathsep + old
    refresh()
    try:
        yield
    finally:
        os.environ["PATH"] = old
        refresh()


# ---------------------------------------------------------------------------------------- export
def to_linopy(sf: StandardForm) -> Any:
    """The standard form as a ``linopy.Model`` with the formulation's names and coordinates.

    Variables are named after the column families (``model.variables["w"]`` has the family's dims
    and labels, so ``model.variables["w"].solution`` after a solve is indexed like the formulation);
    constraints after the row families (entries the compiler dropped as free rows are masked); the
    objective is ``c.x + ½ xᵀQx``, minimized -- without the constant ``sf.c0``, which linopy's solver
    interfaces reject (add it to ``model.objective.value`` yourself). Columns and rows of a hand-made
    form that no family covers go to the flat families ``x`` / ``c`` (dimension ``_col`` / ``_row``,
    labelled by position). A row without terms is left out (linopy drops it anyway); one whose
    bounds exclude 0 raises :class:`ModelError`, since the model would silently lose it. Add
    constraints by hand and call ``model.solve(...)`` as with any linopy model.
    """
    return _build(sf)[0]


Family = tuple[str, tuple[str, ...], dict[str, Any], np.ndarray]


def families(blocks: list[Any], n: int, generic: str, dim: str) -> list[Family]:
    """``(name, dims, coords, position)`` of each block -- ``position`` holds the column (or compiled
    row, ``-1`` = dropped) of every entry, shaped like the family -- plus one flat family named
    ``generic`` (dimension ``dim``, labels = positions) for whatever no block covers, as in a
    hand-made standard form. Shared by the linopy and pyomo builders."""
    out: list[Family] = []
    covered = np.zeros(n, dtype=bool)
    for b in blocks:
        pos = b.index if b.index is not None else b.offset + np.arange(b.size)
        pos = np.asarray(pos, dtype=np.int64).reshape(b.shape)
        covered[pos[pos >= 0]] = True
        out.append((b.name, tuple(b.dims), dict(b.coords), pos))
    rest = np.flatnonzero(~covered)
    if rest.size:
        taken = {f[0] for f in out}
        while generic in taken:
            generic += "_"
        out.append((generic, (dim,), {dim: rest}, rest))
    return out


def column_families(sf: StandardForm) -> list[Family]:
    """:func:`families` of the columns, with a family of mixed integrality split in two (the
    uncovered columns of a hand-made form may mix them; a linopy or pyomo family has one domain)."""
    out: list[Family] = []
    for name, dims, coords, pos in families(sf.columns, sf.n_cols, "x", "_col"):
        ints = sf.integrality[pos].astype(bool)
        if ints.all() or not ints.any():
            out.append((name, dims, coords, pos))
        elif len(dims) == 1 and dims[0] == "_col":
            out.append((name, dims, {dims[0]: pos[~ints]}, pos[~ints]))
            out.append((f"{name}_int", dims, {dims[0]: pos[ints]}, pos[ints]))
        else:
            raise ModelError(f"column family {name!r} mixes integer and continuous columns")
    return out


def row_activity(sf: StandardForm) -> tuple[np.ndarray, np.ndarray]:
    """Which rows a modelling layer must carry (terms and at least one finite side), and the term-less
    rows whose bounds exclude 0 (``0 >= 1``: the model is infeasible; linopy and pyomo drop term-less
    rows, so the backends settle these before building)."""
    A = sf.A.tocsr()
    has_terms = np.asarray(abs(A).sum(axis=1)).ravel() > 0
    bounded = np.isfinite(sf.row_lower) | np.isfinite(sf.row_upper)
    impossible = ~has_terms & ((sf.row_lower > 1e-9) | (sf.row_upper < -1e-9))
    return has_terms & bounded, impossible


def check_empty_rows(sf: StandardForm) -> None:
    """Raise :class:`ModelError` naming a row without terms whose bounds exclude 0 (the export cannot
    carry it: linopy and pyomo drop such rows, the exported model would be wrongly feasible)."""
    _, impossible = row_activity(sf)
    if impossible.any():
        i = int(np.flatnonzero(impossible)[0])
        name = sf.row_names()[i] if sf.rows else f"c{i}"
        raise ModelError(f"row {name!r} has no terms but needs {sf.row_lower[i]:g} <= 0 <= {sf.row_upper[i]:g}: "
                         "the model is infeasible as written")


def _build(sf: StandardForm) -> tuple[Any, np.ndarray]:
    """:func:`to_linopy` and the linopy label of every standard-form column."""
    import linopy
    import pandas as pd
    import xarray as xr

    check_empty_rows(sf)
    m = linopy.Model()
    labels = np.full(sf.n_cols, -1, dtype=np.int64)
    for name, dims, cs, pos in column_families(sf):
        coords = [pd.Index(cs[d], name=d) for d in dims]

        def da(a: np.ndarray, coords: list = coords, dims: tuple = dims) -> xr.DataArray:
            return xr.DataArray(a, coords=coords, dims=dims)

        v = m.add_variables(lower=da(sf.col_lower[pos]), upper=da(sf.col_upper[pos]), name=name,
                            integer=bool(sf.integrality[pos].any()))
        labels[pos] = np.asarray(v.labels.values)

    A = sf.A.tocsr()
    carried, _ = row_activity(sf)
    for name, dims, cs, pos in families(sf.rows, sf.n_rows, "c", "_row"):
        shape = pos.shape
        idx = pos.ravel()
        size = idx.size
        ent = np.flatnonzero(idx >= 0)
        rows = idx[ent]
        sub = A[rows]
        counts = np.diff(sub.indptr)
        T = max(int(counts.max()) if counts.size else 0, 1)
        vars_ = np.full((size, T), -1, dtype=np.int64)
        coeffs = np.full((size, T), np.nan)
        r_of_nz = np.repeat(ent, counts)
        k_of_nz = np.arange(sub.nnz) - np.repeat(sub.indptr[:-1], counts)
        vars_[r_of_nz, k_of_nz] = labels[sub.indices]
        coeffs[r_of_nz, k_of_nz] = sub.data
        lo = np.full(size, -np.inf)
        up = np.full(size, np.inf)
        lo[ent], up[ent] = sf.row_lower[rows], sf.row_upper[rows]
        active = np.zeros(size, dtype=bool)
        active[ent] = carried[rows]
        eq = active & (lo == up)
        has_up = active & ~eq & np.isfinite(up)
        only_lo = active & ~eq & ~np.isfinite(up) & np.isfinite(lo)
        sign = np.where(eq, "=", np.where(has_up, "<=", ">="))
        rhs = np.where(eq | only_lo, lo, np.where(has_up, up, 0.0))
        mask = eq | has_up | only_lo
        ranged = has_up & np.isfinite(lo)
        coords = {d: pd.Index(cs[d], name=d) for d in dims}
        tdims = (*dims, "_term")
        expr = linopy.LinearExpression(
            xr.Dataset({"coeffs": (tdims, coeffs.reshape(*shape, T)), "vars": (tdims, vars_.reshape(*shape, T))},
                       coords=coords), m)

        def arr(a: np.ndarray, dims: tuple = dims, shape: tuple = shape, coords: dict = coords) -> xr.DataArray:
            return xr.DataArray(a.reshape(shape), coords=coords, dims=dims)

        m.add_constraints(expr, arr(sign), arr(rhs), name=name, mask=arr(mask))
        if ranged.any():
            m.add_constraints(expr, ">=", arr(np.where(ranged, lo, 0.0)), name=f"{name}__lower", mask=arr(ranged))

    nz = np.flatnonzero(sf.c)
    if nz.size == 0 and sf.n_cols and not sf.is_quadratic:
        nz = np.zeros(1, dtype=np.int64)  # linopy refuses an empty objective; ``0 * x_0`` it takes
    lin = {"coeffs": (("_term",), sf.c[nz].astype(float)), "vars": (("_term",), labels[nz])}
    if sf.is_quadratic:
        from scipy.sparse import triu

        U = triu(sf.Q, format="coo")  # ½ xᵀQx = Σ_{i<j} Q_ij x_i x_j + Σ_i ½ Q_ii x_i²
        qc = np.where(U.row == U.col, 0.5, 1.0) * U.data
        coeffs = np.concatenate([sf.c[nz], qc])
        v1 = np.concatenate([labels[nz], labels[U.row]])
        v2 = np.concatenate([np.full(nz.size, -1), labels[U.col]])
        ds = xr.Dataset({"coeffs": (("_term",), coeffs), "vars": (("_factor", "_term"), np.stack([v1, v2]))})
        obj = linopy.QuadraticExpression(ds, m)
    else:
        obj = linopy.LinearExpression(xr.Dataset(lin), m)
    m.add_objective(obj, sense="min")
    return m, labels


def solution_vector(model: Any, sf: StandardForm) -> np.ndarray | None:
    """The solved linopy model's values as a standard-form column vector (``None`` without a solution)."""
    x = np.full(sf.n_cols, np.nan)
    for name, _, _, pos in column_families(sf):
        x[pos] = np.asarray(model.variables[name].solution.values, dtype=float)
    return x if np.all(np.isfinite(x)) else None


# ---------------------------------------------------------------------------------------- options
def _options(solver: str, o: SolveOptions, sf: StandardForm) -> dict[str, Any]:
    """The solver's own parameters (its :class:`~treeopt_dsl.backends.dialects.Dialect`, as on every route) and its
    log switched on: linopy writes it to the file that feeds ``run.emit`` (the console only when verbose)."""
    out = dialect(solver).native(sf, o)
    if solver == "highs":
        out.update(output_flag=True, log_to_console=bool(o.verbose))
    elif solver == "gurobi":
        out.update(OutputFlag=1, LogToConsole=int(bool(o.verbose)))
    elif solver == "scip":
        out["display/verblevel"] = 4
    out.update(o.extra)
    return out


def _write_start(path: Path, solver: str, names: list[str], values: np.ndarray) -> None:
    """A start file in the format the solver reads: HiGHS ``.sol`` or Gurobi ``.mst`` (name value)."""
    body = "\n".join(f"{n} {v:.17g}" for n, v in zip(names, values, strict=True))
    if solver == "highs":
        path.write_text("Model status\nUnknown\n\n# Primal solution values\nFeasible\nObjective 0\n"
                        f"# Columns {len(names)}\n{body}\n# Rows 0\n")
    else:
        path.write_text(f"# MIP start\n{body}\n")


# ---------------------------------------------------------------------------------------- backend
class LinopyBackend(Backend):
    """Solve through linopy (``--backend linopy``). See the module docstring for the support table."""

    name = "linopy"
    solvers = _ALL
    problem_classes = frozenset({"LP", "MILP", "QP", "MIQP"})
    extra = "linopy"
    features = _BASE_FEATURES | {"warm_start"}
    #: the solver's log reports the objective without ``sf.c0`` (progress read from it is shifted back)
    log_omits_constant = True
    #: linopy's ``Model.solve`` is not stopped from outside: SIGINT/SIGTERM end the solve with
    #: ``KeyboardInterrupt`` (no "interrupt" feature); it runs in the calling thread
    threaded = False

    @classmethod
    def available(cls) -> bool:
        return _linopy_installed()

    @classmethod
    def solver_available(cls, solver: str) -> bool:
        if solver not in _ALL or not _linopy_installed():
            return False
        if solver == "cbc":
            return find_executable("cbc") is not None
        import linopy

        return solver in linopy.available_solvers

    @classmethod
    def classes_for(cls, solver: str) -> frozenset[str]:
        return _CLASSES.get(solver, frozenset())

    @classmethod
    def features_for(cls, solver: str) -> frozenset[str]:
        return _BASE_FEATURES | ({"warm_start"} if solver in _WARM else set())

    @staticmethod
    def to_linopy(sf: StandardForm) -> Any:
        return to_linopy(sf)

    # ------------------------------------------------------------------ protocol hooks
    def require_installed(self, solver: str) -> None:
        if not self.solver_available(solver):
            raise SolverNotAvailable(f"linopy cannot drive {solver!r} here: `pip install treeopt-dsl[linopy,"
                                     f"{ {'highs': 'highs', 'cbc': 'cbc'}.get(solver, solver)}]`")

    def require_class(self, sf: StandardForm, solver: str) -> None:
        if sf.problem_class not in self.classes_for(solver):
            raise CapabilityError(f"linopy with {solver} cannot solve a {sf.problem_class} model")

    def settle(self, run: Run) -> Outcome | None:
        if row_activity(run.sf)[1].any():  # linopy would drop the term-less row "0 >= 1" and solve the rest
            return Outcome("infeasible", message="linopy: a row without terms excludes 0", accepted=False)
        return None

    def load_model(self, run: Run) -> None:
        run.model, run.data["labels"] = _build(run.sf)
        run.data["opts"] = {}

    def native_options(self, run: Run) -> dict[str, Any]:
        return _options(run.solver, replace(run.options, extra={}), run.sf)

    def set_option(self, run: Run, name: str, value: Any) -> None:
        if name not in run.data["opts"]:
            dialect(run.solver).check_option(name, value)
        run.data["opts"][name] = value

    def known_options(self, run: Run) -> list[str]:
        return dialect(run.solver).option_names()

    def set_start(self, run: Run, start: np.ndarray) -> bool:
        return run.solver in _WARM

    def run(self, run: Run) -> None:
        with tempfile.TemporaryDirectory(prefix="treeopt-linopy-") as tmp:
            self._solve_in(run, Path(tmp))

    @staticmethod
    def _solve_in(run: Run, tmp: Path) -> None:
        m, col_labels, solver, options = run.model, run.data["labels"], run.solver, run.options
        direct = solver in ("highs", "gurobi")
        # CBC: MPS, since CBC's LP reader rejects a file without constraints; keep the files to
        # read CBC's own solution file (linopy maps only its "Optimal"/"Infeasible" first lines)
        kw: dict[str, Any] = {"io_api": "direct" if direct else ("mps" if solver == "cbc" else "lp"),
                              "log_fn": tmp / "solver.log"}
        if solver == "cbc":
            kw.update(problem_fn=tmp / "model.mps", solution_fn=tmp / "cbc.sol", keep_files=True)
        if options.warm_start is not None and solver in _WARM:
            ws = np.asarray(options.warm_start, dtype=float)
            known = np.flatnonzero(np.isfinite(ws))
            fn = tmp / ("start.sol" if solver == "highs" else "start.mst")
            if solver == "highs":  # HiGHS reads a full column vector; unknowns at 0 (then repaired)
                labels, vals = col_labels, np.where(np.isfinite(ws), ws, 0.0)
            else:
                labels, vals = col_labels[known], ws[known]
            _write_start(fn, solver, [f"x{int(lab)}" for lab in labels], vals)
            kw["warmstart_fn"] = fn
            kw["set_names"] = True
        ctx = _cbc_on_path() if solver == "cbc" else contextlib.nullcontext()
        run.data["no_incumbent"] = False
        try:
            with ctx:
                m.solve(solver_name=solver, **kw, **run.data["opts"])
        except (IndexError, AttributeError) as exc:
            # linopy reads the solution whenever the status is "ok" (optimal *or* a limit): SCIP's
            # ``getSols()[0]`` and Gurobi's ``X`` fail when a limit came before any incumbent (an
            # optimal run always has one), so these errors mean "limit, no solution"
            if not ((solver == "scip" and isinstance(exc, IndexError))
                    or (solver == "gurobi" and "'X'" in str(exc))):
                raise
            run.data["no_incumbent"] = True
        run.data["cbc"] = None
        if solver == "cbc" and Path(kw["solution_fn"]).exists():
            run.data["cbc"] = _read_cbc(Path(kw["solution_fn"]), col_labels)
        if Path(kw["log_fn"]).exists():
            run.emit_text(Path(kw["log_fn"]).read_text(errors="replace"))

    def read_solution(self, run: Run) -> Outcome:
        if run.data["no_incumbent"]:
            return Outcome("limit", message=f"linopy/{run.solver}: limit reached without a solution")
        return self._outcome(run.model, run.sf, run.solver, "\n".join(run.log), run.data["cbc"])

    @classmethod
    def start_pattern_for(cls, solver: str) -> re.Pattern[str] | None:
        return _START_SEEN

    def translate_error(self, run: Run, exc: Exception) -> Exception | None:
        if "size-limited" in str(exc) or "Model too large" in str(exc):  # licence limits surface as errors
            return ModelTooLarge(f"gurobi's pip licence is size-limited: {exc}")
        return None

    @staticmethod
    def _outcome(m: Any, sf: StandardForm, solver: str, log: str,
                cbc: tuple[str, np.ndarray | None] | None = None) -> Outcome:
        tc = str(m.termination_condition)
        sv = m.solver
        x = solution_vector(m, sf) if m.status == "ok" else None
        if solver == "cbc":
            tc, x = cbc if cbc is not None else ("error", None)
        if x is not None and tc != "optimal" and not _feasible(sf, x):
            x = None  # at a limit some solvers hand back the last LP point: not an incumbent
        limits = ("time_limit", "iteration_limit", "terminated_by_limit", "suboptimal")
        outcome = ("optimal" if tc == "optimal" else "limit" if tc in limits else
                   "interrupted" if tc == "user_interrupt" else
                   tc if tc in ("infeasible", "unbounded", "infeasible_or_unbounded") else "error")
        bound = None
        if x is not None and sf.is_mip:
            report = getattr(sv, "report", None) if sv is not None else None
            db = getattr(report, "dual_bound", None) if report is not None else None
            if solver == "scip" and sv is not None and sv.solver_model is not None:
                with contextlib.suppress(Exception):
                    db = float(sv.solver_model.getDualbound())
            if db is not None and math.isfinite(db):
                bound = float(db) + float(sf.c0)  # linopy's objective leaves the constant out
            if solver == "cbc":
                found = re.search(r"Lower bound:\s+(\S+)", log)
                with contextlib.suppress(ValueError, AttributeError):
                    bound = float(found.group(1))  # type: ignore[union-attr]
        return Outcome(outcome, x, None, bound, f"linopy/{solver}: {tc}")


def _read_cbc(path: Path, col_labels: np.ndarray) -> tuple[str, np.ndarray | None]:
    """CBC's solution file: its first line says how the run ended, the rest is ``index name value dual``
    (``**`` marks infeasible entries). Returns (linopy-style termination condition, column values)."""
    import pandas as pd

    text = path.read_text(errors="replace")
    first, _, body = text.partition("\n")
    low = first.lower()
    if low.startswith("optimal"):
        tc = "optimal"
    elif "infeasible" in low and not low.startswith("stopped"):
        tc = "infeasible"
    elif "unbounded" in low:
        tc = "unbounded"
    elif low.startswith("stopped"):
        tc = "time_limit"
        if "no integer solution" in low:  # the values are the LP relaxation's
            return tc, None
    else:
        return "error", None
    if tc not in ("optimal", "time_limit"):
        return tc, None
    df = pd.read_csv(io.StringIO(body.replace("**", "  ")), sep=r"\s+", header=None, usecols=[1, 2],
                     names=["i", "name", "value", "dual"])
    values = pd.Series(df["value"].to_numpy(dtype=float), index=df["name"].astype(str)).groupby(level=0).first()
    x = values.reindex("x" + col_labels.astype(str).astype(object)).to_numpy(dtype=float)
    return tc, (x if np.all(np.isfinite(x)) else None)


def _feasible(sf: StandardForm, x: np.ndarray, tol: float = 1e-6) -> bool:
    """``x`` within every row and column bound (scaled tolerance) and integral where it must be."""
    ax = sf.A @ x
    lo_ok = np.all(ax >= sf.row_lower - tol * (1 + np.abs(np.where(np.isfinite(sf.row_lower), sf.row_lower, 0))))
    up_ok = np.all(ax <= sf.row_upper + tol * (1 + np.abs(np.where(np.isfinite(sf.row_upper), sf.row_upper, 0))))
    cols = np.all(x >= sf.col_lower - tol) and np.all(x <= sf.col_upper + tol)
    ints = sf.integrality.astype(bool)
    integral = np.all(np.abs(x[ints] - np.round(x[ints])) <= 1e-5)
    return bool(lo_ok and up_ok and cols and integral)


BACKENDS = [LinopyBackend]
