"""The model: variable families, constraint families and a minimized objective."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from treeopt_dsl.errors import ModelError
from treeopt_dsl.ir.expr import Constraint, ExprOps, LinExpr, QuadExpr
from treeopt_dsl.ir.labels import as_coords
from treeopt_dsl.ir.nonlinear import NLConstraint, NLExpr
from treeopt_dsl.ir.standard_form import StandardForm, compile_model
from treeopt_dsl.ir.variables import Kind, VarFamily


class Model:
    """A labeled, vectorized optimization model (the IR). The objective is always minimized.

    Example
    -------
    >>> m = Model()
    >>> x = m.add_variables("x", ("i",), {"i": 3}, lower=0, upper=1)
    >>> c = m.add_constraints("cap", x.sum("i") <= 2)
    >>> m.add_objective(-1.0 * x.sum(), "reward")
    >>> m.compile().A.shape
    (1, 3)
    """

    def __init__(self, name: str = "treeopt") -> None:
        self.name = name
        self.variables: dict[str, VarFamily] = {}
        self.constraints: dict[str, Constraint] = {}
        self.objective: dict[str, LinExpr | QuadExpr] = {}
        #: nonlinear objective terms (NLExpr), for the NLP backends; the linear path ignores them
        self.nonlinear: dict[str, NLExpr] = {}
        #: nonlinear constraint families (NLConstraint), for the NLP backends
        self.nl_constraints: dict[str, NLConstraint] = {}
        self.n_vars = 0

    # ------------------------------------------------------------------ building
    def add_variables(self, name: str, dims: tuple[str, ...] | list[str] = (),
                      coords: Mapping[str, Any] | None = None, kind: Kind | str = Kind.CONTINUOUS,
                      lower: Any = None, upper: Any = None, priority: int = 0) -> VarFamily:
        """Add a family of columns over ``dims`` (coordinates: labels, or an int for ``range``); ``priority``: their
        branching priority (:class:`~treeopt_dsl.ir.variables.VarFamily`)."""
        if name in self.variables:
            raise ModelError(f"variable family {name!r} already exists")
        dims, cs = as_coords(dims, coords)
        fam = VarFamily(name, dims, cs, Kind(kind), lower, upper, self.n_vars, priority)
        self.variables[name] = fam
        self.n_vars += fam.size
        return fam

    def add_constraints(self, name: str, constraint: Constraint | NLConstraint) -> Constraint | NLConstraint:
        """Register a constraint family (made by ``expr <= rhs`` etc.) under ``name``."""
        if isinstance(constraint, NLConstraint):
            if name in self.constraints or name in self.nl_constraints or not name.isidentifier():
                raise ModelError(f"constraint family name {name!r} is taken or not an identifier")
            constraint.name = name
            self.nl_constraints[name] = constraint
            return constraint
        if not isinstance(constraint, Constraint):
            raise ModelError(f"add_constraints({name!r}, ...) needs a comparison such as `expr <= rhs`")
        if not name.isidentifier():
            raise ModelError(f"constraint family name {name!r} must be an identifier")
        if name in self.constraints or name in self.nl_constraints:
            raise ModelError(f"constraint family {name!r} already exists")
        constraint.name = name
        self.constraints[name] = constraint
        return constraint

    def add_objective(self, expr: Any, name: str) -> None:
        """Add ``sum(expr)`` (over all its dimensions) to the minimized objective, as term ``name``."""
        if isinstance(expr, ExprOps):
            expr = expr.to_expr()
        if isinstance(expr, (int, float)):
            expr = LinExpr.constant(float(expr))
        if isinstance(expr, NLExpr):
            total_nl = expr.sum() if expr.dims else expr
            self.nonlinear[name] = self.nonlinear[name] + total_nl if name in self.nonlinear else total_nl
            return
        if not isinstance(expr, (LinExpr, QuadExpr)):
            raise ModelError("an objective term must be a linear, quadratic or nonlinear expression")
        total = expr.sum() if expr.dims else expr
        if name in self.objective:
            total = self.objective[name] + total
        self.objective[name] = total

    # ------------------------------------------------------------------ access
    def __getitem__(self, name: str) -> VarFamily:
        try:
            return self.variables[name]
        except KeyError:
            raise ModelError(f"no variable family {name!r}; the model has {sorted(self.variables)}") from None

    @property
    def is_mip(self) -> bool:
        return any(f.kind is not Kind.CONTINUOUS for f in self.variables.values())

    @property
    def is_quadratic(self) -> bool:
        return any(isinstance(t, QuadExpr) and t.qcoef.size for t in self.objective.values())

    @property
    def problem_class(self) -> str:
        """``LP``, ``MILP``, ``QP``, ``MIQP``, ``NLP`` or ``MINLP``, as :attr:`StandardForm.problem_class` says
        of the compiled model."""
        if self.nonlinear or self.nl_constraints:
            return "MINLP" if self.is_mip else "NLP"
        return ("MI" if self.is_mip else "") + ("QP" if self.is_quadratic else "LP")

    def size(self) -> dict[str, int | str]:
        """What :meth:`StandardForm.summary` reports, counted without compiling: rows with a finite side,
        nonzero terms (before duplicate terms of a row are merged: the compiled count can only be lower),
        integer columns and the problem class. Routes that never hand the model to a solver (the exact DP)
        report this, so that they do not pay for a CSR matrix nobody reads."""
        n_rows = nnz = 0
        for con in self.constraints.values():
            size, T = con.size, con.expr.n_terms
            keep = ~(np.isneginf(con.lower.reshape(size)) & np.isposinf(con.upper.reshape(size)))
            n_rows += int(keep.sum())
            if T:
                e = con.expr
                valid = (e.vars.reshape(size, T) >= 0) & (e.coef.reshape(size, T) != 0.0)
                nnz += int(np.count_nonzero(valid[keep]))
        n_int = sum(f.size for f in self.variables.values() if f.kind is not Kind.CONTINUOUS)
        return {"n_variables": self.n_vars, "n_constraints": n_rows, "n_nonzeros": nnz, "n_integer": int(n_int),
                "problem_class": self.problem_class}

    # ------------------------------------------------------------------ evaluation
    def objective_terms(self, x: np.ndarray) -> dict[str, float]:
        terms = {k: float(np.asarray(t.evaluate(x)).sum()) for k, t in self.objective.items()}
        for k, t in self.nonlinear.items():
            terms[k] = terms.get(k, 0.0) + float(np.asarray(t.evaluate(x)).sum())
        return terms

    def objective_value(self, x: np.ndarray) -> float:
        return float(sum(self.objective_terms(x).values()))

    def max_violation(self, x: np.ndarray) -> float:
        """Largest violation of any row or column bound at ``x`` (integrality not included)."""
        return self.worst_violation(x)[1]

    def worst_violation(self, x: np.ndarray) -> tuple[str, float]:
        """Where ``x`` is most violated (a row family, or a variable family's bounds) and by how much
        (``("no row", 0.0)`` at a feasible point; integrality not included)."""
        where, worst = "no row", 0.0
        for name, c in (*self.constraints.items(), *self.nl_constraints.items()):
            if c.size:
                v = float(c.violation(x).max())
                if v > worst:
                    where, worst = f"row family {name!r}", v
        for name, f in self.variables.items():
            v = f.values(x)
            if v.size:
                b = max(float(np.maximum(f.lower - v, 0).max()), float(np.maximum(v - f.upper, 0).max()))
                if b > worst:
                    where, worst = f"the bounds of {name!r}", b
        return where, worst

    def compile(self) -> StandardForm:
        return compile_model(self)

    def __repr__(self) -> str:
        return (f"Model({self.name!r}: {len(self.variables)} variable families / {self.n_vars} columns, "
                f"{len(self.constraints)} constraint families)")
