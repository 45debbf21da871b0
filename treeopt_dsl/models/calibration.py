"""Calibration: how far predicted probabilities are from the frequencies they claim (the scale search that
calibrates a risk score card after its integer points are fixed is :mod:`treeopt_dsl.models.scale`).

* :func:`expected_calibration_error` (ECE) and :func:`reliability_curve` over **equal-mass bins** (each bin holds
  about the same weight of samples, :data:`ECE_BINS` bins unless told; samples with equal probabilities always
  share a bin, so a card's few distinct risks are never split);
* :func:`plot_reliability`: the reliability diagram (matplotlib).

Example::

    >>> y = np.array([0, 0, 1, 1]); p = np.array([0.1, 0.3, 0.6, 0.9])
    >>> round(expected_calibration_error(y, p, bins=2), 6)   # bins {0.1, 0.3} and {0.6, 0.9}: |0 - 0.2|, |1 - 0.75|
    0.225
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError
from treeopt_dsl.models.pictures import pyplot

#: the default number of equal-mass bins of the expected calibration error and the reliability diagram
ECE_BINS = 10


def _inputs(y: Any, p: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``y`` as 0/1 (positive: ``y > 0``, so ±1 and 0/1 labels both work), ``p`` as floats, weights (1 if None)."""
    yy = (np.asarray(y) > 0).astype(float).ravel()
    pp = np.asarray(p, dtype=float).ravel()
    if yy.shape != pp.shape:
        raise DataError(f"y and p must have the same length, got {yy.size} labels and {pp.size} probabilities")
    if pp.size == 0:
        raise DataError("y and p are empty: calibration needs at least one sample")
    if not np.all(np.isfinite(pp)) or pp.min() < 0.0 or pp.max() > 1.0:
        raise DataError("p must hold probabilities in [0, 1] (finite)")
    w = np.ones_like(pp) if sample_weight is None else np.asarray(sample_weight, dtype=float).ravel()
    if w.shape != pp.shape or not np.all(np.isfinite(w)) or w.min() < 0 or w.sum() <= 0:
        raise DataError(f"sample_weight must hold {pp.size} finite non-negative weights with a positive sum")
    return yy, pp, w


def _check_bins(bins: int) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise DataError(f"bins must be an integer >= 1 (equal-mass bins), got {bins!r}")
    return int(bins)


def equal_mass_bins(p: np.ndarray, bins: int = ECE_BINS, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """The bin (0 .. ``bins - 1``) of every probability: samples sorted by ``p``, each placed by the weight of the
    samples before the first sample with its probability (``floor(bins * before / total)``), so bins hold about
    ``total / bins`` of weight each and equal probabilities share a bin (a bin may then be larger, another empty).

    >>> equal_mass_bins(np.array([0.9, 0.1, 0.2, 0.8]), bins=2).tolist()
    [1, 0, 0, 1]
    >>> equal_mass_bins(np.array([0.1, 0.5, 0.5, 0.5]), bins=2).tolist()   # the three 0.5 stay together
    [0, 0, 0, 0]
    """
    p = np.asarray(p, dtype=float).ravel()
    w = np.ones_like(p) if sample_weight is None else np.asarray(sample_weight, dtype=float).ravel()
    bins = _check_bins(bins)
    order = np.argsort(p, kind="stable")
    ps, ws = p[order], w[order]
    before = np.cumsum(ws) - ws
    first = np.searchsorted(ps, ps, side="left")  # the first sorted sample with the same probability
    b = np.minimum((bins * before[first] / ws.sum()).astype(np.int64), bins - 1)
    out = np.empty_like(b)
    out[order] = b
    return out


@dataclass(frozen=True)
class ReliabilityCurve:
    """Per non-empty equal-mass bin: the mean predicted probability, the observed frequency of the positive class
    and the bin's share of the weight (what :func:`expected_calibration_error` sums)."""

    predicted: np.ndarray
    observed: np.ndarray
    mass: np.ndarray

    @property
    def ece(self) -> float:
        """``sum_b mass_b |observed_b - predicted_b|``."""
        return float(np.sum(self.mass * np.abs(self.observed - self.predicted)))


def reliability_curve(y: Any, p: Any, bins: int = ECE_BINS, sample_weight: Any = None) -> ReliabilityCurve:
    """The reliability diagram's points over :func:`equal_mass_bins` (``y``: labels, positive where ``y > 0``;
    ``p``: the predicted probability of the positive class)."""
    yy, pp, w = _inputs(y, p, sample_weight)
    b = equal_mass_bins(pp, bins, w)
    k = _check_bins(bins)
    W = np.bincount(b, weights=w, minlength=k)
    keep = W > 0
    Wk = W[keep]
    return ReliabilityCurve(np.bincount(b, weights=w * pp, minlength=k)[keep] / Wk,
                            np.bincount(b, weights=w * yy, minlength=k)[keep] / Wk, Wk / w.sum())


def expected_calibration_error(y: Any, p: Any, bins: int = ECE_BINS, sample_weight: Any = None) -> float:
    """The expected calibration error over ``bins`` equal-mass bins (:func:`equal_mass_bins`):
    ``sum_b (W_b / W) |mean_b(y) - mean_b(p)|`` with weighted means, ``W_b`` a bin's weight.

    ``y``: labels (positive where ``y > 0``: ±1 or 0/1); ``p``: the predicted probability of the positive class.

    >>> round(expected_calibration_error([1, -1, 1, 1], [0.5, 0.5, 0.5, 0.5], bins=4), 6)  # one bin: |0.75 - 0.5|
    0.25
    """
    return reliability_curve(y, p, bins, sample_weight).ece


def log_loss(y: Any, p: Any, sample_weight: Any = None, eps: float = 1e-15) -> float:
    """The mean log-loss ``-sum_i w_i log(p_i if y_i > 0 else 1 - p_i) / sum_i w_i``, probabilities clipped to
    ``[eps, 1 - eps]`` (a 0/1 prediction that is wrong costs ``-log(eps)``, not infinity).

    >>> round(log_loss([1, -1], [0.8, 0.4]), 6)   # -(log 0.8 + log 0.6) / 2
    0.366985
    """
    yy, pp, w = _inputs(y, p, sample_weight)
    pp = np.clip(pp, eps, 1.0 - eps)
    return float(-np.sum(w * np.where(yy > 0, np.log(pp), np.log1p(-pp))) / w.sum())


def plot_reliability(curves: dict[str, tuple[Any, Any]], bins: int = ECE_BINS, ax: Any = None,
                     title: str | None = None) -> Any:
    """A reliability diagram: for each ``label -> (y, p)`` the observed frequency of the positive class against
    the mean predicted probability per equal-mass bin (marker size: the bin's mass), the diagonal of perfect
    calibration, and the ECE in the legend. Returns the figure.

    Example::

        >>> plot_reliability({"train": (y, p)}).savefig("reliability.png")  # doctest: +SKIP
    """
    plt = pyplot()  # matplotlib: an optional dependency, imported when drawing
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.0, 5.0))
    else:
        fig = ax.figure
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfectly calibrated")
    for label, (y, p) in curves.items():
        c = reliability_curve(y, p, bins)
        (ln,) = ax.plot(c.predicted, c.observed, marker="o", linewidth=1.2,
                        label=f"{label} (ECE {c.ece:.4f}, {bins} equal-mass bins)")
        ax.scatter(c.predicted, c.observed, s=20 + 400 * c.mass, alpha=0.3, color=ln.get_color())
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("mean predicted probability (bin)")
    ax.set_ylabel("observed frequency of the positive class (bin)")
    ax.set_title(title or "reliability diagram")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig
