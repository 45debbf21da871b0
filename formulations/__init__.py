"""The literature's formulations, each a short composition of blocks (installed as treeopt_dsl.formulations)."""

from __future__ import annotations

from treeopt_dsl.errors import FormulationError
from treeopt_dsl.spec import FormulationSpec

from .categorical import ODTCategorical
from .margot import MARGOT, MARGOT_HFS, MARGOT_SFS
from .oct import OCT, OCTH
from .olct import OLCT, UnivariateOLCT
from .risk import OGRS, ORS
from .sorct import SORCT

REGISTRY: dict[str, type[FormulationSpec]] = {
    cls.name: cls for cls in (OLCT, UnivariateOLCT, OCT, OCTH, MARGOT, MARGOT_HFS, MARGOT_SFS, ORS, OGRS, SORCT,
                             ODTCategorical)
}


def get_formulation(name: str, **params: object) -> FormulationSpec:
    """The registered formulation ``name`` with ``params``; a clear error for unknown names."""
    key = name.lower().replace("-", "_")
    if key not in REGISTRY:
        raise FormulationError(f"unknown formulation {name!r}; available: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[key](**params)


__all__ = ["MARGOT", "MARGOT_HFS", "MARGOT_SFS", "OCT", "OCTH", "OGRS", "OLCT", "ORS", "REGISTRY", "SORCT",
           "ODTCategorical", "UnivariateOLCT", "get_formulation"]
