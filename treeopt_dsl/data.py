"""Validated datasets and feature scaling.

A :class:`Dataset` holds finite float features, binary labels mapped to {-1, +1} (the mapping is
kept, so predictions come back in the user's labels), feature names, and optional feature groups
(for the categorical-tree formulations) and optional per-sample weights (every loss block weighs sample
``i`` by ``sample_weight[i]``: docs/weights.md). Scalers are fitted on training data only and reused on
test data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError


@dataclass(frozen=True)
class Dataset:
    """Features ``X`` (n x p, finite float64), labels ``y``, and their metadata.

    Two classes (every formulation): ``y`` in {-1, +1}, ``classes[0]`` is the original label mapped
    to -1 and ``classes[1]`` the one mapped to +1. ``K > 2`` classes (only for the formulations that
    handle them, e.g. S-ORCT; made by ``from_arrays(..., multiclass=True)``): ``y`` holds the class
    codes ``0..K-1`` of ``classes`` (sorted labels). :attr:`class_index` is ``0..K-1`` in both cases.

    ``sample_weight`` (``None``: every sample weighs 1) is a finite, non-negative float per sample; the losses
    minimize ``sum_i w_i loss_i`` (an integer weight is the same as repeating the row). ``take``, ``split`` and
    ``subsample`` carry it; :attr:`weights` is it, or ones.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    classes: tuple[Any, ...] = (-1, 1)
    name: str = "data"
    groups: tuple[int, ...] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    sample_weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.sample_weight is not None:
            object.__setattr__(self, "sample_weight", check_sample_weight(self.sample_weight, self.X.shape[0]))

    @classmethod
    def from_arrays(cls, X: Any, y: Any, feature_names: Sequence[str] | None = None,
                    positive: Any = None, name: str = "data", multiclass: bool = False,
                    sample_weight: Any = None) -> Dataset:
        """Validate and wrap raw arrays.

        ``y`` must hold exactly two distinct labels (or, with ``multiclass=True``, at least two: more
        than two are kept as class codes, see the class docstring). The one mapped to +1 is
        ``positive`` if given, otherwise the larger label in sorted order (so {0, 1} and {-1, 1} map
        1 to +1). ``sample_weight``: one finite non-negative weight per row (``None``: all 1).

        >>> d = Dataset.from_arrays([[0.0], [1.0]], ["no", "yes"], positive="yes")
        >>> d.y.tolist(), d.classes
        ([-1, 1], ('no', 'yes'))
        """
        X = _as_features(X)
        y_raw = np.asarray(y)
        if y_raw.ndim != 1:
            raise DataError(f"y must be one-dimensional, got shape {y_raw.shape}")
        if y_raw.shape[0] != X.shape[0]:
            raise DataError(f"X has {X.shape[0]} rows but y has {y_raw.shape[0]} labels")
        check_labels(y_raw)
        labels = np.unique(y_raw)
        if multiclass and labels.size > 2:
            if positive is not None:
                raise DataError("positive= makes the task binary; leave it out for multiclass data")
            codes = np.searchsorted(labels, y_raw).astype(np.int64)
            return cls(X, codes, _names(feature_names, X.shape[1]), tuple(_plain(v) for v in labels), name,
                       sample_weight=sample_weight)
        if labels.size != 2:
            shown = ", ".join(map(repr, labels[:6].tolist())) + (" ..." if labels.size > 6 else "")
            raise DataError(
                f"a binary classifier needs exactly two classes in y, found {labels.size} ({shown})"
                + ("; pick the positive class to make the task binary" if labels.size > 2 else "")
            )
        if positive is None:
            neg, pos = labels[0], labels[1]
        else:
            hits = [lab for lab in labels.tolist() if str(lab) == str(positive)]
            if not hits:
                raise DataError(f"positive label {positive!r} is not among the labels {labels.tolist()}")
            pos = hits[0]
            neg = [lab for lab in labels.tolist() if lab != pos][0]
        y_pm = np.where(y_raw == pos, 1, -1).astype(np.int64)
        names = _names(feature_names, X.shape[1])
        return cls(X, y_pm, names, (_plain(neg), _plain(pos)), name, sample_weight=sample_weight)

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def weights(self) -> np.ndarray:
        """The weight of every sample (``sample_weight``, or ones when none was given)."""
        return np.ones(self.n_samples) if self.sample_weight is None else self.sample_weight

    @property
    def weighted(self) -> bool:
        """Whether some sample weighs other than 1."""
        return self.sample_weight is not None and not bool(np.all(self.sample_weight == 1.0))

    def with_weights(self, sample_weight: Any) -> Dataset:
        """A copy with ``sample_weight`` (validated; ``None`` removes the weights)."""
        return replace(self, sample_weight=None if sample_weight is None else
                       check_sample_weight(sample_weight, self.n_samples))

    @property
    def class_index(self) -> np.ndarray:
        """Class of every sample as ``0..K-1`` (the position in ``classes``)."""
        return (self.y > 0).astype(np.int64) if self.n_classes == 2 else np.asarray(self.y, dtype=np.int64)

    def require_binary(self, who: str) -> None:
        """Raise a :class:`DataError` naming ``who`` when the data have more than two classes."""
        if self.n_classes != 2:
            raise DataError(f"{who} is a binary classifier and {self.name!r} has {self.n_classes} classes "
                            f"{list(self.classes)[:8]}: choose the positive class (one versus rest), e.g. "
                            f"--positive {self.classes[0]}")

    def labels_of(self, y_pm: np.ndarray) -> np.ndarray:
        """Map {-1, +1} (two classes) or class codes (``K > 2``) back to the original labels."""
        if self.n_classes > 2:
            return np.asarray(self.classes)[np.asarray(y_pm, dtype=np.int64)]
        return pick_labels(self.classes, np.asarray(y_pm) > 0)

    def compressed(self) -> Dataset:
        """Identical samples (the same features and label) as one sample weighing their total weight.

        For a model whose objective is ``sum_i w_i loss_i`` and whose rows treat identical samples alike, the
        optimum is the same with fewer rows (``meta["compressed_from"]`` keeps the number of rows before).
        The rows kept are each group's first, in their original order; ``self`` when no two rows are equal.

        >>> d = Dataset.from_arrays([[0.0], [1.0], [0.0], [0.0]], [0, 1, 0, 1])
        >>> c = d.compressed()
        >>> c.X.ravel().tolist(), c.y.tolist(), c.weights.tolist(), c.meta["compressed_from"]
        ([0.0, 1.0, 0.0], [-1, 1, 1], [2.0, 1.0, 1.0], 4)
        """
        key = np.ascontiguousarray(np.column_stack([self.X, self.y]))
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        if first.size == self.n_samples:
            return self
        order = np.argsort(first)  # groups in the order of their first row
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        weight = np.bincount(rank[inverse.ravel()], weights=self.weights, minlength=order.size)
        kept = replace(self.take(first[order]), meta={**self.meta, "compressed_from": self.n_samples})
        return replace(kept, sample_weight=check_sample_weight(weight, kept.n_samples))

    def take(self, index: np.ndarray) -> Dataset:
        sw = None if self.sample_weight is None else self.sample_weight[index]
        return replace(self, X=self.X[index], y=self.y[index], sample_weight=sw)

    def subsample(self, n: int, seed: int = 0) -> Dataset:
        """``n`` rows drawn without replacement, stratified by class (as the papers subsample)."""
        if n <= 0:
            raise DataError("--sample must be positive")
        if n >= self.n_samples:
            return self
        return self.take(np.sort(_stratified(self.y, n, seed)))

    def split(self, test_size: float = 0.2, seed: int = 0) -> tuple[Dataset, Dataset]:
        """Stratified train/test split; the same ``seed`` always gives the same split.

        Every class keeps at least one row in the training part (a class with a single row is never held out,
        so the test part may lack it); a :class:`DataError` when ``test_size`` leaves too few rows for that.

        >>> d = Dataset.from_arrays(np.arange(20.0)[:, None], [0] * 19 + [1])
        >>> train, test = d.split(0.2)
        >>> int((train.y > 0).sum()), int((test.y > 0).sum())
        (1, 0)
        """
        if not 0.0 < test_size < 1.0:
            raise DataError(f"test size must be in (0, 1), got {test_size}")
        n_test = int(round(test_size * self.n_samples))
        if n_test < 2 or self.n_samples - n_test < 2:
            raise DataError(f"{self.n_samples} rows are too few for a {test_size:.0%} test split")
        classes, counts = np.unique(self.y, return_counts=True)
        if n_test > self.n_samples - classes.size:  # each class keeps a training row
            short = _plain(self.labels_of(classes[[int(np.argmin(counts))]])[0])
            raise DataError(f"a {test_size:.0%} test split of {self.n_samples} rows in {classes.size} classes would "
                            f"leave no training row of some class (the smallest: {short!r}, {counts.min()} row(s)): "
                            "use a smaller --test-size (test_size) or more rows")
        test = np.sort(_stratified(self.y, n_test, seed, keep=1))
        train = np.setdiff1d(np.arange(self.n_samples), test)
        return self.take(train), self.take(test)


def check_sample_weight(sample_weight: Any, n: int) -> np.ndarray:
    """``sample_weight`` as a float64 vector of length ``n``: finite, non-negative, not all zero."""
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"sample_weight must be numbers: {exc}") from None
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.ndim != 1 or w.shape[0] != n:
        raise DataError(f"sample_weight must hold one weight per sample ({n}), got shape {w.shape}")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        raise DataError(f"sample_weight must be finite and non-negative; {_rows_text(np.flatnonzero(bad))} "
                        "(0-based) are not")
    if n and not (w > 0).any():
        raise DataError("sample_weight is zero for every sample: nothing to fit")
    return w


def _stratified(y: np.ndarray, n: int, seed: int, keep: int = 0) -> np.ndarray:
    """``n`` row indices drawn without replacement, each class in proportion (largest remainders) and,
    when ``n`` allows, every class present; ``keep`` rows of each class are never drawn (a split's training
    part keeps them; ``n`` must not exceed what is left). Loops over classes only."""
    rng = np.random.default_rng(seed)
    classes, counts = np.unique(y, return_counts=True)
    room = np.maximum(counts - keep, 0)
    quota = n * counts / counts.sum()
    forced = 1 if n >= np.count_nonzero(room) else 0
    share = np.minimum(np.maximum(np.floor(quota).astype(np.int64), forced), room)
    while share.sum() > n:  # the forced ones overshot: take back where the share exceeds its quota most
        k = int(np.argmax(np.where(share > 1, share - quota, -np.inf)))
        share[k] -= 1
    while share.sum() < n:  # hand out the rest by largest remainder
        k = int(np.argmax(np.where(share < room, quota - share, -np.inf)))
        share[k] += 1
    return np.concatenate([rng.choice(np.flatnonzero(y == c), size=int(k), replace=False)
                           for c, k in zip(classes, share, strict=True)])


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _names(names: Sequence[str] | None, p: int) -> tuple[str, ...]:
    if names is None:
        return tuple(f"x{j}" for j in range(p))
    names = tuple(str(n) for n in names)
    if len(names) != p:
        raise DataError(f"{len(names)} feature names for {p} features")
    return names


def pick_labels(classes: Sequence[Any], positive: np.ndarray) -> np.ndarray:
    """``classes[1]`` where ``positive``, else ``classes[0]``: the one place a binary model's labels are made.
    When either class is text (e.g. a positive class defined by a rule, ``(0, '1|2|3|4')``), both are given
    as text, as :meth:`Dataset.labels_of` always did; numpy has no common type for ``0`` and ``'1|2'``."""
    c0, c1 = classes[0], classes[1]
    table = np.array([str(c0), str(c1)]) if isinstance(c0, str) or isinstance(c1, str) else np.array([c0, c1])
    return table[np.asarray(positive, dtype=np.intp)]


def _rows_text(rows: np.ndarray) -> str:
    shown = ", ".join(str(int(r)) for r in rows[:8])
    return f"row{'s' if rows.size > 1 else ''} {shown}{' ...' if rows.size > 8 else ''}"


def check_labels(y_raw: np.ndarray) -> None:
    """Refuse missing labels (``None``, NaN, ``pd.NA``) and infinite ones, naming the rows (0-based)."""
    if y_raw.dtype.kind == "f":
        bad = ~np.isfinite(y_raw)
    elif y_raw.dtype.kind == "O":
        bad = np.fromiter((v is None or (isinstance(v, (float, np.floating)) and not np.isfinite(v))
                           or (v is not None and not isinstance(v, (str, bytes)) and _is_na(v)) for v in y_raw),
                          dtype=bool, count=y_raw.size)
    else:
        return
    if bad.any():
        rows = np.flatnonzero(bad)
        raise DataError(f"y contains {rows.size} missing or infinite label(s) (None, NaN or inf) at "
                        f"{_rows_text(rows)} (0-based): drop those rows or give them a class first")


def _is_na(v: Any) -> bool:
    try:
        import pandas as pd

        return bool(pd.isna(v)) if np.ndim(v) == 0 else False
    except (TypeError, ValueError):
        return False


def non_numeric_columns(X: Any) -> list[str]:
    """Names of the columns of a DataFrame that hold text or categories (empty for anything else)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return []
    import pandas as pd

    return [str(c) for c, t in zip(X.columns, dtypes, strict=True)
            if not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))]


def require_numeric(X: Any) -> None:
    """Raise a :class:`DataError` naming the text / categorical columns of a DataFrame (or a text array)."""
    cols = non_numeric_columns(X)
    if cols:
        shown = ", ".join(repr(c) for c in cols[:10]) + (" ..." if len(cols) > 10 else "")
        raise DataError(f"X has {len(cols)} non-numeric (text or categorical) column(s): {shown}; the formulations "
                        "need numbers: one-hot encode them as the command line does, make_pipeline(OneHotText(), ...) "
                        "(treeopt_dsl.estimator.text; docs/getting_started.md, 'Text columns'; sklearn's OneHotEncoder "
                        "gives the same columns in another order), "
                        "or use CategoricalTreeClassifier (categorical_features=...) for category splits")
    kind = getattr(getattr(X, "dtype", None), "kind", None)
    if kind in ("U", "S"):
        raise DataError("X holds text; the formulations need numbers: convert it (e.g. X.astype(float)) or "
                        "one-hot encode the text columns (sklearn.preprocessing.OneHotEncoder)")


def _as_features(X: Any) -> np.ndarray:
    require_numeric(X)
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"features must be numeric: {exc}") from None
    if X.ndim != 2:
        raise DataError(f"X must be two-dimensional (samples x features), got shape {X.shape}")
    if X.shape[0] == 0:
        raise DataError("X has no rows")
    if X.shape[1] == 0:
        raise DataError("X has no features")
    bad = ~np.isfinite(X)
    if bad.any():
        rows, cols = np.nonzero(bad)
        raise DataError(
            f"X contains {int(bad.sum())} NaN/inf value(s) (first at row {rows[0]}, column {cols[0]}); "
            "drop or impute them first"
        )
    return X


#: largest |value| of a scaled feature: the solvers take coefficients of 1e15-1e20 for infinity and lose
#: every digit of the other coefficients of a row long before (HiGHS rejects such models)
MAX_SCALED = 1e12
#: smallest interquartile range of a scaled feature (when its raw values have one): below it the solvers
#: see the bulk of the column as one value (it becomes a column of zeros beside a few outliers)
MIN_SCALED_IQR = 1e-6


class Scaler:
    """Feature scaling fitted on training data: ``standard`` (zero mean, unit variance, as the thesis'
    OLCT experiments, [aldinucci-thesis-2024] line 610), ``minmax`` (to [0, 1], as the risk-score and S-ORCT
    papers) or ``none``. Constant features are left centred and unscaled.

    Fitting refuses (:class:`DataError`, naming the feature) a column whose scaling overflows, whose
    scaled values exceed :data:`MAX_SCALED` in absolute value, or that scaling collapses (its raw
    values squashed together: the middle half of the column spans less than :data:`MIN_SCALED_IQR` after
    scaling, e.g. one value of 1e300 among values near 1): rescale or clip it, or drop it.
    """

    KINDS = ("standard", "minmax", "none")

    def __init__(self, kind: str = "standard") -> None:
        if kind not in self.KINDS:
            raise DataError(f"unknown scaling {kind!r}; choose one of {self.KINDS}")
        self.kind = kind
        self.shift_: np.ndarray | None = None
        self.scale_: np.ndarray | None = None
        self.feature_names_: tuple[str, ...] | None = None

    def fit(self, X: np.ndarray, feature_names: Sequence[str] | None = None) -> Scaler:
        """Fit the shift and scale of every column of ``X``; ``feature_names`` name columns in errors."""
        self.fit_transform(X, feature_names)
        return self

    def fit_transform(self, X: np.ndarray, feature_names: Sequence[str] | None = None) -> np.ndarray:
        """:meth:`fit`, then ``X`` scaled (computed once: fitting already scales it to check the range)."""
        X = _as_features(X)
        names = _names(feature_names, X.shape[1])
        with np.errstate(over="ignore", invalid="ignore"):
            if self.kind == "standard":
                shift, scale = X.mean(0), X.std(0)
            elif self.kind == "minmax":
                shift, scale = X.min(0), X.max(0) - X.min(0)
            else:
                shift, scale = np.zeros(X.shape[1]), np.ones(X.shape[1])
        bad = ~(np.isfinite(shift) & np.isfinite(scale))
        if bad.any():
            raise DataError(self._huge(names, bad, X, "overflows (the column's spread exceeds the float range)"))
        self.shift_, self.scale_ = shift, np.where(scale > 1e-12, scale, 1.0)
        self.feature_names_ = names
        Xs = self._scaled(X)
        big = np.maximum(Xs.max(0), -Xs.min(0)) > MAX_SCALED  # |Xs| without a temporary
        if big.any():
            raise DataError(self._huge(names, big, X, f"gives values beyond +-{MAX_SCALED:g}, which the solvers "
                                                      "cannot tell from infinity"))
        # only huge raw values can squash a column (scaling is affine: it keeps every relative gap, so a
        # column of ordinary magnitude with a tiny spread in its middle is the data, not the scaling): the
        # quartiles (a sort per column) are computed for those columns alone
        lost = np.zeros(X.shape[1], dtype=bool)
        cols = np.flatnonzero(np.maximum(X.max(0), -X.min(0)) > MAX_SCALED)
        if cols.size:
            Xh = X[:, cols]
            q75, q25 = np.percentile(Xh, 75, axis=0, method="lower"), np.percentile(Xh, 25, axis=0, method="higher")
            iqr = q75 - q25  # the middle half of the column, which a few huge values must not squash to nothing
            spread = iqr > 1e-9 * np.maximum(np.abs(q25), np.abs(q75))
            lost[cols] = spread & (iqr / self.scale_[cols] < MIN_SCALED_IQR)
        if lost.any():
            raise DataError(self._huge(names, lost, X, "squashes the middle half of its values into less than "
                                                       f"{MIN_SCALED_IQR:g} (a few huge values dominate the scale)"))
        return Xs

    def _huge(self, names: tuple[str, ...], cols: np.ndarray, X: np.ndarray, what: str) -> str:
        idx = np.flatnonzero(cols)
        shown = ", ".join(f"{names[j]!r} (column {j}, |x| up to {np.abs(X[:, j]).max():.3g})" for j in idx[:5])
        lead = "with scaling='none', feature(s)" if self.kind == "none" else f"{self.kind} scaling of feature(s)"
        return (f"{lead} {shown}{' ...' if idx.size > 5 else ''} {what}: rescale the column(s) to a moderate range "
                "(e.g. a log transform or other units), clip the outliers (np.clip), or drop the column(s)")

    def _scaled(self, X: np.ndarray) -> np.ndarray:
        assert self.shift_ is not None and self.scale_ is not None
        with np.errstate(over="ignore", invalid="ignore"):
            return (X - self.shift_) / self.scale_

    def transform(self, X: Any) -> np.ndarray:
        if self.shift_ is None or self.scale_ is None:
            raise DataError("the scaler has not been fitted")
        X = _as_features(X)
        if X.shape[1] != self.shift_.size:
            raise DataError(f"X has {X.shape[1]} features, the model was fitted on {self.shift_.size}")
        Xs = self._scaled(X)
        bad = ~np.isfinite(Xs)
        if bad.any():
            rows, cols = np.nonzero(bad)
            names = self.feature_names_ or _names(None, X.shape[1])
            raise DataError(f"{self.kind} scaling of X overflows at row {rows[0]}, feature {names[cols[0]]!r} "
                            f"(value {X[rows[0], cols[0]]:.3g}): clip or rescale that column as for training")
        return Xs

    def apply(self, data: Dataset) -> Dataset:
        return replace(data, X=self.transform(data.X))
