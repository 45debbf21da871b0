"""Helpers of the backends that hand the model over as an MPS file and read the solver's log from a file.

Reading an MPS file is the fastest way into SCIP and python-mip/CBC from Python (their APIs build a
model one Python call per row); the file is written by the vectorized writer of
:mod:`treeopt_dsl.io` with generic names ``x0..`` / ``c0..`` so that columns map back by index.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from treeopt_dsl.io import write_mps
from treeopt_dsl.ir import StandardForm


@contextlib.contextmanager
def mps_file(sf: StandardForm) -> Iterator[Path]:
    """``sf`` written to a temporary ``.mps`` file (deleted afterwards)."""
    with tempfile.TemporaryDirectory(prefix="treeopt-") as tmp:
        path = Path(tmp) / "model.mps"
        write_mps(sf, path, names=False)
        yield path


def columns_by_name(variables: Iterable[Any], n_cols: int) -> list[Any]:
    """The solver's variable objects in standard-form column order, from the ``x<j>`` names
    :func:`mps_file` writes (a solver may add columns of its own, e.g. SCIP's ``qmatrixvar``: skipped)."""
    out: list[Any] = [None] * n_cols
    for v in variables:
        name = v.name
        if name.startswith("x") and name[1:].isdigit():
            out[int(name[1:])] = v
    return out
