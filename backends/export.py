"""The compiled model handed to the modelling library a researcher already uses.

Each function takes a :class:`~treeopt_dsl.ir.StandardForm`, a built formulation or an IR
``Model`` and returns the *native* model, with names derived from the formulation's families and
coordinates (``w_0_3``: family ``w``, node 0, feature 3), so that constraints can be added by hand
and the model solved with the library's own API. :func:`from_native` maps the solved native model
back to the formulation's column vector (:func:`values_from_names` does it from a ``name -> value``
mapping), which ``built.decode(x)`` turns into a fitted model.

>>> from treeopt_dsl.export import to_pyomo                      # doctest: +SKIP
>>> m = to_pyomo(built); m.my_cut = pyo.Constraint(expr=m.w[0, 3] <= 1)   # doctest: +SKIP

Solve a native model with the tolerances the formulation asks for
(``built.ctx.numerics.solver_tolerances()``: primal feasibility and integrality tolerances small
against the model's ``eps`` and big-M): with a solver's defaults a MILP with big-M rows can route a
sample across the ``eps`` gap and report an objective no tree attains, which the library's own
solve path prevents and its certificate would expose.

One builder per library lives with its backend (one place for each concept): ``to_linopy`` in
``backends/linopy.py``, ``to_pyomo`` in ``backends/pyomo.py``, ``to_gurobi`` in
``backends/gurobi.py``; python-mip and HiGHS read the model as arrays or MPS here.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from treeopt_dsl.backends import gurobi, linopy, pyomo
from treeopt_dsl.backends.highs import HighsBackend
from treeopt_dsl.backends.native import silent_stdout
from treeopt_dsl.errors import ModelError, SolverNotAvailable
from treeopt_dsl.io import as_standard_form, write_mps
from treeopt_dsl.io._text import names


def to_linopy(obj: Any) -> Any:
    """A ``linopy.Model``: one variable per family (same name, dims and labels), one constraint per row family."""
    return linopy.to_linopy(as_standard_form(obj))


def to_pyomo(obj: Any) -> Any:
    """A pyomo ``ConcreteModel`` with one indexed ``Var`` per family and one indexed ``Constraint`` per row family."""
    return pyomo.to_pyomo(as_standard_form(obj))


def to_gurobi(obj: Any) -> Any:
    """A ``gurobipy.Model`` with the columns and rows named after the formulation."""
    return gurobi.to_gurobi(as_standard_form(obj))


def to_highs(obj: Any) -> Any:
    """A ``highspy.Highs`` holding the model (passed as flat arrays), column and row names set."""
    sf = as_standard_form(obj)
    h = HighsBackend.load(sf)
    cn, rn = names(sf, True)
    for j, n in enumerate(cn.tolist()):
        h.passColName(j, n)
    for i, n in enumerate(rn.tolist()):
        h.passRowName(i, n)
    return h


def mip_highs_available() -> bool:
    """Whether python-mip can drive HiGHS here. python-mip 2.0 loads HiGHS' C library with ``dlopen``:
    highspy's extension module (1.16) does not export that C API, so it needs the ``highsbox`` wheel
    (``pip install highsbox``) or ``PMIP_HIGHS_LIBRARY`` pointing at a ``libhighs`` shared library."""
    import logging

    mip_log = logging.getLogger("mip")
    level = mip_log.level
    mip_log.setLevel(logging.CRITICAL)  # python-mip logs an error when it finds no HiGHS
    try:
        import mip.highs
    except Exception:
        return False
    finally:
        mip_log.setLevel(level)
    return bool(getattr(mip.highs, "has_highs", False))


def to_mip(obj: Any, solver_name: str = "CBC") -> Any:
    """A python-mip ``Model`` (read from an MPS file with the formulation's names).

    ``solver_name="HIGHS"`` needs python-mip's HiGHS library (see :func:`mip_highs_available`); without
    it :class:`~treeopt_dsl.errors.SolverNotAvailable` says what to install."""
    import mip


    if solver_name.upper() == "HIGHS" and not mip_highs_available():
        raise SolverNotAvailable("python-mip cannot find HiGHS' C library (highspy's wheel does not export it): "
                                 "`pip install highsbox` (or set PMIP_HIGHS_LIBRARY to a libhighs shared library)")
    sf = as_standard_form(obj)

    with silent_stdout():
        m = mip.Model(solver_name=solver_name)
    m.verbose = 0
    with tempfile.TemporaryDirectory(prefix="treeopt-") as tmp:
        path = write_mps(sf, Path(tmp) / "model.mps")
        m.read(str(path))
    if abs(float(m.objective_const) - float(sf.c0)) > 1e-12:  # CBC's reader drops the objective constant
        m.objective = m.objective + (float(sf.c0) - float(m.objective_const))
    return m


def values_from_names(obj: Any, values: Mapping[str, float]) -> np.ndarray:
    """The column vector of a native solution given as ``{column name: value}`` (NaN where absent).

    Names are those of :func:`to_highs`, :func:`to_mip` and :func:`to_gurobi` (the LP/MPS writers'
    names: ``StandardForm.col_names()`` made safe for every file format)."""
    sf = as_standard_form(obj)
    cn, _ = names(sf, True)
    return np.array([values.get(n, np.nan) for n in cn.tolist()], dtype=float)


def from_native(obj: Any, native: Any) -> np.ndarray:
    """The column vector of a *solved* native model made by one of the ``to_*`` functions of ``obj``
    (NaN for a column without a value), ready for ``built.decode(x)`` or ``sf.objective(x)``.

    Columns are found by name (HiGHS, python-mip, Gurobi: columns added by hand are ignored), by
    family and coordinates (linopy) or through ``model.x_cols`` (pyomo).
    """
    sf = as_standard_form(obj)
    lib = type(native).__module__.split(".")[0]
    if lib == "linopy":
        x = np.full(sf.n_cols, np.nan)
        for name, _, _, pos in linopy.column_families(sf):
            x[pos] = np.asarray(native.variables[name].solution.values, dtype=float)
        return x
    if lib == "pyomo":
        return pyomo.solution_vector(native, sf)
    if lib == "highspy":
        n = native.getNumCol()
        names = [native.getColName(j)[1] for j in range(n)]
        return values_from_names(sf, dict(zip(names, native.getSolution().col_value, strict=True)))
    if lib == "mip":
        return values_from_names(sf, {v.name: (np.nan if v.x is None else v.x) for v in native.vars})
    if lib == "gurobipy":
        vs = native.getVars()
        return values_from_names(sf, dict(zip(native.getAttr("VarName", vs), native.getAttr("X", vs), strict=True)))
    raise ModelError(f"from_native: a {type(native).__module__}.{type(native).__name__} is not a model made by "
                     "to_linopy, to_pyomo, to_highs, to_mip or to_gurobi")


__all__ = ["from_native", "mip_highs_available", "to_gurobi", "to_highs", "to_linopy", "to_mip", "to_pyomo",
           "values_from_names"]
