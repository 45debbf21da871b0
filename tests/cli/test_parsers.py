"""The ``treeopt`` parser's promises: the exit codes in ``--help``, the time-limit defaults from ``defaults.py``, the
same data and output options on every subcommand that reads data."""

from __future__ import annotations

import pytest

from treeopt_dsl import defaults
from treeopt_dsl.cli import main
from treeopt_dsl.cli.common import EXIT_CODES, EXIT_OK, EXIT_USAGE, UsageError
from treeopt_dsl.cli.completion import subcommand_parsers
from treeopt_dsl.cli.parsers import build_parser

#: the subcommands that read a dataset or data files
READ_DATA = ("compile", "solve", "fit", "path", "born-again")


def _defaults(command: str) -> dict[str, object]:
    parser = subcommand_parsers(build_parser())[f"treeopt {command}"]
    return {a.dest: a.default for a in parser._actions}


def test_help_lists_every_exit_code() -> None:
    text = build_parser().format_help()
    assert "exit status:" in text
    for code in EXIT_CODES:
        assert f"\n  {code:<5}" in text, f"exit status {code} missing from treeopt --help"
    assert {0, 1, 2, 3, 130, 143} <= set(EXIT_CODES)


def test_time_limit_defaults_come_from_defaults() -> None:
    assert _defaults("solve")["time_limit"] == defaults.TIME_LIMIT
    assert _defaults("fit")["time_limit"] == defaults.TIME_LIMIT
    assert _defaults("path")["time_limit"] == defaults.PATH_TIME_LIMIT
    assert _defaults("born-again")["time_limit"] == defaults.BORN_AGAIN_TIME_LIMIT
    assert _defaults("experiment run")["time_limit"] is None  # no override: the grid's own, GRID_TIME_LIMIT
    run = subcommand_parsers(build_parser())["treeopt experiment run"]
    assert any(f"{defaults.GRID_TIME_LIMIT:g} s" in (a.help or "") for a in run._actions if a.dest == "time_limit")


def test_born_again_time_limit_reads_as_every_other() -> None:
    parser = build_parser()
    assert parser.parse_args(["born-again", "f.txt", "--time-limit", "none"]).time_limit is None
    assert parser.parse_args(["born-again", "f.txt", "--time-limit", "7"]).time_limit == 7.0
    with pytest.raises(UsageError, match="--time-limit"):
        parser.parse_args(["born-again", "f.txt", "--time-limit", "-1"])


@pytest.mark.parametrize("command", READ_DATA)
def test_data_commands_share_label_quiet_and_json(command: str) -> None:
    options = {s for a in subcommand_parsers(build_parser())[f"treeopt {command}"]._actions for s in a.option_strings}
    assert {"--data", "--label", "--quiet", "-q", "--json", "--output"} <= options


def test_compile_quiet_prints_nothing_and_writes(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    target = tmp_path / "m.lp"
    code = main(["compile", "olct", "--data", "breast-cancer", "--depth", "1", "--sample", "20", "-o", str(target),
                 "-q"])
    out = capsys.readouterr().out
    assert code == EXIT_OK and out == "" and target.read_text().startswith("\\ olct")


def test_a_usage_error_exits_with_the_listed_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "fish"]) == EXIT_USAGE
    assert "invalid choice" in capsys.readouterr().err
