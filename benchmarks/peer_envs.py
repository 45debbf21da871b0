"""Peers that cannot share the library's environment get their own virtual environment, made on first use.

FasterRisk pins scikit-learn 1.2 / numpy 1.26; ODTlearn's CBC route pins python-mip 1.15 (the library uses 2.x).
Each lives in ``.venv-<name>`` at the repository root (git-ignored) and is called as a subprocess on files the
benchmark writes (never imported into the library's process).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: environment name -> what pip installs into it
PEER_PACKAGES: dict[str, tuple[str, ...]] = {
    "fasterrisk": ("fasterrisk",),
    "odtlearn": ("odtlearn[cbc]", "pandas"),
    "exact": ("pycontree", "pystreed", "pydl8.5", "gosdt", "pytrees-rs", "scikit-learn"),
}


def peer_python(name: str) -> Path:
    """The interpreter of the peer environment ``name`` (:data:`PEER_PACKAGES`), made on first use."""
    env = ROOT / f".venv-{name}"
    py = env / "bin" / "python"
    if not py.exists():
        subprocess.run(["python3", "-m", "venv", str(env)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PEER_PACKAGES[name]], check=True)
    return py
