"""The benchmark scripts' path options: a missing input, or an output that cannot be written (a missing directory, a
directory given for a file, a file given for a directory), is an argparse usage error (exit 2) naming the option and
the path, before any expensive work starts and with nothing written, as ``reproduction_causes.py --write-doc`` does
(tests/test_reproduction_causes.py). The scripts with a test file of their own are checked there."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

import pytest
from bench_scripts import load_script

#: each script loaded once (bench_scripts.load_script: registered in sys.modules, benchmarks/ on the path)
script = functools.cache(load_script)


def never(*args: object, **kwargs: object) -> None:
    raise AssertionError("the expensive work started before the bad path was refused")


#: the functions of each script that do its work (replaced by :func:`never` in the tests)
WORK = {
    "born_again": ("run_one", "scalability"),
    "compile_speed": ("run_worker", "profile_dsl", "measure_tool"),
    "contextual": ("load_classification", "run_classification", "run_friedman", "speed"),
    "exact_calls": ("first_calls", "pairs", "load"),
    "exact_calls_peers": (),
    "exact_cost_fit": ("measure", "fit"),
    "exact_dp": ("warm_up", "run"),
    "exact_routes": ("load", "ours", "peers", "summarize"),
    "flow_routing": ("run",),
    "risk_cards": ("warm_up", "run", "markdown"),
    "risk_peers": ("warm_up", "run"),
    "root_bounds": ("olct", "ors"),
}

#: (script, option, argv with {missing}: a file in a missing directory, {none}: a missing file, {dir}: a directory,
#: {file}: an existing file, {out}: a writable file)
CASES = [
    ("born_again", "--json-out", ["--datasets", "HT", "--folds", "1", "--json-out", "{missing}"]),
    ("born_again", "--peer-binary", ["--datasets", "HT", "--folds", "1", "--peer-binary", "{none}"]),
    ("compile_speed", "--json", ["--quick", "--in-process", "--json", "{missing}"]),
    ("contextual", "--json-out", ["--no-figures", "--json-out", "{dir}"]),
    ("contextual", "--figures", ["--figures", "{file}", "--json-out", "{out}"]),
    ("exact_calls", "--pairs", ["--pairs", "{none}"]),
    ("exact_calls", "--first-call", ["--first-call", "{none}"]),
    ("exact_calls_peers", "--cases", ["--cases", "{dir}"]),
    ("exact_cost_fit", "--json-out", ["--datasets", "heart", "--json-out", "{missing}"]),
    ("exact_cost_fit", "--from-json", ["--from-json", "{none}"]),
    ("exact_dp", "--json-out", ["--json-out", "{dir}"]),
    ("exact_routes", "--json-out", ["--datasets", "heart", "--json-out", "{missing}"]),
    ("exact_routes", "--plot", ["--datasets", "heart", "--plot", "{dir}"]),
    ("exact_routes", "--from-json", ["--from-json", "{none}"]),
    ("flow_routing", "--json-out", ["--datasets", "votes", "--json-out", "{missing}"]),
    ("risk_cards", "--json-out", ["--datasets", "heart", "--json-out", "{missing}"]),
    ("risk_cards", "--table", ["--table", "{none}"]),
    ("risk_cards", "--fr-from", ["--datasets", "heart", "--fr-from", "{none}"]),
    ("risk_peers", "--json-out", ["--datasets", "heart", "--json-out", "{missing}"]),
    ("root_bounds", "--json-out", ["--json-out", "{missing}"]),
    ("root_bounds", "--grid", ["--grid", "{none}"]),
]


@pytest.mark.parametrize("name, option, argv", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_a_bad_path_is_refused_by_name_before_any_work(name: str, option: str, argv: list[str], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    module = script(name)
    for work in WORK[name]:
        monkeypatch.setattr(module, work, never)
    (tmp_path / "notes.txt").write_text("not a directory\n")
    paths = {"missing": tmp_path / "missing" / "rows.jsonl", "none": tmp_path / "none.jsonl", "dir": tmp_path,
             "file": tmp_path / "notes.txt", "out": tmp_path / "rows.jsonl"}
    bad = next(paths[k] for k in paths if f"{{{k}}}" in argv)
    before = sorted(tmp_path.iterdir())
    with pytest.raises(SystemExit) as stop:
        module.main([a.format(**paths) for a in argv])
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    assert f"error: {option}" in err and str(bad) in err, err
    assert sorted(tmp_path.iterdir()) == before  # nothing written, no directory made


#: benchmarks/cli_paths.py itself (the checks every script above makes)
CLI = load_script("cli_paths")


def _refused(capsys: pytest.CaptureFixture[str], check: object, *args: object, **kwargs: object) -> str:
    """The usage error ``check(ap, *args)`` stops with (exit 2): its stderr."""
    with pytest.raises(SystemExit) as stop:
        check(argparse.ArgumentParser(prog="script"), *args, **kwargs)
    assert stop.value.code == 2
    return capsys.readouterr().err


def test_an_output_in_a_missing_directory_is_refused_or_its_directory_made(tmp_path: Path, capsys) -> None:
    out = tmp_path / "missing" / "rows.jsonl"
    err = _refused(capsys, CLI.refuse_unwritable, "--json-out", out, "the rows")
    assert "error: --json-out: cannot write the rows to" in err and str(out.parent) in err, err
    assert not out.parent.exists()
    CLI.refuse_unwritable(argparse.ArgumentParser(), "--json-out", out, "the rows", make_parent=True)
    assert out.parent.is_dir() and not out.exists()
    CLI.refuse_unwritable(argparse.ArgumentParser(), "--json-out", None, "the rows")  # nothing given: passes


def test_a_directory_given_for_a_file_is_refused(tmp_path: Path, capsys) -> None:
    err = _refused(capsys, CLI.refuse_unwritable, "--out", tmp_path, "the store", make_parent=True)
    assert "error: --out: cannot write the store to" in err and "it is a directory" in err, err
    err = _refused(capsys, CLI.refuse_wrong_kind, "--plot", tmp_path, "give a .png file name")
    assert f"error: --plot {tmp_path}: is a directory (give a .png file name)" in err, err
    (tmp_path / "notes.txt").write_text("a file\n")
    err = _refused(capsys, CLI.refuse_wrong_kind, "--figures", tmp_path / "notes.txt", "give a directory",
                   kind="directory")
    assert f"error: --figures {tmp_path / 'notes.txt'}: not a directory" in err, err
    CLI.refuse_wrong_kind(argparse.ArgumentParser(), "--plot", tmp_path / "new" / "p.png", "-")  # made when drawn


def test_a_missing_input_is_refused_by_name(tmp_path: Path, capsys) -> None:
    there = tmp_path / "rows.jsonl"
    there.write_text("{}\n")
    CLI.refuse_missing(argparse.ArgumentParser(), "--rows", [there, str(there)], "give rows")
    err = _refused(capsys, CLI.refuse_missing, "--rows", [there, tmp_path / "none.jsonl"], "give rows")
    assert f"error: --rows {tmp_path / 'none.jsonl'}: no such file (give rows)" in err, err
    err = _refused(capsys, CLI.refuse_missing, "--first-call", there, "give checkouts", kind="directory")
    assert f"error: --first-call {there}: no such directory (give checkouts)" in err, err
