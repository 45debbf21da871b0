"""The score card of a fitted risk score: what a clinician reads, scores by hand and files.

A :class:`ScoreCard` lists the conditions with points (``"age >= 60.5   +2"``), the intercept, the link
``P(target) = sigmoid((total + intercept) / m)`` (``m`` is FasterRisk's multiplier, 1 for the thesis' model) and
a table from every total score to its predicted risk and class. It prints itself (``str(card)``), exports
as JSON (:meth:`ScoreCard.to_json`) and CSV (:meth:`ScoreCard.to_csv`, written atomically) and draws itself
(:meth:`ScoreCard.plot`). A card is *hand-scorable* when its rows are 0/1 conditions in the data's units
(``ors`` with ``binarize="quantile"``): adding the points of the conditions that hold and reading the table
then gives exactly the model's ``predict`` and, to the printed precision, ``predict_proba``.

Example::

    >>> card = RiskScoreClassifier(T=3, binarize="quantile").fit(X_df, y).card()  # doctest: +SKIP
    >>> print(card)                                                             # doctest: +SKIP
    >>> card.to_csv("card.csv"); card.plot().savefig("card.png")                # doctest: +SKIP
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from treeopt_dsl.data import pick_labels
from treeopt_dsl.errors import ModelError
from treeopt_dsl.io import atomic_binary, check_writable, file_suffix
from treeopt_dsl.models.pictures import plot_score_card
from treeopt_dsl.numeric import jsonable, sigmoid

#: the file formats :meth:`ScoreCard.save` writes, by the file name's suffix
CARD_FORMATS = (".json", ".csv")
#: decimals of the printed risk (in percent): the precision a hand-scored risk matches ``predict_proba`` to
RISK_DECIMALS = 2
#: the CSV's columns (one row per condition, one for the intercept, one for the multiplier, one per total)
CSV_COLUMNS = ("section", "condition", "feature", "operator", "threshold", "points", "total", "risk", "predicted")


@dataclass(frozen=True)
class CardRow:
    """One row of a card: ``points`` for ``condition``.

    ``operator`` and ``threshold`` are set for a 0/1 condition in the data's units (``feature >= threshold``, or
    ``<`` for a rule read negated); ``None`` for a scaled feature, whose points multiply its scaled value.
    """

    condition: str
    points: int
    feature: str
    operator: str | None = None
    threshold: float | None = None


@dataclass(frozen=True)
class ScoreCard:
    """A risk score as a card: ``P(classes[1]) = sigmoid((total + intercept) / multiplier)`` where ``total`` is
    the sum of the points of the rows whose condition holds (see the module's docstring)."""

    rows: tuple[CardRow, ...]
    intercept: float
    classes: tuple[Any, Any]
    multiplier: float = 1.0
    #: whether every row is a 0/1 condition in the data's units (the card can be scored by hand)
    hand_scorable: bool = True
    #: a line printed under the intercept (how the rows read the features, when they are not conditions)
    note: str = ""

    @property
    def totals(self) -> np.ndarray:
        """Every integer total from the sum of the negative points to the sum of the positive ones."""
        pts = np.array([r.points for r in self.rows], dtype=np.int64)
        return np.arange(int(np.minimum(pts, 0).sum()), int(np.maximum(pts, 0).sum()) + 1)

    def risk(self, total: Any) -> np.ndarray:
        """``P(classes[1])`` of a total score: ``sigmoid((total + intercept) / multiplier)``."""
        return sigmoid((np.asarray(total, dtype=float) + self.intercept) / self.multiplier)

    def predicted(self, total: Any) -> np.ndarray:
        """The class of a total score: ``classes[1]`` when ``total + intercept > 0`` (the model's ``predict``)."""
        return pick_labels(self.classes, np.asarray(total, dtype=float) + self.intercept > 0)

    def risk_table(self) -> list[tuple[int, float]]:
        """``(total, P(classes[1]))`` for every total of :attr:`totals`."""
        t = self.totals
        return list(zip(t.tolist(), self.risk(t).tolist(), strict=True))

    def score_card(self) -> list[tuple[str, int]]:
        """``(condition, points)`` per row (what :func:`~treeopt_dsl.models.pictures.plot_score_card` draws)."""
        return [(r.condition, r.points) for r in self.rows]

    @property
    def link(self) -> str:
        z = "total + intercept" if self.multiplier == 1.0 else f"(total + intercept) / {self.multiplier:.4g}"
        return f"P({self.classes[1]}) = sigmoid({z}), sigmoid(z) = 1/(1 + exp(-z))"

    def text(self) -> str:
        """The card as text: a header with the link, ``condition  points`` rows, the intercept, then the table
        ``total score | risk (%) | predicted``."""
        conds = [r.condition for r in self.rows] or ["(no condition used)"]
        width = max([len(c) for c in conds] + [len("intercept"), len("condition")])
        lines = [f"risk score card: {self.link}",
                 "add the points of every condition that holds: that is the total score" if self.hand_scorable else
                 "points multiply the scaled features: not a card to score by hand (binarize='quantile' makes one)",
                 "", f"  {'condition':<{width}}  points"]
        lines += [f"  {r.condition:<{width}}  {r.points:+6d}" for r in self.rows] or [f"  {conds[0]}"]
        lines.append(f"  {'intercept':<{width}}  {self.intercept:.6g}")
        if self.multiplier != 1.0:
            lines.append(f"  {'multiplier':<{width}}  {self.multiplier:.6g}")
        if self.note:
            lines.append(f"  ({self.note})")
        t = self.totals
        risk = 100.0 * self.risk(t)
        pred = self.predicted(t)
        lines += ["", f"  {'total score':>11}  {'risk (%)':>8}  predicted"]
        lines += [f"  {int(a):>11d}  {r:8.{RISK_DECIMALS}f}  {p}" for a, r, p in zip(t, risk, pred, strict=True)]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def to_dict(self) -> dict[str, Any]:
        """The card as plain data (what :meth:`to_json` writes)."""
        t = self.totals
        return jsonable({
            "target": self.classes[1], "classes": list(self.classes), "link": self.link,
            "intercept": float(self.intercept), "multiplier": float(self.multiplier),
            "hand_scorable": self.hand_scorable,
            "conditions": [{"condition": r.condition, "feature": r.feature, "operator": r.operator,
                            "threshold": r.threshold, "points": r.points} for r in self.rows],
            "risk_table": [{"total": int(a), "risk": float(p), "predicted": c}
                           for a, p, c in zip(t, self.risk(t), self.predicted(t), strict=True)],
        })

    def to_json(self, path: str | Path | None = None, indent: int | None = 2) -> str:
        """The card as JSON text; with ``path``, also written there atomically (a temporary file moved onto
        ``path``: an interrupted write leaves an existing file unchanged)."""
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if path is not None:
            self._write(path, text)
        return text

    def to_csv(self, path: str | Path | None = None) -> str:
        """The card as CSV (columns :data:`CSV_COLUMNS`; ``section`` is ``condition``, ``intercept``,
        ``multiplier`` or ``risk``); with ``path``, also written there atomically. Returns the text."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        for r in self.rows:
            w.writerow(["condition", r.condition, r.feature, r.operator or "",
                        "" if r.threshold is None else repr(float(r.threshold)), r.points, "", "", ""])
        w.writerow(["intercept", "", "", "", "", repr(float(self.intercept)), "", "", ""])
        w.writerow(["multiplier", "", "", "", "", repr(float(self.multiplier)), "", "", ""])
        t = self.totals
        for a, p, c in zip(t, self.risk(t), self.predicted(t), strict=True):
            w.writerow(["risk", "", "", "", "", "", int(a), repr(float(p)), c])
        text = buf.getvalue()
        if path is not None:
            self._write(path, text)
        return text

    def save(self, path: str | Path) -> Path:
        """Write the card as JSON or CSV by the file name's suffix (``.json``, ``.csv``, either with ``.gz``)."""
        p = Path(path)
        fmt = card_format(p)
        if fmt == ".json":
            self.to_json(p)
        else:
            self.to_csv(p)
        return p

    @staticmethod
    def _write(path: str | Path, text: str) -> None:
        p = check_writable(path, "the score card")
        with atomic_binary(p) as fh:
            fh.write(text.encode("utf-8"))

    def plot(self, ax: Any = None) -> Any:
        """A matplotlib figure: the conditions and their points as a table beside the risk of every total
        (:func:`~treeopt_dsl.models.pictures.plot_score_card`). Returns the figure."""
        scale = "" if self.multiplier == 1.0 else f" / {self.multiplier:.4g}"
        return plot_score_card(self, ax=ax, title=f"P({self.classes[1]}) = sigmoid((total + {self.intercept:.4g})"
                                                  f"{scale}), total = sum of the points of the conditions that hold")


def card_format(path: str | Path) -> str:
    """``.json`` or ``.csv`` from a card file's name (a trailing ``.gz`` is allowed); a :class:`ModelError`
    naming the allowed suffixes otherwise."""
    fmt = file_suffix(path)
    if fmt not in CARD_FORMATS:
        raise ModelError(f"cannot tell the score card's file format from {str(path)!r}: use a name ending in .json "
                         "or .csv (optionally .gz)")
    return fmt
