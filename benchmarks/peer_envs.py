"""Peers that cannot share the library's environment get their own virtual environment, made on first use.

FasterRisk pins scikit-learn 1.2 / numpy 1.26; ODTlearn's CBC route pins python-mip 1.15 (the library uses 2.x).
Each lives in ``.venv-<name>`` at the repository root (git-ignored) and is called as a subprocess on files the
benchmark writes (never imported into the library's process).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: environment name -> what pip installs into it
PEER_PACKAGES: dict[str, tuple[str, ...]] = {
    "fasterrisk": ("fasterrisk",),
    "odtlearn": ("odtlearn[cbc]", "pandas"),
    "exact": ("pycontree", "pystreed", "pydl8.5", "gosdt", "pytrees-rs", "scikit-learn",
              # RiskSLIM's solver (risk_cards.py --peers riskslim): the Community Edition, 1,000 columns and rows
              "cplex==22.2.0.1", "prettytable", "wheel", "Cython"),
}

#: peers not on PyPI: environment -> (import name, source repository, commit). Built from a checkout of the source by
#: :func:`ensure_source_peer`; RiskSLIM's setup.py needs two build fixes on today's setuptools and SciPy (it calls
#: ``scipy.get_include``, gone from SciPy, and ``fetch_build_eggs``), made on a copy of the checkout.
SOURCE_PEERS: dict[str, tuple[str, str, str]] = {
    "exact": ("riskslim", "https://github.com/ustunb/risk-slim", "1242d02"),
}


def peer_python(name: str) -> Path:
    """The interpreter of the peer environment ``name`` (:data:`PEER_PACKAGES`), made on first use."""
    env = ROOT / f".venv-{name}"
    py = env / "bin" / "python"
    if not py.exists():
        subprocess.run(["python3", "-m", "venv", str(env)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PEER_PACKAGES[name]], check=True)
    return py


def ensure_source_peer(name: str, checkout: Path | None = None) -> None:
    """Install the source peer of environment ``name`` (:data:`SOURCE_PEERS`) unless it imports: from ``checkout``
    (or ``$TREEOPT_RISKSLIM_SRC``), else cloned from its repository at the pinned commit."""
    module, url, commit = SOURCE_PEERS[name]
    py = peer_python(name)
    if subprocess.run([str(py), "-c", f"import {module}"], capture_output=True).returncode == 0:
        return
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / module
        given = checkout or os.environ.get("TREEOPT_RISKSLIM_SRC")
        if given:
            shutil.copytree(given, src, ignore=shutil.ignore_patterns(".git", "examples", "batch"))
        else:
            subprocess.run(["git", "clone", "-q", url, str(src)], check=True)
            subprocess.run(["git", "-C", str(src), "checkout", "-q", commit], check=True)
        setup = src / "setup.py"
        text = setup.read_text().replace("dist.Distribution().fetch_build_eggs(['Cython', 'numpy', 'scipy'])", "")
        setup.write_text(text.replace("include_dirs=[numpy.get_include(), scipy.get_include()]",
                                      "include_dirs=[numpy.get_include()]"))
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", str(src)],
                       check=True)
