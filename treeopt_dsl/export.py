"""The compiled model handed to the modelling library a researcher already uses: ``to_pyomo``, ``to_linopy``,
``to_mip``, ``to_gurobi``, ``to_highs`` and the maps back (:mod:`treeopt_dsl.backends.export`, where they live with
the backends that build them)."""

from treeopt_dsl.backends.export import (
    from_native,
    mip_highs_available,
    to_gurobi,
    to_highs,
    to_linopy,
    to_mip,
    to_pyomo,
    values_from_names,
)

__all__ = ["from_native", "mip_highs_available", "to_gurobi", "to_highs", "to_linopy", "to_mip", "to_pyomo",
           "values_from_names"]
