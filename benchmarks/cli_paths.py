"""The benchmark scripts' path options checked up front: a missing input, or an output that cannot be written, is an
argparse usage error (exit 2) naming the option and the path, before any expensive work and with nothing written.

Imported by the scripts as ``from cli_paths import refuse_missing, refuse_unwritable`` (``benchmarks/`` is on the
path when a script runs, as for ``peer_envs``). Not for ``compile_speed.py``, which must not import the library.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from treeopt_dsl.errors import ModelError
from treeopt_dsl.io import check_writable


def refuse_unwritable(ap: argparse.ArgumentParser, option: str, path: Path | str | None, what: str, *,
                      make_parent: bool = False) -> None:
    """Stop with a usage error unless ``path`` can be written (its directory exists and is writable, it is not a
    directory); ``None`` is not checked. ``make_parent`` makes a missing directory first (as the script would).

    Example: ``refuse_unwritable(ap, "--json-out", args.json_out, "the rows")``.
    """
    if path is None:
        return
    try:
        if make_parent:
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        check_writable(path, what)
    except ModelError as exc:  # names the path
        ap.error(f"{option}: {exc}")
    except OSError as exc:
        ap.error(f"{option} {path}: cannot make its directory ({exc.strerror or exc})")


def refuse_missing(ap: argparse.ArgumentParser, option: str, paths: Path | str | Sequence[Path | str] | None,
                   hint: str, *, kind: str = "file") -> None:
    """Stop with a usage error at the first of ``paths`` (one, several or ``None``) that is not an existing
    ``kind`` (``"file"`` or ``"directory"``); ``hint`` says what to give.

    Example: ``refuse_missing(ap, "--rows", args.rows, "give the --json-out file of an earlier run")``.
    """
    for path in _paths(paths):
        if not (Path(path).is_dir() if kind == "directory" else Path(path).is_file()):
            ap.error(f"{option} {path}: no such {kind} ({hint})")


def refuse_wrong_kind(ap: argparse.ArgumentParser, option: str, path: Path | str | None, hint: str, *,
                      kind: str = "file") -> None:
    """Stop with a usage error if ``path`` exists but is not a ``kind``: a directory given for a file, or a file
    for a directory. A missing path passes (the script makes its directory when it writes).

    Example: ``refuse_wrong_kind(ap, "--plot", args.plot, "give a .png file name")``.
    """
    if path is None or not Path(path).exists():
        return
    if kind == "directory" and not Path(path).is_dir():
        ap.error(f"{option} {path}: not a directory ({hint})")
    if kind == "file" and Path(path).is_dir():
        ap.error(f"{option} {path}: is a directory ({hint})")


def _paths(paths: Path | str | Sequence[Path | str] | None) -> list[Path | str]:
    if paths is None:
        return []
    return [paths] if isinstance(paths, (str, Path)) else list(paths)
