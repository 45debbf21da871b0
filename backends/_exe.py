"""Finding solver executables the file-based interfaces (CBC, SCIP, Ipopt shells) need."""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path


@functools.cache
def find_executable(name: str) -> str | None:
    """``name`` on ``PATH``; else, for ``cbc``, the binary the ``cbcbox`` wheel (pulled in by ``mip``)
    ships; else next to the running interpreter (a virtualenv's ``bin``). ``None`` if none exists."""
    found = shutil.which(name)
    if found:
        return found
    if name == "cbc":
        try:
            import cbcbox

            path = cbcbox.cbc_bin_path()
            if path and os.access(path, os.X_OK):
                return str(path)
        except Exception:  # not installed, or no binary for this platform
            pass
    here = Path(sys.executable).parent / name
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    return None
