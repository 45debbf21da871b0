"""The ``treeopt`` parser's promises: the exit codes in ``--help``, the time-limit defaults from ``defaults.py``, the
same data and output options on every subcommand that reads data."""

from __future__ import annotations

import argparse

import pytest

from treeopt_dsl import defaults
from treeopt_dsl.cli import main
from treeopt_dsl.cli.common import EXIT_CODES, EXIT_OK, EXIT_USAGE, UsageError
from treeopt_dsl.cli.completion import subcommand_parsers
from treeopt_dsl.cli.parsers import SHARED, build_parser

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
    assert _defaults("born-again")["time_limit"] == defaults.TIME_LIMIT
    assert _defaults("path")["start_time_limit"] == defaults.PATH_TIME_LIMIT  # per start: another name
    assert _defaults("experiment run")["solve_time_limit"] is None  # no override: the grid's own, GRID_TIME_LIMIT
    run = subcommand_parsers(build_parser())["treeopt experiment run"]
    assert any(f"{defaults.GRID_TIME_LIMIT:g} s" in (a.help or "") for a in run._actions
               if a.dest == "solve_time_limit")


def _options() -> dict[str, list[tuple[str, argparse.Action]]]:
    """Every option string of every (sub)command: the commands that take it and its action there."""
    out: dict[str, list[tuple[str, argparse.Action]]] = {}
    for command, parser in subcommand_parsers(build_parser()).items():
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            for flag in action.option_strings:
                out.setdefault(flag, []).append((command, action))
    return out


def _describe(action: argparse.Action) -> tuple[object, ...]:
    return (tuple(action.option_strings), action.dest, repr(action.default), action.help, action.type,
            action.choices, action.metavar, type(action).__name__, action.required)


def test_one_option_name_has_one_default_and_one_help_everywhere() -> None:
    options = _options()
    shared = {flag: uses for flag, uses in options.items() if len(uses) > 1}
    assert {"--time-limit", "--quiet", "--label", "--seed", "--json", "--solver", "--output"} <= set(shared)
    for flag, uses in shared.items():
        kinds = {_describe(a) for _, a in uses}
        assert len(kinds) == 1, f"{flag} differs between {', '.join(c for c, _ in uses)}: {kinds}"
        assert uses[0][1].help, f"{flag} has no help text"


def test_shared_defaults_are_the_defaults_module() -> None:
    options = _options()
    want = {"--time-limit": defaults.TIME_LIMIT, "--seed": defaults.SEED, "--test-size": defaults.TEST_SIZE,
            "--solver": defaults.SOLVER}
    for flag, value in want.items():
        assert {a.default for _, a in options[flag]} == {value}, flag
    commands = {c for c, _ in options["--time-limit"]}
    assert commands == {"treeopt solve", "treeopt fit", "treeopt born-again"}
    # every option shared by two commands is declared once, in SHARED
    declared = {f for flags, _ in SHARED.values() for f in flags}
    assert {f for f, uses in options.items() if len({c for c, _ in uses}) > 1} - declared <= _PER_FAMILY


#: options shared by the subcommands of one family, declared once in the loop that builds them (compile, solve,
#: fit, path: the data and formulation options; solve and fit: the solver's)
_PER_FAMILY = {"--depth", "--param", "--positive", "--variant", "--sample", "--binarize", "--max-cuts", "--refine",
               "--gap", "--threads", "--warm-start", "--max-thresholds", "--card-out", "--calibration-plot",
               "--verbose", "-v", "--log",
               "--store"}


def test_born_again_time_limit_reads_as_every_other() -> None:
    parser = build_parser()
    assert parser.parse_args(["born-again", "f.txt", "--time-limit", "none"]).time_limit is None
    assert parser.parse_args(["born-again", "f.txt", "--time-limit", "7"]).time_limit == 7.0
    with pytest.raises(UsageError, match="--time-limit"):
        parser.parse_args(["born-again", "f.txt", "--time-limit", "-1"])


@pytest.mark.parametrize("command", READ_DATA)
def test_data_commands_share_label_quiet_and_json(command: str) -> None:
    options = {s for a in subcommand_parsers(build_parser())[f"treeopt {command}"]._actions for s in a.option_strings}
    data = "--train" if command == "born-again" else "--data"  # born-again reads CSV files: --train, --test
    assert {data, "--label", "--quiet", "-q", "--json"} <= options
    assert ("--output" in options) == (command != "path")  # path writes no model: it takes no --output


def test_compile_quiet_prints_its_summary_line_alone_and_writes(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    target = tmp_path / "m.lp"
    code = main(["compile", "olct", "--data", "breast-cancer", "--depth", "1", "--sample", "20", "-o", str(target),
                 "-q"])
    out = capsys.readouterr().out
    assert code == EXIT_OK and target.read_text().startswith("\\ olct")
    assert len(out.splitlines()) == 1 and "variables" in out and "wrote" not in out


def test_a_usage_error_exits_with_the_listed_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "fish"]) == EXIT_USAGE
    assert "invalid choice" in capsys.readouterr().err
