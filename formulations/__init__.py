"""The literature's formulations, each a short composition of blocks (installed as treeopt_dsl.formulations).

The built-in families are registered by name (:data:`FORMULATIONS`: name -> ``"module:Class"``) and imported when
first looked up (``get_formulation(name)``, ``REGISTRY[name]``, ``from treeopt_dsl.formulations import OCT``), so
that a call pays only for its own family: ``oct``'s exact route imports neither the risk scores nor S-ORCT nor their
starts. Iterating over :data:`REGISTRY` lists the names without importing; its values (``REGISTRY.items()``, what
``treeopt formulations`` lists) import every family.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulations.spec import FormulationSpec
from treeopt_dsl.registry import load

#: the built-in formulations: name -> ``"module:Class"``, each imported when first looked up (the one list of
#: them: :data:`REGISTRY`, the names :func:`__getattr__` exports and ``treeopt formulations`` read it)
FORMULATIONS: dict[str, str] = {
    "olct": "treeopt_dsl.formulations.olct:OLCT",
    "olct_univariate": "treeopt_dsl.formulations.olct:UnivariateOLCT",
    "oct": "treeopt_dsl.formulations.oct:OCT",
    "octh": "treeopt_dsl.formulations.oct:OCTH",
    "margot": "treeopt_dsl.formulations.margot:MARGOT",
    "margot_hfs": "treeopt_dsl.formulations.margot:MARGOT_HFS",
    "margot_sfs": "treeopt_dsl.formulations.margot:MARGOT_SFS",
    "ors": "treeopt_dsl.formulations.risk:ORS",
    "ogrs": "treeopt_dsl.formulations.risk:OGRS",
    "sorct": "treeopt_dsl.formulations.sorct:SORCT",
    "odt_categorical": "treeopt_dsl.formulations.categorical:ODTCategorical",
}


class Registry(MutableMapping[str, type[FormulationSpec]]):
    """The registered formulations by name: the built-in ones (:data:`FORMULATIONS`) imported on first lookup,
    the ones :func:`register_formulation` added as classes. ``name in REGISTRY``, ``len`` and iteration read names
    only; ``REGISTRY[name]`` (and ``values``/``items``) import what they return. ``plugins`` (the installed
    packages' entry points, :data:`ENTRY_POINT_GROUP`) is called once, when an answer could involve one: the first
    listing, or a name that is not built in (a plug-in cannot take a built-in name), so that looking up ``oct`` does
    not scan the installed packages."""

    def __init__(self, targets: dict[str, str], plugins: Callable[[], None] | None = None) -> None:
        self._targets = targets
        self._classes: dict[str, type[FormulationSpec]] = {}
        self._removed: set[str] = set()
        self._plugins = plugins

    def _load_plugins(self) -> None:
        """Call ``plugins`` once (it registers through :func:`register_formulation`, which asks this mapping)."""
        if self._plugins is not None:
            plugins, self._plugins = self._plugins, None
            plugins()

    def _built_in(self, name: object) -> bool:
        return name in self._targets and name not in self._removed

    def __getitem__(self, name: str) -> type[FormulationSpec]:
        if name not in self._classes:
            if not self._built_in(name):
                self._load_plugins()
                if name not in self._classes:
                    raise KeyError(name)
                return self._classes[name]
            cls = load(self._targets[name])
            if getattr(cls, "name", None) != name:  # the table and the class must agree
                raise FormulationError(f"FORMULATIONS[{name!r}] names {self._targets[name]}, whose name is "
                                       f"{getattr(cls, 'name', None)!r}")
            self._classes[name] = cls
        return self._classes[name]

    def __setitem__(self, name: str, cls: type[FormulationSpec]) -> None:
        self._classes[name] = cls
        self._removed.discard(name)

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._classes.pop(name, None)
        if name in self._targets:
            self._removed.add(name)

    def __iter__(self) -> Iterator[str]:
        self._load_plugins()
        return iter(dict.fromkeys([*(k for k in self._targets if k not in self._removed), *self._classes]))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        if name in self._classes or self._built_in(name):
            return True
        self._load_plugins()
        return name in self._classes

    def __repr__(self) -> str:
        return f"Registry({sorted(self)})"


#: every registered formulation by name (:class:`Registry`: a mapping whose built-in values are imported on
#: lookup)
REGISTRY: Registry = Registry(FORMULATIONS, plugins=lambda: _load_entry_points())

#: the classes ``from treeopt_dsl.formulations import OCT`` gives, read from :data:`FORMULATIONS`
_CLASSES: dict[str, str] = {target.rpartition(":")[2]: name for name, target in FORMULATIONS.items()}


def __getattr__(attr: str) -> Any:
    """PEP 562: a built-in formulation's class (``OCT``, ``SORCT``, ...) imported when it is first asked for."""
    if attr in _CLASSES:
        return REGISTRY[_CLASSES[attr]]
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


#: the entry-point group through which an installed package adds formulations (``treeopt`` lists them too):
#: ``[project.entry-points."treeopt_dsl.formulations"] mine = "my_pkg.module:MySpec"``
ENTRY_POINT_GROUP = "treeopt_dsl.formulations"


def register_formulation(cls: type[FormulationSpec] | None = None, *, replace: bool = False) -> Any:
    """Add a formulation to :data:`REGISTRY` without editing the package; usable as a decorator.

    ``cls`` is a :class:`~treeopt_dsl.formulations.spec.FormulationSpec` subclass with a ``name`` (lower case, ``_`` for
    ``-``), a ``summary``, its ``params`` (each a :class:`~treeopt_dsl.formulations.spec.Param`: default, parser, help
    and the range its numbers must keep) and a ``formulation()`` composing blocks (the library's or your own
    :class:`~treeopt_dsl.blocks.Block` subclasses). Its name must be new unless ``replace=True``. Then
    ``get_formulation(name)``, the estimators (``OptimalTreeClassifier(formulation=name)``) and, when the class
    is exposed through the ``treeopt_dsl.formulations`` entry-point group of an installed package, the
    ``treeopt`` command use it.

    Example::

        >>> from dataclasses import replace
        >>> from treeopt_dsl.formulations import OCT, register_formulation, get_formulation
        >>> @register_formulation
        ... class SparseOCT(OCT):
        ...     name = "sparse_oct_example"
        ...     summary = "OCT with a penalty per split by default"
        ...     params = tuple(replace(p, default=1.0) if p.name == "alpha" else p for p in OCT.params)
        >>> get_formulation("sparse_oct_example").values["alpha"]
        1.0
        >>> get_formulation("sparse_oct_example", alpha=-1.0)   # the range stays OCT's
        Traceback (most recent call last):
        ...
        treeopt_dsl.errors.FormulationError: bad value -1.0 for parameter 'alpha': expected a number >= 0
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



def get_formulation(name: str, **params: object) -> FormulationSpec:
    """The registered formulation ``name`` with ``params``; a clear error for unknown names."""
    key = name.lower().replace("-", "_")
    if key not in REGISTRY:
        raise FormulationError(f"unknown formulation {name!r}; available: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[key](**params)


__all__ = ["ENTRY_POINT_GROUP", "FORMULATIONS", "MARGOT", "MARGOT_HFS", "MARGOT_SFS", "OCT", "OCTH",
           "OGRS", "OLCT", "ORS", "REGISTRY", "SORCT", "ODTCategorical", "Registry", "UnivariateOLCT",
           "get_formulation", "register_formulation"]
