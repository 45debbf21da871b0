"""CPLEX LP-format writer from the standard form.

Written so that HiGHS, Gurobi, SCIP and CBC read it alike (up to the objective constant, below):

* one term per line (``+ 2.5 w_1_3``): no line grows past any reader's length limit (255 for
  some), whatever the number of terms of a row;
* a ranged row ``lower <= a·x <= upper`` becomes two rows, ``name: a·x >= lower`` and
  ``name_hi: a·x <= upper`` (renamed if another row already has that name);
* the objective constant is a final constant term of the objective; the quadratic part is
  ``+ [ ... ] / 2`` with ``Q``'s upper triangle (off-diagonal entries doubled), i.e. ``½ xᵀQx``;
* bounds are explicit wherever they differ from the default ``[0, +inf)``, and for every column
  that no term mentions (so that the reader keeps all ``n_cols`` columns); integer columns are
  listed under ``General`` (binaries included, with their [0, 1] bounds);
* names are those of :func:`~treeopt_dsl.io._text.safe_names`: ASCII ``[A-Za-z][A-Za-z0-9_]*``,
  unique, never a keyword of the format (``end``, ``free``, ``st``, ``bounds``, ...) and never
  starting with ``inf``/``nan`` (HiGHS reads ``inflow`` as the number ``inf``), so the same
  names serve both formats;
* a row without terms gets a zero term on column 0 (an LP row needs one).

The double-sided form ``name: -1 <= x + y <= 4`` is read by none of HiGHS 1.15, SCIP, Gurobi 13
or CBC (checked), hence the two rows: the LP file of a model with ranged rows has more rows than
the model (the MPS file has exactly the model's rows).

The objective constant is the CPLEX "objective offset" (a final constant term), which HiGHS and
SCIP read. Gurobi 13's LP reader does not: it takes the number for a variable name (with a
warning), so its objective misses ``c0`` -- give Gurobi the MPS file, which carries the offset.
CBC (python-mip) drops the offset of both formats.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from treeopt_dsl.io._text import (
    Coded,
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
    unique_names,
)
from treeopt_dsl.ir import StandardForm


def _terms(coef: np.ndarray, var_names: np.ndarray | Coded) -> np.ndarray:
    """`` + |a| name`` / `` - |a| name`` for every term, as a byte matrix (one line per term)."""
    sign = np.where(coef < 0, b" -", b" +").astype("S2")
    return byte_lines(sign, b" ", fmt_coded(np.abs(coef)), b" ", var_names)


#: rows are written in pieces of about this many terms: byte matrices of a few MB stay in cache (one
#: matrix for millions of terms was twice as slow); the file is the same either way
CHUNK = 1 << 16


def _rows_text(label: np.ndarray, sense: np.ndarray, rhs: np.ndarray, counts: np.ndarray, col: np.ndarray,
               val: np.ndarray, cn: np.ndarray) -> list[bytes]:
    """Subject To: per row a ``name:`` line, one line per term, then ``sense rhs``, made a few rows
    (about :data:`CHUNK` terms) at a time."""
    # `_terms` per piece would format again every number shared by pieces: format each distinct one once
    table, codes = fmt_coded(np.abs(val))
    rhs_txt = fmt_bytes(rhs)
    sign = np.where(val < 0, b" -", b" +").astype("S2")
    ptr = np.concatenate([[0], np.cumsum(counts)])
    m = counts.size
    cuts = np.unique(np.concatenate([[0, m], np.searchsorted(ptr, np.arange(0, ptr[-1], CHUNK), side="right") - 1]))
    out = []
    for r0, r1 in pairwise(cuts.tolist()):
        a, b = int(ptr[r0]), int(ptr[r1])
        cnt = counts[r0:r1]
        k = r1 - r0
        head = byte_lines(b" ", np.char.add(label[r0:r1], b":"))
        tail = byte_lines(sense[r0:r1], b" ", rhs_txt[r0:r1])
        terms = byte_lines(sign[a:b], b" ", (table, codes[a:b]), b" ", (cn, col[a:b]))
        W = max(head.shape[1], tail.shape[1], terms.shape[1])
        # one matrix, lines in file order: header, the row's terms, its sense and right-hand side
        starts = ptr[r0:r1] - a + 2 * np.arange(k)
        text = np.zeros((b - a + 2 * k, W), dtype=np.uint8)
        text[:, -1] = 10
        term_pos = np.arange(b - a) + 2 * np.repeat(np.arange(k), cnt) + 1
        for block, pos in ((head, starts), (terms, term_pos), (tail, starts + cnt + 1)):
            text[pos, :block.shape[1] - 1] = block[:, :-1]
        out.append(pack(text))
    return out


def lp_parts(sf: StandardForm, use_names: bool = True) -> list[bytes]:
    """The LP file as byte chunks, in order (one per section or block of lines)."""
    check_linear(sf, "LP")
    cn_o, rn_o = names(sf, use_names)
    cn, rn = as_bytes(cn_o), as_bytes(rn_o)
    out = [text_lines([f"\\ {model_name(sf)}: {sf.n_cols} columns, {sf.n_rows} rows, {sf.nnz} nonzeros "
                       "(written by treeopt-dsl)", "Minimize", " obj:"])]
    nzc = np.flatnonzero(sf.c)
    mentioned = np.zeros(sf.n_cols, bool)  # columns some term names (the others are declared in Bounds)
    mentioned[nzc] = True
    if nzc.size:
        out.append(pack(_terms(sf.c[nzc], cn[nzc])))
    if sf.Q is not None and sf.Q.nnz:
        Q = sp.triu(sf.Q, format="coo")
        mentioned[Q.row] = mentioned[Q.col] = True
        coef = np.where(Q.row == Q.col, Q.data, 2.0 * Q.data)
        diag = Q.row == Q.col
        prod = np.where(diag, np.char.add(cn[Q.row], b" ^ 2"),
                        np.char.add(np.char.add(cn[Q.row], b" * "), cn[Q.col]))
        out += [b" + [\n", pack(_terms(coef, prod)), b" ] / 2\n"]
    if sf.c0 != 0 or (nzc.size == 0 and (sf.Q is None or sf.Q.nnz == 0)):
        out.append(pack(_terms(np.array([sf.c0]), np.array([b""], dtype="S1"))))

    # rows: ">= lower" (or "= value"), "<= upper"; ranged rows appear twice (name and name_hi)
    lo, up = sf.row_lower, sf.row_upper
    flo, fup = np.isfinite(lo), np.isfinite(up)
    eq = flo & fup & (lo == up)
    first_sense = np.where(eq, b" =", np.where(flo, b" >=", b" <=")).astype("S3")
    first_rhs = np.where(flo, lo, up)
    second = np.flatnonzero(flo & fup & ~eq)
    keep = np.flatnonzero(flo | fup)
    row_ids = np.concatenate([keep, second])
    label = rn[keep]
    if second.size:  # the upper sides' names must not meet another row's name
        label = as_bytes(unique_names(np.concatenate([rn_o[keep], rn_o[second] + "_hi"])))
    sense = np.concatenate([first_sense[keep], np.full(second.size, b" <=", dtype="S3")])
    rhs = np.concatenate([first_rhs[keep], up[second]])
    out.append(b"Subject To\n")
    m = row_ids.size
    if m:
        A = sp.csr_matrix(sf.A[row_ids])
        counts = np.diff(A.indptr)
        col, val = A.indices, A.data
        empty = np.flatnonzero(counts == 0)
        if empty.size:  # a row without terms still needs one: a zero coefficient on the first column
            r = np.concatenate([np.repeat(np.arange(m), counts), empty])
            perm = np.argsort(r, kind="stable")
            col = np.concatenate([col, np.zeros(empty.size, col.dtype)])[perm]
            val = np.concatenate([val, np.zeros(empty.size)])[perm]
            counts = np.maximum(counts, 1)
        mentioned[col] = True
        out += _rows_text(label, sense, rhs, counts, col, val, cn)

    lo_c, up_c = sf.col_lower, sf.col_upper
    free = np.isneginf(lo_c) & np.isposinf(up_c)
    fixed = lo_c == up_c
    default = (lo_c == 0) & np.isposinf(up_c) & mentioned
    rest = np.flatnonzero(~free & ~fixed & ~default)
    parts = []
    if rest.size:
        lo_txt = np.where(np.isneginf(lo_c[rest]), b"-inf", fmt_bytes(lo_c[rest]))
        up_txt = np.where(np.isposinf(up_c[rest]), b"+inf", fmt_bytes(up_c[rest]))
        parts.append(pack(byte_lines(b" ", lo_txt, b" <= ", cn[rest], b" <= ", up_txt)))
    fx = np.flatnonzero(fixed)
    if fx.size:
        parts.append(pack(byte_lines(b" ", cn[fx], b" = ", fmt_bytes(lo_c[fx]))))
    fr = np.flatnonzero(free)
    if fr.size:
        parts.append(pack(byte_lines(b" ", cn[fr], b" free")))
    if parts:
        out += [b"Bounds\n", *parts]
    ints = np.flatnonzero(sf.integrality.astype(bool))
    if ints.size:
        out += [b"General\n", pack(byte_lines(b" ", cn[ints]))]
    out.append(b"End\n")
    return out


def lp_bytes(sf: StandardForm, use_names: bool = True) -> bytes:
    """The LP file's bytes."""
    return b"".join(lp_parts(sf, use_names))


def lp_lines(sf: StandardForm, use_names: bool = True) -> list[str]:
    """The LP file as text lines, for inspection and tests."""
    return [line.rstrip() for line in lp_bytes(sf, use_names).decode("ascii").splitlines()]


def write_lp(sf: StandardForm, path: str | Path, names: bool = True) -> Path:
    """Write ``sf`` in CPLEX LP format (``.gz`` compresses). Returns the path."""
    path = Path(path)
    parts = lp_parts(sf, names)
    with atomic_binary(path) as fh:  # a temporary file, moved onto path at the end
        for part in parts:  # a few large chunks, no joined copy of the whole file
            fh.write(part)
    return path
