"""Vectorized text building shared by the LP and MPS writers (no Python loop per nonzero).

Numbers are written with Python's shortest round-trip representation (``repr``), so a file read
back gives bit-identical coefficients. Each distinct value is formatted once: tree formulations
repeat the same coefficients (±1, big-M, the data) many times.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from treeopt_dsl.errors import CapabilityError, ModelError
from treeopt_dsl.ir import StandardForm

#: a field given as a table of texts and, per line, the index of its text (no per-line copy of the text)
Coded = tuple[np.ndarray, np.ndarray]


def fmt_coded(values: np.ndarray) -> Coded:
    """Shortest round-trip text (``repr``) of every value, as ``(table, codes)``: ``table[codes[i]]``
    is the text of ``values[i]``. Each distinct value is formatted once (hash-based grouping)."""
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        return np.zeros(0, dtype="S1"), np.zeros(0, dtype=np.intp)
    v = v + 0.0  # -0.0 -> 0.0
    codes, uniq = pd.factorize(v)
    return np.array(list(map(repr, uniq.tolist())), dtype="S"), codes


def fmt_bytes(values: np.ndarray) -> np.ndarray:
    """:func:`fmt_coded` as one fixed-width byte string (``S`` dtype) per value."""
    table, codes = fmt_coded(values)
    return table[codes]


def fmt(values: np.ndarray) -> np.ndarray:
    """:func:`fmt_coded` as one ``str`` per value (an object array)."""
    return fmt_bytes(values).astype(str).astype(object)


def as_bytes(a: np.ndarray) -> np.ndarray:
    """An array of ASCII strings as a fixed-width ``S`` array."""
    a = np.asarray(a)
    if a.dtype.kind == "S":
        return a
    return np.array(a.tolist(), dtype="S") if a.size else np.zeros(0, dtype="S1")


def byte_lines(*parts: np.ndarray | bytes | Coded, width: int | None = None) -> np.ndarray:
    """Lines as a ``(n, width)`` byte matrix. Each part is a constant (``bytes``), one ``S`` string
    per line, or a :data:`Coded` pair ``(table, codes)`` (line ``i`` gets ``table[codes[i]]``).

    Each field takes the width of its widest entry; shorter entries leave NUL bytes behind them,
    which :func:`pack` drops, so the file holds no padding. The last byte of every line is
    ``\\n``. No Python object per line, no loop per nonzero.
    """
    def width_of(p: np.ndarray | bytes | Coded) -> int:
        if isinstance(p, bytes):
            return len(p)
        return (p[0] if isinstance(p, tuple) else p).dtype.itemsize

    arrays = [p[1] if isinstance(p, tuple) else p for p in parts if not isinstance(p, bytes)]
    n = len(arrays[0]) if arrays else 1
    widths = [width_of(p) for p in parts]
    W = max(sum(widths) + 1, width or 0)
    M = np.zeros((n, W), dtype=np.uint8)
    off = 0
    for p, w in zip(parts, widths, strict=True):
        if w == 0:
            continue
        if isinstance(p, bytes):
            M[:, off:off + w] = np.frombuffer(p, dtype=np.uint8)
        elif isinstance(p, tuple):  # gather whole texts as opaque records (much faster than 2-D fancy indexing)
            table = np.ascontiguousarray(p[0]).view(f"V{w}").ravel()
            M[:, off:off + w] = np.take(table, p[1]).view(np.uint8).reshape(n, w)
        else:
            M[:, off:off + w] = np.ascontiguousarray(p).view(np.uint8).reshape(n, w)
        off += w
    M[:, -1] = 10
    return M


def pack(M: np.ndarray) -> bytes:
    """The text of a :func:`byte_lines` matrix: its bytes in order, the NUL padding left out."""
    return M.tobytes().translate(None, b"\0")


#: names the LP format takes as a keyword when they stand alone (case-insensitive); ``obj`` is the
#: objective row's name in both formats
RESERVED = np.array(sorted({
    "min", "max", "minimize", "maximize", "minimise", "maximise", "minimum", "maximum", "subject", "such",
    "st", "to", "that", "bound", "bounds", "bou", "general", "generals", "gen", "integer", "integers", "int",
    "binary", "binaries", "bin", "semi", "semis", "semicontinuous", "sos", "sos1", "sos2", "end", "free",
    "lazy", "user", "cuts", "pwl", "obj"}), dtype="S")
#: name prefixes some LP readers take for a number (HiGHS reads ``inflow`` as ``inf`` + ``low``)
NUMBER_PREFIXES = (b"inf", b"nan")
#: longest name written (Gurobi and CPLEX accept 255 characters)
MAX_NAME = 100


def names(sf: StandardForm, use_names: bool) -> tuple[np.ndarray, np.ndarray]:
    """Column and row names every solver accepts, as object arrays of ``str``.

    With ``use_names`` the compiler's ``family_i_j`` names are made safe by :func:`safe_names`;
    otherwise (or for a hand-made form without blocks) they are ``x0..`` and ``c0..``.
    """
    generic_cols = np.char.add("x", np.arange(sf.n_cols).astype(str)).astype(object)
    generic_rows = np.char.add("c", np.arange(sf.n_rows).astype(str)).astype(object)
    if not use_names:
        return generic_cols, generic_rows
    cols = safe_names(sf.col_names(), "x") if sf.columns else generic_cols
    rows = safe_names(sf.row_names(), "c") if sf.rows else generic_rows
    return cols, rows


def safe_names(raw: np.ndarray, prefix: str) -> np.ndarray:
    """``raw`` made valid in LP and MPS files and unique, vectorized (no Python loop per name).

    A valid name is ASCII ``[A-Za-z][A-Za-z0-9_]*`` of at most :data:`MAX_NAME` characters, not a
    keyword (:data:`RESERVED`) and not starting like a number word (``inf``, ``nan``). Any other
    character becomes ``_``; a name that still fails gets ``prefix_`` in front; a repeated name
    gets ``_<position>`` appended (see :func:`unique_names`: names that were valid keep theirs).
    """
    arr = np.asarray(raw, dtype=object).ravel()
    n = arr.size
    if n == 0:
        return np.zeros(0, dtype=object)
    missing = np.equal(arr, None)
    if missing.any():
        arr = np.where(missing, "", arr)
    u = np.ascontiguousarray(arr.astype(str))
    if u.dtype.itemsize == 0:
        u = u.astype("U1")
    cp = u.view(np.uint32).reshape(n, -1)[:, :MAX_NAME]  # code points, 0 = padding
    alpha = ((cp >= 65) & (cp <= 90)) | ((cp >= 97) & (cp <= 122))
    ok = alpha | ((cp >= 48) & (cp <= 57)) | (cp == 95) | (cp == 0)
    b = np.ascontiguousarray(np.where(ok, cp, 95).astype(np.uint8))
    s = b.view(f"S{b.shape[1]}").ravel()
    low = np.char.lower(s)
    bad = ~alpha[:, 0] | np.isin(low, RESERVED)
    for word in NUMBER_PREFIXES:
        bad |= np.char.startswith(low, word)
    out = s.astype(str).astype(object)
    if bad.any():
        out[bad] = prefix + "_" + out[bad]
    return unique_names(out, changed=out != arr)


def unique_names(names: np.ndarray, changed: np.ndarray | None = None) -> np.ndarray:
    """``names`` with every repeat renamed ``name_<position>``.

    Among equal names the first one not ``changed`` (by sanitizing) keeps its name, else the first
    one: a name that was already valid never yields to one made valid.
    """
    out = np.asarray(names, dtype=object).copy()
    rank = np.zeros(out.size, np.int8) if changed is None else np.asarray(changed, np.int8)
    while out.size:
        text = out.astype(str)
        order = np.lexsort((np.arange(out.size), rank, text))
        st = text[order]
        dup = np.zeros(out.size, bool)
        dup[order[1:]] = st[1:] == st[:-1]
        if not dup.any():
            break
        d = np.flatnonzero(dup)
        out[d] = out[d] + "_" + d.astype(str).astype(object)
        rank[d] = 1
    return out


@contextlib.contextmanager
def atomic_binary(path: Path) -> Iterator[Any]:
    """Open a temporary file beside ``path`` for writing bytes (gzip-compressed when ``path`` ends in
    ``.gz``) and move it onto ``path`` (``os.replace``) when the block ends without an exception.

    On any exception, including ``KeyboardInterrupt``, the temporary file is removed and an existing
    ``path`` keeps its old bytes: an interrupted write never leaves a truncated model behind. The new
    file gets the permissions of the file it replaces, or the usual ones (``0o666`` less the umask).
    """
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as raw:
            if path.suffix.lower() == ".gz":
                with gzip.GzipFile(filename=path.name[:-3], mode="wb", fileobj=raw, compresslevel=4) as fh:
                    yield fh
            else:
                yield raw
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    """Permission bits for a new ``path``: those of the file it replaces, else ``0o666`` less the umask."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def open_binary(path: Path) -> Any:
    """Open ``path`` for writing bytes, gzip-compressed when it ends in ``.gz``."""
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "wb", compresslevel=4)
    return open(path, "wb")


def model_name(sf: StandardForm) -> str:
    """The model's name made safe for the ``NAME`` line and the LP comment (ASCII, no blanks)."""
    return str(safe_names(np.array([sf.name or "treeopt"], dtype=object), "m")[0])


def text_lines(lines: list[str]) -> bytes:
    """ASCII text of a few fixed lines (section headers)."""
    return ("\n".join(lines) + "\n").encode("ascii") if lines else b""


def check_linear(sf: StandardForm, fmt_name: str) -> None:
    if sf.nonlinear or sf.nl_constraints:
        raise CapabilityError(
            f"a {fmt_name} file cannot hold the nonlinear terms of this model ({sf.problem_class}); "
            "solve it with an NLP backend (--solver ipopt) or export the pyomo model instead")
    if sf.n_cols == 0:
        raise ModelError(f"the model has no variables: there is nothing to write as {fmt_name}")
    finite = [np.isfinite(sf.A.data).all(), np.isfinite(sf.c).all(), np.isfinite(sf.c0),
              sf.Q is None or np.isfinite(sf.Q.data).all()]
    if not all(finite):
        raise ModelError("the model has NaN or inf coefficients (constraint matrix, objective or its constant) "
                         "and cannot be written: check the data and the formulation's parameters")
    nan_bounds = [np.isnan(v).any() for v in (sf.row_lower, sf.row_upper, sf.col_lower, sf.col_upper)]
    if any(nan_bounds):
        raise ModelError("the model has NaN bounds and cannot be written")
