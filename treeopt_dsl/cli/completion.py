"""``treeopt completion bash|zsh``: a static shell completion script generated from the parser itself.

argparse has no completion of its own (and ``shtab`` is not a dependency), so the script is written here from
:func:`~treeopt_dsl.cli.parsers.build_parser`: every subcommand (``experiment run`` too), its options, the choices
of an option that has them, files for an option or argument that names a path, and the formulation names (with
``fit``'s ``tmo``, ``tao``, ``cct``, ``crt``) and solver names. It is static: a formulation, solver or engine
registered later appears after the script is generated again. zsh runs the same function through
``bashcompinit``.

    treeopt completion bash > ~/.local/share/bash-completion/completions/treeopt   # or: source it in ~/.bashrc
    source <(treeopt completion zsh)                                               # in ~/.zshrc
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from treeopt_dsl.backends import AUTO, BACKENDS, KNOWN_SOLVERS, engines
from treeopt_dsl.cli.parsers import build_parser
from treeopt_dsl.errors import OptionError
from treeopt_dsl.formulations import REGISTRY

__all__ = ["SHELLS", "completion_script", "run", "subcommand_parsers"]

SHELLS = ("bash", "zsh")
#: the destinations of options and arguments whose value is a file (FILE) or a directory (DIR)
FILES = {"data", "output", "log", "plot", "card_out", "calibration_plot", "test", "paper", "model", "grid", "store",
         "to"}
DIRS = {"data_dir", "out"}
#: the dataset shipped with the package (the others are the data directory's, read when a command runs)
BUNDLED = ("breast-cancer",)


def subcommand_parsers(parser: argparse.ArgumentParser, path: str = "treeopt") -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser by its words: ``{"treeopt": ..., "treeopt fit": ..., "treeopt experiment run":
    ...}`` (argparse keeps them in its private ``_actions``; read, never changed)."""
    out = {path: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.update(subcommand_parsers(sub, f"{path} {name}"))
    return out


def _children(parser: argparse.ArgumentParser) -> list[str]:
    return [name for a in parser._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices]


def _value_words(action: argparse.Action, solvers: list[str], backends: list[str]) -> str | None:
    """What completes the value of an option: ``None`` for a flag, else words (``__file__`` / ``__dir__`` ask for
    paths; empty: free text, nothing offered)."""
    if action.nargs == 0:
        return None
    if action.choices is not None:
        return " ".join(map(str, action.choices))
    if action.dest == "solver":
        return " ".join(solvers)
    if action.dest == "backend":
        return " ".join(backends)
    if action.dest == "data":
        return " ".join((*BUNDLED, "__file__"))
    if action.dest in FILES:
        return "__file__"
    if action.dest in DIRS:
        return "__dir__"
    return ""


def _case(entries: dict[str, str]) -> str:
    lines = [f"        {shlex.quote(key)}) echo {shlex.quote(words)} ;;" for key, words in entries.items() if words]
    return "\n".join(lines)


def completion_script(parser: argparse.ArgumentParser, shell: str = "bash") -> str:
    """The completion script of ``parser``'s command for ``shell`` (:data:`SHELLS`)."""
    if shell not in SHELLS:  # argparse's choices check this on the command line; a caller in Python gets the same
        raise OptionError(f"shell must be one of {', '.join(SHELLS)}, got {shell!r}")
    formulations = sorted(REGISTRY)
    solvers = [AUTO, *KNOWN_SOLVERS, *sorted(engines())]
    backends = sorted({b.name for b in BACKENDS})
    subcommands, options, values, positionals = {}, {}, {}, {}
    for path, p in subcommand_parsers(parser).items():
        subcommands[path] = " ".join(_children(p))
        options[path] = " ".join(s for a in p._actions for s in a.option_strings if s.startswith("--"))
        for a in p._actions:
            if a.option_strings:
                words = _value_words(a, solvers, backends)
                for s in a.option_strings if words is not None else ():  # a flag: the next word is completed anew
                    values[f"{path}|{s}"] = words or "__text__"
            elif not isinstance(a, argparse._SubParsersAction):
                if a.dest == "formulation":
                    extra = ("tmo", "tao", "cct", "crt") if path.endswith(" fit") else ()
                    positionals[path] = " ".join((*formulations, *extra))
                elif a.dest == "shell":
                    positionals[path] = " ".join(SHELLS)
                elif a.dest in FILES:
                    positionals[path] = "__file__"
    body = BASH.format(subcommands=_case(subcommands), options=_case(options), values=_case(values),
                       positionals=_case(positionals))
    if shell == "zsh":  # the same function, 0-based arrays and split words as bash has them
        return ZSH_HEAD + body.replace(BASH_REGISTER, ZSH_REGISTER)
    return body


BASH = r"""# treeopt completion, generated by `treeopt completion bash` (again after adding formulations or solvers)
_treeopt_subcommands() {{
    case "$1" in
{subcommands}
    esac
}}
_treeopt_options() {{
    case "$1" in
{options}
    esac
}}
_treeopt_values() {{
    case "$1|$2" in
{values}
    esac
}}
_treeopt_positionals() {{
    case "$1" in
{positionals}
    esac
}}
_treeopt_reply() {{
    local cur="$1" words="$2" w
    COMPREPLY=()
    for w in $words; do
        case "$w" in
            __file__) COMPREPLY+=($(compgen -f -- "$cur")) ;;
            __dir__) COMPREPLY+=($(compgen -d -- "$cur")) ;;
            __text__) ;;
            *) [[ "$w" == "$cur"* ]] && COMPREPLY+=("$w") ;;
        esac
    done
}}
_treeopt() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" key="treeopt" i subs values
    for ((i = 1; i < COMP_CWORD; i++)); do
        subs=" $(_treeopt_subcommands "$key") "
        [[ "$subs" == *" ${{COMP_WORDS[i]}} "* ]] && key="$key ${{COMP_WORDS[i]}}"
    done
    if [[ "$prev" == -* ]]; then
        values="$(_treeopt_values "$key" "$prev")"
        if [[ -n "$values" ]]; then
            _treeopt_reply "$cur" "$values"
            return 0
        fi
    fi
    if [[ "$cur" == -* ]]; then
        _treeopt_reply "$cur" "$(_treeopt_options "$key")"
    elif [[ -n "$(_treeopt_subcommands "$key")" ]]; then
        _treeopt_reply "$cur" "$(_treeopt_subcommands "$key")"
    else
        _treeopt_reply "$cur" "$(_treeopt_positionals "$key")"
    fi
    return 0
}}
complete -o filenames -F _treeopt treeopt
"""
BASH_REGISTER = "complete -o filenames -F _treeopt treeopt\n"
ZSH_REGISTER = """_treeopt_zsh() {
    setopt localoptions ksharrays shwordsplit
    _treeopt "$@"
}
complete -o filenames -F _treeopt_zsh treeopt
"""
ZSH_HEAD = """# zsh: source <(treeopt completion zsh) in ~/.zshrc (the bash completion function, through bashcompinit)
(( ${+functions[compdef]} )) || { autoload -U +X compinit && compinit; }
autoload -U +X bashcompinit && bashcompinit
"""


def run(args: Any) -> int:
    """``treeopt completion SHELL``: print the script."""
    print(completion_script(build_parser(), args.shell), end="")
    return 0
