"""The benchmark scripts (``benchmarks/*.py``, not a package) loaded as modules, for the tests that check them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` executed as the module ``bench_<name>``, registered in ``sys.modules`` (dataclasses
    look their module up there), with ``benchmarks/`` on the path for its sibling imports (peer_envs, cli_paths), as
    when the script is run (appended: its names must not shadow the tests' packages, e.g. ``backends``)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
