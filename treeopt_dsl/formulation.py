"""Formulations as ordered lists of blocks.

A :class:`Block` is a small piece of a paper's model. ``build`` reads what earlier blocks
*provide* (by role name, e.g. ``"split"``, ``"z"``, ``"reach"``) from the :class:`BuildContext`
and adds variable families, constraint families and objective terms to its model. ``complete``
is the same block read backwards: given the values of the families earlier blocks own, it fills
in its own (routing from the hyperplanes, slacks from the routing, ...). Completion serves the
certificate after every solve and, later, warm starts.

A :class:`Formulation` checks the roles before building: a block whose role is missing fails with
a message naming the block that provides it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.ir import Model, StandardForm
from treeopt_dsl.ir.variables import Kind
from treeopt_dsl.roles import role
from treeopt_dsl.solve import solve_built
from treeopt_dsl.topology import Topology


@dataclass
class Numerics:
    """Tolerances a formulation promises to respect.

    ``eps`` is the gap of the strict-inequality rows (3.7b). The solver must be asked for a primal
    feasibility tolerance at most ``eps / 4`` and an integrality tolerance at most
    ``eps / (4 * max_big_m)``, so that neither rounding can move a sample across the gap
    ``(0, eps)`` that the model keeps empty (ARCHITECTURE.md, Numerics).
    """

    eps: float = 1e-5
    max_big_m: float = 0.0

    def solver_tolerances(self) -> dict[str, float]:
        feas = min(1e-7, self.eps / 4)
        integ = 1e-6 if self.max_big_m <= 0 else min(1e-6, max(1e-9, self.eps / (4 * self.max_big_m)))
        return {"feasibility_tol": feas, "integrality_tol": integ}


class BuildContext:
    """What blocks share while building: the model, the (scaled) data, the topology and the roles."""

    def __init__(self, model: Model, data: Dataset, topology: Topology | None, numerics: Numerics) -> None:
        self.model, self.data, self.topology, self.numerics = model, data, topology, numerics
        self.roles: dict[str, Any] = {}
        self.owner: dict[str, str] = {}
        self._state: dict[int, dict[str, Any]] = {}

    def __getitem__(self, role: str) -> Any:
        try:
            return self.roles[role]
        except KeyError:
            raise FormulationError(f"role {role!r} has not been provided by any earlier block") from None

    def __contains__(self, role: str) -> bool:
        return role in self.roles

    def provide(self, role: str, value: Any, by: str) -> None:
        if role in self.roles:
            raise FormulationError(f"role {role!r} is provided twice (by {self.owner[role]} and {by})")
        self.roles[role] = value
        self.owner[role] = by

    def state(self, block: Block) -> dict[str, Any]:
        """What ``block`` keeps from building this model for later (its own columns, to complete them): held
        here, not on the block, so one block instance can be built into several models (a start that
        builds a smaller model from the same blocks) without one build overwriting another's columns."""
        return self._state.setdefault(id(block), {})

    @property
    def topo(self) -> Topology:
        if self.topology is None:
            raise FormulationError("this block needs a tree topology (give depth=...)")
        return self.topology


class Block:
    """Base class of blocks. Subclasses set ``requires``/``provides`` and implement :meth:`build`."""

    requires: ClassVar[tuple[str, ...]] = ()
    provides: ClassVar[tuple[str, ...]] = ()

    def build(self, ctx: BuildContext) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def complete(self, ctx: BuildContext, x: np.ndarray) -> None:
        """Fill this block's own columns of ``x`` from the columns earlier blocks own (in place)."""

    def project(self, ctx: BuildContext, x: np.ndarray) -> None:
        """Move a start's values of this block's own decision columns onto this block's constraints (in place), before
        the start is handed to a solver. A local solver (Ipopt) that ends worse than its start keeps the start
        (:func:`treeopt_dsl.solve.solve_built`), so a start must be feasible: e.g. random leaf class probabilities
        that do not sum to one are moved onto the simplex. Columns without values (NaN) are left to :meth:`complete`."""

    def polish(self, ctx: BuildContext, x: np.ndarray) -> None:
        """Make a solver's point exact where this block's integer structure decides it (in place), after
        the integer columns were rounded: e.g. a weight whose l0 indicator is 0 is set to 0, so that the
        decoded model is the one the integers describe, not one the solver's tolerances let through."""

    def separate(self, ctx: BuildContext, x: np.ndarray) -> Cuts | None:
        """Lazy constraints: rows of the *full* model that the built model leaves out and that the integer
        point ``x`` violates (``None``: this block has none). A block that overrides this builds a
        relaxation (e.g. a Benders master); the solve adds the rows it returns until none is violated,
        through the solver's lazy-constraint callback or by re-solving (:mod:`treeopt_dsl.lazy`)."""
        return None

    def tangents(self, ctx: BuildContext, x: np.ndarray, every: bool = False) -> Cuts | None:
        """Rows of the full model valid at *every* point, integer or not (tangent planes of a convex objective
        term), that ``x``, e.g. a point of the LP relaxation, violates (``None``: none, or this block has none);
        ``every``: the rows at ``x`` whether violated or not (the cut at a known good card).
        A cutting-plane loop over the relaxation (:func:`treeopt_dsl.lazy.relaxation_cuts`) collects them before
        the branch and bound starts."""
        return None

    def notes(self, ctx: BuildContext, blocks: Sequence[Block]) -> dict[str, Any]:
        """What this block says about the answers of the model it built, whatever solved it (``{}``: nothing):
        e.g. the split block's ``"resolution"``, the distinct training values no split of the model can put a cut
        between. ``blocks``: the whole composition (what the block's reading depends on)."""
        return {}

    def provided_by(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({params})"


@dataclass
class Cuts:
    """Rows ``lower <= A x <= upper`` over a model's columns (``A`` CSR), e.g. lazy Benders cuts."""

    A: Any
    lower: np.ndarray
    upper: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.A.shape[0])

    def violation(self, x: np.ndarray) -> np.ndarray:
        """How far ``x`` is outside each row (0 where it holds)."""
        ax = self.A @ np.asarray(x, dtype=float)
        return np.maximum(np.maximum(self.lower - ax, ax - self.upper), 0.0)

    @staticmethod
    def stack(parts: Sequence[Cuts]) -> Cuts | None:
        import scipy.sparse as sp

        parts = [p for p in parts if p is not None and p.n_rows]
        if not parts:
            return None
        return Cuts(sp.vstack([p.A for p in parts], format="csr"), np.concatenate([p.lower for p in parts]),
                    np.concatenate([p.upper for p in parts]))


#: which block class provides a role, for error messages (filled by the blocks package)
PROVIDERS: dict[str, str] = {}


@dataclass
class Built:
    """A formulation instantiated on data: the model, the build context, and how to decode."""

    formulation: Formulation
    ctx: BuildContext
    _sf: StandardForm | None = field(default=None, repr=False)

    @property
    def model(self) -> Model:
        return self.ctx.model

    def compile(self) -> StandardForm:
        if self._sf is None:
            self._sf = self.model.compile()
        return self._sf

    def max_violation(self, x: np.ndarray) -> float:
        """:meth:`Model.max_violation <treeopt_dsl.ir.Model.max_violation>`, from the compiled rows once the model is
        compiled (a solve that will hand the matrix to a solver compiles it before its starts): one sparse product
        ``A x`` instead of evaluating every row family term by term (OLCT on adult at depth 3, 36.7 M nonzeros:
        0.18 s against 0.83 s per start checked, 2.8 s under load). Not compiled (a DP start may answer without a
        matrix) or nonlinear rows: the model's own evaluation. Entries at NaN columns (not completed) count as no
        violation, as in the model's."""
        if self._sf is None or self.model.nl_constraints:
            return self.model.max_violation(x)
        sf = self._sf
        x = np.asarray(x, dtype=float)
        r = sf.A @ x
        rows = np.maximum(sf.row_lower - r, 0.0) + np.maximum(r - sf.row_upper, 0.0)
        cols = np.maximum(sf.col_lower - x, 0.0) + np.maximum(x - sf.col_upper, 0.0)
        return float(max(np.nanmax(rows, initial=0.0), np.nanmax(cols, initial=0.0)))

    def complete(self, x: np.ndarray) -> np.ndarray:
        """Run every block's ``complete`` in order on a copy of ``x``."""
        x = np.array(x, dtype=float)
        for b in self.formulation.blocks:
            b.complete(self.ctx, x)
        return x

    def project(self, x: np.ndarray) -> np.ndarray:
        """A start moved onto the blocks' constraints (every block's :meth:`Block.project` on a copy of ``x``), its
        other columns completed from the decisions when a block moved one; ``x`` itself (a copy) when none did."""
        x = np.array(x, dtype=float)
        moved = x.copy()
        for b in self.formulation.blocks:
            b.project(self.ctx, moved)
        same = (moved == x) | (np.isnan(moved) & np.isnan(x))
        return x if bool(np.all(same)) else self.completed(moved)

    def completed(self, x: np.ndarray) -> np.ndarray:
        """The point with ``x``'s decision columns (:attr:`Formulation.decisions`), every other column completed
        by the blocks: what the decisions alone achieve (the certificate compares it with the solver's point)."""
        start = np.full(np.shape(x), np.nan)
        for name in self.formulation.decisions:
            fam = self.model.variables[name]
            start[fam.ids] = fam.values(x)
        return self.complete(start)

    def rounded(self, x: np.ndarray) -> np.ndarray:
        """A copy of ``x`` with the integer columns rounded."""
        x = np.array(x, dtype=float)
        for f in self.model.variables.values():  # by family: no matrix compiled to read the integrality
            if f.kind is not Kind.CONTINUOUS:
                part = slice(f.offset, f.offset + f.size)
                x[part] = np.round(x[part])
        return x

    def polish(self, x: np.ndarray) -> np.ndarray:
        """A copy of the solver's point ``x`` with the integer columns rounded and every block's
        :meth:`Block.polish` applied (a solver may return ``delta = 1e-7`` or a weight of ``4e-6`` whose
        indicator is 0, both within its tolerances; the decoded model must follow the integers)."""
        x = self.rounded(x)
        for b in self.formulation.blocks:
            b.polish(self.ctx, x)
        return x

    @property
    def lazy(self) -> bool:
        """Whether some block adds lazy constraints (the built model is a relaxation of the formulation)."""
        return any(type(b).separate is not Block.separate for b in self.formulation.blocks)

    def separate(self, x: np.ndarray, tol: float = 1e-6) -> Cuts | None:
        """Every block's lazy rows that ``x`` violates by more than ``tol``. Blocks separate at the rounded point
        (their cuts are those of an integer tree); a row the unrounded ``x`` satisfies is dropped, so that a
        solver calling at a fractional point never gets back a row that does not cut it off (CBC would loop)."""
        xp = self.rounded(x)  # (not polish: that would also settle the relaxed columns the cuts are about)
        cuts = Cuts.stack([b.separate(self.ctx, xp) for b in self.formulation.blocks])
        if cuts is None:
            return None
        keep = cuts.violation(x) > tol
        if not keep.any():
            return None
        return cuts if keep.all() else Cuts(cuts.A[keep], cuts.lower[keep], cuts.upper[keep])

    @property
    def has_tangents(self) -> bool:
        """Whether some block has rows valid at fractional points too (:meth:`Block.tangents`)."""
        return any(type(b).tangents is not Block.tangents for b in self.formulation.blocks)

    def tangents(self, x: np.ndarray, every: bool = False) -> Cuts | None:
        """Every block's :meth:`Block.tangents` at ``x`` (not rounded: they hold at any point)."""
        return Cuts.stack([b.tangents(self.ctx, np.asarray(x, dtype=float), every) for b in self.formulation.blocks])

    @property
    def outer(self) -> list[Block]:
        """The blocks whose objective term must be proven in the function their rows under-estimate (a block with
        ``outer`` true, e.g. ``TangentLogisticLoss(objective="true")``): the solve then runs the outer
        approximation of :func:`treeopt_dsl.lazy.outer_approximation`."""
        return [b for b in self.formulation.blocks if getattr(b, "outer", False)]

    def exact_terms(self, x: np.ndarray, model: Any = None) -> dict[str, float]:
        """The objective terms at ``x`` with every :attr:`outer` block's term in its true function (the other terms
        as the model has them); ``model``: the decoded model, which the outer blocks recompute their terms from."""
        terms = self.model.objective_terms(x)
        for b in self.outer:
            terms[b.name] = b.exact_objective(self.ctx, x, model)
        return terms

    def exact_objective(self, x: np.ndarray, model: Any = None) -> float:
        """The sum of :meth:`exact_terms`: the objective the outer approximation proves."""
        return float(sum(self.exact_terms(x, model).values()))

    def refine(self, x: np.ndarray, slack: float) -> Cuts | None:
        """The :attr:`outer` blocks' new rows at ``x`` (:meth:`TangentLogisticLoss.refine
        <treeopt_dsl.blocks.TangentLogisticLoss.refine>`), ``slack`` shared between them."""
        blocks = self.outer
        return Cuts.stack([b.refine(self.ctx, x, slack / len(blocks)) for b in blocks]) if blocks else None

    def outer_cuts(self) -> Cuts | None:
        """Every row the :attr:`outer` blocks added so far (a later solve starts with them)."""
        return Cuts.stack([b.cuts(self.ctx) for b in self.outer])

    def notes(self) -> dict[str, Any]:
        """Every block's :meth:`Block.notes` on this model, merged (``{"resolution": ...}`` and the like)."""
        out: dict[str, Any] = {}
        for b in self.formulation.blocks:
            out.update(b.notes(self.ctx, self.formulation.blocks))
        return out

    def decode(self, x: np.ndarray) -> Any:
        if self.formulation.decoder is None:
            raise FormulationError(f"formulation {self.formulation.name!r} has no decoder")
        return self.formulation.decoder(self.ctx, x)

    def solve(self, solver: str = "highs", backend: str | None = None, **options: Any) -> Any:
        """Compile, solve, decode and certify. Returns a :class:`~treeopt_dsl.result.SolveResult`."""
        return solve_built(self, solver=solver, backend=backend, **options)


class DeferredBuilt:
    """A :class:`Built` made on first use: ``make()`` builds it when any attribute is read (the DP route answers
    from the blocks without the MILP; exporting the answer's model or scoring another point in it builds the MILP
    then). ``make`` must be picklable when the result is (e.g. ``functools.partial(spec.build, data)``)."""

    def __init__(self, make: Callable[[], Built]) -> None:
        self.__dict__["_make"] = make
        self.__dict__["_built"] = None

    @property
    def is_built(self) -> bool:
        """Whether the MILP has been built."""
        return self.__dict__["_built"] is not None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self.__dict__.get("_built") is None:
            self.__dict__["_built"] = self.__dict__["_make"]()
        return getattr(self.__dict__["_built"], name)

    def __repr__(self) -> str:
        return f"DeferredBuilt(built={self.is_built})"


class Formulation:
    """An ordered composition of blocks.

    >>> from treeopt_dsl import blocks as B
    >>> f = Formulation("tiny", [B.ObliqueSplit(), B.Routing()])
    >>> [type(b).__name__ for b in f.blocks]
    ['ObliqueSplit', 'Routing']
    """

    def __init__(self, name: str, blocks: Sequence[Block],
                 decoder: Callable[[BuildContext, np.ndarray], Any] | None = None,
                 numerics: Numerics | None = None, decisions: Sequence[str] = ()) -> None:
        self.name = name
        #: variable families that determine the fitted model; every other column is completed from them
        self.decisions = tuple(decisions)
        self.blocks = list(blocks)
        self.decoder = decoder
        self.numerics = numerics or Numerics()
        self.check()

    def check(self) -> None:
        """Every role a block requires is provided by an earlier block, and every role is declared
        (:mod:`treeopt_dsl.roles`: what it is, by type)."""
        have: dict[str, str] = {}
        for b in self.blocks:
            for r in (*b.requires, *b.provides):
                try:
                    role(r)
                except FormulationError as exc:
                    raise FormulationError(f"block {type(b).__name__}: {exc}") from None
            for r in b.requires:
                if r not in have:
                    later = [type(o).__name__ for o in self.blocks if r in o.provides]
                    hint = (f"move {later[0]} before it" if later else
                            f"add {PROVIDERS.get(r, 'a block that provides it')} before it")
                    raise FormulationError(
                        f"block {type(b).__name__} needs role {r!r}, which no earlier block provides: {hint}")
            for r in b.provides:
                if r in have:
                    raise FormulationError(f"role {r!r} is provided by both {have[r]} and {type(b).__name__}")
                have[r] = type(b).__name__

    def build(self, data: Dataset, topology: Topology | None = None) -> Built:
        ctx = BuildContext(Model(self.name), data, topology, replace(self.numerics))
        for b in self.blocks:
            b.build(ctx)
            missing = [r for r in b.provides if r not in ctx]
            if missing:
                raise FormulationError(f"block {type(b).__name__} did not provide {missing}")
        return Built(self, ctx)

    def __repr__(self) -> str:
        return f"Formulation({self.name!r}, {self.blocks!r})"
