"""Vectorized text building shared by the LP and MPS writers (no Python loop per nonzero).

Numbers are written with Python's shortest round-trip representation (``repr``), so a file read
back gives bit-identical coefficients. Each distinct value is formatted once: tree formulations
repeat the same coefficients (±1, big-M, the data) many times.
"""

from __future__ import annotations

import gzip
import re
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError
from ..ir import StandardForm

#: what the formats accept for an infinite bound / right-hand side
INF = 1e30
_VALID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def fmt(values: np.ndarray) -> np.ndarray:
    """Shortest round-trip text of every value, as an object array (each distinct value formatted once)."""
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        return np.zeros(0, dtype=object)
    v = np.where(v == 0.0, 0.0, v)  # -0.0 -> 0
    uniq, inv = np.unique(v, return_inverse=True)
    text = np.array([repr(x) for x in uniq.tolist()], dtype=object)
    return text[inv.ravel()]


def fmt_bytes(values: np.ndarray) -> np.ndarray:
    """:func:`fmt` as a fixed-width byte-string array (``S`` dtype), for :func:`byte_lines`."""
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        return np.zeros(0, dtype="S1")
    v = np.where(v == 0.0, 0.0, v)
    uniq, inv = np.unique(v, return_inverse=True)
    text = np.array([repr(x) for x in uniq.tolist()], dtype="S")
    return text[inv.ravel()]


def as_bytes(a: np.ndarray) -> np.ndarray:
    """An array of ASCII strings as a fixed-width ``S`` array."""
    a = np.asarray(a)
    if a.dtype.kind == "S":
        return a
    return np.array(a.tolist(), dtype="S") if a.size else np.zeros(0, dtype="S1")


def byte_lines(*parts: np.ndarray | bytes, width: int | None = None) -> np.ndarray:
    """Lines as a ``(n, width)`` byte matrix: each part a constant (``bytes``) or one ``S`` string per line.

    Fields are padded with blanks to the widest entry (both formats separate fields by any run of
    blanks and ignore trailing ones); the last byte of every line is ``\\n``. The whole text is
    then ``matrix.tobytes()``: no Python object per line, no loop per nonzero.
    """
    arrays = [p for p in parts if not isinstance(p, bytes)]
    n = len(arrays[0]) if arrays else 1
    widths = [len(p) if isinstance(p, bytes) else p.dtype.itemsize for p in parts]
    W = max(sum(widths) + 1, width or 0)
    M = np.empty((n, W), dtype=np.uint8)
    off = 0
    for p, w in zip(parts, widths, strict=True):
        if w == 0:
            continue
        if isinstance(p, bytes):
            M[:, off:off + w] = np.frombuffer(p, dtype=np.uint8)
        else:
            block = M[:, off:off + w]
            block[...] = np.ascontiguousarray(p).view(np.uint8).reshape(n, w)
            block[block == 0] = 32  # the NUL padding of shorter strings
        off += w
    M[:, off:] = 32
    M[:, -1] = 10
    return M


def names(sf: StandardForm, use_names: bool) -> tuple[np.ndarray, np.ndarray]:
    """Column and row names every solver accepts (``[A-Za-z][A-Za-z0-9_]*``, unique)."""
    generic_cols = np.char.add("x", np.arange(sf.n_cols).astype(str)).astype(object)
    generic_rows = np.char.add("c", np.arange(sf.n_rows).astype(str)).astype(object)
    if not use_names:
        return generic_cols, generic_rows
    cols = _safe(sf.col_names(), "x", all(_VALID.match(b.name) for b in sf.columns)) if sf.columns else generic_cols
    rows = _safe(sf.row_names(), "c", all(_VALID.match(b.name) for b in sf.rows)) if sf.rows else generic_rows
    return cols, rows


def _safe(raw: np.ndarray, prefix: str, families_valid: bool) -> np.ndarray:
    """Keep names that are already valid and unique; replace offenders by ``prefix_<index>``.

    The compiler names entries ``family_i_j`` with integer indices, so when every family name is
    valid so is every entry name (checked once per family, not per entry).
    """
    out = np.asarray(raw, dtype=object).copy()
    if out.size == 0:
        return out
    if not families_valid:
        ok = np.fromiter((isinstance(s, str) and bool(_VALID.match(s)) for s in out), bool, out.size)
        idx = np.flatnonzero(~ok)
        out[idx] = np.char.add(f"{prefix}_", idx.astype(str)).astype(object)
    _, first, counts = np.unique(out.astype(str), return_index=True, return_counts=True)
    if np.any(counts > 1):  # make duplicates unique by their index (never expected from the compiler)
        dup = np.ones(out.size, bool)
        dup[first] = False
        d = np.flatnonzero(dup)
        out[d] = np.char.add(out[d].astype(str), np.char.add("__", d.astype(str))).astype(object)
    return out


def join_columns(*parts: np.ndarray | str) -> list[str]:
    """Row-wise concatenation of string arrays / constants, returned as a list of lines."""
    n = max(len(p) for p in parts if not isinstance(p, str))
    cols = [repeat(p, n) if isinstance(p, str) else p.tolist() for p in parts]
    return list(map("".join, zip(*cols, strict=False)))


def join_fields(sep: str, *fields: np.ndarray) -> list[str]:
    """``sep.join`` of the fields of every entry (the fastest pure-Python route: one C-level join per line)."""
    return list(map(sep.join, zip(*(f.tolist() for f in fields), strict=True)))


def open_binary(path: Path) -> Any:
    """Open ``path`` for writing bytes, gzip-compressed when it ends in ``.gz``."""
    if path.suffix == ".gz":
        return gzip.open(path, "wb", compresslevel=4)
    return open(path, "wb")


def text_lines(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("ascii") if lines else b""


def check_linear(sf: StandardForm, fmt_name: str) -> None:
    if sf.nonlinear:
        from ..errors import CapabilityError

        raise CapabilityError(
            f"a {fmt_name} file cannot hold the nonlinear terms of this model ({sf.problem_class}); "
            "solve it with an NLP backend (--solver ipopt) or export the pyomo model instead")
    if not np.all(np.isfinite(sf.A.data)) or not np.all(np.isfinite(sf.c)):
        raise ModelError("the model has NaN or inf coefficients and cannot be written")
