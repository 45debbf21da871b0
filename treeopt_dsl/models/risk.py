"""Fitted risk scores (thesis §4.1, Figure 4.1): integer points per feature, a risk table."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..data import Scaler
from ..errors import DataError
from .tree import sigmoid


@dataclass
class RiskScoreModel:
    """``P(y = +1 | x) = sigmoid(s·x + beta)`` with integer points ``s`` on the *scaled* features.

    Features are scaled to [0, 1] as the thesis does (binary features are unchanged), so a binary
    feature that is present adds exactly its points to the total score.
    """

    s: np.ndarray  # integer points per feature
    beta: float
    feature_names: tuple[str, ...]
    classes: tuple[Any, Any]
    scaler: Scaler
    #: features whose rule is read negated: the points go to ``1 - x_j`` ("NOT feature")
    negated: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __post_init__(self) -> None:
        if self.negated.size != self.s.size:
            self.negated = np.zeros(self.s.size, dtype=bool)

    def _scaled(self, X: Any) -> np.ndarray:
        Xs = self.scaler.transform(X)
        if Xs.shape[1] != self.s.size:
            raise DataError(f"X has {Xs.shape[1]} features, the score was fitted on {self.s.size}")
        return Xs

    def total_score(self, X: Any, scaled: bool = False) -> np.ndarray:
        """The points a sample collects, ``s·x`` (without the intercept)."""
        Xs = np.asarray(X, dtype=float) if scaled else self._scaled(X)
        return np.where(self.negated, 1.0 - Xs, Xs) @ self.s

    def decision_function(self, X: Any, scaled: bool = False) -> np.ndarray:
        return self.total_score(X, scaled) + self.beta

    def predict_proba(self, X: Any, scaled: bool = False) -> np.ndarray:
        p = sigmoid(self.decision_function(X, scaled))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any, scaled: bool = False) -> np.ndarray:
        pos = self.decision_function(X, scaled) > 0
        return np.where(pos, self.classes[1], self.classes[0])

    @property
    def used(self) -> np.ndarray:
        return np.flatnonzero(self.s != 0)

    def score_card(self) -> list[tuple[str, int]]:
        """``(feature, points)`` for every feature with nonzero points, largest |points| first."""
        idx = self.used[np.argsort(-np.abs(self.s[self.used]), kind="stable")]
        return [(("NOT " if self.negated[j] else "") + self.feature_names[j], int(self.s[j])) for j in idx]

    def normal_form(self) -> RiskScoreModel:
        """The equivalent score with non-negative points only (Theorem 4.1, Corollary 4.1).

        A rule ``r_k`` with points ``s_k < 0`` is replaced by ``1 - r_k`` with points ``-s_k`` and the
        intercept becomes ``beta + s_k``: ``s_k r_k + beta = (-s_k)(1 - r_k) + (beta + s_k)`` for every
        input, so scores, probabilities and predictions are unchanged.
        """
        flip = self.s < 0
        return replace(self, s=np.abs(self.s), beta=float(self.beta + self.s[flip].sum()),
                       negated=self.negated ^ flip)

    def risk_table(self) -> list[tuple[int, float]]:
        """``(total score, predicted risk)`` for every integer total between the lowest and highest
        total a sample with features in [0, 1] can collect."""
        lo = int(np.minimum(self.s, 0).sum())  # features in [0, 1]: each rule adds between 0 and s_j
        hi = int(np.maximum(self.s, 0).sum())
        totals = np.arange(lo, hi + 1)
        return list(zip(totals.tolist(), sigmoid(totals + self.beta).tolist(), strict=True))

    def text(self) -> str:
        """The score card and risk table as in the thesis' Figure 4.1."""
        card = self.score_card()
        width = max([len(n) for n, _ in card] + [8])
        lines = [f"risk score: P({self.classes[1]}) = sigmoid(total + {self.beta:.4g})", ""]
        lines += [f"  {n:<{width}}  {p:+d} points" for n, p in card] or ["  (no feature used)"]
        lines += ["  " + "-" * (width + 12), "  total score  " + "  ".join(f"{t:>5d}" for t, _ in self.risk_table())]
        lines.append("  risk (%)     " + "  ".join(f"{100 * r:5.1f}" for _, r in self.risk_table()))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def decode_risk_score(ctx: Any, x: np.ndarray) -> RiskScoreModel:
    """Read ``s`` (rounded: the solver returns integers within its integrality tolerance) and ``beta``."""
    data = ctx.data
    s = np.rint(ctx["s"].values(x)).astype(int)
    beta = float(ctx["beta"].values(x))
    return RiskScoreModel(s, beta, data.feature_names, data.classes, data.meta.get("scaler") or Scaler("none"))
