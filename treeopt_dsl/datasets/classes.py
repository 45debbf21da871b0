"""Rows of some classes left out of a dataset, as a paper reads it: the thesis' Table 4.1 reads UCI balance-scale
without its 49 "B" (balanced) rows, 576 rows of "L" and "R" (:func:`drop_classes`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from treeopt_dsl.data import Dataset
from treeopt_dsl.datasets.frames import label_key
from treeopt_dsl.errors import DataError


def drop_classes(d: Dataset, drop: str | Sequence[Any], positive: Any = None, multiclass: bool = False) -> Dataset:
    """``d`` (every class kept: codes ``0..K-1`` of ``classes``, or two classes) without the rows of the classes
    ``drop``; what is left is binary (``y`` in {-1, +1}) unless ``multiclass`` and more than two classes remain.

    ``positive``: the label (or labels) mapped to +1 among those left; ``None``: with two classes left, the larger
    label (as for CSV files), ``meta["positive"]`` says which. ``meta["dropped_classes"]`` records the classes and
    their rows dropped.

    >>> d = Dataset.from_arrays(np.arange(6.0)[:, None], ["B", "L", "R", "L", "R", "R"], multiclass=True)
    >>> kept = drop_classes(d, ["B"], positive="L")
    >>> kept.n_samples, kept.classes, kept.y.tolist()
    (5, ('R', 'L'), [1, -1, 1, -1, -1])
    """
    names = [drop] if isinstance(drop, str) or not isinstance(drop, Sequence) else list(drop)
    if not names:
        raise DataError("drop_classes must name at least one class")
    keys = {label_key(c): i for i, c in enumerate(d.classes)}
    unknown = [n for n in names if label_key(n) not in keys]
    if unknown:
        raise DataError(f"drop_classes: {unknown[0]!r} is not a class of {d.name!r}; its classes are "
                        f"{list(d.classes)}")
    gone = sorted({keys[label_key(n)] for n in names})
    idx = d.class_index
    keep = ~np.isin(idx, gone)
    left = [c for i, c in enumerate(d.classes) if i not in gone]
    if len(left) < 2:
        raise DataError(f"drop_classes={names!r} leaves {len(left)} class(es) of {d.name!r} (classes "
                        f"{list(d.classes)}): a classifier needs two")
    meta = {**d.meta, "dropped_classes": {str(d.classes[i]): int(np.sum(idx == i)) for i in gone}}
    rows = d.take(np.flatnonzero(keep))
    codes = np.searchsorted(np.array([i for i in range(len(d.classes)) if i not in gone]), idx[keep])
    if multiclass and positive is None and len(left) > 2:
        return replace(rows, y=codes.astype(np.int64), classes=tuple(left), meta=meta)
    if positive is None:
        if len(left) != 2:
            raise DataError(f"drop_classes leaves {len(left)} classes of {d.name!r} ({left}): name the positive "
                            "class (positive=) or keep them all (multiclass=True)")
        pos_keys = {label_key(left[1])}
        meta["positive"] = f"+1 = {left[1]}, -1 = {left[0]} (the larger label left; positive= chooses)"
    else:
        wanted = [positive] if isinstance(positive, str) or not isinstance(positive, Sequence) else list(positive)
        pos_keys = {label_key(p) for p in wanted}
        missing = [p for p in wanted if label_key(p) not in {label_key(c) for c in left}]
        if missing:
            raise DataError(f"positive class {missing[0]!r} is not among the classes left of {d.name!r}: {left}")
        meta["positive"] = f"+1 = {', '.join(map(str, wanted))}, -1 = the other class(es) left"
    is_pos = np.array([label_key(c) in pos_keys for c in left])[codes]
    negatives = [c for c in left if label_key(c) not in pos_keys]
    positives = [c for c in left if label_key(c) in pos_keys]
    classes = (negatives[0] if len(negatives) == 1 else f"not {'/'.join(map(str, positives))}",
               positives[0] if len(positives) == 1 else "/".join(map(str, positives)))
    return replace(rows, y=np.where(is_pos, 1, -1).astype(np.int64), classes=classes, meta=meta)
