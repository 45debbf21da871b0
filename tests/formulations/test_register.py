"""``register_formulation``: a formulation added from outside the package is solved, fitted and listed like
the library's own; names are checked; installed packages add theirs through an entry-point group."""

from __future__ import annotations

import json

import numpy as np
import pytest

from treeopt_dsl.cli import main
from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulations import OCT, REGISTRY, get_formulation, register_formulation
from treeopt_dsl.formulations.spec import Param


def _data() -> Dataset:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return Dataset.from_arrays(X, np.where((X[:, 0] > 0) ^ (X[:, 1] > 0.5), 1, -1))


@pytest.fixture
def penalized() -> type:
    class PenalizedOCT(OCT):
        """OCT whose splits cost 2 errors each unless said otherwise (a user's variant)."""

        name = "penalized_oct_test"
        summary = "OCT with alpha = 2 by default"
        params = tuple(Param("alpha", 2.0, float, p.help) if p.name == "alpha" else p for p in OCT.params)

    register_formulation(PenalizedOCT)
    yield PenalizedOCT
    REGISTRY.pop("penalized_oct_test", None)


def test_a_registered_formulation_solves_fits_and_is_listed(penalized, capsys) -> None:
    data = _data()
    mine = get_formulation("penalized_oct_test", depth=1).solve(data, time_limit=30)
    same = get_formulation("oct", depth=1, alpha=2.0).solve(data, time_limit=30)
    assert mine.status.value == same.status.value == "optimal"
    assert mine.objective == pytest.approx(same.objective)
    from treeopt_dsl.estimator import OptimalTreeClassifier

    clf = OptimalTreeClassifier(formulation="penalized_oct_test", depth=1, time_limit=30).fit(data.X, data.y)
    assert clf.result_.objective == pytest.approx(same.objective)
    assert main(["formulations", "--json"]) == 0
    names = [f["name"] for f in json.loads(capsys.readouterr().out)["formulations"]]
    assert "penalized_oct_test" in names


def test_names_are_checked(penalized) -> None:
    class Clash(OCT):
        name = "penalized_oct_test"

    with pytest.raises(FormulationError, match="already registered"):
        register_formulation(Clash)
    register_formulation(Clash, replace=True)
    assert REGISTRY["penalized_oct_test"] is Clash

    class Bad(OCT):
        name = "Bad-Name"

    with pytest.raises(FormulationError, match="lower-case"):
        register_formulation(Bad)
    with pytest.raises(FormulationError, match="FormulationSpec subclass"):
        register_formulation(object)  # type: ignore[arg-type]


def test_installed_packages_register_through_entry_points(monkeypatch) -> None:
    import treeopt_dsl.formulations as F

    class FromPlugin(OCT):
        name = "plugin_oct_test"

    class EP:
        def __init__(self, name: str, obj: object) -> None:
            self.name, self.value, self._obj = name, f"plugin:{name}", obj

        def load(self) -> object:
            if isinstance(self._obj, Exception):
                raise self._obj
            return self._obj

    eps = [EP("good", FromPlugin), EP("broken", ImportError("no module named plugin"))]
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: eps if group == F.ENTRY_POINT_GROUP else [])
    try:
        with pytest.warns(RuntimeWarning, match="'broken'"):
            F._load_entry_points()
        assert get_formulation("plugin_oct_test", depth=1).name == "plugin_oct_test"
    finally:
        REGISTRY.pop("plugin_oct_test", None)
