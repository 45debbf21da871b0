"""Helpers of the backends that hand the model over as an MPS file and read the solver's log from a file.

Reading an MPS file is the fastest way into SCIP and python-mip/CBC from Python (their APIs build a
model one Python call per row); the file is written by the vectorized writer of
:mod:`treeopt_dsl.io` with generic names ``x0..`` / ``c0..`` so that columns map back by index.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from treeopt_dsl.ir import StandardForm


@contextlib.contextmanager
def mps_file(sf: StandardForm) -> Iterator[Path]:
    """``sf`` written to a temporary ``.mps`` file (deleted afterwards)."""
    from treeopt_dsl.io import write_mps

    with tempfile.TemporaryDirectory(prefix="treeopt-") as tmp:
        path = Path(tmp) / "model.mps"
        write_mps(sf, path, names=False)
        yield path


@contextlib.contextmanager
def captured_stdout(path: Path, echo: bool = False) -> Iterator[None]:
    """Redirect the process' file descriptor 1 (where C solvers print) into ``path`` for the block."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(path, "w") as fh:
        os.dup2(fh.fileno(), 1)
        try:
            yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
    if echo:
        sys.stderr.write(path.read_text(errors="replace"))


def columns_by_name(variables: Iterable[Any], n_cols: int) -> list[Any]:
    """The solver's variable objects in standard-form column order, from the ``x<j>`` names
    :func:`mps_file` writes (a solver may add columns of its own, e.g. SCIP's ``qmatrixvar``: skipped)."""
    out: list[Any] = [None] * n_cols
    for v in variables:
        name = v.name
        if name.startswith("x") and name[1:].isdigit():
            out[int(name[1:])] = v
    return out
