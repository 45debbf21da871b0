"""Fitted randomized trees (S-ORCT, [blanquero-2020-sorct]): probabilistic routing, class probabilities per leaf."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from treeopt_dsl.data import Scaler
from treeopt_dsl.errors import DataError, OptionError
from treeopt_dsl.models.pictures import draw, randomized_graph, to_dot
from treeopt_dsl.numeric import finite_real, leaf_probabilities, logistic_cdf
from treeopt_dsl.topology import Topology

#: coefficients at most this large count as zero in the sparsity measures (Ipopt is an interior-point
#: method: a coefficient the l1 term drives to its bound 0 ends near 1e-9, not at 0)
ZERO_TOL = 1e-6
#: the coarser threshold at which our trees read the paper's delta_L at lambda = 0 (iris, wine, seeds, balance,
#: car: docs/reproduction.md, "S-ORCT"); the paper does not state its own. Path rows record delta at both.
COARSE_ZERO_TOL = 1e-3


@dataclass
class RandomizedTreeModel:
    """A depth-``D`` tree whose node ``t`` sends ``x`` left with probability
    ``F(a_t·x / p - mu_t)`` (``F`` the logistic CDF of slope ``gamma``; ``gamma = inf`` is the
    deterministic tree ``a_t·x / p - mu_t >= 0`` -> left) and whose leaf ``t`` assigns class ``k`` with
    probability ``C[k, t]``.

    ``predict_proba(x)[k] = sum_t C_kt P_xt`` ([blanquero-2020-sorct] lines 141-143); ``predict`` is the most
    probable class. Coefficients act on features scaled to [0, 1] (``scaler``).
    """

    topology: Topology
    A: np.ndarray  # node x feature
    mu: np.ndarray  # node
    C: np.ndarray  # class x leaf
    gamma: float
    classes: tuple[Any, ...]
    feature_names: tuple[str, ...]
    scaler: Scaler
    zero_tol: float = ZERO_TOL
    info: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ prediction
    def _scaled(self, X: Any) -> np.ndarray:
        Xs = self.scaler.transform(X)
        if Xs.shape[1] != self.A.shape[1]:
            raise DataError(f"X has {Xs.shape[1]} features, the model was fitted on {self.A.shape[1]}")
        return Xs

    def leaf_probabilities(self, X: Any) -> np.ndarray:
        """``P[i, t]``: probability that sample ``i`` reaches leaf ``t`` (sample x leaf)."""
        Xs = self._scaled(X)
        v = Xs @ self.A.T / self.A.shape[1] - self.mu
        left, right = self.topology.leaf_paths
        return leaf_probabilities(logistic_cdf(v, self.gamma), left, right)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (sample x class, columns in the order of ``classes``).

        Ipopt, an interior-point method, relaxes the bounds ``0 <= C_kt <= 1`` by about ``1e-8``, so the raw
        ``sum_t C_kt P_xt`` can come out as ``-5e-10``; the probabilities are clipped to ``[0, 1]`` and each row
        renormalized to sum to 1 (a change of that order, which keeps the ``argmax``)."""
        P = np.clip(self.leaf_probabilities(X) @ self.C.T, 0.0, 1.0)
        total = P.sum(axis=1, keepdims=True)
        return np.divide(P, total, out=np.full_like(P, 1.0 / P.shape[1]), where=total > 0)

    def predict(self, X: Any) -> np.ndarray:
        return np.asarray(self.classes)[np.argmax(self.predict_proba(X), axis=1)]

    def expected_accuracy(self, X: Any, y: Any) -> float:
        """The randomized classifier's expected accuracy on ``(X, y)``: the mean over samples of the probability
        of the true class, ``1/N sum_i sum_t P_it C_{y_i t}`` (one minus the first term of the objective, line 112,
        with the 0-1 cost ``W = 1`` off the diagonal). ``predict`` scores the most probable class instead; the two
        differ where samples sit near a cut, which the small coefficients of a heavily regularized tree make
        common. Labels the model does not know count as wrong.

        >>> X = np.array([[0.0], [0.45], [1.0]])  # one feature, already in [0, 1]
        >>> m = RandomizedTreeModel(Topology(1), np.array([[1.0]]), np.array([0.5]), np.eye(2), 32.0, ("a", "b"),
        ...                         ("x",), Scaler("minmax").fit(X))  # x >= 0.5 -> left leaf -> "a"
        >>> m.predict(X).tolist(), round(m.expected_accuracy(X, ["b", "b", "a"]), 3)
        (['b', 'b', 'a'], 0.944)
        """
        proba = self.predict_proba(X)
        y = np.asarray(y)
        if y.shape != (proba.shape[0],):
            raise DataError(f"y must hold one label per row of X ({proba.shape[0]}), got shape {y.shape}")
        classes = np.asarray(self.classes)
        hit = y[:, None] == classes[None, :]
        return float(np.mean(np.sum(np.where(hit, proba, 0.0), axis=1)))

    def decision_function(self, X: Any) -> np.ndarray:
        """Two classes: ``P(classes[1]) - 1/2`` (> 0 predicts ``classes[1]``); more: the probabilities."""
        proba = self.predict_proba(X)
        return proba[:, 1] - 0.5 if proba.shape[1] == 2 else proba

    # ------------------------------------------------------------------ derived models and measures
    def deterministic(self) -> RandomizedTreeModel:
        """The deterministic tree obtained by rounding: every node routes by ``a_t·x / p - mu_t >= 0``
        (left; the limit ``gamma -> inf`` of ``F``), every leaf predicts ``argmax_k C_kt`` (Theorem 1)."""
        C = np.zeros_like(self.C)
        C[np.argmax(self.C, axis=0), np.arange(self.C.shape[1])] = 1.0
        return replace(self, gamma=np.inf, C=C)

    def used(self, tol: float | None = None) -> np.ndarray:
        """``|a_jt| > tol`` (node x feature; ``tol`` defaults to the model's ``zero_tol``, else a finite number
        ``>= 0``: at a negative one every coefficient, 0 included, would count as used)."""
        if tol is None:
            tol = self.zero_tol
        elif not finite_real(tol) or tol < 0:
            raise OptionError(f"tol must be a finite number >= 0 (or None for zero_tol={self.zero_tol:g}), got {tol!r}")
        return np.abs(self.A) > tol

    def local_sparsity(self, tol: float | None = None) -> float:
        """``delta_L``: average percentage of features not used per branch node (lines 375-380), a
        coefficient counting as unused when ``|a_jt| <= tol`` (default ``zero_tol``)."""
        return float(100.0 * np.mean(~self.used(tol)))

    def global_sparsity(self, tol: float | None = None) -> float:
        """``delta_G``: percentage of features used at no branch node (lines 381-385), at threshold ``tol``."""
        return float(100.0 * np.mean(~self.used(tol).any(axis=0)))

    def leaf_classes(self) -> np.ndarray:
        return np.asarray(self.classes)[np.argmax(self.C, axis=0)]

    def text(self, max_terms: int = 8) -> str:
        """The tree as text: each node's cut on [0, 1]-scaled features, each leaf's class."""
        p = self.A.shape[1]
        lines = [f"randomized tree, depth {self.topology.depth}, F = logistic CDF with slope {self.gamma:g}; "
                 f"local sparsity {self.local_sparsity():.1f}%, global sparsity {self.global_sparsity():.1f}%"]
        for t in self.topology.nodes:
            idx = np.flatnonzero(np.abs(self.A[t]) > self.zero_tol)
            idx = idx[np.argsort(-np.abs(self.A[t, idx]))]
            terms = " ".join(f"{self.A[t, j]:+.3g}*{self.feature_names[j]}" for j in idx[:max_terms])
            more = f" (+{idx.size - max_terms} more)" if idx.size > max_terms else ""
            lines.append(f"{'  ' * (self.topology.level[t] - 1)}node {t}: left w.p. F(({terms or '0'}{more})/{p} "
                         f"{-self.mu[t]:+.4g})")
        for leaf, cls in enumerate(self.leaf_classes()):
            probs = ", ".join(f"{c}: {q:.2f}" for c, q in zip(self.classes, self.C[:, leaf], strict=True))
            lines.append(f"leaf {leaf}: {cls}  (C = {probs})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def plot(self, ax: Any = None, max_terms: int = 3, fontsize: float = 7.0, units: str = "scaled") -> Any:
        """Draw the probabilistic splits with matplotlib; returns the figure. Each node shows its rule
        ``u >= c`` (one feature: in its original units; oblique: one term a line on the scaled features, or the
        raw ones with ``units="raw"``) and the steepness of ``F`` along it, each leaf its class probabilities
        (:func:`treeopt_dsl.models.pictures.randomized_graph`).

        Example::

            >>> model.plot().savefig("sorct.png")  # doctest: +SKIP
        """
        return draw(randomized_graph(self, max_terms, units), ax=ax, fontsize=fontsize)

    def to_dot(self, max_terms: int = 3, units: str = "scaled") -> str:
        """The tree of :meth:`plot` as Graphviz DOT text."""
        return to_dot(randomized_graph(self, max_terms, units), name="sorct")


def decode_randomized(ctx: Any, x: np.ndarray) -> RandomizedTreeModel:
    """The fitted model of an S-ORCT solution vector."""
    data = ctx.data
    return RandomizedTreeModel(
        topology=ctx.topo, A=ctx["a"].values(x), mu=ctx["mu"].values(x), C=ctx["C"].values(x),
        gamma=float(ctx["gamma"]), classes=tuple(data.classes), feature_names=tuple(data.feature_names),
        scaler=data.meta["scaler"])
