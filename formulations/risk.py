"""Optimal risk scores, ORS (thesis (4.5), [aldinucci-thesis-2024] lines 1085-1157).

    min  C sum_i xi_i                                                          (4.5a)
    s.t. sum_j a_j = T                                                         (4.2)
         -M a_j <= s_j <= M a_j,  M = max |A|                                  (4.3)
         xi_i >= f(v_k) + f'(v_k) (y_i (s·x_i + beta) - v_k)   for v_k in V     (4.4)
         xi >= 0, beta free, a binary, s_j in A                                (4.5c-f)

A composition of three shared blocks: :class:`~treeopt_dsl.blocks.IntegerScores` (4.1a, 4.5d-f),
:class:`~treeopt_dsl.blocks.L0` on ``s`` with ``budget=T, exact=True`` (4.2)-(4.3) and
:class:`~treeopt_dsl.blocks.TangentLogisticLoss` on the score (4.4). Defaults are the thesis'
experimental settings: ``A = {-5..5}``, tangent set V3, features scaled to [0, 1].

Reading chosen: (4.1b) writes ``||s||_0 = T`` while the surrounding text says "not greater than" a
small threshold; (4.2) is an equality. ``cardinality="exact"`` (default) follows (4.2);
``cardinality="at_most"`` gives ``<= T``. With ``= T`` the indicator ``a_j`` may be 1 while
``s_j = 0``; the fitted model then uses fewer than ``T`` features, which is still optimal for (4.5).

``multiplier`` (FasterRisk's scale ``m``, Liu et al., NeurIPS 2022: ``P(y|x) = sigmoid((s·x + beta)/m)``)
puts the loss (4.4) on ``y_i (s·x_i + beta)/m``: :class:`ScaledTangentLogisticLoss` divides the slopes of
the tangent pieces by ``m`` (``f(u/m) >= f(v) + f'(v)(u/m - v)``), so the points stay integers in ``A``
while the logit they stand for is ``(s·x + beta)/m``. ``m = 1`` (the default) is the thesis' (4.5).

``scale="search"`` searches FasterRisk's multiplier instead of taking it as given: after the solve, with the integer
points fixed, the multiplier ``m`` and the intercept that minimize the true log-loss ``sum_i w_i log(1 + exp(-y_i
(s·x_i + beta) / m))`` on the training data (convex in ``(1/m, beta/m)``:
:func:`~treeopt_dsl.models.scale.fit_scale`). A calibration step *after* the proof: the status, objective,
bound and certificate are the card's at the multiplier given (optimal in the true loss at ``m = 1`` by default);
the returned model is the scaled card, never worse in the true loss, and ``result.scale_search`` records both.

``loss="true"`` (the default) proves the card optimal in the logistic loss itself, to the relative gap ``loss_tol``;
``proof`` says how (docs/blocks.md, "Optimal in the true loss"): ``"lcpa"`` (default), RiskSLIM's lattice cutting
planes: a master with one column for the whole loss (:class:`~treeopt_dsl.blocks.LatticeLogisticLoss`), its cuts
added inside one branch and bound by the solver's callbacks (Gurobi, SCIP; ``solver="auto"`` takes the first
installed of :data:`~treeopt_dsl.backends.LAZY_SOLVERS`) or by re-solving (HiGHS); ``"samples"``, the same cuts with a
column per sample (:class:`~treeopt_dsl.blocks.SampleLatticeLoss`); ``"outer"``, the tangent MILP (4.4) re-solved
with tangent rows at each card's margins. ``tangents`` and ``epigraph`` shape the MILP of ``"outer"`` and of
``loss="tangent"`` only.

``epigraph``: (4.4) is a row per tangent (16 per sample with V3, each holding the whole score);
``"breakpoints"`` (default) writes the same epigraph by the loss' breakpoints, three rows per sample
(:class:`~treeopt_dsl.blocks.SlackLoss`): the same feasible set on ``(s, a, beta, xi)`` and the same LP bound,
proven 2.1x faster on each of the issue's three datasets (docs/benchmarks.md, "Risk scores").
``epigraph="pieces"`` writes the thesis' rows as printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from treeopt_dsl import blocks as B
from treeopt_dsl.backends import lazy_solver
from treeopt_dsl.blocks.scores import score_set
from treeopt_dsl.data import Dataset
from treeopt_dsl.defaults import BINARIZE, SOLVER
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.exact.binarize import stump_columns, threshold_columns
from treeopt_dsl.formulation import Built, Formulation, Numerics
from treeopt_dsl.formulations.olct import _tangents
from treeopt_dsl.formulations.spec import COMPRESS, FormulationSpec, Param, boolean, floats
from treeopt_dsl.lazy import LATTICE_GAP_SHARE
from treeopt_dsl.models.risk import decode_generalized_risk_score, decode_risk_score
from treeopt_dsl.result import SolveResult
from treeopt_dsl.starts.risk import MultiplierSearch, search_multiplier


class ScaledTangentLogisticLoss(B.TangentLogisticLoss):
    """The tangent-logistic loss (4.4) of the scaled margin ``y_i score_i / m`` (FasterRisk's multiplier).

    A tangent of ``f`` at ``v`` as a function of ``u = y_i score_i`` is ``f(v) + (f'(v)/m)(u - m v)``: the
    pieces of :class:`~treeopt_dsl.blocks.TangentLogisticLoss` with the slopes divided by ``m`` and the
    intercepts unchanged. The rows, the completion (``surrogate``) and the certificate all read
    :meth:`pieces`, so they agree; ``m = 1`` is the unscaled block.
    """

    def __init__(self, multiplier: float = 1.0, tangents: str | Sequence[float] = "V3", C: float = 1.0,
                 on: str = "score", epigraph: str = "pieces", objective: str = "tangent", tol: float = B.OUTER_TOL
                 ) -> None:
        super().__init__(tangents=tangents, C=C, on=on, epigraph=epigraph, objective=objective, tol=tol)
        if not (np.isfinite(multiplier) and multiplier > 0):
            raise FormulationError(f"the multiplier must be a positive finite number, got {multiplier!r}")
        self.multiplier = float(multiplier)

    def pieces(self) -> tuple[np.ndarray, np.ndarray]:
        a, c = super().pieces()
        return a / self.multiplier, c


def _epigraph(text: str) -> str:
    if text not in B.EPIGRAPHS:
        raise FormulationError(f"epigraph must be one of {B.EPIGRAPHS}, got {text!r}")
    return text


#: the default number of quantile cuts per continuous feature with ``binarize="quantile"`` (the quartiles)
MAX_CUTS = 3


def _loss(text: str) -> str:
    if text not in B.OBJECTIVES:
        raise FormulationError(f"loss must be one of {B.OBJECTIVES} (true: proven optimal in the logistic loss; "
                               f"tangent: in the tangent surrogate (4.4), the thesis' model), got {text!r}")
    return text


def _loss_tol(value: str | float) -> float:
    try:
        tol = float(value)
    except (TypeError, ValueError):
        tol = -1.0
    if isinstance(value, bool) or not (0 < tol < 1):
        raise FormulationError(f"loss_tol must be a number in (0, 1) (the relative gap (UB - LB) / max(1, |UB|) to "
                               f"prove the true loss to), got {value!r}")
    return tol


#: how ``ors loss="true"`` proves the true loss: RiskSLIM's lattice cutting planes (one epigraph column, a cut of the
#: whole loss per integer card, lazily), the same cuts disaggregated (a column and a tangent per sample, lazily), or
#: the outer approximation (a tangent row per sample, the MILP re-solved)
PROOFS = ("lcpa", "samples", "outer")
#: the branching priority of the support indicators ``a_j`` in the lattice master (``proof`` lcpa / samples): above
#: the points' 0, so Gurobi and SCIP branch on which features are used before on how many points they get
SUPPORT_PRIORITY = 10


def _proof(text: str) -> str:
    if text not in PROOFS:
        raise FormulationError(f"proof must be one of {PROOFS} (lcpa: lattice cutting planes, one column for the "
                               f"whole loss; samples: the same cuts with a column per sample; outer: a tangent row "
                               f"per sample, the MILP re-solved), got {text!r}")
    return text


#: how ``ors`` sets FasterRisk's multiplier: as given (``fixed``) or searched after the card is solved (``search``)
SCALES = ("fixed", "search")


def _scale(text: str) -> str:
    if text not in SCALES:
        raise FormulationError(f"scale must be one of {SCALES} (fixed: the multiplier given; search: the multiplier "
                               f"and intercept minimizing the true log-loss once the points are fixed), got {text!r}")
    return text


def scale_search(res: SolveResult, data: Dataset) -> SolveResult:
    """``res`` with its card's multiplier and intercept searched on ``data`` (the training data, raw features, its
    sample weights) for the fixed points (:meth:`~treeopt_dsl.models.risk.RiskScoreModel.scaled`); the search and
    what stays proven are recorded in ``res.scale_search``. ``res`` without a card is returned as it is."""
    if res.model is None:
        return res
    before = res.model
    model, fit = before.scaled(data.X, data.y, data.sample_weight)
    proven = (f"the points (and the intercept at multiplier {before.multiplier:.6g}) as the status says; the "
              "multiplier and intercept searched after them (a calibration step, not part of the proof)")
    res.scale_search = {"multiplier_before": float(before.multiplier), "intercept_before": float(before.beta),
                       **fit.as_dict(), "objective": "summed true log-loss sum_i w_i log(1 + exp(-y_i (total_i + "
                       "intercept) / multiplier)) on the training data, points fixed", "proven": proven}
    res.model = model
    res.message = (f"{res.message}; then the scale searched (a calibration step after the solve, not part of its "
                   f"proof): multiplier {fit.multiplier:.6g}, true log-loss {fit.loss_before:.6g} -> "
                   f"{fit.loss_after:.6g}")
    return res


#: ``ors multiplier="auto"``: the multiplier chosen with the start's card (:func:`search_multiplier`), then proven at
MULTIPLIER_AUTO = "auto"


def _multiplier(value: str | float) -> str | float:
    """``"auto"`` or a positive finite number (FasterRisk's ``m``)."""
    if isinstance(value, str) and value.strip().lower() == MULTIPLIER_AUTO:
        return MULTIPLIER_AUTO
    try:
        m = float(value)
    except (TypeError, ValueError):
        m = float("nan")
    if not (np.isfinite(m) and m > 0):
        raise FormulationError(f"multiplier must be a positive finite number or 'auto', got {value!r}")
    return m


def _binarize(text: str) -> str:
    if text not in BINARIZE:
        raise FormulationError(f"binarize must be one of {BINARIZE}, got {text!r}")
    return text


def _max_cuts(value: str | int) -> int:
    try:
        k = int(value)
    except (TypeError, ValueError):
        k = 0
    if k < 1 or isinstance(value, bool) or (isinstance(value, float) and value != k):
        raise FormulationError(f"max_cuts must be an integer >= 1 (quantile cuts per continuous feature), "
                               f"got {value!r}")
    return k


def _cardinality(text: str) -> str:
    if text not in ("exact", "at_most"):
        raise FormulationError(f"cardinality must be 'exact' or 'at_most', got {text!r}")
    return text


class ORS(FormulationSpec):
    name = "ors"
    summary = "Optimal Risk Score (thesis 4.5): integer points s in A, ||s||_0 = T, tangent-logistic loss (4.4)"
    scaling = "minmax"
    params = (
        Param("T", 3, int, "number of features with nonzero points (4.2)"),
        Param("A", "-5..5", str, "admissible points: a range 'lo..hi' or a list '-3,-1,0,1,3' (must contain 0)"),
        Param("cardinality", "exact", _cardinality, "exact: sum a_j = T (4.2); at_most: <= T"),
        Param("tangents", "V3", _tangents, "tangent set V0..V3 or comma-separated points (4.4)"),
        Param("C", 1.0, floats, "weight of the loss"),
        Param("beta_bound", None, lambda t: None if t.lower() == "none" else float(t), "|beta| <= bound (none: free)"),
        Param("scaling", "minmax", str, "scaling fitted on training data: minmax (the thesis) | standard | none"),
        Param("binarize", "none", _binarize, "none: points on the scaled features (the thesis); quantile: points on "
              "0/1 conditions x_j >= t in the data's units, at most max_cuts quantile cuts per continuous feature "
              "(binary features stay one column): a card to score by hand; stump: one condition per feature, the "
              "cut of its log-loss decision stump (the thesis' binarization for LCPA, Fig. 4.5)"),
        Param("max_cuts", MAX_CUTS, _max_cuts, "binarize=quantile: cuts per continuous feature, at its quantiles"),
        Param("multiplier", 1.0, _multiplier, "FasterRisk's scale m > 0: the loss and P(y|x) on (s·x + beta)/m (1: "
              "(4.5)) | auto: chosen with the start's card by FasterRisk's star-ray search, the card then proven at "
              "it (result.multiplier_search)"),
        Param("scale", "fixed", _scale, "fixed: the multiplier given | search: after the card is solved, the "
              "multiplier and intercept minimizing the true log-loss for its fixed points (a calibration step after "
              "the proof; result.scale_search)"),
        Param("epigraph", "breakpoints", _epigraph, "the loss' rows (4.4): breakpoints (3 rows per sample) | "
              "pieces (a row per tangent, the thesis' rows): the same model"),
        Param("loss", "true", _loss, "the loss 'optimal' is proven in: true (the logistic loss, by adding tangents "
              "at the card's margins until the bound meets it within loss_tol) | tangent (the surrogate (4.4), the "
              "thesis' model)"),
        Param("proof", "lcpa", _proof, "loss=true: how the true loss is proven: lcpa (RiskSLIM's lattice cutting "
              "planes: one column for the whole loss, a cut per integer card through the solver's lazy-constraint "
              "callback, or re-solving where it has none) | samples (the same, a column and a tangent per sample) | "
              "outer (a tangent row per sample, the MILP re-solved)"),
        Param("loss_tol", B.OUTER_TOL, _loss_tol, "loss=true: the relative gap (UB - LB) / max(1, |UB|) proven"),
        COMPRESS,
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.values["loss"] = _loss(self.values["loss"])  # also values given as non-text
        self.values["loss_tol"] = _loss_tol(self.values["loss_tol"])
        self.values["binarize"] = _binarize(self.values["binarize"])  # also values given as non-text
        self.values["max_cuts"] = _max_cuts(self.values["max_cuts"])
        self.values["scale"] = _scale(self.values["scale"])
        self.values["proof"] = _proof(self.values["proof"])
        self.values["multiplier"] = _multiplier(self.values["multiplier"])

    @property
    def lattice(self) -> bool:
        """Whether the true loss is proven by lattice cutting planes (``loss="true"``, ``proof`` lcpa or samples)."""
        return self.values["loss"] == "true" and self.values["proof"] in ("lcpa", "samples")

    @property
    def default_solver(self) -> str:  # type: ignore[override]
        """``solver="auto"``: for the lattice cutting planes the fastest installed solver with a lazy-constraint
        callback (:func:`~treeopt_dsl.backends.lazy_solver`), else HiGHS."""
        return lazy_solver() if self.lattice else "highs"

    def solve(self, data: Dataset, solver: str = SOLVER, backend: str | None = None, warm_start: Any = None,
              **options: Any) -> SolveResult:
        """:meth:`FormulationSpec.solve`, then with ``scale="search"`` the scale search on ``data``
        (:func:`scale_search`). With ``multiplier="auto"`` the card found with the multiplier starts the solve
        unless ``warm_start`` names another start."""
        if self.lattice:  # the master's own gap: most of the tolerance (the cuts' slack is the rest)
            share = LATTICE_GAP_SHARE * self.values["loss_tol"]
            options["gap"] = share if options.get("gap") is None else min(float(options["gap"]), share)
        if self.values["multiplier"] == MULTIPLIER_AUTO and warm_start is None:
            warm_start = "beam"  # the search's card, found with the multiplier: a start that costs nothing more
        res = super().solve(data, solver=solver, backend=backend, warm_start=warm_start, **options)
        searched = None if res.built is None else res.built.ctx.data.meta.get("multiplier_search")
        if isinstance(searched, MultiplierSearch):
            res.multiplier_search = searched.as_dict()
            res.message = (f"{res.message} (at the multiplier {searched.multiplier:.6g} chosen with the start's card "
                           f"by the multiplier search, {searched.seconds:.2f} s)")
        return scale_search(res, data) if self.values["scale"] == "search" else res

    def build(self, data: Dataset) -> Built:
        """:meth:`FormulationSpec.build`; with ``multiplier="auto"`` the multiplier is first chosen on the prepared
        data with its card (:func:`~treeopt_dsl.starts.risk.search_multiplier`), the model built at it, and the card
        kept in the data's ``meta["multiplier_search"]`` for the beam start."""
        if self.values["multiplier"] != MULTIPLIER_AUTO:
            return super().build(data)
        prepared = self.prepare(data)
        v = self.values
        found = search_multiplier(prepared.X, prepared.y, v["T"], score_set(v["A"]), prepared.weights,
                                  beta_bound=v["beta_bound"], C=float(np.atleast_1d(v["C"])[0]))
        spec = type(self)(**{**v, "multiplier": found.multiplier})
        prepared = replace(prepared, meta={**prepared.meta, "multiplier_search": found})
        return spec.formulation().build(prepared, spec.topology())

    def topology(self) -> None:
        return None

    def prepare(self, data: Dataset) -> Dataset:
        """``binarize="none"``: the paper's scaling. ``"quantile"``: the features become 0/1 threshold columns
        ``[x_j >= t]`` in their own units (:func:`~treeopt_dsl.exact.binarize.threshold_columns`, fitted on this
        training data and kept as the model's scaler, so it predicts on raw inputs); ``"stump"``: one such column
        per feature, at its log-loss stump's cut (:func:`~treeopt_dsl.exact.binarize.stump_columns`); ``T`` is then
        checked against the number of columns."""
        how = self.values["binarize"]
        if how == "none":
            return super().prepare(data)
        data.require_binary(self.name)
        scaler = (threshold_columns(data.X, data.feature_names, self.values["max_cuts"]) if how == "quantile"
                  else stump_columns(data.X, data.y, data.feature_names))
        if scaler.feature.size == 0:
            raise FormulationError(f"{self.name} with binarize={how!r}: every feature of {data.name!r} is constant, "
                                   "so there is no condition to give points to")
        T, n = self.values["T"], scaler.feature.size
        if T > n and self.values["cardinality"] != "at_most":
            more, raise_ = ((f"max_cuts={self.values['max_cuts']}", "raise max_cuts, or ") if how == "quantile"
                            else ("one per feature", ""))
            raise FormulationError(f"{self.name}: T={T} exceeds the {n} threshold columns that binarize={how!r} "
                                   f"({more}) makes of {data.name!r}: T must be from 1 to {n} (or {raise_}use "
                                   "cardinality='at_most')")
        data = replace(data, X=scaler.transform(data.X), feature_names=scaler.names,
                       meta={**data.meta, "scaler": scaler})
        return data.compressed() if self.values.get("compress") else data

    def formulation(self) -> Formulation:
        """The blocks; with ``multiplier="auto"`` at ``m = 1`` (the composition the routes read: the multiplier is
        chosen on the data by :meth:`build`, which builds the blocks at it)."""
        v = {**self.values}
        if v["multiplier"] == MULTIPLIER_AUTO:
            v["multiplier"] = 1.0
        if v["T"] < 1:
            raise FormulationError(f"T must be at least 1, got {v['T']}")
        if self.lattice:
            return Formulation(
                self.name,
                [
                    B.IntegerScores(A=v["A"], beta_bound=v["beta_bound"]),
                    # the support branched on first (measured: docs/blocks.md, "The designs measured")
                    B.L0(of="s", budget=v["T"], exact=v["cardinality"] == "exact", branch_priority=SUPPORT_PRIORITY),
                    (B.LatticeLogisticLoss if v["proof"] == "lcpa" else B.SampleLatticeLoss)(
                        multiplier=float(v["multiplier"]), C=v["C"], tol=v["loss_tol"]),
                ],
                decoder=decode_risk_score,
                decisions=("s", "beta"),
            )
        loss = ScaledTangentLogisticLoss(multiplier=float(v["multiplier"]), tangents=v["tangents"], C=v["C"],
                                         on="score", epigraph=v["epigraph"], objective=v["loss"],
                                         tol=v["loss_tol"])  # m = 1: TangentLogisticLoss (slopes / 1)
        return Formulation(
            self.name,
            [
                B.IntegerScores(A=v["A"], beta_bound=v["beta_bound"]),
                B.L0(of="s", budget=v["T"], exact=v["cardinality"] == "exact"),
                loss,
            ],
            decoder=decode_risk_score,
            decisions=("s", "beta"),
        )


class OGRS(FormulationSpec):
    """Optimal generalized risk score, thesis (4.16) ([aldinucci-thesis-2024] lines 1269-1386).

    ``T`` threshold rules ``x_j >= b_t`` with integer points: rule selection (4.8)-(4.10), thresholds
    with the gap ``eps`` (4.11), discriminative rules (4.12), the binary-times-integer product (4.13),
    the total score (4.14), binary features at 0.5 (4.15) and the tangent-logistic loss on the score
    (4.16o). Features scaled to [0, 1]. Defaults: ``A = {-5..5}``, V3, ``eps = 1e-4`` as in the thesis.
    """

    name = "ogrs"
    summary = "Optimal Generalized Risk Score (thesis 4.16): T threshold rules x_j >= b_t with integer points"
    scaling = "minmax"
    params = (
        Param("T", 3, int, "number of rules (4.8)"),
        Param("A", "-5..5", str, "admissible points per rule: 'lo..hi' or a list (must contain 0)"),
        Param("tangents", "V3", _tangents, "tangent set V0..V3 or comma-separated points (4.16o)"),
        Param("C", 1.0, floats, "weight of the loss"),
        Param("eps", 1e-4, float, "gap of the threshold rows (4.11b)"),
        Param("ordered", True, boolean, "order the rules (4.10)"),
        Param("epigraph", "breakpoints", _epigraph, "the loss' rows (4.16o): breakpoints (3 rows per sample) | "
              "pieces (a row per tangent): the same model"),
        Param("scaling", "minmax", str, "feature scaling: minmax (the thesis; thresholds need [0, 1])"),
        COMPRESS,
    )

    def topology(self) -> None:
        return None

    def formulation(self) -> Formulation:
        v = self.values
        return Formulation(
            self.name,
            [
                B.RuleSelection(T=v["T"], ordered=v["ordered"]),
                B.ThresholdRules(eps=v["eps"]),
                B.RulePoints(A=v["A"]),
                B.BinaryTimesInteger("z_rule", "s_rule", "s_hat"),
                B.TotalScore(),
                B.TangentLogisticLoss(tangents=v["tangents"], C=v["C"], on="score", epigraph=v["epigraph"]),
            ],
            decoder=decode_generalized_risk_score,
            numerics=Numerics(eps=v["eps"]),
            decisions=("a_rule", "b_rule", "s_rule", "beta"),
        )
