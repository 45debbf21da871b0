"""The text format of the BA-Trees code (Vidal & Schiffer 2020) for forests and born-again trees.

A file is a header of ``KEY: value`` lines (``DATASET_NAME``, ``ENSEMBLE``, ``NB_TREES``, ``NB_FEATURES``,
``NB_CLASSES``, ``MAX_TREE_DEPTH``, a ``Format:`` comment), then one block per tree::

    [TREE 0]
    NB_NODES: 3
    0 IN 1 2 4 0.5 0 -1
    1 LN -1 -1 -1 -1 1 0
    2 LN -1 -1 -1 -1 1 1

one line per node: ``node_id type(IN|LN) left right feature threshold depth class`` where a sample goes
left iff ``x[feature] <= threshold`` and class indices start at 0. :func:`read_ba_forest` reads a forest
(hard majority vote, ties to the smallest class index, as the C++ code); :func:`write_ba_forest` writes
an ensemble or a single tree (a born-again tree is written as a one-tree "forest", as the C++ code's
``exportBATree`` does), atomically.

Example::

    >>> import tempfile, pathlib
    >>> from treeopt_dsl.models.decision_tree import DecisionTree
    >>> t = DecisionTree([1, -1, -1], [2.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1], n_features=3)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = write_ba_forest(t, pathlib.Path(d) / "t.tree")
    ...     back = read_ba_forest(path)
    >>> back.n_trees, back.n_features, float(back.trees[0].threshold[0])
    (1, 3, 2.5)
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from treeopt_dsl.bornagain.ensemble import Ensemble
from treeopt_dsl.errors import DataError
from treeopt_dsl.models.decision_tree import DecisionTree

__all__ = ["read_ba_forest", "write_ba_forest"]

FORMAT_LINE = ("Format: node / node type (LN - leave node, IN - internal node) left child / right child / "
               "feature / threshold / node_depth / majority class (starts with index 0)")


def _header_int(header: dict[str, tuple[str, int]], key: str, path: Path) -> int:
    if key not in header:
        raise DataError(f"{path}: missing header line '{key}: <integer>'")
    text, line = header[key]
    try:
        v = int(text)
    except ValueError:
        raise DataError(f"{path}:{line}: {key} must be an integer, got {text!r}") from None
    if v < 1:
        raise DataError(f"{path}:{line}: {key} must be positive, got {v}")
    return v


def read_ba_forest(path: str | os.PathLike[str], feature_names: Sequence[str] | None = None) -> Ensemble:
    """Read a forest (or a born-again tree) in the BA-Trees text format as a hard-vote :class:`Ensemble`.

    Raises :class:`~treeopt_dsl.errors.DataError` naming the file and line on any malformed content
    (unknown node type, wrong field count, a class or feature out of the header's range, missing nodes).
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise DataError(f"cannot read forest file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise DataError(f"{path} is not a text file: a forest in the BA-Trees text format is expected") from None
    header: dict[str, tuple[str, int]] = {}
    i = 0
    while i < len(lines) and not lines[i].strip().startswith("[TREE"):
        key, sep, val = lines[i].partition(":")
        if sep and key.strip().isupper() and key.strip() != "Format":
            header[key.strip()] = (val.strip(), i + 1)
        i += 1
    n_trees = _header_int(header, "NB_TREES", path)
    n_features = _header_int(header, "NB_FEATURES", path)
    n_classes = _header_int(header, "NB_CLASSES", path)
    trees: list[DecisionTree] = []
    while len(trees) < n_trees:
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i >= len(lines):
            raise DataError(f"{path}: the header announces NB_TREES: {n_trees}, the file holds {len(trees)} tree(s)")
        if not lines[i].strip().startswith("[TREE"):
            raise DataError(f"{path}:{i + 1}: expected '[TREE {len(trees)}]', got {lines[i].strip()!r}")
        i += 1
        key, _, val = lines[i].partition(":") if i < len(lines) else ("", "", "")
        if key.strip() != "NB_NODES":
            raise DataError(f"{path}:{i + 1}: expected 'NB_NODES: <n>' after the [TREE] line")
        try:
            n_nodes = int(val)
        except ValueError:
            raise DataError(f"{path}:{i + 1}: NB_NODES must be an integer, got {val.strip()!r}") from None
        i += 1
        rows = lines[i: i + n_nodes]
        if len(rows) < n_nodes:
            raise DataError(f"{path}:{i + len(rows)}: tree {len(trees)} announces {n_nodes} nodes, the file ends")
        arr = np.full((n_nodes, 6), -1.0)
        seen = np.zeros(n_nodes, dtype=bool)
        for k, row in enumerate(rows):
            lineno = i + k + 1
            f = row.split()
            if len(f) != 8:
                raise DataError(f"{path}:{lineno}: a node line has 8 fields, got {len(f)}: {row.strip()!r}")
            try:
                node, left, right, feat, depth, cls_ = (int(f[0]), int(f[2]), int(f[3]), int(f[4]), int(f[6]),
                                                        int(f[7]))
                thr = float(f[5])
            except ValueError:
                raise DataError(f"{path}:{lineno}: non-numeric field in node line {row.strip()!r}") from None
            if f[1] == "IN" and not np.isfinite(thr):
                raise DataError(f"{path}:{lineno}: threshold {f[5]} of internal node {node} is not a finite number")
            if not 0 <= node < n_nodes or seen[node]:
                raise DataError(f"{path}:{lineno}: node id {node} out of range 0..{n_nodes - 1} or repeated")
            seen[node] = True
            if f[1] == "IN":
                if not (0 <= feat < n_features):
                    raise DataError(f"{path}:{lineno}: feature {feat} outside 0..{n_features - 1}")
                if not (0 < left < n_nodes and 0 < right < n_nodes):
                    raise DataError(f"{path}:{lineno}: child ids {left}, {right} outside 1..{n_nodes - 1}")
                cls_ = -1
            elif f[1] == "LN":
                if not 0 <= cls_ < n_classes:
                    raise DataError(f"{path}:{lineno}: leaf class {cls_} outside 0..{n_classes - 1}")
                left = right = feat = -1
                thr = 0.0
            else:
                raise DataError(f"{path}:{lineno}: node type must be IN or LN, got {f[1]!r}")
            arr[node] = (feat, thr, left, right, cls_, depth)
        i += n_nodes
        try:
            tree = DecisionTree(feature=arr[:, 0], threshold=arr[:, 1], left=arr[:, 2], right=arr[:, 3],
                                value=arr[:, 4], classes=np.arange(n_classes), n_features=n_features,
                                feature_names=feature_names)
        except DataError as e:
            raise DataError(f"{path}: tree {len(trees)}: {e}") from None
        trees.append(tree)
    extra = sum(1 for ln in lines[i:] if ln.strip().startswith("[TREE"))
    if extra:
        raise DataError(f"{path}: the header announces NB_TREES: {n_trees}, the file holds {n_trees + extra} trees "
                        "(correct the header)")
    return Ensemble.hard_vote(trees, n_classes=n_classes, n_features=n_features, feature_names=feature_names)


def _fmt(x: float) -> str:
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


def write_ba_forest(model: DecisionTree | Ensemble, path: str | os.PathLike[str], dataset_name: str = "",
                    ensemble_name: str | None = None) -> Path:
    """Write a tree (as a one-tree forest, ``ENSEMBLE: BA``) or an ensemble in the BA-Trees format.

    Thresholds are written with ``repr`` (they read back bit for bit). The file is written to a temporary
    file in the same directory and moved into place with :func:`os.replace`, so a reader never sees half a
    file. Only the class *indices* are written (the format has no labels). An empty ``dataset_name`` is written
    as ``unnamed``: the authors' reader takes the line's next token, and an empty name shifts every field.
    """
    path = Path(path)
    if isinstance(model, DecisionTree):
        trees, n_features = [model], int(model.n_features or 0)
        assert model.classes is not None
        n_classes = int(model.classes.size)
        name = ensemble_name or "BA"
    else:
        trees, n_features, n_classes = model.trees, model.n_features, model.n_classes
        name = ensemble_name or "RF"
    out = [f"DATASET_NAME: {dataset_name or 'unnamed'}", f"ENSEMBLE: {name}", f"NB_TREES: {len(trees)}",
           f"NB_FEATURES: {n_features}", f"NB_CLASSES: {n_classes}",
           f"MAX_TREE_DEPTH: {max(t.depth for t in trees)}", FORMAT_LINE, ""]
    for k, t in enumerate(trees):
        depth = t.node_depth
        out += [f"[TREE {k}]", f"NB_NODES: {t.n_nodes}"]
        for i in range(t.n_nodes):
            if t.left[i] >= 0:
                out.append(f"{i} IN {t.left[i]} {t.right[i]} {t.feature[i]} {_fmt(t.threshold[i])} {depth[i]} -1")
            else:
                out.append(f"{i} LN -1 -1 -1 -1 {depth[i]} {t.value[i]}")
        out.append("")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write("\n".join(out) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
