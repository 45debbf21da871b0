"""Every package of the source tree ships in the wheel: pyproject's explicit ``packages`` list must name each
directory with an ``__init__.py`` (a missing entry installs a wheel whose imports fail, while editable installs
and this test suite work: treeopt_dsl.starts was missing for two sessions)."""

from __future__ import annotations

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
