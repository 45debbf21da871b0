"""LP and MPS files from the standard form (vectorized writers; names every solver accepts).

>>> from treeopt_dsl.io import write_model          # doctest: +SKIP
>>> write_model(built, "olct.mps")                   # a StandardForm, a Built or an IR Model; .lp/.mps[.gz]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ModelError
from ..ir import Model, StandardForm
from .lp import lp_lines, write_lp
from .mps import mps_lines, write_mps

WRITERS = {".lp": write_lp, ".mps": write_mps}


def as_standard_form(obj: Any) -> StandardForm:
    """A :class:`StandardForm` from a StandardForm, a ``Built`` formulation or an IR ``Model``."""
    if isinstance(obj, StandardForm):
        return obj
    if isinstance(obj, Model):
        return obj.compile()
    if hasattr(obj, "compile") and callable(obj.compile):
        sf = obj.compile()
        if isinstance(sf, StandardForm):
            return sf
    raise ModelError(f"cannot write a {type(obj).__name__}: give a StandardForm, a built formulation or a Model")


def file_format(path: str | Path) -> str:
    """``.lp`` or ``.mps`` from the file name (a trailing ``.gz`` is allowed)."""
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    fmt = suffixes[-1] if suffixes else ""
    if fmt not in WRITERS:
        raise ModelError(f"cannot tell the file format of {str(path)!r}: "
                         "use a name ending in .lp, .mps, .lp.gz or .mps.gz")
    return fmt


def write_model(obj: Any, path: str | Path, names: bool = True) -> Path:
    """Write ``obj`` to ``path`` as LP or MPS by its suffix; ``names=False`` writes ``x0.., c0..``."""
    fmt = file_format(path)
    sf = as_standard_form(obj)
    path = Path(path)
    try:
        return WRITERS[fmt](sf, path, names=names)
    except OSError as exc:
        raise ModelError(f"cannot write {path}: {exc.strerror or exc}") from None


__all__ = ["as_standard_form", "file_format", "lp_lines", "mps_lines", "write_lp", "write_model", "write_mps"]
