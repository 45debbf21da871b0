"""The literature's formulations, each a short composition of blocks (installed as treeopt_dsl.formulations)."""

from __future__ import annotations

from typing import Any

from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulations.categorical import ODTCategorical
from treeopt_dsl.formulations.margot import MARGOT, MARGOT_HFS, MARGOT_SFS
from treeopt_dsl.formulations.oct import OCT, OCTH
from treeopt_dsl.formulations.olct import OLCT, UnivariateOLCT
from treeopt_dsl.formulations.risk import OGRS, ORS
from treeopt_dsl.formulations.sorct import SORCT
from treeopt_dsl.formulations.spec import FormulationSpec

REGISTRY: dict[str, type[FormulationSpec]] = {
    cls.name: cls for cls in (OLCT, UnivariateOLCT, OCT, OCTH, MARGOT, MARGOT_HFS, MARGOT_SFS, ORS, OGRS, SORCT,
                             ODTCategorical)
}


#: the entry-point group through which an installed package adds formulations (``treeopt`` lists them too):
#: ``[project.entry-points."treeopt_dsl.formulations"] mine = "my_pkg.module:MySpec"``
ENTRY_POINT_GROUP = "treeopt_dsl.formulations"


def register_formulation(cls: type[FormulationSpec] | None = None, *, replace: bool = False) -> Any:
    """Add a formulation to :data:`REGISTRY` without editing the package; usable as a decorator.

    ``cls`` is a :class:`~treeopt_dsl.formulations.spec.FormulationSpec` subclass with a ``name`` (lower case, ``_`` for
    ``-``), a ``summary``, its ``params`` and a ``formulation()`` composing blocks (the library's or your own
    :class:`~treeopt_dsl.blocks.Block` subclasses). Its name must be new unless ``replace=True``. Then
    ``get_formulation(name)``, the estimators (``OptimalTreeClassifier(formulation=name)``) and, when the class
    is exposed through the ``treeopt_dsl.formulations`` entry-point group of an installed package, the
    ``treeopt`` command use it.

    Example::

        >>> from treeopt_dsl.formulations import OCT, register_formulation, get_formulation
        >>> @register_formulation
        ... class SparseOCT(OCT):
        ...     name = "sparse_oct_example"
        ...     summary = "OCT with a penalty per split by default"
        ...     params = tuple(p if p.name != "alpha" else type(p)("alpha", 1.0, float, p.help) for p in OCT.params)
        >>> get_formulation("sparse_oct_example").values["alpha"]
        1.0
    """

    def add(c: type[FormulationSpec]) -> type[FormulationSpec]:
        if not (isinstance(c, type) and issubclass(c, FormulationSpec)):
            raise FormulationError(f"register_formulation takes a FormulationSpec subclass, got {c!r}")
        name = getattr(c, "name", None)
        if not isinstance(name, str) or not name or name != name.lower().replace("-", "_"):
            raise FormulationError(f"{c.__name__}.name must be a lower-case name with '_' (not '-'), got {name!r}")
        for attr in ("summary", "params"):
            if not hasattr(c, attr):
                raise FormulationError(f"{c.__name__} needs a class attribute {attr!r} (see FormulationSpec)")
        if name in REGISTRY and REGISTRY[name] is not c and not replace:
            raise FormulationError(f"a formulation named {name!r} is already registered ({REGISTRY[name].__name__}); "
                                   "pass replace=True to replace it")
        REGISTRY[name] = c
        return c

    return add if cls is None else add(cls)


def _load_entry_points() -> None:
    """Register the formulations installed packages declare (:data:`ENTRY_POINT_GROUP`); a broken one is skipped
    with a warning naming it."""
    import warnings
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            register_formulation(ep.load())
        except Exception as exc:  # a third-party plug-in must not break the library
            warnings.warn(f"formulation entry point {ep.name!r} ({ep.value}) was not registered: {exc}",
                          RuntimeWarning, stacklevel=2)


_load_entry_points()


def get_formulation(name: str, **params: object) -> FormulationSpec:
    """The registered formulation ``name`` with ``params``; a clear error for unknown names."""
    key = name.lower().replace("-", "_")
    if key not in REGISTRY:
        raise FormulationError(f"unknown formulation {name!r}; available: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[key](**params)


__all__ = ["ENTRY_POINT_GROUP", "MARGOT", "MARGOT_HFS", "MARGOT_SFS", "OCT", "OCTH", "OGRS", "OLCT", "ORS",
           "REGISTRY", "SORCT", "ODTCategorical", "UnivariateOLCT", "get_formulation", "register_formulation"]
