"""The roles blocks provide and require, described by type.

A block names what it adds to a formulation's build context (``provides``) and what it reads (``requires``);
this module says what each name *is*: a family of variables (its domain and dimensions), an expression (its
dimensions), constraints, the loss, or plain data. :meth:`Formulation.check
<treeopt_dsl.formulation.Formulation.check>` refuses a role that is not declared here (so a new block says
what it provides: :func:`register_role`), and :func:`check_value` compares a built value with its
declaration (the test suite does it for every role of every registered formulation).

>>> r = role("yhat")
>>> r.kind, r.dims, r.domain
('variables', (('sample', 'level'),), 'binary')
>>> describe("l2_w")
"l2_w: variables, continuous -- the squared l2 term of role 'w' (its square's epigraph)"
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from treeopt_dsl.errors import FormulationError
from treeopt_dsl.ir.expr import LinExpr, QuadExpr
from treeopt_dsl.ir.nonlinear import NLConstraint, NLExpr
from treeopt_dsl.ir.variables import VarFamily

KINDS = ("variables", "expression", "constraints", "loss", "data")
DOMAINS = ("binary", "integer", "continuous", "any")


@dataclass(frozen=True)
class Role:
    """What a role is.

    ``kind``: ``variables`` (a :class:`~treeopt_dsl.ir.variables.VarFamily` of ``domain``), ``expression``
    (a linear, quadratic or nonlinear expression), ``constraints``, ``loss`` (the loss block itself or its
    objective expression: the blocks that read it ask it for its decoding rules) or ``data`` (arrays and
    parameters). ``dims``: the allowed dimension names (alternatives; empty: not checked). ``name`` may hold
    one ``{of}`` placeholder for roles named after another role (``l2_{of}``).
    """

    name: str
    kind: str
    dims: tuple[tuple[str, ...], ...] = ()
    domain: str = "any"
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise FormulationError(f"role {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.domain not in DOMAINS:
            raise FormulationError(f"role {self.name!r}: domain must be one of {DOMAINS}, got {self.domain!r}")


_S_NODE, _NODE_F = (("sample", "node"),), (("node", "feature"),)
LIBRARY_ROLES = (
    # splits and routing (thesis §3.2: (3.1)-(3.8))
    Role("w", "variables", _NODE_F, "continuous", "split weights w_t of every node (3.1)"),
    Role("b", "variables", (("node",),), "continuous", "split offsets b_t (3.1)"),
    Role("split", "expression", _S_NODE, doc="w_t x_i + b_t: the split value of sample i at node t"),
    Role("split_bound", "data", _S_NODE, doc="bounds of the split value (the big-M of (3.7))"),
    Role("z", "variables", (("sample", "last"),), "binary", "1 when sample i reaches last-layer node t (3.5)"),
    Role("reach", "expression", _S_NODE, doc="1 when sample i reaches node t (sums of z, or flows)"),
    # losses (3.9)-(3.17), (4.x)
    Role("xi", "expression", (("sample", "level"), ("sample",)), doc="per-sample slack of the loss (variables "
         "or an expression of them)"),
    Role("yhat", "variables", (("sample", "level"),), "binary", "1 when the tree at level h predicts sample i's "
         "positive class (3.9)"),
    Role("loss", "loss", doc="the loss: the block (its leaf rule decodes the tree) or its objective expression"),
    # regularizers (3.14)-(3.16)
    Role("l0", "data", doc="the l0 block's indicator family and the role it counts"),
    Role("l1", "data", doc="the l1 block's bound family and the role it bounds"),
    Role("linf_{of}", "variables", (), "continuous", "the l-infinity bound of role {of}"),
    Role("l2_{of}", "variables", (), "continuous", "the squared l2 term of role {of!r} (its square's epigraph)"),
    # flows (Aghaei, Gomez, Vayanos)
    Role("select", "variables", _NODE_F, "binary", "1 when node t splits on binary column j"),
    Role("flow", "variables", (("sample", "fnode"),), "continuous", "flow of sample i into node t"),
    Role("leaf_flow", "expression", (("sample", "leaf"),), doc="flow of sample i into leaf l"),
    Role("leaf_class", "variables", (("leaf", "class"),), "binary", "1 when leaf l predicts class k"),
    Role("g", "variables", (("sample",),), "continuous", "Benders' per-sample value"),
    # risk scores (chapter 4)
    Role("s", "variables", (("feature",),), "integer", "integer points per feature"),
    Role("beta", "variables", ((),), "continuous", "the score's intercept"),
    Role("score", "expression", (("sample",),), doc="the total score of sample i"),
    Role("theta", "variables", ((), ("sample",)), "continuous", "the epigraph of the loss, whole or per sample "
         "(lattice cutting planes)"),
    Role("a_rule", "variables", (("feature", "rule"),), "binary", "1 when rule r uses feature j"),
    Role("z_rule", "variables", (("sample", "rule"),), "binary", "1 when rule r fires on sample i"),
    Role("b_rule", "variables", (("rule",),), "continuous", "the threshold of rule r"),
    Role("s_rule", "variables", (("rule",),), "integer", "integer points of rule r"),
    # randomized trees (S-ORCT)
    Role("a", "variables", _NODE_F, "continuous", "S-ORCT's split weights"),
    Role("mu", "variables", (("node",),), "continuous", "S-ORCT's split offsets"),
    Role("gamma", "data", doc="the logistic CDF's steepness"),
    Role("p_left", "expression", _S_NODE, doc="probability that sample i goes left at node t"),
    Role("leaf_prob", "expression", (("sample", "leaf"),), doc="probability that sample i reaches leaf l"),
    Role("C", "variables", (("class", "leaf"),), "any", "leaf l's class (relaxed or binary)"),
    Role("class_performance", "constraints", (("class",),), doc="per-class correct-classification rates"),
    # categorical trees ([gunluk-odt-categorical])
    Role("v", "variables", (("node", "group"),), "any", "1 when node t splits on feature group g"),
    Role("groups", "data", doc="the feature groups (categorical features' levels)"),
    Role("subset", "expression", _NODE_F, doc="1 when level j of the split group goes left at node t"),
    Role("L", "expression", _S_NODE, doc="1 when sample i goes left at node t"),
    Role("R", "expression", _S_NODE, doc="1 when sample i goes right at node t"),
    Role("c", "data", doc="per-leaf class-count expressions of the path routing"),
    Role("anchors", "data", doc="the anchor levels that break the symmetry of subsets"),
    Role("w_ord", "data", doc="the ordinal groups' order rows (or None)"),
    Role("w_card", "data", doc="the cardinality rows of the subsets"),
)

ROLES: dict[str, Role] = {r.name: r for r in LIBRARY_ROLES}


def _pattern(name: str) -> re.Pattern[str] | None:
    if "{of}" not in name:
        return None
    return re.compile("^" + re.escape(name).replace(re.escape("{of}"), "(?P<of>.+)") + "$")


def register_role(r: Role, *, replace: bool = False) -> Role:
    """Declare a role (a new block's output). An existing name must be declared the same way unless
    ``replace=True``."""
    old = ROLES.get(r.name)
    if old is not None and old != r and not replace:
        raise FormulationError(f"role {r.name!r} is already declared as {old}; pass replace=True to change it")
    ROLES[r.name] = r
    return r


def role(name: str) -> Role:
    """The declaration of ``name`` (exact, or through a ``{of}`` pattern); :class:`FormulationError` if none."""
    if name in ROLES:
        return ROLES[name]
    for r in ROLES.values():
        pat = _pattern(r.name)
        m = pat.match(name) if pat is not None else None
        if m is not None:
            of = m.group("of")
            return Role(name, r.kind, r.dims, r.domain, r.doc.replace("{of!r}", repr(of)).replace("{of}", of))
    raise FormulationError(f"role {name!r} is not declared: say what it is with treeopt_dsl.roles.register_role("
                           f"Role({name!r}, kind, dims, domain, doc)) (kinds: {', '.join(KINDS)})")


def describe(name: str) -> str:
    """One line: the role, its kind, dimensions, domain and meaning."""
    r = role(name)
    dims = " or ".join("(" + ", ".join(d) + ")" for d in r.dims) if r.dims else ""
    dom = "" if r.kind != "variables" or r.domain == "any" else f", {r.domain}"
    return f"{name}: {r.kind}{' ' + dims if dims else ''}{dom} -- {r.doc}"


def check_value(name: str, value: Any) -> str | None:
    """Why a built ``value`` does not match the declaration of role ``name`` (``None``: it matches)."""
    r = role(name)
    expr_types = (LinExpr, QuadExpr, NLExpr)
    if r.kind == "variables":
        ok = isinstance(value, VarFamily)
    elif r.kind == "expression":
        ok = isinstance(value, (*expr_types, VarFamily))  # a family is an expression too
    elif r.kind == "constraints":
        ok = isinstance(value, NLConstraint) or type(value).__name__.endswith("Constraint")
    elif r.kind == "loss":  # a loss block (anything built and completed like one) or an expression
        ok = (callable(getattr(value, "build", None)) and callable(getattr(value, "complete", None))) \
            or isinstance(value, expr_types)
    else:
        ok = True
    if not ok:
        return f"role {name!r} is declared {r.kind}, the block provided a {type(value).__name__}"
    dims = getattr(value, "dims", None)
    if r.dims and dims is not None and tuple(dims) not in r.dims:
        return f"role {name!r} is declared with dims {r.dims}, the block provided {tuple(dims)}"
    if r.kind == "variables" and r.domain != "any":
        kind = str(getattr(getattr(value, "kind", None), "value", getattr(value, "kind", ""))).lower()
        if r.domain not in kind:
            return f"role {name!r} is declared {r.domain}, the block provided {kind or 'unknown'} variables"
    return None


__all__ = ["DOMAINS", "KINDS", "LIBRARY_ROLES", "ROLES", "Role", "check_value", "describe", "register_role", "role"]
