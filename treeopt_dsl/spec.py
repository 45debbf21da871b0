"""Named, parameterized formulations: what ``treeopt formulations`` lists and ``--param`` sets.

A :class:`FormulationSpec` turns user parameters into a :class:`~treeopt_dsl.formulation.Formulation`
(a list of blocks), scales the data as the paper does, and builds, solves and decodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from .data import Dataset, Scaler
from .errors import FormulationError
from .formulation import Built, Formulation
from .result import SolveResult
from .topology import Topology


@dataclass(frozen=True)
class Param:
    """One parameter: its name, default, a parser from text (for ``--param``), and help."""

    name: str
    default: Any
    parse: Callable[[str], Any]
    help: str

    def coerce(self, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return self.parse(value)
            except (TypeError, ValueError) as exc:
                raise FormulationError(f"bad value {value!r} for parameter {self.name!r}: {exc}") from None
        return value


def number_or(*words: str) -> Callable[[str], Any]:
    """Parser for a float or one of ``words``."""

    def parse(text: str) -> Any:
        if text in words:
            return text
        return float(text)

    parse.__name__ = "number" + ("|" + "|".join(words) if words else "")
    return parse


def floats(text: str) -> Any:
    """``1`` or ``1,10,100`` (one value per level)."""
    parts = [float(t) for t in str(text).split(",")]
    return parts[0] if len(parts) == 1 else parts


def optional_float(text: str) -> float | None:
    return None if text.lower() in ("none", "") else float(text)


class FormulationSpec:
    """Base class of the registered formulations."""

    name: ClassVar[str]
    summary: ClassVar[str]
    params: ClassVar[tuple[Param, ...]]
    scaling: ClassVar[str] = "standard"
    #: whether the formulation handles more than two classes (S-ORCT); the others are binary
    multiclass: ClassVar[bool] = False
    #: the solver used when none is named (``treeopt ... --solver``)
    default_solver: ClassVar[str] = "highs"

    def __init__(self, **params: Any) -> None:
        known = {p.name: p for p in self.params}
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise FormulationError(
                f"{self.name} has no parameter(s) {unknown}; its parameters are {sorted(known)}")
        self.values = {n: p.coerce(params.get(n, p.default)) for n, p in known.items()}

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def formulation(self) -> Formulation:  # pragma: no cover - interface
        raise NotImplementedError

    def topology(self) -> Topology | None:
        return Topology(int(self.values["depth"])) if "depth" in self.values else None

    def prepare(self, data: Dataset) -> Dataset:
        """Fit the paper's scaling on ``data`` (training data) and keep the scaler for decoding."""
        if not self.multiclass:
            data.require_binary(self.name)
        scaler = Scaler(self.values.get("scaling", self.scaling)).fit(data.X)
        return replace(scaler.apply(data), meta={**data.meta, "scaler": scaler})

    def build(self, data: Dataset) -> Built:
        return self.formulation().build(self.prepare(data), self.topology())

    def solve(self, data: Dataset, solver: str = "highs", backend: str | None = None, **options: Any) -> SolveResult:
        return self.build(data).solve(solver=solver, backend=backend, **options)

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {"name": cls.name, "summary": cls.summary,
                "params": [{"name": p.name, "default": p.default, "type": getattr(p.parse, "__name__", "str"),
                            "help": p.help} for p in cls.params]}
