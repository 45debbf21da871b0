"""The intermediate representation: labeled, vectorized variables, expressions and constraints."""

from treeopt_dsl.ir.expr import Constraint, LinExpr, QuadExpr, affine, linsum
from treeopt_dsl.ir.left_operands import defer_left_dataarrays
from treeopt_dsl.ir.model import Model
from treeopt_dsl.ir.standard_form import StandardForm, compile_model
from treeopt_dsl.ir.variables import Kind, VarFamily

__all__ = ["Constraint", "Kind", "LinExpr", "Model", "QuadExpr", "StandardForm", "VarFamily", "affine", "compile_model",
           "linsum"]

defer_left_dataarrays()  # ``D * x`` with a DataArray D on the left: as ``x * D`` (see left_operands)
