"""Free-format MPS writer (with RANGES, integer MARKERs, BOUNDS and QUADOBJ) from the standard form.

Conventions, chosen so that HiGHS, Gurobi, SCIP and CBC read the file the same way:

* the objective is the first ``N`` row ``OBJ`` (no row is named ``obj``: see
  :func:`~treeopt_dsl.io._text.safe_names`); its constant ``c0`` is written as ``RHS OBJ -c0``
  (the MPS convention: the objective row's right-hand side is the negated offset);
* a row with both sides finite and different is a ``G`` row with ``RHS = lower`` and
  ``RANGES = upper - lower`` (so the upper side is ``lower + (upper - lower)``, exact up to one
  rounding); equal sides give an ``E`` row; a row with no finite side (the compiler drops them)
  is an extra ``N`` row, which readers ignore;
* every integer column sits inside a ``MARKER INTORG``/``INTEND`` pair and always gets explicit
  bounds (``LO`` and ``UP``, or ``PL`` when its upper bound is infinite: some readers default
  integer columns to [0, 1]); ``LO 0`` is also written when an upper bound is negative (some
  readers then move the default lower bound to -inf);
* ``QUADOBJ`` lists the upper triangle (diagonal included) of ``Q`` for the objective
  ``c·x + ½ xᵀQx + c0`` (the CPLEX/Gurobi/HiGHS convention; checked by reading the Hessian back);
* a column with no nonzero gets an explicit ``OBJ 0`` entry so that every reader knows it;
* fields are separated by single blanks (names never contain one), numbers are the shortest
  text that reads back to the same double.

Everything is built as byte matrices (one line per row of the matrix), vectorized per section.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from treeopt_dsl.io._text import (
    as_bytes,
    atomic_binary,
    byte_lines,
    check_linear,
    fmt_bytes,
    fmt_coded,
    model_name,
    names,
    pack,
    text_lines,
)
from treeopt_dsl.ir import StandardForm

OBJ = "OBJ"
INTORG = b"    MARKER 'MARKER' 'INTORG'"
INTEND = b"    MARKER 'MARKER' 'INTEND'"
#: COLUMNS entries turned into text at a time
CHUNK = 1 << 16


def _row_types(sf: StandardForm) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Type letter (``S1``), RHS and RANGE (NaN = none) of every row."""
    lo, up = sf.row_lower, sf.row_upper
    flo, fup = np.isfinite(lo), np.isfinite(up)
    both = flo & fup
    eq = both & (lo == up)
    kind = np.select([eq, flo, fup], [b"E", b"G", b"L"], b"N").astype("S1")
    rhs = np.where(flo, lo, np.where(fup, up, 0.0))
    rng = np.where(both & ~eq, up - lo, np.nan)
    return kind, rhs, rng


def _bounds(sf: StandardForm, cn: np.ndarray) -> bytes:
    """BOUNDS lines (vectorized by bound kind, sorted by column so LO precedes UP)."""
    lo, up, integer = sf.col_lower, sf.col_upper, sf.integrality.astype(bool)
    fixed = lo == up
    free = np.isneginf(lo) & np.isposinf(up)
    rest = ~fixed & ~free
    parts: list[tuple[np.ndarray, bytes, np.ndarray | None, int]] = [  # columns, type, values, order
        (np.flatnonzero(fixed), b"FX", lo, 0),
        (np.flatnonzero(free), b"FR", None, 0),
        (np.flatnonzero(rest & np.isneginf(lo)), b"MI", None, 0),
        (np.flatnonzero(rest & np.isfinite(lo) & ((lo != 0) | integer | (up < 0))), b"LO", lo, 0),
        (np.flatnonzero(rest & np.isfinite(up)), b"UP", up, 1),
        (np.flatnonzero(rest & np.isposinf(up) & integer), b"PL", None, 1),
    ]
    cols = np.concatenate([p[0] for p in parts])
    if cols.size == 0:
        return b""
    order = np.concatenate([np.full(p[0].size, p[3]) for p in parts])
    kinds = np.concatenate([np.full(p[0].size, p[1], dtype="S2") for p in parts])
    vals = np.concatenate([fmt_bytes(p[2][p[0]]) if p[2] is not None else np.zeros(p[0].size, dtype="S1")
                           for p in parts])
    perm = np.lexsort((order, cols))
    return pack(byte_lines(b" ", kinds[perm], b" BND ", cn[cols[perm]], b" ", vals[perm]))


def _columns(sf: StandardForm, cn: np.ndarray, rn: np.ndarray) -> list[bytes]:
    """COLUMNS: per column its objective entry, then its matrix entries; integer runs between MARKERs."""
    csc = sp.csc_matrix(sf.A)
    csc.sort_indices()
    nnz_col = np.diff(csc.indptr)
    with_obj = (sf.c != 0) | (nnz_col == 0)
    # entry positions: per column its objective entry (if any), then its matrix entries
    start = np.concatenate([[0], np.cumsum(with_obj + nnz_col)])
    a_col = np.repeat(np.arange(sf.n_cols), nnz_col)
    a_pos = np.arange(csc.nnz) - csc.indptr[a_col] + start[a_col] + with_obj[a_col]
    obj_cols = np.flatnonzero(with_obj)
    obj_pos = start[obj_cols]
    n_entries = int(start[-1])
    col = np.empty(n_entries, np.int64)
    row_ix = np.empty(n_entries, np.int64)
    val = np.empty(n_entries)
    col[a_pos], row_ix[a_pos], val[a_pos] = a_col, csc.indices, csc.data
    col[obj_pos], row_ix[obj_pos], val[obj_pos] = obj_cols, sf.n_rows, sf.c[obj_cols]  # n_rows = the objective
    row_names = np.concatenate([rn, np.array([OBJ.encode()], dtype="S")])
    table, codes = fmt_coded(val)

    def lines(a: int, b: int) -> bytes:  # entries a..b-1 as text
        return pack(byte_lines(b"    ", (cn, col[a:b]), b" ", (row_names, row_ix[a:b]), b" ", (table, codes[a:b])))

    # MARKER lines before the first entry of each run of integer columns and after its last one
    integer = sf.integrality.astype(bool)
    prev = np.concatenate([[False], integer])
    nxt = np.concatenate([integer, [False]])
    at = start[np.flatnonzero(nxt != prev)].tolist()  # a run starts (INTORG) or ends (INTEND) there, alternately
    marker = {pos: (INTORG if k % 2 == 0 else INTEND) + b"\n" for k, pos in enumerate(at)}
    # the text is made CHUNK entries at a time: byte matrices of a few MB stay in cache (one matrix for
    # millions of entries was several times slower), with a cut at every marker (a handful per model)
    cuts = sorted({0, n_entries, *at, *range(0, n_entries, CHUNK)})
    out = []
    for a, b in pairwise(cuts):
        if a in marker:
            out.append(marker[a])
        out.append(lines(a, b))
    if n_entries in marker:
        out.append(marker[n_entries])
    return out


def mps_parts(sf: StandardForm, use_names: bool = True) -> list[bytes]:
    """The MPS file as byte chunks, in order (one per section or block of lines)."""
    check_linear(sf, "MPS")
    cn_o, rn_o = names(sf, use_names)
    cn, rn = as_bytes(cn_o), as_bytes(rn_o)
    kind, rhs, rng = _row_types(sf)
    out = [text_lines([f"NAME {model_name(sf)}", "ROWS", f" N {OBJ}"])]
    if sf.n_rows:
        out.append(pack(byte_lines(b" ", kind, b" ", rn)))
    out += [b"COLUMNS\n", *_columns(sf, cn, rn), b"RHS\n"]
    if sf.c0 != 0:
        out.append(pack(byte_lines(b"    RHS ", OBJ.encode(), b" ", fmt_bytes(np.array([-sf.c0])))))
    nz = np.flatnonzero((rhs != 0) & (kind != b"N"))
    if nz.size:
        out.append(pack(byte_lines(b"    RHS ", rn[nz], b" ", fmt_bytes(rhs[nz]))))
    ranged = np.flatnonzero(np.isfinite(rng))
    if ranged.size:
        out += [b"RANGES\n", pack(byte_lines(b"    RNG ", rn[ranged], b" ", fmt_bytes(rng[ranged])))]
    bounds = _bounds(sf, cn)
    if bounds:
        out += [b"BOUNDS\n", bounds]
    if sf.Q is not None and sf.Q.nnz:
        Q = sp.triu(sf.Q, format="coo")
        out += [b"QUADOBJ\n", pack(byte_lines(b"    ", cn[Q.row], b" ", cn[Q.col], b" ", fmt_bytes(Q.data)))]
    out.append(b"ENDATA\n")
    return out


def mps_bytes(sf: StandardForm, use_names: bool = True) -> bytes:
    """The MPS file's bytes."""
    return b"".join(mps_parts(sf, use_names))


def mps_lines(sf: StandardForm, use_names: bool = True) -> list[str]:
    """The MPS file as text lines, for inspection and tests."""
    return mps_bytes(sf, use_names).decode("ascii").splitlines()


def write_mps(sf: StandardForm, path: str | Path, names: bool = True) -> Path:
    """Write ``sf`` as free-format MPS (``.gz`` compresses). Returns the path.

    ``names=False`` writes ``x0..`` / ``c0..`` (what the file-based backends use to map columns
    back by index).

    >>> import numpy as np, scipy.sparse as sp, tempfile, pathlib
    >>> from treeopt_dsl.ir import StandardForm
    >>> sf = StandardForm(sp.csr_matrix(np.array([[1.0, 1.0]])), np.array([1.0]), np.array([np.inf]),
    ...                   np.zeros(2), np.array([np.inf, 1.0]), np.array([0, 1], np.int8), np.array([1.0, 2.0]))
    >>> p = write_mps(sf, pathlib.Path(tempfile.mkdtemp()) / "tiny.mps")
    >>> "INTORG" in p.read_text()
    True
    """
    path = Path(path)
    parts = mps_parts(sf, names)
    with atomic_binary(path) as fh:  # a temporary file, moved onto path at the end
        for part in parts:  # a few large chunks, no joined copy of the whole file
            fh.write(part)
    return path
