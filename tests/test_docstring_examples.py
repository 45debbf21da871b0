"""Every example in the library's docstrings runs and prints what it shows (``>>>`` lines, doctest).

The docstrings are the first documentation a user reads (``help()``, the API site): an example that no longer
runs teaches the wrong call. Examples marked ``# doctest: +SKIP`` need a licensed solver, the network or minutes.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import treeopt_dsl
import treeopt_dsl.backends
import treeopt_dsl.formulations


def _modules() -> list[str]:
    """Every module of the package, with the packages pyproject maps from the repository's own folders
    (``formulations/``, ``backends/``: not under ``treeopt_dsl/``, so a plain walk does not reach them)."""
    names = {treeopt_dsl.__name__}
    for package in (treeopt_dsl, treeopt_dsl.formulations, treeopt_dsl.backends):
        names.add(package.__name__)
        names.update(info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."))
    return sorted(names)


MODULES = _modules()


def test_the_walk_sees_the_packages_mapped_from_other_folders() -> None:
    """``treeopt_dsl.formulations`` and ``treeopt_dsl.backends`` live in the repository's own folders."""
    assert "treeopt_dsl.formulations.sorct" in MODULES and any(m.startswith("treeopt_dsl.backends.") for m in MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (output above)"
