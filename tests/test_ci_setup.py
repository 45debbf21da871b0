"""``.ci/setup`` (the README's first command) says what it installs while it installs (issue 35).

Run against a stub ``.venv/bin/python`` that records pip's arguments, so nothing is installed: one line per step
with its elapsed time; pip quiet in a log with a heartbeat line, pip's own progress bar on a terminal; a failing
step named on stderr with its exit status; a second run does the same (idempotent).
"""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

STUB = """#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/../calls.log"
case "$*" in
  *"-e ."*) sleep "${STUB_SLEEP:-0}"; [ "${STUB_FAIL:-0}" = 1 ] && exit 7 ;;
  *__version__*) echo 0.1.0 ;;
esac
exit 0
"""

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or sys.platform == "win32", reason="needs bash")


def _tree(tmp_path: Path) -> Path:
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "setup", tmp_path / ".ci" / "setup")
    shutil.copy(ROOT / ".ci" / "constraints.txt", tmp_path / ".ci" / "constraints.txt")
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text(STUB)
    (venv / "python").chmod(0o755)
    return tmp_path


def _run(tree: Path, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SETUP_", "STUB_"))} | env
    return subprocess.run(["bash", str(tree / ".ci" / "setup")], capture_output=True, text=True, env=full,
                          timeout=60)


def test_a_log_gets_a_line_per_step_with_its_time_and_quiet_pip(tmp_path):
    tree = _tree(tmp_path)
    r = _run(tree)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    said = [re.fullmatch(r"setup \[(\d)/4\] (.*)", x).groups() for x in lines[:-1]]
    assert [s for s in said if not s[1].startswith("done in ")] == [
        ("1", "virtual environment .venv: present, kept"), ("2", "pip >= 24"),
        ("3", "treeopt-dsl (editable) and its core: numpy, scipy, pandas, xarray, scikit-learn, HiGHS"),
        ("4", "every extra: CBC, Gurobi, SCIP, linopy, pyomo, CasADi/Ipopt, matplotlib, STreeD, ConTree, Dask, "
              "PyTorch, test and docs tools")]
    assert [n for n, s in said if re.fullmatch(r"done in \d+ s", s)] == ["1", "2", "3", "4"]
    assert re.fullmatch(r"setup ready in \d+ s: \.venv/bin/treeopt 0\.1\.0", lines[-1]), lines[-1]
    calls = (tree / ".venv" / "calls.log").read_text().splitlines()
    pips = [c for c in calls if c.startswith("-m pip install")]
    assert len(pips) == 3 and all(" -q " in c for c in pips)  # quiet in a log
    assert pips[1].endswith("-c .ci/constraints.txt -e .") and pips[2].endswith('-e .[all]')
    again = _run(tree)  # idempotent: the same steps, the same calls
    assert again.returncode == 0 and len((tree / ".venv" / "calls.log").read_text().splitlines()) == 2 * len(calls)


def test_a_long_step_in_a_log_says_it_still_runs_without_flooding(tmp_path):
    tree = _tree(tmp_path)
    r = _run(tree, SETUP_TICK="1", STUB_SLEEP="3.5")
    assert r.returncode == 0, r.stderr
    for n in (3, 4):  # the stub installs slowly in both: 3.5 s, a line a second, none after the step
        beats = [x for x in r.stdout.splitlines() if x.startswith(f"setup [{n}/4] ... still running, ")]
        assert 2 <= len(beats) <= 4, r.stdout
        assert re.search(rf"^setup \[{n}/4\] done in [34] s$", r.stdout, re.M), r.stdout
    assert not [x for x in r.stdout.splitlines() if re.match(r"setup \[[12]/4\] \.\.\. still", x)]


def test_a_failing_step_is_named_with_its_exit_status(tmp_path):
    tree = _tree(tmp_path)
    r = _run(tree, STUB_FAIL="1")
    assert r.returncode == 7
    assert re.search(r"setup \[3/4\] failed after \d+ s \(exit 7\): treeopt-dsl \(editable\)", r.stderr), r.stderr
    assert "[4/4]" not in r.stdout  # nothing after the failure


def test_quiet_prints_nothing(tmp_path):
    r = _run(_tree(tmp_path), SETUP_QUIET="1")
    assert r.returncode == 0 and r.stdout == ""


def test_a_terminal_gets_pips_own_progress_bar(tmp_path):
    tree = _tree(tmp_path)
    main, sub = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SETUP_", "STUB_"))}
    proc = subprocess.run(["bash", str(tree / ".ci" / "setup")], stdin=sub, stdout=sub, stderr=sub, env=env,
                          timeout=60)
    os.close(sub)
    out = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert proc.returncode == 0
    assert b"setup [4/4] done in" in out
    pips = [c for c in (tree / ".venv" / "calls.log").read_text().splitlines() if c.startswith("-m pip install")]
    assert len(pips) == 3 and all("--progress-bar on" in c and " -q " not in c for c in pips)
