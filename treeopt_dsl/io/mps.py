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
from ._text import as_bytes, byte_lines, check_linear, fmt, fmt_bytes, names, open_binary, text_lines

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


def _bounds(sf: StandardForm, cn: np.ndarray) -> bytes:
    """BOUNDS lines (vectorized by bound kind, sorted by column so LO precedes UP)."""
    lo, up, integer = sf.col_lower, sf.col_upper, sf.integrality.astype(bool)
    fixed = lo == up
    free = np.isneginf(lo) & np.isposinf(up)
    rest = ~fixed & ~free
    parts: list[tuple[np.ndarray, bytes, np.ndarray | None, int]] = []  # columns, type, values, order
    parts.append((np.flatnonzero(fixed), b"FX", lo, 0))
    parts.append((np.flatnonzero(free), b"FR", None, 0))
    parts.append((np.flatnonzero(rest & np.isneginf(lo)), b"MI", None, 0))
    parts.append((np.flatnonzero(rest & np.isfinite(lo) & ((lo != 0) | integer)), b"LO", lo, 0))
    parts.append((np.flatnonzero(rest & np.isfinite(up)), b"UP", up, 1))
    parts.append((np.flatnonzero(rest & np.isposinf(up) & integer), b"PL", None, 1))
    cols = np.concatenate([p[0] for p in parts])
    if cols.size == 0:
        return b""
    order = np.concatenate([np.full(p[0].size, p[3]) for p in parts])
    kinds = np.concatenate([np.full(p[0].size, p[1], dtype="S2") for p in parts])
    vals = np.concatenate([fmt_bytes(p[2][p[0]]) if p[2] is not None else np.zeros(p[0].size, dtype="S1")
                           for p in parts])
    perm = np.lexsort((order, cols))
    return byte_lines(b" ", kinds[perm], b" BND ", cn[cols[perm]], b" ", vals[perm]).tobytes()


def mps_bytes(sf: StandardForm, use_names: bool = True) -> bytes:
    """The MPS file's bytes."""
    check_linear(sf, "MPS")
    cn_o, rn_o = names(sf, use_names)
    cn, rn = as_bytes(cn_o), as_bytes(rn_o)
    kind, rhs, rng = _row_types(sf)
    out = [text_lines([f"NAME {sf.name.replace(' ', '_') or 'treeopt'}", "ROWS", f" N {OBJ}"])]
    if sf.n_rows:
        out.append(byte_lines(b" ", kind.astype("S1"), b" ", rn).tobytes())

    # COLUMNS: the objective entry first, then the matrix column, columns in order
    csc = sp.csc_matrix(sf.A)
    csc.sort_indices()
    a_col = np.repeat(np.arange(sf.n_cols), np.diff(csc.indptr))
    has = np.zeros(sf.n_cols, bool)
    has[a_col] = True
    obj_cols = np.flatnonzero((sf.c != 0) | ~has)
    col = np.concatenate([obj_cols, a_col])
    row_ix = np.concatenate([np.full(obj_cols.size, sf.n_rows), csc.indices])  # n_rows = the objective
    val = np.concatenate([sf.c[obj_cols], csc.data])
    perm = np.argsort(col, kind="stable")
    col, row_ix, val = col[perm], row_ix[perm], val[perm]
    row_names = np.concatenate([rn, np.array([OBJ.encode()], dtype="S")])
    lines = byte_lines(b"    ", cn[col], b" ", row_names[row_ix], b" ", fmt_bytes(val))
    # integer markers before the first entry of each run of integer columns and after its last
    integer = sf.integrality.astype(bool)
    prev = np.concatenate([[False], integer[:-1]])
    first = np.searchsorted(col, np.arange(sf.n_cols))
    marks = sorted([(int(first[j]), b"    MARKER 'MARKER' 'INTORG'\n") for j in np.flatnonzero(integer & ~prev)]
                   + [(int(first[j]), b"    MARKER 'MARKER' 'INTEND'\n") for j in np.flatnonzero(~integer & prev)])
    if integer.size and integer[-1]:
        marks.append((lines.shape[0], b"    MARKER 'MARKER' 'INTEND'\n"))
    out.append(b"COLUMNS\n")
    at = 0
    for pos, marker in marks:  # one chunk per run of integer columns (a handful per model)
        out += [lines[at:pos].tobytes(), marker]
        at = pos
    out.append(lines[at:].tobytes())

    out.append(b"RHS\n")
    if sf.c0 != 0:
        out.append(f"    RHS {OBJ} {fmt(np.array([-sf.c0]))[0]}\n".encode())
    nz = np.flatnonzero((rhs != 0) & (kind != "N"))
    if nz.size:
        out.append(byte_lines(b"    RHS ", rn[nz], b" ", fmt_bytes(rhs[nz])).tobytes())
    ranged = np.flatnonzero(np.isfinite(rng))
    if ranged.size:
        out.append(b"RANGES\n")
        out.append(byte_lines(b"    RNG ", rn[ranged], b" ", fmt_bytes(rng[ranged])).tobytes())
    bounds = _bounds(sf, cn)
    if bounds:
        out += [b"BOUNDS\n", bounds]
    if sf.Q is not None and sf.Q.nnz:
        Q = sp.triu(sf.Q, format="coo")
        out.append(b"QUADOBJ\n")
        out.append(byte_lines(b"    ", cn[Q.row], b" ", cn[Q.col], b" ", fmt_bytes(Q.data)).tobytes())
    out.append(b"ENDATA\n")
    return b"".join(out)


def mps_lines(sf: StandardForm, use_names: bool = True) -> list[str]:
    """The MPS file as text lines (blank padding between fields removed), for inspection and tests."""
    return [" ".join(line.split()) if not line.startswith(" ") else " " + " ".join(line.split())
            for line in mps_bytes(sf, use_names).decode("ascii").splitlines()]


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
    data = mps_bytes(sf, names)
    with open_binary(path) as fh:
        fh.write(data)
    return path
