"""Grouped binary features for the categorical trees of Günlük et al. ([gunluk-odt-categorical], §3 and §4.4).

The formulation works on binary vectors ``a^i`` whose entries ("features" ``J``) are grouped
(``G``): the entries of one group are the unit vector of one original attribute, so exactly one of
them is 1 for every sample ([gunluk-odt-categorical] lines 44-46). :class:`GroupEncoder` turns a
:class:`~treeopt_dsl.data.Dataset` into that form and keeps what is needed to read the tree back
and to apply it to raw data:

* **categorical groups**: the one-hot columns the dataset loader made from one attribute
  (``Dataset.groups`` / ``meta["categorical"]``), or a column listed in ``categorical_columns``
  whose values are category codes (one level per distinct value);
* **numeric (ordinal) groups** (§4.4): every other column is binned by its training deciles
  (``np.quantile(..., method="inverted_cdf")``, so every edge is a training value and every bin
  ``(e_b, e_{b+1}]`` holds training samples); a column with at most ``n_bins`` distinct values
  gets one level per value (breast-wisconsin's 1-10 scores become 10 levels, as the paper's 90
  features / 9 groups). The edges are fitted on the training data and reused at predict time;
* **inferred groups**: a dataset with only 0/1 columns and no group information (the LIBSVM
  copies of mushrooms and a1a) is split into runs of consecutive, mutually exclusive columns; a
  run that covers every row is a group (mushrooms: 20 groups / 111 features after dropping the
  constant veil-type, exactly the paper's Table 1); a run of at least 3 columns that covers at
  least 90% of the rows is a group with an extra level ``(none)`` for the rows outside it (a1a's
  missing workclass / occupation / native-country), so that the encoded group is again a unit
  vector. Other 0/1 columns are two-level groups (spect-heart: 22 x 2 = 44 features, as Table 1).

Levels that no training row has are dropped; a test row with such a level (or an unseen
category) has no 1 in that group, so ``L(i, k) = 0`` (3) sends it right at a node testing that
group. Groups with a single level cannot split and are dropped (their names go to ``dropped_``).

>>> import numpy as np
>>> from treeopt_dsl.data import Dataset
>>> X = np.column_stack([np.arange(20.0), np.tile([0.0, 1.0], 10)])
>>> enc = GroupEncoder(n_bins=4).fit(Dataset.from_arrays(X, np.tile([0, 1], 10)))
>>> [(g.name, g.kind, len(g.levels)) for g in enc.groups_]
[('x0', 'numeric', 4), ('x1', 'numeric', 2)]
>>> enc.transform_X(np.array([[3.0, 1.0]])).astype(int).tolist()
[[1, 0, 0, 0, 0, 1]]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import DataError

NONE_LEVEL = "(none)"


@dataclass(frozen=True)
class Group:
    """One group ``g`` of the binary encoding: an original attribute and its levels ``J(g)``.

    ``how`` says how a raw row maps to a level: ``"onehot"`` (raw ``columns`` are indicator columns,
    level = the one set; ``none_level``: an extra last level for rows with none set), ``"codes"``
    (raw column ``columns[0]`` holds a category code; ``values`` are the codes of the levels) or
    ``"bins"`` (raw column ``columns[0]`` is numeric; ``edges`` are the upper ends of the bins but
    the last: level ``b`` is ``(edges[b-1], edges[b]]``).
    """

    name: str
    kind: str  # "categorical" | "numeric"
    levels: tuple[str, ...]
    how: str  # "onehot" | "codes" | "bins"
    columns: tuple[int, ...]
    values: np.ndarray | None = None
    edges: np.ndarray | None = None
    none_level: bool = False
    exact: bool = False  # bins: one level per training value (levels are the values themselves)

    @property
    def ordinal(self) -> bool:
        """Levels have an order (§4.4): binned numeric features."""
        return self.kind == "numeric"

    def level_of(self, X: np.ndarray) -> np.ndarray:
        """Level index of every raw row (``-1``: a level unseen in training)."""
        if self.how == "onehot":
            block = X[:, list(self.columns)]
            hit = block > 0.5
            lev = np.where(hit.any(1), np.argmax(hit, 1), -1)
            if self.none_level:
                lev = np.where(hit.any(1), lev, len(self.levels) - 1)
            return lev
        col = X[:, self.columns[0]]
        if self.how == "codes":
            assert self.values is not None
            pos = np.searchsorted(self.values, col)
            pos_c = np.minimum(pos, self.values.size - 1)
            return np.where(self.values[pos_c] == col, pos_c, -1)
        assert self.edges is not None
        return np.searchsorted(self.edges, col, side="left")

    def threshold_text(self, left: np.ndarray) -> str | None:
        """For an ordinal group whose left set is a prefix or a suffix of its levels: the threshold rule."""
        if not self.ordinal or self.edges is None or left.all() or not left.any():
            return None
        k = int(left.sum())
        if left[:k].all():  # prefix: x <= edge
            return f"{self.name} <= {_num(self.edges[k - 1])}"
        if left[-k:].all():  # suffix: x > edge
            return f"{self.name} > {_num(self.edges[len(self.levels) - k - 1])}"
        return None


def _num(v: float) -> str:
    return f"{v:.6g}"


@dataclass
class GroupEncoder:
    """Fit the grouped binary encoding on training data (see the module docstring).

    Parameters
    ----------
    n_bins:
        Number of quantile bins of a numeric column (deciles: 10, §4.4).
    categorical_columns:
        Raw columns (indices or names) holding category codes: one level per distinct value, no order.
    infer_groups:
        ``"auto"`` (infer from runs of exclusive 0/1 columns when the data carries no group
        information), ``True`` or ``False``.
    """

    n_bins: int = 10
    categorical_columns: Sequence[Any] = ()
    infer_groups: Any = "auto"
    groups_: list[Group] = field(default_factory=list, init=False, repr=False)
    dropped_: list[str] = field(default_factory=list, init=False, repr=False)
    n_raw_: int = field(default=0, init=False, repr=False)
    raw_names_: tuple[str, ...] = field(default=(), init=False, repr=False)

    # ------------------------------------------------------------------ fit
    def fit(self, data: Dataset) -> GroupEncoder:
        if not isinstance(self.n_bins, (int, np.integer)) or self.n_bins < 2:
            raise DataError(f"n_bins must be an integer >= 2, got {self.n_bins!r}")
        X = np.asarray(data.X, dtype=float)
        p = X.shape[1]
        names = tuple(data.feature_names)
        self.n_raw_, self.raw_names_ = p, names
        cat_cols = self._categorical_columns(names, p)
        src = np.asarray(data.groups if data.groups is not None else range(p))
        if src.size != p:
            raise DataError(f"Dataset.groups has {src.size} entries for {p} columns")
        onehot_meta = data.meta.get("categorical", {}) or {}
        runs = self._runs(X, src, onehot_meta, cat_cols)
        groups: list[Group] = []
        dropped: list[str] = []
        for cols, kind in runs:
            g = self._group(X, names, cols, kind, onehot_meta)
            if g is None or len(g.levels) < 2:
                dropped.append(self._group_name(names, cols, onehot_meta))
                continue
            groups.append(g)
        if not groups:
            raise DataError("no feature can split the data: every column is constant on the training rows")
        self.groups_, self.dropped_ = groups, dropped
        return self

    def _categorical_columns(self, names: tuple[str, ...], p: int) -> set[int]:
        out = set()
        for c in self.categorical_columns or ():
            if isinstance(c, (int, np.integer)) and not isinstance(c, bool):
                if not 0 <= int(c) < p:
                    raise DataError(f"categorical column {c} is out of range for {p} columns")
                out.add(int(c))
            elif str(c) in names:
                out.add(names.index(str(c)))
            else:
                raise DataError(f"categorical column {c!r} is not a column; columns are {list(names)[:20]}")
        return out

    def _runs(self, X: np.ndarray, src: np.ndarray, meta: dict[str, Any], cat_cols: set[int]) -> list[tuple]:
        """Column sets of the groups with their kind: ('onehot', 'codes', 'bins', or 'inferred')."""
        binary = np.all((X == 0) | (X == 1), axis=0)
        _, first, counts = np.unique(src, return_index=True, return_counts=True)
        order = np.argsort(first)
        runs: list[tuple] = []
        singletons = bool(np.all(counts == 1))
        infer = self.infer_groups
        if infer == "auto":
            infer = singletons and not meta and not cat_cols and bool(binary.all()) and X.shape[1] > 1
        if infer:
            if not binary.all():
                raise DataError("infer_groups needs 0/1 columns only")
            return [(cols, "inferred") for cols in _exclusive_runs(X)]
        for o in order:
            cols = tuple(np.flatnonzero(src == src[first[o]]).tolist())
            if len(cols) > 1:
                if not binary[list(cols)].all():
                    raise DataError(f"group of columns {cols} is not 0/1: a multi-column group must be one-hot")
                runs.append((cols, "onehot"))
            elif cols[0] in cat_cols:
                runs.append((cols, "codes"))
            else:
                runs.append((cols, "bins"))
        return runs

    def _group_name(self, names: tuple[str, ...], cols: tuple[int, ...], meta: dict[str, Any]) -> str:
        if len(cols) == 1:
            return names[cols[0]]
        heads = {names[c].split("=", 1)[0] for c in cols}
        if len(heads) == 1 and all("=" in names[c] for c in cols):
            return heads.pop()
        return f"{names[cols[0]]}..{names[cols[-1]]}"

    def _group(self, X: np.ndarray, names: tuple[str, ...], cols: tuple[int, ...], kind: str,
               meta: dict[str, Any]) -> Group | None:
        gname = self._group_name(names, cols, meta)
        if kind in ("onehot", "inferred"):
            block = X[:, list(cols)] > 0.5
            seen = block.any(0)
            keep = tuple(c for c, s in zip(cols, seen, strict=True) if s)
            lv = [names[c].split("=", 1)[1] if "=" in names[c] and names[c].startswith(gname + "=") else names[c]
                  for c in keep]
            covered = block.any(1)
            none = kind == "inferred" and not covered.all()
            if kind == "onehot" and not covered.all():
                none = True  # a one-hot group with empty rows (e.g. a level never seen): keep a unit vector
            if none:
                lv.append(NONE_LEVEL)
            return Group(gname, "categorical", tuple(lv), "onehot", keep, none_level=none)
        col = X[:, cols[0]]
        vals = np.unique(col)
        if vals.size < 2:
            return None
        if kind == "codes":
            return Group(gname, "categorical", tuple(_num(v) for v in vals), "codes", cols, values=vals)
        if vals.size <= self.n_bins:
            edges = vals[:-1]
            return Group(gname, "numeric", tuple(_num(v) for v in vals), "bins", cols, edges=edges, exact=True)
        q = np.quantile(col, np.arange(1, self.n_bins) / self.n_bins, method="inverted_cdf")
        edges = np.unique(q)
        edges = edges[edges < vals[-1]]  # the last bin (e_last, inf) must hold the maximum
        if edges.size == 0:
            edges = vals[:1]
        levels = [f"<= {_num(edges[0])}"]
        levels += [f"({_num(a)}, {_num(b)}]" for a, b in itertools.pairwise(edges)]
        levels.append(f"> {_num(edges[-1])}")
        return Group(gname, "numeric", tuple(levels), "bins", cols, edges=edges)

    # ------------------------------------------------------------------ transform
    def _check(self, X: Any) -> np.ndarray:
        if not self.groups_:
            raise DataError("the group encoder has not been fitted")
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_raw_:
            raise DataError(f"X has shape {X.shape}; the encoding was fitted on {self.n_raw_} raw columns")
        return X

    def levels(self, X: Any) -> np.ndarray:
        """Level index of every row in every group, shape (n, |G|); ``-1`` for an unseen level."""
        X = self._check(X)
        return np.column_stack([g.level_of(X) for g in self.groups_])

    @property
    def group_of(self) -> np.ndarray:
        """``g(j)`` for every encoded feature ``j``."""
        return np.repeat(np.arange(len(self.groups_)), [len(g.levels) for g in self.groups_])

    @property
    def offsets(self) -> np.ndarray:
        """First encoded feature of every group (the anchor feature ``j(g)`` of (13))."""
        sizes = np.array([len(g.levels) for g in self.groups_])
        return np.concatenate([[0], np.cumsum(sizes)[:-1]])

    @property
    def n_features(self) -> int:
        return int(sum(len(g.levels) for g in self.groups_))

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(f"{g.name}={lv}" for g in self.groups_ for lv in g.levels)

    def transform_X(self, X: Any) -> np.ndarray:
        """The binary matrix ``a`` (n x d): one 1 per group (none for an unseen level)."""
        lev = self.levels(X)
        A = np.zeros((lev.shape[0], self.n_features))
        cols = self.offsets[None, :] + lev
        rows = np.broadcast_to(np.arange(lev.shape[0])[:, None], lev.shape)
        ok = lev >= 0
        A[rows[ok], cols[ok]] = 1.0
        return A

    def transform(self, data: Dataset) -> Dataset:
        """The encoded dataset: ``X`` binary, ``groups`` = ``g(j)``, ``meta["encoder"]`` = this encoder."""
        A = self.transform_X(data.X)
        meta = {**data.meta, "encoder": self}
        return replace(data, X=A, feature_names=self.feature_names, groups=tuple(self.group_of.tolist()), meta=meta)

    def describe(self) -> str:
        lines = [f"{len(self.groups_)} groups, {self.n_features} binary features"]
        for g in self.groups_:
            lines.append(f"  {g.name} [{g.kind}, {len(g.levels)} levels]: {', '.join(g.levels[:12])}"
                         + (" ..." if len(g.levels) > 12 else ""))
        if self.dropped_:
            lines.append(f"  dropped (a single level on the training rows): {', '.join(self.dropped_[:12])}")
        return "\n".join(lines)


def _exclusive_runs(X: np.ndarray, min_cover: float = 0.9) -> list[tuple[int, ...]]:
    """Runs of consecutive 0/1 columns that no row has two of (loops over columns, not rows)."""
    p = X.shape[1]
    runs: list[tuple[int, ...]] = []
    start, acc = 0, X[:, 0].copy()
    for j in range(1, p + 1):
        if j < p and np.all(acc + X[:, j] <= 1):
            acc += X[:, j]
            continue
        cols = tuple(range(start, j))
        cover = acc.mean()
        if (len(cols) >= 2 and cover == 1.0) or (len(cols) >= 3 and cover >= min_cover):
            runs.append(cols)
        else:
            runs.extend((c,) for c in cols)
        if j < p:
            start, acc = j, X[:, j].copy()
    return runs


def encode_groups(data: Dataset, n_bins: int = 10, categorical_columns: Sequence[Any] = (),
                  infer_groups: Any = "auto") -> Dataset:
    """Fit a :class:`GroupEncoder` on ``data`` and return the encoded dataset (the encoder in ``meta``)."""
    return GroupEncoder(n_bins, categorical_columns, infer_groups).fit(data).transform(data)


@dataclass(frozen=True)
class GroupStructure:
    """What the blocks need from an encoded dataset: ``g(j)``, ``J(g)``, anchors and ordinal flags."""

    group_of: np.ndarray
    names: tuple[str, ...]
    ordinal: np.ndarray  # bool per group
    sizes: np.ndarray
    first: np.ndarray  # anchor feature j(g): the first level

    @property
    def n_groups(self) -> int:
        return len(self.names)

    @property
    def n_features(self) -> int:
        return int(self.group_of.size)

    def members(self, g: int) -> np.ndarray:
        return np.arange(self.first[g], self.first[g] + self.sizes[g])


def structure(data: Dataset) -> GroupStructure:
    """The group structure of an encoded dataset (``encode_groups``), or of any 0/1 dataset whose
    ``groups`` are consecutive one-hot blocks (then every group is categorical)."""
    enc = data.meta.get("encoder")
    if isinstance(enc, GroupEncoder) and enc.n_features == data.n_features:
        sizes = np.array([len(g.levels) for g in enc.groups_])
        return GroupStructure(enc.group_of, tuple(g.name for g in enc.groups_),
                              np.array([g.ordinal for g in enc.groups_]), sizes, enc.offsets)
    if not np.all((data.X == 0) | (data.X == 1)):
        raise DataError("the categorical formulation needs grouped 0/1 features: encode the data first "
                        "(treeopt_dsl.datasets.encoding.encode_groups)")
    src = np.asarray(data.groups if data.groups is not None else range(data.n_features))
    change = np.flatnonzero(np.r_[True, src[1:] != src[:-1]])
    if np.unique(src).size != change.size:
        raise DataError("Dataset.groups must list the columns of each group consecutively")
    sizes = np.diff(np.r_[change, src.size])
    group_of = np.repeat(np.arange(change.size), sizes)
    names = tuple(data.feature_names[c].split("=", 1)[0] for c in change)
    return GroupStructure(group_of, names, np.zeros(change.size, dtype=bool), sizes, change)
