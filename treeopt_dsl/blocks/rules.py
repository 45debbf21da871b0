"""Generalized risk score blocks (thesis §4.3, [aldinucci-thesis-2024] lines 1269-1386, model (4.16)).

A generalized risk score adds integer points ``s_t`` for every threshold rule ``x_j >= b_t`` a sample
satisfies. Features are scaled to [0, 1]. The blocks, in the order of the thesis:

* :class:`RuleSelection`: ``a[j, t]`` picks one feature per rule (4.8), no feature twice (4.9),
  rules ordered by feature to cut the ``T!`` symmetric copies (4.10);
* :class:`ThresholdRules`: threshold ``b_t`` and ``z[i, t] = 1{a_t·x_i >= b_t}`` with a gap ``eps``
  (4.11), discriminative rules (4.12), binary features split at 0.5 (4.15);
* :class:`RulePoints`: ``s_t in A`` (4.16t) and the intercept ``beta``;
* :class:`BinaryTimesInteger`: ``s_hat = z * s``, the product of a binary and a bounded integer by
  four rows (4.13), a general block any formulation can reuse;
* :class:`TotalScore`: ``sum_t s_hat[i, t] + beta`` (4.14).

The loss is the shared :class:`~treeopt_dsl.blocks.TangentLogisticLoss` with ``on="score"`` (4.16o).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import xarray as xr

from treeopt_dsl.blocks.scores import integer_in_set, score_set
from treeopt_dsl.blocks.splits import FEATURE, SAMPLE
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Block, BuildContext
from treeopt_dsl.ir import Kind
from treeopt_dsl.roles import ROLES, Role, register_role

RULE = "rule"


class RuleSelection(Block):
    """``a[j, t]`` binary: (4.8a) ``sum_j a[j, t] = 1``, (4.9a) ``sum_t a[j, t] <= 1`` and, with
    ``ordered=True``, (4.10a) ``sum_{k > j} sum_{s < t} a[k, s] <= (1 - a[j, t]) T``."""

    provides = ("a_rule",)

    def __init__(self, T: int = 3, ordered: bool = True, exclude: Iterable[int] = ()) -> None:
        if int(T) < 1:
            raise FormulationError(f"the number of rules T must be at least 1, got {T!r}")
        self.T, self.ordered, self.exclude = int(T), ordered, list(exclude)

    def build(self, ctx: BuildContext) -> None:
        m, p = ctx.model, ctx.data.n_features
        if self.T > p:
            raise FormulationError(f"{self.T} rules need at least {self.T} features; the data has {p}")
        a = m.add_variables("a_rule", (FEATURE, RULE), {FEATURE: np.arange(p), RULE: np.arange(self.T)},
                            kind=Kind.BINARY)
        m.add_constraints("rule_one_feature", a.sum(FEATURE) == 1)   # (4.8a)
        m.add_constraints("feature_once", a.sum(RULE) <= 1)          # (4.9a)
        if self.exclude:  # features some other rule already uses (the rule-by-rule warm start)
            m.add_constraints("feature_excluded", a.isel(feature=np.asarray(self.exclude)) == 0)
        if self.ordered and self.T > 1:                               # (4.10a)
            later = xr.DataArray(np.triu(np.ones((p, p)), 1), dims=(FEATURE, "k"))  # k > j
            earlier = xr.DataArray(np.tril(np.ones((self.T, self.T)), -1), dims=(RULE, "s"))  # s < t
            ak = a.rename(feature="k", rule="s")
            lhs = ((ak * later) * earlier).sum(("k", "s"))
            m.add_constraints("rules_ordered", lhs <= (1 - a) * self.T)
        ctx.provide("a_rule", a, "RuleSelection")


class ThresholdRules(Block):
    """Threshold ``b_t`` and rule indicators ``z[i, t]`` (4.11), discriminative rules (4.12), binary
    features at 0.5 (4.15).

    (4.11a) ``a_t·x_i >= b_t - 1 + z[i, t]`` and (4.11b) ``a_t·x_i <= b_t - eps + z[i, t]``: with features
    in [0, 1], ``z = 1`` exactly when ``x_ij >= b_t`` and ``z = 0`` exactly when ``x_ij <= b_t - eps``.
    ``b_t`` is bounded to ``[0, 1]``: a threshold outside cannot split features in [0, 1], which (4.12)
    forbids anyway.
    """

    requires = ("a_rule",)
    provides = ("z_rule", "b_rule")

    def __init__(self, eps: float = 1e-4, discriminative: bool = True) -> None:
        if not 0 < eps < 0.5:
            raise FormulationError(f"eps must be in (0, 0.5), got {eps!r}")
        self.eps, self.discriminative = float(eps), discriminative

    def build(self, ctx: BuildContext) -> None:
        m, data, a = ctx.model, ctx.data, ctx["a_rule"]
        X = data.X
        if X.size and (X.min() < -1e-9 or X.max() > 1 + 1e-9):
            raise FormulationError("threshold rules need features scaled to [0, 1] (scaling='minmax')")
        T = a.shape[1]
        rules = {RULE: np.arange(T)}
        b = m.add_variables("b_rule", (RULE,), rules, lower=0.0, upper=1.0)
        z = m.add_variables("z_rule", (SAMPLE, RULE), {SAMPLE: data.n_samples, **rules}, kind=Kind.BINARY)
        ax = a.dot(xr.DataArray(X, dims=(SAMPLE, FEATURE)), FEATURE)  # a_t·x_i over (sample, rule)
        m.add_constraints("rule_holds", ax >= b - 1 + z)                # (4.11a)
        m.add_constraints("rule_fails", ax <= b - self.eps + z)         # (4.11b)
        if self.discriminative:
            m.add_constraints("rule_some_true", z.sum(SAMPLE) >= 1)                   # (4.12a)
            m.add_constraints("rule_some_false", z.sum(SAMPLE) <= data.n_samples - 1)  # (4.12b)
        binary = np.flatnonzero(np.all((X == 0) | (X == 1), axis=0))
        if binary.size:  # (4.15): a rule on a binary feature has b_t = 0.5
            ab = a.isel(feature=binary)
            m.add_constraints("binary_threshold_lo", ab - 1 <= b - 0.5)   # (4.15a)
            m.add_constraints("binary_threshold_hi", 1 - ab >= b - 0.5)   # (4.15b)
        ctx.numerics.eps = min(ctx.numerics.eps, self.eps)
        ctx.provide("b_rule", b, "ThresholdRules")
        ctx.provide("z_rule", z, "ThresholdRules")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        a = ctx["a_rule"].values(x)
        b = ctx["b_rule"].values(x)
        ax = ctx.data.X @ a
        x[ctx["z_rule"].ids] = (ax >= b[None, :] - self.eps / 2).astype(float)  # the middle of the gap


class BinaryTimesInteger(Block):
    """``w = z * s`` for a binary ``z`` and a bounded integer (or continuous) ``s`` by four rows (4.13):

    ``w >= s - M (1 - z)``, ``w <= s + M (1 - z)``, ``w >= -M z``, ``w <= M z`` with ``M = max |s|``
    from ``s``'s own bounds. ``binary`` and ``value`` name roles; ``s`` broadcasts over ``z``'s
    dimensions by name. Provides the role ``name``.
    """

    def __init__(self, binary: str, value: str, name: str) -> None:
        self.binary, self.value, self.name = binary, value, name
        self.requires = (binary, value)
        self.provides = (name,)

        if name not in ROLES:  # the product is a role named by the caller: declare it
            register_role(Role(name, "variables", (), "continuous", f"{binary} times {value} (4.13)"))

    def build(self, ctx: BuildContext) -> None:
        m, z, s = ctx.model, ctx[self.binary], ctx[self.value]
        M = float(np.max(np.maximum(np.abs(s.lower), np.abs(s.upper))))
        if not np.isfinite(M):
            raise FormulationError(f"the product {self.name} needs a bounded {self.value!r}")
        w = m.add_variables(self.name, z.dims, z.coords, lower=-M, upper=M)
        m.add_constraints(f"{self.name}_ge_value", w >= s - (1 - z) * M)   # (4.13a)
        m.add_constraints(f"{self.name}_le_value", w <= s + (1 - z) * M)   # (4.13b)
        m.add_constraints(f"{self.name}_ge_zero", w >= z * (-M))          # (4.13c)
        m.add_constraints(f"{self.name}_le_zero", w <= z * M)             # (4.13d)
        ctx.numerics.max_big_m = max(ctx.numerics.max_big_m, M)
        ctx.provide(self.name, w, "BinaryTimesInteger")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        z, s = ctx[self.binary], ctx[self.value]
        zv = xr.DataArray(z.values(x), dims=z.dims)
        sv = xr.DataArray(s.values(x), dims=s.dims)
        x[ctx[self.name].ids] = (zv * sv).transpose(*z.dims).values


class RulePoints(Block):
    """Points ``s_t in A`` per rule (4.16t) and the free intercept ``beta`` (4.16r)."""

    requires = ("z_rule",)
    provides = ("s_rule", "beta")

    def __init__(self, A: Iterable[int] | str = range(-5, 6)) -> None:
        self.A = score_set(A)

    def build(self, ctx: BuildContext) -> None:
        m, z = ctx.model, ctx["z_rule"]
        s, ctx.state(self)["choice"] = integer_in_set(m, "s_rule", (RULE,), {RULE: z.coords[RULE]}, self.A)
        ctx.provide("s_rule", s, "RulePoints")
        ctx.provide("beta", m.add_variables("beta", (), {}), "RulePoints")

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        choice = ctx.state(self).get("choice")
        if choice is not None:
            choice.complete(ctx, x)


class TotalScore(Block):
    """The total score (4.14a) ``score_i = sum_t s_hat[i, t] + beta`` under the role ``"score"``."""

    provides = ("score",)

    def __init__(self, of: str = "s_hat", over: str = RULE, offset: Any = 0.0) -> None:
        self.of, self.over, self.offset = of, over, offset
        self.requires = (of, "beta")

    def build(self, ctx: BuildContext) -> None:
        offset = xr.DataArray(np.broadcast_to(np.asarray(self.offset, dtype=float), (ctx.data.n_samples,)),
                              dims=(SAMPLE,))  # points of rules fixed elsewhere (rule-by-rule warm start)
        ctx.provide("score", ctx[self.of].sum(self.over) + ctx["beta"] + offset, "TotalScore")
