"""Named dimensions and coordinates, shared by variables, expressions and constraints.

A *shape* in the IR is a tuple of dimension names plus, for each name, an array of coordinate
labels. Two operands combine by dimension name (as in xarray): dimensions with the same name must
carry the same labels; a dimension present in only one operand is broadcast over.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import xarray as xr

from treeopt_dsl.errors import ModelError

Coords = dict[str, np.ndarray]


def as_coords(dims: Iterable[str], coords: Mapping[str, Any] | None) -> tuple[tuple[str, ...], Coords]:
    """Normalise ``dims`` and ``coords`` (an int is ``range(int)``) into a checked pair."""
    dims = tuple(dims)
    if len(set(dims)) != len(dims):
        raise ModelError(f"dimension names must be distinct, got {dims}")
    coords = dict(coords or {})
    out: Coords = {}
    for d in dims:
        if d not in coords:
            raise ModelError(f"no coordinates given for dimension {d!r}")
        c = coords[d]
        arr = np.arange(c) if isinstance(c, (int, np.integer)) else np.asarray(c)
        if arr.ndim != 1:
            raise ModelError(f"coordinates of {d!r} must be one-dimensional")
        out[d] = arr
    return dims, out


def shape_of(dims: tuple[str, ...], coords: Coords) -> tuple[int, ...]:
    return tuple(len(coords[d]) for d in dims)


def union(
    a_dims: tuple[str, ...], a_coords: Coords, b_dims: tuple[str, ...], b_coords: Coords
) -> tuple[tuple[str, ...], Coords]:
    """Dimensions of ``a`` followed by the new ones of ``b``; shared dimensions must agree."""
    coords = dict(a_coords)
    dims = list(a_dims)
    for d in b_dims:
        if d in coords:
            ca, cb = coords[d], b_coords[d]
            if len(ca) != len(cb) or (ca is not cb and not np.array_equal(ca, cb)):
                raise ModelError(
                    f"dimension {d!r} has different coordinates in the two operands "
                    f"({len(ca)} vs {len(cb)} labels); select matching labels first"
                )
        else:
            coords[d] = b_coords[d]
            dims.append(d)
    return tuple(dims), coords


def expand(arr: np.ndarray, dims: tuple[str, ...], to_dims: tuple[str, ...], to_shape: tuple[int, ...],
           trailing: int = 0) -> np.ndarray:
    """Broadcast ``arr`` (axes named ``dims`` plus ``trailing`` unnamed axes) to ``to_dims``.

    Returns a read-only broadcast view of shape ``to_shape + arr.shape[-trailing:]``.
    """
    lead = [dims.index(d) for d in to_dims if d in dims]
    tail = list(range(len(dims), len(dims) + trailing))
    arr = np.transpose(arr, lead + tail) if lead + tail != list(range(arr.ndim)) else arr
    present = [d for d in to_dims if d in dims]
    new_shape = []
    k = 0
    for d in to_dims:
        if k < len(present) and present[k] == d:
            new_shape.append(arr.shape[k])
            k += 1
        else:
            new_shape.append(1)
    arr = arr.reshape(tuple(new_shape) + arr.shape[len(present):])
    return np.broadcast_to(arr, tuple(to_shape) + arr.shape[len(to_dims):])


def labeled(data: Any, dims: tuple[str, ...], coords: Coords) -> tuple[np.ndarray, tuple[str, ...], Coords]:
    """Interpret ``data`` as a labeled array against an operand with ``dims``/``coords``.

    * an ``xarray.DataArray`` is matched by dimension name (its own coordinates are used for its
      new dimensions; a shared dimension must have the operand's length and, if the array labels it,
      the operand's labels in the same order: no silent alignment by position);
    * a scalar has no dimensions;
    * a numpy array is matched by position against the operand's *trailing* dimensions, as numpy
      broadcasting would.
    """
    if isinstance(data, xr.DataArray):
        d_dims = tuple(str(d) for d in data.dims)
        d_coords: Coords = {}
        for d in d_dims:
            if d in coords:
                if data.sizes[d] != len(coords[d]):
                    raise ModelError(
                        f"data dimension {d!r} has {data.sizes[d]} entries, the expression has {len(coords[d])}"
                    )
                if d in data.coords:
                    own = data.coords[d].values
                    if own is not coords[d] and not np.array_equal(own, coords[d]):
                        raise ModelError(
                            f"data dimension {d!r} is labeled {own[:5].tolist()}..., the expression "
                            f"{coords[d][:5].tolist()}...: select or reorder the data to the expression's labels")
                d_coords[d] = coords[d]
            else:
                d_coords[d] = np.asarray(data[d].values) if d in data.coords else np.arange(data.sizes[d])
        return np.asarray(data.values, dtype=float), d_dims, d_coords
    arr = np.asarray(data, dtype=float)
    if arr.ndim == 0:
        return arr, (), {}
    if arr.ndim > len(dims):
        raise ModelError(
            f"a plain array with {arr.ndim} axes cannot be matched to an expression over {dims}; "
            "use an xarray.DataArray with named dimensions"
        )
    sub = dims[len(dims) - arr.ndim:]
    squeeze = []
    for ax, d in enumerate(sub):
        if arr.shape[ax] == 1 and len(coords[d]) != 1:
            squeeze.append(ax)
        elif arr.shape[ax] != len(coords[d]):
            raise ModelError(f"array of shape {arr.shape} does not broadcast against dimensions {sub}")
    if squeeze:
        arr = arr.squeeze(axis=tuple(squeeze))
        sub = tuple(d for ax, d in enumerate(sub) if ax not in squeeze)
    return arr, sub, {d: coords[d] for d in sub}
