"""CPLEX LP-format writer from the standard form.

Written so that HiGHS, Gurobi, SCIP and CBC read it alike:

* one term per line (``+ 2.5 w_1_3``): no line grows past any reader's length limit;
* a ranged row ``lower <= a·x <= upper`` becomes two rows, ``name: a·x >= lower`` and
  ``name_hi: a·x <= upper`` (the ranged syntax of the LP format is not read by every solver);
* the objective constant is a constant term of the objective; the quadratic part is written as
  ``+ [ ... ] / 2`` with ``Q``'s upper triangle (off-diagonal entries doubled), i.e. ``½ xᵀQx``;
* bounds are explicit wherever they differ from the default ``[0, +inf)``; integer columns are
  listed under ``General`` (binaries included, with their [0, 1] bounds).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..ir import StandardForm
from ._text import check_linear, fmt, join_columns, join_fields, names, open_text


def _terms(coef: np.ndarray, var_names: np.ndarray) -> np.ndarray:
    """``+ |a| name`` / ``- |a| name`` for every term (object array)."""
    sign = np.where(coef < 0, " -", " +").astype(object)
    return np.array(join_fields(" ", sign, fmt(np.abs(coef)), var_names), dtype=object)


def lp_lines(sf: StandardForm, use_names: bool = True) -> list[str]:
    check_linear(sf, "LP")
    cn, rn = names(sf, use_names)
    out = [f"\\ {sf.name}: {sf.n_cols} columns, {sf.n_rows} rows, {sf.nnz} nonzeros (written by treeopt-dsl)",
           "Minimize", " obj:"]
    nzc = np.flatnonzero(sf.c)
    out += _terms(sf.c[nzc], cn[nzc]).tolist()
    if sf.Q is not None and sf.Q.nnz:
        Q = sp.triu(sf.Q, format="coo")
        coef = np.where(Q.row == Q.col, Q.data, 2.0 * Q.data)
        prod = np.where(Q.row == Q.col, np.char.add(cn[Q.row].astype(str), " ^ 2"),
                        np.char.add(np.char.add(cn[Q.row].astype(str), " * "), cn[Q.col].astype(str))).astype(object)
        out.append(" + [")
        out += _terms(coef, prod).tolist()
        out.append(" ] / 2")
    if sf.c0 != 0 or (nzc.size == 0 and (sf.Q is None or sf.Q.nnz == 0)):
        out += _terms(np.array([sf.c0]), np.array([""], dtype=object)).tolist()

    # rows: ">= lower" (or "= value"), "<= upper"; ranged rows appear twice
    lo, up = sf.row_lower, sf.row_upper
    flo, fup = np.isfinite(lo), np.isfinite(up)
    eq = flo & fup & (lo == up)
    first_sense = np.where(eq, " = ", np.where(flo, " >= ", " <= ")).astype(object)
    first_rhs = np.where(flo, lo, up)
    second = np.flatnonzero(flo & fup & ~eq)
    keep = np.flatnonzero(flo | fup)
    row_ids = np.concatenate([keep, second])
    label = np.concatenate([rn[keep], np.char.add(rn[second].astype(str), "_hi").astype(object)])
    sense = np.concatenate([first_sense[keep], np.full(second.size, " <= ", dtype=object)])
    rhs = np.concatenate([first_rhs[keep], up[second]])
    A = sp.csr_matrix(sf.A[row_ids])
    counts = np.diff(A.indptr)
    r = np.repeat(np.arange(row_ids.size), counts)
    col, val = A.indices, A.data
    empty = np.flatnonzero(counts == 0)
    if empty.size:  # a row without terms still needs one: a zero coefficient on the first column
        r = np.concatenate([r, empty])
        col = np.concatenate([col, np.zeros(empty.size, col.dtype)])
        val = np.concatenate([val, np.zeros(empty.size)])
        perm = np.argsort(r, kind="stable")
        r, col, val = r[perm], col[perm], val[perm]
    terms = _terms(val, cn[col])
    if terms.size:
        starts = np.searchsorted(r, np.arange(row_ids.size))
        ends = np.searchsorted(r, np.arange(row_ids.size), side="right") - 1
        terms[starts] = np.char.add(np.char.add(" ", label.astype(str)), ":\n").astype(object) + terms[starts]
        terms[ends] = terms[ends] + sense + fmt(rhs)
    out.append("Subject To")
    out += terms.tolist()

    lo_c, up_c = sf.col_lower, sf.col_upper
    integer = sf.integrality.astype(bool)
    free = np.isneginf(lo_c) & np.isposinf(up_c)
    fixed = lo_c == up_c
    default = (lo_c == 0) & np.isposinf(up_c)
    rest = np.flatnonzero(~free & ~fixed & ~default)
    lo_txt = np.where(np.isneginf(lo_c[rest]), "-inf", fmt(lo_c[rest])).astype(object)
    up_txt = np.where(np.isposinf(up_c[rest]), "+inf", fmt(up_c[rest])).astype(object)
    bounds = join_columns(" ", lo_txt, " <= ", cn[rest], " <= ", up_txt)
    fx = np.flatnonzero(fixed)
    bounds += join_columns(" ", cn[fx], " = ", fmt(lo_c[fx]))
    fr = np.flatnonzero(free)
    bounds += join_columns(" ", cn[fr], " free")
    if bounds:
        out.append("Bounds")
        out += bounds
    ints = np.flatnonzero(integer)
    if ints.size:
        out.append("General")
        out += join_columns(" ", cn[ints])
    out.append("End")
    return out


def write_lp(sf: StandardForm, path: str | Path, names: bool = True) -> Path:
    """Write ``sf`` in CPLEX LP format (``.gz`` compresses). Returns the path."""
    path = Path(path)
    text = "\n".join(lp_lines(sf, names)) + "\n"
    with open_text(path) as fh:
        fh.write(text)
    return path
