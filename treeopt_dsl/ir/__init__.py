"""The intermediate representation: labeled, vectorized variables, expressions and constraints."""

from .constraints import Constraint
from .expr import LinExpr, QuadExpr, affine, linsum
from .model import Model
from .standard_form import StandardForm, compile_model
from .variables import Kind, VarFamily

__all__ = ["Constraint", "Kind", "LinExpr", "Model", "QuadExpr", "StandardForm", "VarFamily", "affine", "compile_model",
           "linsum"]
