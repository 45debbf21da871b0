"""Free-format MPS writer (with RANGES, integer MARKERs, BOUNDS and QUADOBJ) from the standard form.

Conventions, chosen so that HiGHS, Gurobi, SCIP and CBC read the file the same way:

* the objective is the first ``N`` row ``OBJ``; its constant ``c0`` is written as ``RHS OBJ -c0``
  (the MPS convention: the objective row's right-hand side is the negated offset);
* a row with both sides finite and different is a ``G`` row with ``RHS = lower`` and
  ``RANGES = upper - lower``; equal sides give an ``E`` row; rows with no finite side (the
  compiler drops them) would be written as extra ``N`` rows, which readers ignore;
* every integer column sits inside a ``MARKER INTORG``/``INTEND`` pair and always gets explicit
  bounds (``PL`` when its upper bound is infinite: some readers default integer columns to [0, 1]);
* ``QUADOBJ`` lists the upper triangle of ``Q`` for the objective ``c·x + ½ xᵀQx + c0``
  (CPLEX/Gurobi/HiGHS convention);
* a column with no nonzero gets an explicit ``OBJ 0`` entry so that every reader knows it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..ir import StandardForm
from ._text import check_linear, fmt, join_columns, join_fields, names, open_text

OBJ = "OBJ"


def _row_types(sf: StandardForm) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Type letter, RHS and RANGE (NaN = none) of every row."""
    lo, up = sf.row_lower, sf.row_upper
    flo, fup = np.isfinite(lo), np.isfinite(up)
    kind = np.full(sf.n_rows, "N", dtype=object)
    kind[flo & ~fup] = "G"
    kind[~flo & fup] = "L"
    both = flo & fup
    eq = both & (lo == up)
    kind[eq] = "E"
    kind[both & ~eq] = "G"
    rhs = np.where(flo, lo, np.where(fup, up, 0.0))
    rng = np.where(both & ~eq, up - lo, np.nan)
    return kind, rhs, rng


def _bounds(sf: StandardForm, cn: np.ndarray) -> list[str]:
    """BOUNDS lines (vectorized by bound kind, sorted by column so LO precedes UP)."""
    lo, up, integer = sf.col_lower, sf.col_upper, sf.integrality.astype(bool)
    fixed = lo == up
    free = np.isneginf(lo) & np.isposinf(up)
    rest = ~fixed & ~free
    parts: list[tuple[np.ndarray, str, np.ndarray | None, int]] = []  # columns, type, values, order
    parts.append((np.flatnonzero(fixed), "FX", lo, 0))
    parts.append((np.flatnonzero(free), "FR", None, 0))
    parts.append((np.flatnonzero(rest & np.isneginf(lo)), "MI", None, 0))
    parts.append((np.flatnonzero(rest & np.isfinite(lo) & ((lo != 0) | integer)), "LO", lo, 0))
    parts.append((np.flatnonzero(rest & np.isfinite(up)), "UP", up, 1))
    parts.append((np.flatnonzero(rest & np.isposinf(up) & integer), "PL", None, 1))
    cols = np.concatenate([p[0] for p in parts])
    if cols.size == 0:
        return []
    order = np.concatenate([np.full(p[0].size, p[3]) for p in parts])
    kinds = np.concatenate([np.full(p[0].size, f" {p[1]} BND ", dtype=object) for p in parts])
    vals = np.concatenate([fmt(p[2][p[0]]) if p[2] is not None else np.full(p[0].size, "", dtype=object)
                           for p in parts])
    sep = np.concatenate([np.full(p[0].size, " " if p[2] is not None else "", dtype=object) for p in parts])
    perm = np.lexsort((order, cols))
    return join_columns(kinds[perm], cn[cols[perm]], sep[perm], vals[perm])


def mps_lines(sf: StandardForm, use_names: bool = True) -> list[str]:
    """The MPS file as a list of lines (joined by the writer)."""
    check_linear(sf, "MPS")
    cn, rn = names(sf, use_names)
    kind, rhs, rng = _row_types(sf)
    out = [f"NAME {sf.name.replace(' ', '_') or 'treeopt'}", "ROWS", f" N {OBJ}"]
    out += join_columns(" ", kind, " ", rn)

    # COLUMNS: the objective entry first, then the matrix column, columns in order
    csc = sp.csc_matrix(sf.A)
    csc.sort_indices()
    a_col = np.repeat(np.arange(sf.n_cols), np.diff(csc.indptr))
    has = np.zeros(sf.n_cols, bool)
    has[a_col] = True
    obj_cols = np.flatnonzero((sf.c != 0) | ~has)
    col = np.concatenate([obj_cols, a_col])
    row_text = np.concatenate([np.full(obj_cols.size, OBJ, dtype=object), rn[csc.indices]])
    val = np.concatenate([sf.c[obj_cols], csc.data])
    perm = np.argsort(col, kind="stable")
    col, row_text, val = col[perm], row_text[perm], val[perm]
    col_text = cn[col]
    # integer markers before the first entry of each run of integer columns and after its last
    integer = sf.integrality.astype(bool)
    prev = np.concatenate([[False], integer[:-1]])
    starts = np.flatnonzero(integer & ~prev)
    ends = np.flatnonzero(~integer & prev)  # first continuous column after a run
    first = np.searchsorted(col, np.arange(sf.n_cols))
    begin = "MARKER 'MARKER' 'INTORG'\n    "
    finish = "MARKER 'MARKER' 'INTEND'\n    "
    col_text[first[ends]] = finish + col_text[first[ends]]
    col_text[first[starts]] = begin + col_text[first[starts]]
    out.append("COLUMNS")
    out.extend(join_fields(" ", np.full(col.size, "   ", dtype=object), col_text, row_text, fmt(val)))
    if integer.size and integer[-1]:
        out.append("    " + finish.strip())

    out.append("RHS")
    if sf.c0 != 0:
        out.append(f"    RHS {OBJ} {fmt(np.array([-sf.c0]))[0]}")
    nz = np.flatnonzero((rhs != 0) & (kind != "N"))
    out += join_columns("    RHS ", rn[nz], " ", fmt(rhs[nz]))
    ranged = np.flatnonzero(np.isfinite(rng))
    if ranged.size:
        out.append("RANGES")
        out += join_columns("    RNG ", rn[ranged], " ", fmt(rng[ranged]))
    bounds = _bounds(sf, cn)
    if bounds:
        out.append("BOUNDS")
        out += bounds
    if sf.Q is not None and sf.Q.nnz:
        Q = sp.triu(sf.Q, format="coo")
        out.append("QUADOBJ")
        out += join_columns("    ", cn[Q.row], " ", cn[Q.col], " ", fmt(Q.data))
    out.append("ENDATA")
    return out


def write_mps(sf: StandardForm, path: str | Path, names: bool = True) -> Path:
    """Write ``sf`` as free-format MPS (``.gz`` compresses). Returns the path.

    >>> import numpy as np, scipy.sparse as sp, tempfile, pathlib
    >>> from treeopt_dsl.ir import StandardForm
    >>> sf = StandardForm(sp.csr_matrix(np.array([[1.0, 1.0]])), np.array([1.0]), np.array([np.inf]),
    ...                   np.zeros(2), np.array([np.inf, 1.0]), np.array([0, 1], np.int8), np.array([1.0, 2.0]))
    >>> p = write_mps(sf, pathlib.Path(tempfile.mkdtemp()) / "tiny.mps")
    >>> "INTORG" in p.read_text()
    True
    """
    path = Path(path)
    text = "\n".join(mps_lines(sf, names)) + "\n"
    with open_text(path) as fh:
        fh.write(text)
    return path
