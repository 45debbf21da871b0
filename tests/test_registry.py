"""The registries where a name becomes an import (:mod:`treeopt_dsl.registry`, the formulations' table): every
target loads the object it names, the start names have one list (the CLI's choices, a grid's, the resolver's), and
a formulation is imported when it is looked up, not before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import treeopt_dsl.formulations as F
from treeopt_dsl.cli.parsers import build_parser
from treeopt_dsl.errors import FormulationError, TreeoptError
from treeopt_dsl.experiments.grid import REFERENCES
from treeopt_dsl.formulations.spec import FormulationSpec
from treeopt_dsl.registry import RISK_STARTS, RULE_STARTS, TREE_STARTS, WARM_STARTS, load, resolve_start
from treeopt_dsl.starts.resolver import RISK_STRATEGIES, STRATEGIES

ROOT = Path(__file__).resolve().parents[1]


def test_every_start_target_names_a_function_of_the_starts() -> None:
    for table in (TREE_STARTS, RISK_STARTS, RULE_STARTS):
        for name, target in table.items():
            fn = load(target)
            assert callable(fn), name
            assert fn.__module__ == target.partition(":")[0], (name, fn.__module__)


def test_the_start_names_have_one_list() -> None:
    """The CLI's ``--warm-start`` choices, a grid's references and the resolver's strategies are the registry's."""
    parser = build_parser()
    fit = next(a for a in parser._subparsers._group_actions[0].choices["fit"]._actions  # type: ignore[union-attr]
               if "--warm-start" in a.option_strings)
    assert tuple(fit.choices) == WARM_STARTS
    assert set(WARM_STARTS) == {"auto", "none", *TREE_STARTS, *RISK_STARTS, *RULE_STARTS}
    assert STRATEGIES == tuple(TREE_STARTS) and RISK_STRATEGIES == tuple(RISK_STARTS)
    assert set(REFERENCES) == set(TREE_STARTS) | set(RISK_STARTS)


def test_a_malformed_target_is_refused_by_name() -> None:
    for bad in ("treeopt_dsl.starts.greedy", ":cart_tree", "treeopt_dsl.starts.greedy:"):
        with pytest.raises(TreeoptError, match="module:attribute"):
            load(bad)
    with pytest.raises(AttributeError):
        load("treeopt_dsl.starts.greedy:no_such_start")


def test_no_start_asked_for_resolves_to_none_without_a_model() -> None:
    assert resolve_start(None, None) is None
    assert resolve_start(None, "none") is None


def test_every_built_in_formulation_loads_under_its_name() -> None:
    for name, target in F.FORMULATIONS.items():
        cls = F.REGISTRY[name]
        assert issubclass(cls, FormulationSpec) and cls.name == name
        assert getattr(F, target.rpartition(":")[2]) is cls  # ``from treeopt_dsl.formulations import OCT``
        assert F.get_formulation(name).name == name
    assert list(F.REGISTRY)[: len(F.FORMULATIONS)] == list(F.FORMULATIONS)
    with pytest.raises(AttributeError):
        F.NoSuchFormulation  # noqa: B018
    with pytest.raises(FormulationError, match="unknown formulation 'nope'"):
        F.get_formulation("nope")


def test_a_table_entry_that_names_another_class_is_refused() -> None:
    reg = F.Registry({"ors": "treeopt_dsl.formulations.oct:OCT"})
    assert "ors" in reg and len(reg) == 1
    with pytest.raises(FormulationError, match="whose name is 'oct'"):
        reg["ors"]


def test_a_removed_built_in_is_gone_until_set_again() -> None:
    reg = F.Registry(dict(F.FORMULATIONS))
    cls = reg["oct"]
    del reg["oct"]
    assert "oct" not in reg and "oct" not in list(reg) and len(reg) == len(F.FORMULATIONS) - 1
    with pytest.raises(KeyError):
        reg["oct"]
    reg["oct"] = cls
    assert reg["oct"] is cls and len(reg) == len(F.FORMULATIONS)


def test_plug_ins_are_scanned_once_and_only_when_an_answer_could_involve_one() -> None:
    """A built-in name is answered without scanning the installed packages (a plug-in cannot take a built-in
    name); the first listing or an unknown name scans once, and a plug-in registered then is found."""
    calls: list[int] = []
    reg: F.Registry

    class PlugIn(F.REGISTRY["oct"]):  # type: ignore[misc, valid-type]
        name = "plug_in_test"

    def plugins() -> None:
        calls.append(1)
        reg["plug_in_test"] = PlugIn

    reg = F.Registry(dict(F.FORMULATIONS), plugins=plugins)
    assert "oct" in reg and reg["oct"].name == "oct" and calls == []
    assert "plug_in_test" in reg and calls == [1]
    assert reg["plug_in_test"] is PlugIn and "plug_in_test" in list(reg) and len(reg) == len(F.FORMULATIONS) + 1
    assert "nope" not in reg and calls == [1]
    fresh = F.Registry(dict(F.FORMULATIONS), plugins=lambda: calls.append(2))
    assert list(fresh) == list(F.FORMULATIONS) and calls == [1, 2]
    with pytest.raises(KeyError):
        fresh["nope"]
    assert calls == [1, 2]


_LOOKUP = """
import sys
from treeopt_dsl.formulations import REGISTRY, get_formulation
names = sorted(REGISTRY)
get_formulation("oct", depth=2)
fam = sorted(m.rpartition(".")[2] for m in sys.modules if m.startswith("treeopt_dsl.formulations."))
print(len(names), " ".join(fam), int(any(m.startswith("treeopt_dsl.starts") for m in sys.modules)))
from treeopt_dsl.formulations import SORCT
print(SORCT.name, int("treeopt_dsl.formulations.sorct" in sys.modules))
"""


def test_a_lookup_imports_only_its_family() -> None:
    """In a fresh process, listing the names imports no family and ``get_formulation("oct")`` only ``oct``'s module
    (with the spec and the shared parameters); ``from treeopt_dsl.formulations import SORCT`` imports S-ORCT."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _LOOKUP], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    first, second = out.stdout.splitlines()[-2:]
    count, *families, starts = first.split()
    assert int(count) >= len(F.FORMULATIONS)
    assert set(families) <= {"oct", "spec", "common"} and "oct" in families
    assert starts == "0"
    assert second == "sorct 1"
