"""The continuous relaxation of a built model and its bound: how tight a composition is before any branching.

A MILP's proof is its root bound raised by branching; the LP (or, for MARGOT's squared l2, the convex QP) relaxation
is where that starts, and comparing it between two compositions of the same problem (big-M and flow routing, the
paper's ``M`` and a derived one, a row per tangent and the breakpoints) is how a researcher sees which is tighter
without running either to the end::

    >>> from treeopt_dsl import Dataset
    >>> from treeopt_dsl.formulations import get_formulation
    >>> data = Dataset.from_arrays([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]], [1, -1, 1, -1])
    >>> r = relaxation_bound(get_formulation("oct", depth=1).build(data))
    >>> r.status, r.bound <= 0.0 + 1e-9   # the optimum is 0 errors; the relaxation is below it
    ('optimal', True)

``treeopt compile FORMULATION --data D --lp-bound`` prints it. The relaxation drops integrality only: a block's lazy
rows (the Benders master's cuts) are not in it, so for such a model it is the master's bound, still a valid bound
of the formulation. Solved by HiGHS (a core dependency), whatever solver the MILP would use.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from treeopt_dsl.errors import CapabilityError, OptionError

if TYPE_CHECKING:
    from treeopt_dsl.formulation import Built
    from treeopt_dsl.ir.standard_form import StandardForm


@dataclass(frozen=True)
class Relaxation:
    """The relaxation's optimum (``bound``, a lower bound of the model's optimum when ``status`` is ``"optimal"``;
    ``nan`` otherwise), HiGHS' status text and the seconds it took."""

    bound: float
    status: str
    seconds: float

    def to_dict(self) -> dict[str, float | str]:
        return {"lp_bound": self.bound, "lp_bound_status": self.status, "lp_bound_s": round(self.seconds, 4)}


def relaxation_bound(model: Built | StandardForm, time_limit: float | None = None) -> Relaxation:
    """The optimum of ``model`` with every integrality requirement dropped (module docstring).

    ``model`` is a built formulation (``spec.build(data)``) or its standard form. A nonlinear model (S-ORCT) has no
    LP relaxation: :class:`~treeopt_dsl.errors.CapabilityError`. At ``time_limit`` seconds the status says so and
    the bound is ``nan`` (a simplex stopped early bounds nothing).
    """
    from treeopt_dsl.backends.highs import HighsBackend

    if time_limit is not None and not (np.isfinite(time_limit) and time_limit > 0):
        raise OptionError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    sf = model if hasattr(model, "integrality") else model.compile()
    if sf.nonlinear or sf.nl_constraints:
        raise CapabilityError(f"the model is {sf.problem_class}: it has no LP or QP relaxation to bound it by")
    relaxed = dataclasses.replace(sf, integrality=np.zeros_like(sf.integrality))
    h = HighsBackend.load(relaxed)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    t = time.perf_counter()
    h.run()
    seconds = time.perf_counter() - t
    status = h.modelStatusToString(h.getModelStatus()).lower()
    bound = float(h.getInfo().objective_function_value) if status == "optimal" else float("nan")
    return Relaxation(bound, status, seconds)
