"""How well a fitted model classifies a dataset: what ``treeopt fit`` prints, the experiment runner stores and the
benchmarks compare."""

from __future__ import annotations

from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError
from treeopt_dsl.models.calibration import ECE_BINS, expected_calibration_error, log_loss

__all__ = ["calibration_metrics", "metrics", "positive_column", "rates"]


def positive_column(model: Any, data: Any) -> int:
    """The column of ``model.predict_proba`` that scores ``data``'s positive class (``data.classes[1]``, +1).

    The library's models order their columns as ``data.classes`` (column 1 is +1); a scikit-learn estimator
    orders them as its ``classes_``, the sorted labels, so when the positive label sorts first (sonar's ``M``
    before ``R``) its column is 0.

    >>> from types import SimpleNamespace
    >>> positive_column(SimpleNamespace(classes_=np.array(["M", "R"])), SimpleNamespace(classes=("R", "M")))
    0
    """
    classes = getattr(model, "classes_", None)
    if classes is None:
        return 1
    hits = np.flatnonzero(np.asarray([str(c) for c in classes]) == str(data.classes[1]))
    if hits.size != 1:
        raise DataError(f"the model's classes {list(classes)} do not hold the data's positive label "
                        f"{data.classes[1]!r} exactly once: cannot tell which probability column to score")
    return int(hits[0])


def roc_auc(positive: np.ndarray, score: np.ndarray) -> float:
    """The area under the ROC curve of ``score`` for the boolean ``positive``: the Mann-Whitney statistic, the
    chance that a random positive scores above a random negative, ties counted half (average ranks). NaN when one
    of the two classes is absent. Equal to scikit-learn's ``roc_auc_score`` (a hypothesis test checks it); ours
    because importing ``sklearn.metrics`` costs 0.5-3 s after the solve, inside the command's time limit.

    >>> roc_auc(np.array([False, True, False, True]), np.array([0.1, 0.4, 0.45, 0.8]))
    0.75
    """
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    _, inverse, counts = np.unique(np.asarray(score, dtype=float), return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    ranks = (ends - (counts - 1) / 2.0)[inverse.ravel()]  # 1-based average ranks
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def balanced_accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    """The mean recall over the classes present in ``y`` (scikit-learn's ``balanced_accuracy_score``).

    >>> balanced_accuracy(np.array([0, 0, 0, 1]), np.array([0, 0, 1, 1]))
    0.8333333333333333
    """
    y, pred = np.asarray(y), np.asarray(pred)
    classes, index = np.unique(y, return_inverse=True)
    hits = np.bincount(index, weights=(pred == y).astype(float), minlength=classes.size)
    return float(np.mean(hits / np.bincount(index, minlength=classes.size)))


def rates(y: np.ndarray, pred: np.ndarray, positive: np.ndarray) -> dict[str, float]:
    """Sensitivity and specificity: ``tpr``, the share of the positive rows (``positive``) predicted as their
    label, and ``tnr``, the same share of the other rows (NaN for a class with no row). Günlük et al. (seed 002)
    §4.6 guarantee one of them on the training rows and report both (their Table 14).

    >>> rates(np.array([1, 1, 1, 0]), np.array([1, 1, 0, 1]), np.array([True, True, True, False]))
    {'tpr': 0.6666666666666666, 'tnr': 0.0}
    """
    right = np.asarray(pred) == np.asarray(y)
    positive = np.asarray(positive, dtype=bool)
    return {name: float(np.mean(right[mask])) if mask.any() else float("nan")
            for name, mask in (("tpr", positive), ("tnr", ~positive))}


def metrics(model: Any, data: Any) -> dict[str, float]:
    """Accuracy, balanced accuracy, AUC and, on two classes, sensitivity and specificity (:func:`rates`) of
    ``model`` on ``data`` (raw features, ±1 labels).

    The AUC ranks by the probability of the data's positive class (:func:`positive_column`), whatever the order
    of the model's columns (no AUC for a model without ``predict_proba``); with more than two classes it is the
    mean of each class's AUC against the rest (scikit-learn's ``multi_class="ovr"``, macro average)."""
    y = data.labels_of(data.y)
    pred = model.predict(data.X)
    present = np.unique(data.class_index)
    out = {"accuracy": float(np.mean(pred == y)), "balanced_accuracy": balanced_accuracy(y, pred)}
    if data.n_classes == 2:
        out.update(rates(y, pred, np.asarray(data.y) > 0))
    if not hasattr(model, "predict_proba"):
        return out
    if present.size == 2 and data.n_classes == 2:
        column = positive_column(model, data)
        out["auc"] = roc_auc(np.asarray(data.y) > 0, model.predict_proba(data.X)[:, column])
    elif present.size == data.n_classes > 2:  # one versus rest, averaged over classes
        proba = model.predict_proba(data.X)
        index = np.asarray(data.class_index)
        out["auc"] = float(np.mean([roc_auc(index == k, proba[:, k]) for k in range(data.n_classes)]))
    return out


def calibration_metrics(model: Any, data: Any, bins: int = ECE_BINS) -> dict[str, float] | None:
    """The mean log-loss and the expected calibration error (``bins`` equal-mass bins,
    :mod:`treeopt_dsl.models.calibration`) of ``model``'s probability of ``data``'s positive class; ``None`` for a
    model without ``predict_proba`` or data that is not binary.

    >>> from types import SimpleNamespace
    >>> m = SimpleNamespace(predict_proba=lambda X: np.column_stack([1 - X[:, 0], X[:, 0]]))
    >>> d = SimpleNamespace(X=np.array([[0.2], [0.8]]), y=np.array([-1, 1]), n_classes=2, classes=(0, 1))
    >>> {k: round(v, 4) for k, v in calibration_metrics(m, d, bins=1).items()}
    {'log_loss': 0.2231, 'ece': 0.0, 'bins': 1}
    """
    if not hasattr(model, "predict_proba") or data.n_classes != 2:
        return None
    p = np.asarray(model.predict_proba(data.X), dtype=float)[:, positive_column(model, data)]
    pos = np.asarray(data.y) > 0
    return {"log_loss": log_loss(pos, p), "ece": expected_calibration_error(pos, p, bins), "bins": bins}
