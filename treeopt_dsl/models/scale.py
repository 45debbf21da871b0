"""The scale search that calibrates a risk score card after its integer points are fixed: FasterRisk's multiplier
``m`` (Liu et al., NeurIPS 2022) and the intercept, ``P(y = +1) = sigmoid((total + intercept) / m)``, minimizing the
true log-loss (:func:`fit_scale`).

A module of its own because it is the one user of ``scipy.optimize`` among the models (0.3 s to import): only the
risk-score family imports it, so the exact route of a tree and the metrics of the command line do not pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize

from treeopt_dsl.errors import DataError, ModelError
from treeopt_dsl.numeric import sigmoid

#: the multipliers the scale search may choose from: ``m`` in ``[1 / A_MAX, 1 / A_MIN]`` (``a = 1 / m``)
A_MIN, A_MAX = 1e-3, 1e3


@dataclass(frozen=True)
class ScaleFit:
    """The scale search's answer: the multiplier and intercept found, the summed true log-loss before (at the
    card's own multiplier and intercept) and after, and whether the search moved them (``improved``)."""

    multiplier: float
    intercept: float
    loss_before: float
    loss_after: float
    improved: bool

    def as_dict(self) -> dict[str, Any]:
        return {"multiplier": self.multiplier, "intercept": self.intercept, "loss_before": self.loss_before,
                "loss_after": self.loss_after, "improved": self.improved}


def scaled_loss(total: np.ndarray, y: np.ndarray, w: np.ndarray, multiplier: float, intercept: float) -> float:
    """``sum_i w_i log(1 + exp(-y_i (total_i + intercept) / multiplier))`` (``y`` in {-1, +1})."""
    return float(np.sum(w * np.logaddexp(0.0, -y * (total + intercept) / multiplier)))


def fit_scale(total: Any, y: Any, multiplier: float = 1.0, intercept: float = 0.0,
              sample_weight: Any = None) -> ScaleFit:
    """FasterRisk's multiplier and the intercept for **fixed** integer points: the ``(m, intercept)`` minimizing the
    true (summed, weighted) logistic loss ``sum_i w_i log(1 + exp(-y_i (total_i + intercept) / m))``.

    In ``a = 1 / m`` and ``c = intercept / m`` this is a logistic regression on the one feature ``total``: convex
    in ``(a, c)``, solved by L-BFGS-B with ``a`` in ``[A_MIN, A_MAX]`` from the card's own ``(1 / multiplier,
    intercept / multiplier)``. Samples are grouped by (total, label) first (a card has few totals), so the cost
    does not grow with the rows. The answer is never worse than the start: if the solver does not improve the
    loss, the card's own multiplier and intercept are returned (``improved=False``).

    ``total``: every sample's points (without the intercept); ``y``: labels, positive where ``y > 0``.

    >>> t = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 2]); y = np.array([-1, -1, 1, -1, 1, 1, 1, 1, 1, -1])
    >>> fit = fit_scale(t, y, 1.0, -0.5)
    >>> fit.loss_after <= fit.loss_before, fit.multiplier > 0
    (True, True)
    """
    t = np.asarray(total, dtype=float).ravel()
    ys = np.where(np.asarray(y).ravel() > 0, 1.0, -1.0)
    w = np.ones_like(t) if sample_weight is None else np.asarray(sample_weight, dtype=float).ravel()
    if not (t.shape == ys.shape == w.shape) or t.size == 0:
        raise DataError(f"total, y and sample_weight must have one entry per sample, got {t.size}, {ys.size}, "
                        f"{w.size}")
    if not (np.isfinite(multiplier) and multiplier > 0 and np.isfinite(intercept)):
        raise ModelError(f"the card's multiplier must be > 0 and its intercept finite, got {multiplier!r}, "
                         f"{intercept!r}")
    # group samples by (total, label): the loss depends on nothing else
    keys, inv = np.unique(np.column_stack([t, ys]), axis=0, return_inverse=True)
    gw = np.bincount(inv.ravel(), weights=w, minlength=keys.shape[0])
    gt, gy = keys[:, 0], keys[:, 1]

    def fun(z: np.ndarray) -> tuple[float, np.ndarray]:
        m = gy * (z[0] * gt + z[1])
        d = -gw * gy * sigmoid(-m)  # d/dv of w log(1 + exp(-y v)) at v = a t + c
        return float(np.sum(gw * np.logaddexp(0.0, -m))), np.array([np.dot(d, gt), d.sum()])

    before = scaled_loss(gt, gy, gw, multiplier, intercept)
    z0 = np.array([1.0 / multiplier, intercept / multiplier])
    z0[0] = min(max(z0[0], A_MIN), A_MAX)
    res = minimize(fun, z0, jac=True, method="L-BFGS-B", bounds=[(A_MIN, A_MAX), (None, None)],
                   options={"maxiter": 1000, "ftol": 1e-15, "gtol": 1e-10})
    a, c = float(res.x[0]), float(res.x[1])
    after = scaled_loss(gt, gy, gw, 1.0 / a, c / a)
    if not (np.isfinite(after) and after < before):
        return ScaleFit(float(multiplier), float(intercept), before, before, False)
    return ScaleFit(1.0 / a, c / a, before, after, True)
