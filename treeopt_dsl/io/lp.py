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
from ._text import as_bytes, byte_lines, check_linear, fmt_bytes, names, open_binary, text_lines


def _terms(coef: np.ndarray, var_names: np.ndarray, width: int | None = None) -> np.ndarray:
    """`` + |a| name`` / `` - |a| name`` for every term, as a byte matrix (one line per term)."""
    sign = np.where(coef < 0, b" -", b" +").astype("S2")
    return byte_lines(sign, b" ", fmt_bytes(np.abs(coef)), b" ", var_names, width=width)


def lp_bytes(sf: StandardForm, use_names: bool = True) -> bytes:
    check_linear(sf, "LP")
    cn_o, rn_o = names(sf, use_names)
    cn, rn = as_bytes(cn_o), as_bytes(rn_o)
    out = [text_lines([f"\\ {sf.name}: {sf.n_cols} columns, {sf.n_rows} rows, {sf.nnz} nonzeros "
                       "(written by treeopt-dsl)", "Minimize", " obj:"])]
    nzc = np.flatnonzero(sf.c)
    if nzc.size:
        out.append(_terms(sf.c[nzc], cn[nzc]).tobytes())
    if sf.Q is not None and sf.Q.nnz:
        Q = sp.triu(sf.Q, format="coo")
        coef = np.where(Q.row == Q.col, Q.data, 2.0 * Q.data)
        diag = Q.row == Q.col
        prod = np.where(diag, np.char.add(cn[Q.row], b" ^ 2"),
                        np.char.add(np.char.add(cn[Q.row], b" * "), cn[Q.col]))
        out += [b" + [\n", _terms(coef, prod).tobytes(), b" ] / 2\n"]
    if sf.c0 != 0 or (nzc.size == 0 and (sf.Q is None or sf.Q.nnz == 0)):
        out.append(_terms(np.array([sf.c0]), np.array([b""], dtype="S1")).tobytes())

    # rows: ">= lower" (or "= value"), "<= upper"; ranged rows appear twice (name and name_hi)
    lo, up = sf.row_lower, sf.row_upper
    flo, fup = np.isfinite(lo), np.isfinite(up)
    eq = flo & fup & (lo == up)
    first_sense = np.where(eq, b" =", np.where(flo, b" >=", b" <=")).astype("S3")
    first_rhs = np.where(flo, lo, up)
    second = np.flatnonzero(flo & fup & ~eq)
    keep = np.flatnonzero(flo | fup)
    row_ids = np.concatenate([keep, second])
    label = np.concatenate([rn[keep], np.char.add(rn[second], b"_hi")]) if second.size else rn[keep]
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
        head = byte_lines(b" ", np.char.add(label, b":"))
        tail = byte_lines(sense, b" ", fmt_bytes(rhs))
        terms = _terms(val, cn[col])
        W = max(head.shape[1], tail.shape[1], terms.shape[1])
        # one matrix, lines in file order: header, the row's terms, its sense and right-hand side
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) + 2 * np.arange(m)
        text = np.full((int(counts.sum()) + 2 * m, W), 32, dtype=np.uint8)
        text[:, -1] = 10
        term_pos = np.arange(terms.shape[0]) + 2 * np.repeat(np.arange(m), counts) + 1
        for block, pos in ((head, starts), (terms, term_pos), (tail, starts + counts + 1)):
            text[pos, :block.shape[1] - 1] = block[:, :-1]
        out.append(text.tobytes())

    lo_c, up_c = sf.col_lower, sf.col_upper
    free = np.isneginf(lo_c) & np.isposinf(up_c)
    fixed = lo_c == up_c
    default = (lo_c == 0) & np.isposinf(up_c)
    rest = np.flatnonzero(~free & ~fixed & ~default)
    parts = []
    if rest.size:
        lo_txt = np.where(np.isneginf(lo_c[rest]), b"-inf", fmt_bytes(lo_c[rest]))
        up_txt = np.where(np.isposinf(up_c[rest]), b"+inf", fmt_bytes(up_c[rest]))
        parts.append(byte_lines(b" ", lo_txt, b" <= ", cn[rest], b" <= ", up_txt).tobytes())
    fx = np.flatnonzero(fixed)
    if fx.size:
        parts.append(byte_lines(b" ", cn[fx], b" = ", fmt_bytes(lo_c[fx])).tobytes())
    fr = np.flatnonzero(free)
    if fr.size:
        parts.append(byte_lines(b" ", cn[fr], b" free").tobytes())
    if parts:
        out += [b"Bounds\n", *parts]
    ints = np.flatnonzero(sf.integrality.astype(bool))
    if ints.size:
        out += [b"General\n", byte_lines(b" ", cn[ints]).tobytes()]
    out.append(b"End\n")
    return b"".join(out)


def lp_lines(sf: StandardForm, use_names: bool = True) -> list[str]:
    """The LP file as text lines (blank padding removed), for inspection and tests."""
    return [line.rstrip() for line in lp_bytes(sf, use_names).decode("ascii").splitlines()]


def write_lp(sf: StandardForm, path: str | Path, names: bool = True) -> Path:
    """Write ``sf`` in CPLEX LP format (``.gz`` compresses). Returns the path."""
    path = Path(path)
    data = lp_bytes(sf, names)
    with open_binary(path) as fh:
        fh.write(data)
    return path
