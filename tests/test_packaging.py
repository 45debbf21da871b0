"""Every package of the source tree ships in the wheel: pyproject's explicit ``packages`` list must name each
directory with an ``__init__.py`` (a missing entry installs a wheel whose imports fail, while editable installs
and this test suite work: treeopt_dsl.starts was missing for two sessions)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_directory_is_in_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for name, folder in config["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            found.add(".".join([name, *rel.parts]))
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"
    assert listed <= found, f"pyproject.toml lists packages with no directory: {sorted(listed - found)}"


_EXACT_ROUTE = """
import sys
from importlib.util import find_spec
import numpy as np
from treeopt_dsl.data import Dataset
from treeopt_dsl.formulations import get_formulation
rng = np.random.default_rng(0)
X = np.round(rng.normal(size=(40, 3)), 2)
y = np.where(X[:, 0] > 0, 1, -1)
d = Dataset.from_arrays(X, y)
solvers = [s for s, m in (("streed", "pystreed"), ("contree", "pycontree")) if find_spec(m)]
for depth in (2, 3):
    for solver in ["auto", *solvers]:
        get_formulation("oct", depth=depth).solve(d, solver=solver)
print(" ".join(sorted(m for m in ("sklearn", "pandas.io.formats.style", "matplotlib", "highspy") if m in sys.modules)))
families = ("risk", "sorct", "olct", "margot", "categorical")
others = ("scipy.optimize", *(f"treeopt_dsl.formulations.{f}" for f in families))
print(" ".join(sorted(m for m in sys.modules if m in others or m.startswith("treeopt_dsl.starts"))))
print(" ".join(solvers))
import pystreed  # the package imported after its core was loaded alone: its wrapper still works
Z, y01 = (X > 0).astype(np.int32), (y > 0).astype(np.int32)  # class codes (labels -1 crash pystreed itself)
print(int(np.sum(pystreed.STreeDClassifier(max_depth=2).fit(Z, y01).predict(Z) != y01)))
"""


def test_the_exact_route_imports_only_its_engine() -> None:
    """The first call in a fresh process pays for the engine it uses (issue 32): the exact engines' compiled cores
    are loaded without their packages' scikit-learn wrappers, and no MILP solver or plotting library is imported;
    nor the starts (a start is resolved by name when one is asked for, :mod:`treeopt_dsl.registry`), nor
    ``scipy.optimize``, nor any other formulation family (the registry imports a family on lookup).
    The package imported afterwards reuses the core (an extension module loads once per process)."""
    pytest.importorskip("pystreed")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _EXACT_ROUTE], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    imported, loaded, solvers, errors = out.stdout.splitlines()[-4:]
    assert imported == "", f"the exact route imported {imported}"
    assert loaded == "", f"the exact route imported {loaded} (starts, scipy.optimize or another family)"
    assert "streed" in solvers.split()
    assert int(errors) == 0


_CLI_FIT = """
import sys
from treeopt_dsl.cli import main
status = main(["fit", "oct", "--data", "monks-3", "--depth", "3", "--quiet"])
others = ("scipy.optimize", "sklearn", *(f"treeopt_dsl.formulations.{f}" for f in ("risk", "sorct", "olct", "margot")))
print(status, " ".join(sorted(m for m in sys.modules if m in others or m.startswith("treeopt_dsl.starts"))))
"""


def test_the_command_line_fit_of_an_exact_tree_imports_no_start() -> None:
    """``treeopt fit oct`` on the exact route: no start, no ``scipy.optimize`` (the risk cards' scale search), no
    scikit-learn, no other family; ``--refine`` is reached through :data:`treeopt_dsl.registry.REFINE`."""
    pytest.importorskip("pystreed")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _CLI_FIT], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    status, _, loaded = out.stdout.splitlines()[-1].partition(" ")
    assert status == "0"
    assert loaded == "", f"treeopt fit oct imported {loaded}"


_MILP_ROUTE = """
import sys
import numpy as np
from treeopt_dsl.backends import get_backend
from treeopt_dsl.data import Dataset
from treeopt_dsl.formulations import get_formulation
rng = np.random.default_rng(0)
X = np.round(rng.normal(size=(30, 3)), 2)
d = Dataset.from_arrays(X, np.where(X[:, 0] + X[:, 1] > 0, 1, -1))
res = get_formulation("olct", depth=1).solve(d, solver="highs", time_limit=30)
print(type(get_backend("highs")).__name__, res.status.value)
print(" ".join(sorted(m for m in ("linopy", "pyomo", "mip", "pyscipopt", "gurobipy") if m in sys.modules)))
"""


def test_a_highs_solve_imports_no_other_modelling_layer() -> None:
    """A HiGHS solve asks only the first route that has HiGHS (its direct API): before, every route was asked
    whether it had the solver, and linopy and pyomo were imported to answer (about 1 s and 30 MB in each fresh
    process, each task of the experiment runner; pyomo's module-level lock was then a leaked semaphore when a
    task was killed)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _MILP_ROUTE], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    (backend, status), imported = out.stdout.splitlines()[-2].split(), out.stdout.splitlines()[-1]
    assert backend == "HighsBackend" and status == "optimal"
    assert imported == "", f"a HiGHS solve imported {imported}"
