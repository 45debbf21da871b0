"""``treeopt completion``: the script names every subcommand, option and formulation, and bash completes with it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from treeopt_dsl.cli import COMMANDS, main
from treeopt_dsl.cli.completion import SHELLS, completion_script, subcommand_parsers
from treeopt_dsl.cli.parsers import build_parser
from treeopt_dsl.formulations import REGISTRY


@pytest.fixture(scope="module")
def bash_script() -> str:
    return completion_script(build_parser(), "bash")


def test_the_script_names_every_subcommand_option_and_formulation(bash_script: str) -> None:
    parsers = subcommand_parsers(build_parser())
    assert {p.split()[1] for p in parsers if p != "treeopt"} == set(COMMANDS)
    assert {"treeopt experiment run", "treeopt experiment report"} <= set(parsers)
    for path, parser in parsers.items():
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--"):
                    assert option in bash_script, f"{path} {option}"
    for command in COMMANDS:
        assert command in bash_script
    for name in REGISTRY:
        assert name in bash_script


def test_zsh_runs_the_same_function() -> None:
    zsh = completion_script(build_parser(), "zsh")
    assert "bashcompinit" in zsh and "_treeopt_zsh" in zsh and "ksharrays" in zsh
    assert main(["completion", "zsh"]) == 0
    assert set(SHELLS) == set(subcommand_parsers(build_parser())["treeopt completion"]._actions[-1].choices)
    with pytest.raises(ValueError, match="fish"):
        completion_script(build_parser(), "fish")


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(("words", "expected", "absent"), [
    (["treeopt", ""], {"fit", "solve", "born-again", "experiment", "completion"}, {"olct"}),
    (["treeopt", "fit", ""], {"olct", "oct", "tmo", "cct"}, {"fit"}),
    (["treeopt", "solve", ""], {"olct", "oct"}, {"tmo"}),
    (["treeopt", "fit", "olct", "--warm-start", ""], {"auto", "none", "tmo"}, {"olct"}),
    (["treeopt", "solve", "oct", "--solver", ""], {"auto", "highs"}, {"olct"}),
    (["treeopt", "fit", "olct", "--ti"], {"--time-limit"}, {"--data"}),
    (["treeopt", "experiment", ""], {"run", "tasks", "report"}, {"fit"}),
    (["treeopt", "experiment", "report", "--profile", ""], {"time", "objective"}, {"run"}),
    (["treeopt", "completion", ""], {"bash", "zsh"}, set()),
])
def test_bash_completes_with_it(bash_script: str, tmp_path, words: list[str], expected: set[str],
                                absent: set[str]) -> None:
    (tmp_path / "script.bash").write_text(bash_script)
    quoted = " ".join(f"'{w}'" for w in words)
    probe = (f"source {tmp_path / 'script.bash'}; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _treeopt; "
             'printf "%s\\n" "${COMPREPLY[@]}"')
    out = subprocess.run(["bash", "--norc", "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path)
    offered = set(out.stdout.split())
    assert expected <= offered and not (absent & offered), offered
