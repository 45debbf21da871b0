"""The library's exception types.

Every error a user can cause is one of these, with a message that says what to do next.
They all derive from :class:`TreeoptError`, so ``except TreeoptError`` catches them all; the
command line prints ``str(error)`` on one line and exits non-zero.
"""

from __future__ import annotations


class TreeoptError(Exception):
    """Base class of every error raised on purpose by treeopt-dsl."""


class DataError(TreeoptError, ValueError):
    """Input data is unusable: NaN/inf, wrong label set, shape mismatch, empty data, unknown dataset."""


class ModelError(TreeoptError, ValueError):
    """An expression or constraint is malformed (dimension mismatch, unknown family, bad bound)."""


class FormulationError(TreeoptError, ValueError):
    """A formulation cannot be built: a missing role, a bad parameter, an unknown formulation."""


class SolverNotAvailable(TreeoptError, ImportError):
    """The requested solver or backend is not installed (the message names the pip extra)."""


class CapabilityError(TreeoptError, ValueError):
    """The chosen backend or solver cannot handle this model (e.g. a quadratic objective on CBC)."""


class ModelTooLarge(TreeoptError, RuntimeError):
    """The model exceeds what the solver's licence allows (e.g. Gurobi's size-limited pip licence) or what the
    solver can hold in memory (STreeD on tens of thousands of threshold columns)."""


class OptionError(TreeoptError, ValueError):
    """A solve option is unknown or out of range (negative time limit, misspelled option name, ...)."""


class CertificateError(TreeoptError, RuntimeError):
    """The solver's answer is not reproduced by the decoded model (raised only when asked to)."""

    def __init__(self, message: str, result: object | None = None) -> None:
        super().__init__(message)
        self.result = result


class SolveError(TreeoptError, RuntimeError):
    """The solve ended without a usable solution (infeasible, unbounded, or no incumbent at the limit)."""

    def __init__(self, message: str, result: object | None = None) -> None:
        super().__init__(message)
        self.result = result


class UncertifiedWarning(UserWarning):
    """A solver's answer failed its certificate (the result's status is ``uncertified``).

    Make it an error with ``warnings.simplefilter("error", UncertifiedWarning)``.
    """


class FallbackWarning(UserWarning):
    """A learned model was replaced by a simpler one that did as well on validation (e.g. a contextual tree whose
    policy did not beat its best single tree); the estimator's attributes say which model predicts.

    Silence it with ``warnings.simplefilter("ignore", FallbackWarning)``.
    """
