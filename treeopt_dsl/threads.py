"""How many threads the library's own small linear algebra uses."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

_CONTROLLER: list[Any] = []


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context in which BLAS runs on one thread (threadpoolctl).

    The library's own products are small (a data matrix against a few hyperplanes, count tables of 0/1 columns),
    and OpenBLAS' worker threads spin against any other busy core: measured here, a 435 x 48 product took 0.03 ms
    on one thread and 12-16 ms on two while the other core was busy.

    >>> import numpy as np
    >>> with one_blas_thread():
    ...     float((np.ones((3, 2)) @ np.ones(2)).sum())
    6.0
    """
    from threadpoolctl import ThreadpoolController

    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")
