"""The protocol of an exact engine: a route that answers a composition it recognizes without a MILP solver.

A MILP/NLP route (:class:`~treeopt_dsl.backends.base.Backend`) takes any model of its problem classes; an engine
(the dynamic programs of :mod:`treeopt_dsl.exact`) takes the compositions it solves exactly and says why it does
not take the others. Engines join the route registry (:mod:`treeopt_dsl.backends`) through the entry-point group
:data:`ROUTE_GROUP` of an installed package, so that the solve pipeline names none of them::

    [project.entry-points."treeopt_dsl.routes"]
    streed = "treeopt_dsl.exact.route:StreedEngine"
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

from treeopt_dsl.errors import OptionError

#: the entry-point group of the engines (and of a third party's routes)
ROUTE_GROUP = "treeopt_dsl.routes"

#: the options of a MILP solve an engine accepts and ignores (no MILP, no solver to pass them to)
IGNORED = frozenset({"gap", "threads", "seed", "verbose", "log_callback", "warm_start", "raise_on_failure",
                     "progress"})


class Estimate(NamedTuple):
    """What an engine expects a composition to cost before it runs (:meth:`Engine.estimate`): ``seconds``
    (``None``: it does not take the composition, or it would not fit), ``why`` (the reason, or what it would run)
    and the ``bytes`` of memory it would need at its peak."""

    seconds: float | None
    why: str
    bytes: float = 0.0


class Engine:
    """An exact route. Subclasses set the class attributes and implement :meth:`solve_built` (and, to answer
    before any model is built, :meth:`solve_spec`)."""

    #: the backend name the result reports (``"dp"``)
    name: ClassVar[str]
    #: the solver names a user gives for it (``--solver streed``)
    solvers: ClassVar[tuple[str, ...]]
    #: the pip extra that installs what it runs on
    extra: ClassVar[str]
    #: options it takes besides ``time_limit`` (``max_thresholds``)
    options: ClassVar[frozenset[str]] = frozenset()
    #: what it solves, for ``treeopt solvers`` (``["DP:oct"]``)
    problem_classes: ClassVar[tuple[str, ...]] = ()

    def available(self) -> bool:  # pragma: no cover - interface
        """Whether it can run here (its optional dependency installed)."""
        raise NotImplementedError

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The options it takes (its own and ``time_limit``), the MIP options it ignores dropped; an unknown name is
        an :class:`~treeopt_dsl.errors.OptionError` naming what it takes."""
        unknown = sorted(set(options) - IGNORED - self.options - {"time_limit"})
        if unknown:
            took = ", ".join(sorted({"time_limit", *self.options}))
            raise OptionError(f"unknown option(s) {unknown} for {self.solvers[0]} (it takes {took})")
        return {k: v for k, v in options.items() if k not in IGNORED}

    def estimate(self, spec: Any, data: Any, **options: Any) -> Estimate:
        """The cost of solving ``spec`` on ``data`` here, before anything is built or run: what
        ``--solver auto`` compares (:func:`treeopt_dsl.backends.plan_route`) and what a forced run checks against
        the memory budget (:func:`treeopt_dsl.defaults.memory_budget`). An engine without a cost model is never
        chosen automatically."""
        return Estimate(None, f"{self.solvers[0]} gives no estimate (name it to use it)")

    def solve_spec(self, spec: Any, data: Any, **options: Any) -> Any:
        """The answer for a registered formulation ``spec`` on ``data`` before any model is built (a
        :class:`~treeopt_dsl.result.SolveResult`), or ``None`` when the composition is recognized only on the built
        model (the caller builds it and calls :meth:`solve_built`)."""
        return None

    def solve_built(self, built: Any, **options: Any) -> Any:  # pragma: no cover - interface
        """The answer for a built formulation, or a :class:`~treeopt_dsl.errors.CapabilityError` naming why the
        engine does not solve it."""
        raise NotImplementedError

    def row(self) -> dict[str, Any]:
        """The engine as a row of ``treeopt solvers``, beside the backends'."""
        return {"solver": self.solvers[0], "backend": self.name, "installed": self.available(),
                "problem_classes": list(self.problem_classes), "features": ["time_limit", *sorted(self.options)],
                "extra": self.extra}
