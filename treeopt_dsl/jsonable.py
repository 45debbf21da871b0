"""Python, numpy and library values as JSON: one place for what the command line prints, the experiment store
keeps and the runner's workers send back.

Example:

    >>> import numpy as np
    >>> jsonable({"a": np.float64(1.5), "b": np.array([1.0, np.nan]), 3: (np.int64(2), None)})
    {'a': 1.5, 'b': [1.0, None], '3': [2, None]}
    >>> import json
    >>> json.dumps({"x": np.arange(2)}, default=json_default)
    '{"x": [0, 1]}'
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["json_default", "jsonable"]


def jsonable(o: Any) -> Any:
    """``o`` with dict keys as strings, tuples as lists, numpy scalars and arrays as Python values, non-finite
    floats as ``None`` (strict JSON: ``json.dumps(..., allow_nan=False)`` takes it) and anything else as its
    ``str``."""
    if isinstance(o, dict):
        return {str(k): jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [jsonable(v) for v in o]
    if isinstance(o, np.ndarray):
        return jsonable(o.tolist())
    if isinstance(o, np.generic):
        return jsonable(o.item())
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, (str, int, float, bool)) or o is None:
        return o
    return str(o)


def json_default(o: Any) -> Any:
    """The ``default=`` of :func:`json.dumps` for rows that are JSON apart from numpy values (non-finite floats
    are left to ``json``): numpy scalars and arrays as Python values, anything else as its ``str``."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
