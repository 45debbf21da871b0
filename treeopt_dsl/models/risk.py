"""Fitted risk scores (thesis §4.1, Figure 4.1): integer points per feature, a risk table."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from treeopt_dsl.data import Scaler, pick_labels
from treeopt_dsl.errors import DataError, OptionError
from treeopt_dsl.models.calibration import ECE_BINS, expected_calibration_error, log_loss, plot_reliability
from treeopt_dsl.models.card import CardRow, ScoreCard
from treeopt_dsl.models.pictures import plot_score_card
from treeopt_dsl.models.scale import ScaleFit, fit_scale
from treeopt_dsl.numeric import cut_text, sigmoid


def risk_table(s: np.ndarray, beta: float, multiplier: float = 1.0) -> list[tuple[int, float]]:
    """``(total, sigmoid((total + beta) / m))`` for every integer total from the sum of the negative points to
    the sum of the positive ones (each rule or [0, 1] feature adds between 0 and its points); ``m`` is
    FasterRisk's multiplier (1: the thesis)."""
    totals = np.arange(int(np.minimum(s, 0).sum()), int(np.maximum(s, 0).sum()) + 1)
    return list(zip(totals.tolist(), sigmoid((totals + beta) / multiplier).tolist(), strict=True))


@dataclass
class RiskScoreModel:
    """``P(y = +1 | x) = sigmoid((s·x + beta) / m)`` with integer points ``s`` on the *scaled* features.

    Features are scaled to [0, 1] as the thesis does (binary features are unchanged), so a binary
    feature that is present adds exactly its points to the total score. ``multiplier`` is FasterRisk's
    scale ``m`` (Liu et al., NeurIPS 2022; ``ors`` ``multiplier=``); ``m = 1`` is the thesis' model.
    ``decision_function`` is the total plus ``beta`` (its sign is the prediction whatever ``m``).
    """

    s: np.ndarray  # integer points per feature
    beta: float
    feature_names: tuple[str, ...]
    classes: tuple[Any, Any]
    scaler: Scaler
    #: features whose rule is read negated: the points go to ``1 - x_j`` ("NOT feature")
    negated: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    #: FasterRisk's multiplier ``m``: probabilities are ``sigmoid((s·x + beta) / m)``
    multiplier: float = 1.0

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
        p = sigmoid(self.decision_function(X, scaled) / self.multiplier)
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any, scaled: bool = False) -> np.ndarray:
        pos = self.decision_function(X, scaled) > 0
        return pick_labels(self.classes, pos)

    @property
    def used(self) -> np.ndarray:
        return np.flatnonzero(self.s != 0)

    def score_card(self) -> list[tuple[str, int]]:
        """``(feature, points)`` for every feature with nonzero points, largest |points| first."""
        idx = self.used[np.argsort(-np.abs(self.s[self.used]), kind="stable")]
        return [(("NOT " if self.negated[j] else "") + self.feature_names[j], int(self.s[j])) for j in idx]

    def scaled(self, X: Any, y: Any, sample_weight: Any = None, scaled: bool = False
               ) -> tuple[RiskScoreModel, ScaleFit]:
        """The same points with the multiplier ``m`` and the intercept searched (FasterRisk's scale, Liu et al.
        2022): :func:`~treeopt_dsl.models.scale.fit_scale` minimizes the true (summed, weighted) log-loss
        ``sum_i w_i log(1 + exp(-y_i (total_i + intercept) / m))`` on ``(X, y)`` over ``(1/m, intercept/m)``, a
        convex problem, with the integer points fixed. Never worse than this card on ``(X, y)``; returns the
        scaled card and the search's record.

        Example::

            >>> card2, fit = model.scaled(X_train, y_train)   # doctest: +SKIP
            >>> fit.loss_after <= fit.loss_before             # doctest: +SKIP
            True
        """
        fit = fit_scale(self.total_score(X, scaled), self._positive(y), self.multiplier, self.beta, sample_weight)
        return replace(self, beta=fit.intercept, multiplier=fit.multiplier), fit

    def calibration(self, X: Any, y: Any, bins: int = ECE_BINS, scaled: bool = False) -> dict[str, float]:
        """Calibration on ``(X, y)``: the mean log-loss and the expected calibration error over ``bins``
        equal-mass bins (:mod:`treeopt_dsl.models.calibration`). ``y``: ±1 or the class labels."""
        p, pos = self.predict_proba(X, scaled)[:, 1], self._positive(y)
        return {"log_loss": log_loss(pos, p), "ece": expected_calibration_error(pos, p, bins), "bins": bins}

    def plot_reliability(self, X: Any, y: Any, bins: int = ECE_BINS, ax: Any = None, scaled: bool = False) -> Any:
        """The reliability diagram on ``(X, y)`` (:func:`~treeopt_dsl.models.calibration.plot_reliability`):
        observed frequency against predicted risk per equal-mass bin, with the ECE. Returns the figure.

        Example::

            >>> model.plot_reliability(X_test, y_test).savefig("reliability.png")  # doctest: +SKIP
        """
        return plot_reliability({"data": (self._positive(y), self.predict_proba(X, scaled)[:, 1])}, bins, ax)

    def _positive(self, y: Any) -> np.ndarray:
        """``y > 0`` for ±1 labels, else ``y == classes[1]``."""
        yy = np.asarray(y)
        if yy.dtype.kind in "iuf" and set(np.unique(yy).tolist()) <= {-1, 1}:
            return yy > 0
        return np.asarray([str(v) == str(self.classes[1]) for v in yy.tolist()])

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
        return risk_table(self.s, self.beta, self.multiplier)

    def card(self) -> ScoreCard:
        """The score card (:class:`~treeopt_dsl.models.card.ScoreCard`): a row per feature or condition with
        points, in column order (a feature's conditions together, by threshold), the intercept and the table from
        total score to risk. With threshold columns (``ors`` ``binarize="quantile"``) every row is a condition in
        the data's units (``"age >= 60.5"``) and the card can be scored by hand; otherwise a row is a scaled
        feature (``"chol as (x - 126)/438"``)."""
        sc = self.scaler
        cuts = getattr(sc, "kind", None) == "thresholds"
        rows = []
        for j in self.used.tolist():
            neg, p = bool(self.negated[j]), int(self.s[j])
            if cuts:
                feature, text = sc.feature_names[sc.feature[j]], sc.texts[j]
                op = "<" if neg else ">="
                rows.append(CardRow(f"{feature} {op} {text}", p, feature, op, float(sc.threshold[j])))
                continue
            shift = 0.0 if sc.shift_ is None else float(sc.shift_[j])
            scale = 1.0 if sc.scale_ is None else float(sc.scale_[j])
            name = self.feature_names[j]
            shown = name if (shift, scale) == (0.0, 1.0) else f"{name} as (x - {shift:.6g})/{scale:.6g}"
            rows.append(CardRow(("NOT " if neg else "") + shown, p, name))
        note = "" if cuts else "a row's points multiply its scaled feature; NOT x is 1 - x"
        return ScoreCard(tuple(rows), float(self.beta), tuple(self.classes), float(self.multiplier),
                         hand_scorable=cuts, note=note if any(r.operator is None for r in rows) else "")

    def text(self) -> str:
        """The score card as text (:meth:`card`): conditions and points, the intercept, total score to risk."""
        return self.card().text()

    def __str__(self) -> str:
        return self.text()

    def plot(self, ax: Any = None) -> Any:
        """The score card as a figure: points per rule beside the risk of every total
        (:func:`treeopt_dsl.models.pictures.plot_score_card`). Returns the figure.

        Example::

            >>> model.plot().savefig("card.png")  # doctest: +SKIP
        """
        return plot_score_card(self, ax=ax)


@dataclass
class GeneralizedRiskScoreModel:
    """``P(y = +1 | x) = sigmoid(sum_t s_t r_t(x) + beta)`` with threshold rules ``r_t(x) = 1{x_j >= b_t}``
    (or ``1{x_j < b_t}`` where ``negated``), thesis (4.7) and Figure 4.1.

    ``thresholds`` are in scaled units (features scaled to [0, 1]): a rule holds when ``x_j >= b_t - eps/2``, the
    middle of the gap (4.11) that no training value lies in. ``cuts`` are the same rules in the data's own units,
    each the shortest number (6 significant digits or more) between the training values on either side, and
    ``cut_texts`` print them: on raw inputs the model reads its rules from them (``rules_hold(X)``), so the card
    (:meth:`card`) a person scores by hand gives exactly :meth:`predict` on any input, and on the training data
    the same rules as the solver's thresholds.
    """

    features: np.ndarray  # feature index of each rule
    thresholds: np.ndarray  # b_t - eps/2, scaled units
    s: np.ndarray  # integer points per rule
    beta: float
    feature_names: tuple[str, ...]
    classes: tuple[Any, Any]
    scaler: Scaler
    negated: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    #: the thresholds in the data's units, as printed (empty: ``original_thresholds()``, read in scaled units)
    cuts: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cut_texts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.negated.size != self.s.size:
            self.negated = np.zeros(self.s.size, dtype=bool)

    def rules_hold(self, X: Any, scaled: bool = False) -> np.ndarray:
        """``r_t(x_i)`` for every sample and rule (0/1): raw ``X`` against :attr:`cuts` (the printed thresholds),
        scaled ``X`` against :attr:`thresholds` (the solver's)."""
        if scaled or self.cuts.size != self.s.size:
            Xs = np.asarray(X, dtype=float) if scaled else self.scaler.transform(X)
            hold = Xs[:, self.features] >= self.thresholds[None, :]
        else:
            Xr = np.asarray(X, dtype=float)
            if Xr.ndim != 2 or Xr.shape[1] != len(self.feature_names):
                raise DataError(f"X must be a 2-D array with {len(self.feature_names)} features (the score was fitted "
                                f"on them), got shape {Xr.shape}")
            hold = Xr[:, self.features] >= self.cuts[None, :]
        return np.where(self.negated, ~hold, hold).astype(float)

    def decision_function(self, X: Any, scaled: bool = False) -> np.ndarray:
        return self.rules_hold(X, scaled) @ self.s + self.beta

    def predict_proba(self, X: Any, scaled: bool = False) -> np.ndarray:
        p = sigmoid(self.decision_function(X, scaled))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any, scaled: bool = False) -> np.ndarray:
        return pick_labels(self.classes, self.decision_function(X, scaled) > 0)

    def original_thresholds(self) -> np.ndarray:
        """The thresholds in the features' original units."""
        shift = self.scaler.shift_[self.features] if self.scaler.shift_ is not None else 0.0
        scale = self.scaler.scale_[self.features] if self.scaler.scale_ is not None else 1.0
        return self.thresholds * scale + shift

    def score_card(self) -> list[tuple[str, int]]:
        """``(rule, points)`` with the rule in original units, e.g. ``("age >= 52.5", 3)``."""
        return self.card().score_card()

    def card(self) -> ScoreCard:
        """The score card (:class:`~treeopt_dsl.models.card.ScoreCard`), as ``ors``' with ``binarize="quantile"``:
        a row ``"feature >= t"`` (``<`` for a rule read negated) with its points per rule, in the data's units, the
        intercept and the table from total score to risk; scored by hand it gives exactly :meth:`predict`."""
        if self.cuts.size == self.s.size:
            thr, texts = self.cuts, self.cut_texts
        else:
            thr = self.original_thresholds()
            texts = tuple(f"{t:.6g}" for t in thr)
        rows = []
        for j, t, text, p, neg in zip(self.features.tolist(), thr.tolist(), texts, self.s.tolist(),
                                      self.negated.tolist(), strict=True):
            op = "<" if neg else ">="
            rows.append(CardRow(f"{self.feature_names[j]} {op} {text}", int(p), self.feature_names[j], op, float(t)))
        return ScoreCard(tuple(rows), float(self.beta), tuple(self.classes), 1.0,
                         hand_scorable=self.cuts.size == self.s.size)

    def normal_form(self, kind: str = "non_negative") -> GeneralizedRiskScoreModel:
        """An equivalent score (Theorem 4.1): ``"non_negative"`` points only (Corollary 4.1), or
        ``"one_direction"``: every rule read as ``x_j >= b`` (Corollary 4.2). Replacing ``r_k`` by
        ``1 - r_k`` and ``s_k`` by ``-s_k`` with ``beta + s_k`` leaves every score unchanged."""
        if kind == "non_negative":
            flip = self.s < 0
        elif kind == "one_direction":
            flip = self.negated.copy()
        else:
            raise OptionError(f"kind must be 'non_negative' or 'one_direction', got {kind!r}")
        s = np.where(flip, -self.s, self.s)
        return replace(self, s=s, beta=float(self.beta + self.s[flip].sum()), negated=self.negated ^ flip)

    def risk_table(self) -> list[tuple[int, float]]:
        """``(total score, predicted risk)`` for every total the rules can add up to."""
        return risk_table(self.s, self.beta)

    def text(self) -> str:
        """The score card as text (:meth:`card`): rules in the data's units, points, intercept, total to risk."""
        return "generalized risk score (threshold rules learned with their points)\n" + self.card().text()

    def __str__(self) -> str:
        return self.text()

    def plot(self, ax: Any = None) -> Any:
        """The score card as a figure: points per rule beside the risk of every total
        (:func:`treeopt_dsl.models.pictures.plot_score_card`). Returns the figure.

        Example::

            >>> model.plot().savefig("card.png")  # doctest: +SKIP
        """
        return plot_score_card(self, ax=ax)


def rule_cuts(Xs: np.ndarray, features: np.ndarray, thresholds: np.ndarray, scaler: Scaler
              ) -> tuple[np.ndarray, tuple[str, ...]]:
    """Each rule ``x_j >= threshold`` (scaled units) as a threshold in the data's units: the shortest text between
    the training values on either side (:func:`~treeopt_dsl.numeric.cut_text`), so that the rule keeps every
    training value ``Xs`` (scaled) on its side.

    >>> sc = Scaler("minmax").fit(np.array([[20.0], [40.0], [60.0]]))
    >>> rule_cuts(sc.transform(np.array([[20.0], [40.0], [60.0]])), np.array([0]), np.array([0.6]), sc)
    (array([50.]), ('50',))
    """
    shift = np.zeros(Xs.shape[1]) if scaler.shift_ is None else np.asarray(scaler.shift_, dtype=float)
    scale = np.ones(Xs.shape[1]) if scaler.scale_ is None else np.asarray(scaler.scale_, dtype=float)
    texts = []
    for j, t in zip(features.tolist(), thresholds.tolist(), strict=True):
        col = Xs[:, j]
        below, above = col[col < t], col[col >= t]
        lo = float(below.max()) * scale[j] + shift[j] if below.size else -np.inf
        up = float(above.min()) * scale[j] + shift[j] if above.size else np.inf
        mid = t * scale[j] + shift[j] if not (np.isfinite(lo) and np.isfinite(up)) else 0.5 * (lo + up)
        texts.append(cut_text(mid, lo, up, at_least=True))
    return np.array([float(v) for v in texts]), tuple(texts)


def decode_generalized_risk_score(ctx: Any, x: np.ndarray) -> GeneralizedRiskScoreModel:
    """Rules from ``a`` (the selected feature of each rule), ``b``, the rounded points ``s`` and ``beta``; each
    rule's threshold also in the data's units (:func:`rule_cuts`, from the training data)."""
    data = ctx.data
    a = ctx["a_rule"].values(x)
    eps = ctx.numerics.eps
    features, thresholds = np.argmax(a, axis=0), ctx["b_rule"].values(x) - eps / 2
    scaler = data.meta.get("scaler") or Scaler("none")
    cuts, texts = rule_cuts(np.asarray(data.X, dtype=float), features, thresholds, scaler)
    return GeneralizedRiskScoreModel(
        features=features, thresholds=thresholds,
        s=np.rint(ctx["s_rule"].values(x)).astype(int), beta=float(ctx["beta"].values(x)),
        feature_names=data.feature_names, classes=data.classes, scaler=scaler, cuts=cuts, cut_texts=texts)


def decode_risk_score(ctx: Any, x: np.ndarray) -> RiskScoreModel:
    """Read ``s`` (rounded: the solver returns integers within its integrality tolerance) and ``beta``; the
    multiplier ``m`` is the loss block's (``ors`` ``multiplier=``, 1 for a loss without one)."""
    data = ctx.data
    s = np.rint(ctx["s"].values(x)).astype(int)
    beta = float(ctx["beta"].values(x))
    m = float(getattr(ctx.roles.get("loss"), "multiplier", 1.0))
    return RiskScoreModel(s, beta, data.feature_names, data.classes, data.meta.get("scaler") or Scaler("none"),
                          multiplier=m)
