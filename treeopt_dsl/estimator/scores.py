"""Risk scores: :class:`RiskScoreClassifier` (``ors``, ``ogrs``)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from treeopt_dsl.blocks import OUTER_TOL
from treeopt_dsl.defaults import ESTIMATOR_TIME_LIMIT, SOLVER
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.estimator.base import SolvedClassifier
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.formulations.risk import MAX_CUTS
from treeopt_dsl.models.calibration import ECE_BINS, expected_calibration_error, log_loss, plot_reliability
from treeopt_dsl.models.card import ScoreCard
from treeopt_dsl.numeric import finite_real


class RiskScoreClassifier(SolvedClassifier):
    """Optimal risk scores: ``P(classes_[1] | x) = sigmoid(total points + beta)`` with integer points.

    Parameters
    ----------
    formulation : {"ors", "ogrs"}, default="ors"
        ``ors`` (thesis (4.5)): points on (binary or [0, 1]-scaled) features; ``ogrs`` (4.16): ``T``
        threshold rules ``x_j >= b_t`` learned with their points.
    T : int, default=3
        Number of features with points (4.2) / of rules (4.8), from 1 to the number of features (a larger
        ``T`` raises a ``FormulationError`` at ``fit``). ``cardinality="at_most"`` makes the ``ors`` count
        an upper bound (then any ``T >= 1`` is allowed).
    A : str, default="-5..5"
        Admissible points (a range ``lo..hi`` or a list ``"-3,-1,0,1,3"``; must contain 0).
    tangents : str, default="V3"
        Tangent set of the logistic loss (4.4); V3 in the thesis' experiments.
    C : float, default=1.0
        Weight of the loss.
    scaling : {"minmax", "standard", "none"}, default="minmax"
        Features are scaled to [0, 1] as in the thesis; binary features keep their 0/1 meaning.
    binarize : {"none", "quantile", "stump"}, default="none"
        ``ors`` only. ``"none"``: points on the scaled features (the thesis). ``"quantile"``: points on 0/1
        conditions ``feature >= t`` in the data's own units, at most ``max_cuts`` cuts per continuous feature at
        its training quantiles (a binary feature stays one condition): a card a clinician scores by hand
        (:meth:`card`). ``"stump"``: one such condition per feature, at the cut of its log-loss decision stump
        (the thesis' binarization before LCPA, Fig. 4.5). ``T`` then counts conditions, from 1 to their number.
    max_cuts : int, default=3
        ``binarize="quantile"``: the most cuts per continuous feature (3: the quartiles).
    multiplier : float or "auto", default=1.0
        ``ors`` only: the scale factor ``m`` of FasterRisk (Liu et al. 2022), ``P = sigmoid((points + beta) / m)``;
        the loss is fitted on that scale, so ``m > 1`` allows larger integer points for the same probabilities.
        ``"auto"``: ``m`` is chosen with the start's card (FasterRisk's star-ray search over the beam's cards, each
        at its own best multiplier) and the card is then proven at that ``m``; ``result_.multiplier_search``
        records it.
    scale : {"fixed", "search"}, default="fixed"
        ``ors`` only. ``"search"``: after the card is solved, its multiplier and intercept are searched for the fixed
        points, minimizing the true log-loss on the training data (FasterRisk's scale; convex in ``(1/m, beta/m)``):
        a calibration step after the proof, never worse in the log-loss; ``result_.scale_search`` records it and
        what stays proven (the points, optimal at ``multiplier``).
    loss : {"true", "tangent"} or None, default=None
        ``ors`` only: the loss the card is proven optimal in. ``"true"`` (what ``None`` means for ``ors``): the
        logistic loss itself, the log-loss of :meth:`predict_proba` on the training data, to the relative gap
        ``loss_tol`` (RiskSLIM's lattice cutting planes by default, ``proof="lcpa"``; ``"outer"``: tangents added at
        the card's margins until the MILP's bound meets it; ``result_.outer_approximation`` reports the cuts or
        iterations, bound and gap). ``"tangent"``: the tangent
        surrogate (4.4), the thesis' model (``ogrs`` always).
    loss_tol : float, default=1e-4
        ``loss="true"``: the relative gap ``(UB - LB) / max(1, |UB|)`` proven.
    proof : {"lcpa", "samples", "outer"}, default="lcpa"
        ``ors`` with ``loss="true"``: how the true loss is proven: ``"lcpa"`` (RiskSLIM's lattice cutting planes, one
        column for the whole loss, cuts through the solver's lazy-constraint callback: Gurobi, SCIP; HiGHS
        re-solves), ``"samples"`` (the same cuts with a column per sample) or ``"outer"`` (a tangent row per
        sample, the MILP re-solved).
    solver, backend, time_limit, gap, threads, random_state, verbose, class_weight, keep_model
        As for :class:`OptimalTreeClassifier`. The solve starts from a beam-search score card
        (``result_.start``) and is never worse than it.

    Attributes
    ----------
    model_ : RiskScoreModel
        The score card (``model_.score_card()``, ``model_.risk_table()``, ``model_.normal_form()``);
        :meth:`card` gives it as a :class:`~treeopt_dsl.models.card.ScoreCard` to print, export or plot.
    feature_names_in_ : ndarray of str
        The column names of a DataFrame given to ``fit`` (the card's feature names); absent for arrays.
    result_, certificate_, classes_, n_features_in_
        As for :class:`OptimalTreeClassifier`.

    Notes
    -----
    Two classes only: more raise a ``ValueError`` naming the alternatives (one card per question ``y == label``, or
    :class:`sklearn.multiclass.OneVsRestClassifier` around this estimator); a one-vs-rest bundle would print ``K``
    cards none of which gives the probabilities ``predict_proba`` returns (docs/multiclass.md).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 5, dtype=float); y = X[:, 0].astype(int)
    >>> RiskScoreClassifier(T=1, time_limit=30).fit(X, y).predict([[1, 0], [0, 1]]).tolist()
    [1, 0]

    A card to score by hand, in the data's units (a DataFrame's column names are the card's)::

        >>> clf = RiskScoreClassifier(T=3, binarize="quantile", max_cuts=3).fit(df, y)  # doctest: +SKIP
        >>> print(clf.card())                     # conditions, points, intercept, total -> risk  # doctest: +SKIP
        >>> clf.card().to_csv("card.csv")         # also to_json(), plot()  # doctest: +SKIP
    """

    _binary_hint = ("a risk score is one card whose total reads as one risk (docs/multiclass.md): fit one card per "
                    "question, RiskScoreClassifier().fit(X, y == label), or ask for K cards explicitly with "
                    "sklearn.multiclass.OneVsRestClassifier(RiskScoreClassifier()); for one model of every class "
                    "use OptimalTreeClassifier(formulation='oct') or RandomizedTreeClassifier")

    def __init__(self, formulation: str = "ors", T: int = 3, A: str = "-5..5", cardinality: str = "exact",
                 tangents: Any = "V3", C: float = 1.0, scaling: str = "minmax", binarize: str = "none",
                 max_cuts: int = MAX_CUTS, multiplier: float | str = 1.0, scale: str = "fixed", loss: str | None = None,
                 loss_tol: float = OUTER_TOL, proof: str = "lcpa",
                 solver: str = SOLVER, backend: str | None = None, time_limit: float | None = ESTIMATOR_TIME_LIMIT,
                 gap: float | None = None, threads: int | None = None, random_state: Any = None,
                 verbose: bool = False, class_weight: Any = None,
                 keep_model: bool = False) -> None:
        self.formulation = formulation
        self.T = T
        self.A = A
        self.cardinality = cardinality
        self.tangents = tangents
        self.C = C
        self.scaling = scaling
        self.binarize = binarize
        self.max_cuts = max_cuts
        self.multiplier = multiplier
        self.scale = scale
        self.loss = loss
        self.loss_tol = loss_tol
        self.proof = proof
        self.solver = solver
        self.backend = backend
        self.time_limit = time_limit
        self.gap = gap
        self.threads = threads
        self.random_state = random_state
        self.verbose = verbose
        self.class_weight = class_weight
        self.keep_model = keep_model

    def _spec(self) -> Any:
        if not isinstance(self.T, numbers.Integral) or isinstance(self.T, bool) or self.T < 1:
            raise FormulationError(f"T must be a positive integer, got {self.T!r}")
        if self.formulation not in ("ors", "ogrs"):
            raise FormulationError(f"formulation must be 'ors' or 'ogrs', got {self.formulation!r}")
        if not finite_real(self.C):
            raise FormulationError(f"C must be a finite number, got {self.C!r}")
        if self.binarize != "none" and self.formulation != "ors":
            raise FormulationError(f"binarize={self.binarize!r} applies to formulation='ors' only (ogrs learns its "
                                   "thresholds); use binarize='none'")
        p = getattr(self, "n_features_in_", None)
        at_most = self.formulation == "ors" and self.cardinality == "at_most"
        # (4.2) / (4.9): at most one per feature (binarized: per condition, checked on the columns when fitting)
        if p is not None and self.T > p and not at_most and self.binarize == "none":
            raise FormulationError(f"T={self.T} exceeds the number of features (n_features={p}): T must be from 1 "
                                   f"to {p}" + (" (or cardinality='at_most' makes T an upper bound)"
                                                if self.formulation == "ors" else ""))
        common = dict(A=str(self.A), tangents=self.tangents, C=float(self.C), scaling=self.scaling)
        auto = isinstance(self.multiplier, str) and self.multiplier == "auto"
        if not auto and (not finite_real(self.multiplier) or float(self.multiplier) <= 0):
            raise FormulationError(f"multiplier must be a finite number > 0 or 'auto', got {self.multiplier!r}")
        if self.formulation == "ors":
            return get_formulation("ors", T=int(self.T), cardinality=self.cardinality, binarize=self.binarize,
                                   max_cuts=self.max_cuts, multiplier="auto" if auto else float(self.multiplier),
                                   scale=self.scale,
                                   loss_tol=self.loss_tol, proof=self.proof,
                                   **({} if self.loss is None else {"loss": self.loss}), **common)
        if auto or float(self.multiplier) != 1.0:
            raise FormulationError("multiplier applies to formulation='ors' only")
        if self.scale != "fixed":
            raise FormulationError(f"scale={self.scale!r} applies to formulation='ors' only; use scale='fixed'")
        if self.proof != "lcpa":
            raise FormulationError(f"proof={self.proof!r} applies to formulation='ors' only; use proof='lcpa'")
        if self.loss not in (None, "tangent"):
            raise FormulationError(f"loss={self.loss!r} applies to formulation='ors' only (ogrs is fitted in the "
                                   "tangent surrogate); use loss=None or 'tangent'")
        return get_formulation("ogrs", T=int(self.T), **common)

    def _start(self, previous: Any, n_features: int) -> Any:
        return "auto"  # the beam-search score card (ors); no automatic start for ogrs

    def card(self) -> ScoreCard:
        """The fitted score card (:meth:`RiskScoreModel.card <treeopt_dsl.models.risk.RiskScoreModel.card>`):
        ``print`` it, ``to_json()``, ``to_csv(path)``, ``plot()``. With ``binarize="quantile"`` every row is a
        condition in the data's units and the card scores by hand to exactly :meth:`predict`; so does ``ogrs``' card,
        whose rules are learned thresholds printed in the data's units."""
        check_is_fitted(self)
        return self.model_.card()

    def calibration(self, X: Any, y: Any, bins: int = ECE_BINS) -> dict[str, float]:
        """The mean log-loss and the expected calibration error (``bins`` equal-mass bins,
        :mod:`treeopt_dsl.models.calibration`) of :meth:`predict_proba` on ``(X, y)``."""
        check_is_fitted(self)
        p, pos = self._proba_positive(X, y)
        return {"log_loss": log_loss(pos, p), "ece": expected_calibration_error(pos, p, bins), "bins": bins}

    def plot_reliability(self, X: Any, y: Any, bins: int = ECE_BINS, ax: Any = None) -> Any:
        """The reliability diagram of :meth:`predict_proba` on ``(X, y)``: observed frequency of ``classes_[1]``
        against the predicted probability, per equal-mass bin, with the ECE
        (:func:`~treeopt_dsl.models.calibration.plot_reliability`). Returns the matplotlib figure.

        Example::

            >>> RiskScoreClassifier(T=3, binarize="quantile", scale="search").fit(X, y).plot_reliability(
            ...     X_test, y_test).savefig("reliability.png")  # doctest: +SKIP
        """
        check_is_fitted(self)
        p, pos = self._proba_positive(X, y)
        return plot_reliability({"data": (pos, p)}, bins, ax)

    def _proba_positive(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        return self.predict_proba(X)[:, 1], np.asarray(y) == self.classes_[1]

    def _decision(self, X: np.ndarray) -> np.ndarray:
        """``(points + beta) / m``: its sign is the prediction, its sigmoid ``P(classes_[1])``."""
        return self.model_.decision_function(X) / float(getattr(self.model_, "multiplier", 1.0))
