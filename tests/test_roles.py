"""Roles are described by type: every role of every block of every registered formulation is declared, and
what the built block provides matches its declaration (kind, dimensions, domain)."""

from __future__ import annotations

import pytest

from treeopt_dsl import blocks as B
from treeopt_dsl.datasets import load
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Block, Formulation
from treeopt_dsl.formulations import REGISTRY, get_formulation
from treeopt_dsl.roles import ROLES, Role, check_value, describe, register_role, role

_BC, _MUSH, _VOTES = (load("breast-cancer").subsample(40, seed=0), load("mushrooms").subsample(40, seed=0),
                      load("votes").subsample(40, seed=0))
CONFIGS = [(name, {"depth": 1} if "depth" in {p.name for p in cls.params} else {},
            _MUSH if name == "odt_categorical" else _BC) for name, cls in REGISTRY.items()] + [
    ("oct", {"depth": 1, "routing": "flow"}, _VOTES), ("oct", {"depth": 1, "routing": "benders"}, _VOTES),
    ("odt_categorical", {"max_card": 2}, _MUSH), ("odt_categorical", {"min_sensitivity": 0.9}, _MUSH),
    ("margot_hfs", {"depth": 1}, _BC), ("olct", {"depth": 2, "C": "1,1"}, _BC)]


@pytest.mark.parametrize("name,kw,data", CONFIGS, ids=[f"{n}-{k}" for n, k, _ in CONFIGS])
def test_every_built_role_matches_its_declaration(name: str, kw: dict, data) -> None:
    built = get_formulation(name, **kw).build(data)
    checked = 0
    for blk in built.formulation.blocks:
        for r in blk.provides:
            assert check_value(r, built.ctx[r]) is None, describe(r)
            checked += 1
    assert checked > 0


def test_every_library_role_is_declared_and_described() -> None:
    for r in ROLES:
        if "{of}" not in r:
            assert describe(r).startswith(f"{r}: ")
    assert role("linf_w").kind == "variables" and "'w'" not in role("linf_w").doc  # a pattern resolves


def test_an_undeclared_role_is_refused_until_declared() -> None:
    class Mystery(Block):
        requires = ("w",)
        provides = ("mystery_role_test",)

        def build(self, ctx) -> None:  # pragma: no cover - never built
            ctx.provide("mystery_role_test", ctx["w"], "Mystery")

    blocks = [B.ObliqueSplit(), Mystery()]
    with pytest.raises(FormulationError, match=r"mystery_role_test.*not declared.*register_role"):
        Formulation("x", blocks)
    register_role(Role("mystery_role_test", "variables", (("node", "feature"),), "continuous", "a test role"))
    try:
        Formulation("x", blocks)  # declared: accepted
        with pytest.raises(FormulationError, match="already declared"):
            register_role(Role("mystery_role_test", "data"))
    finally:
        ROLES.pop("mystery_role_test", None)


def test_a_value_of_the_wrong_type_is_named() -> None:
    built = get_formulation("oct", depth=1).build(_BC)
    assert "declared continuous" in (check_value("l2_w", built.ctx["yhat"]) or "")  # binary where continuous
    assert "declared variables" in (check_value("w", built.ctx["split"]) or "")
    assert "dims" in (check_value("b", built.ctx["w"]) or "")


def test_the_catalogue_lists_every_declared_role() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "blocks.md").read_text()
    table = text[text.index("## Roles by type"):]
    from treeopt_dsl.roles import LIBRARY_ROLES

    assert all(f"| `{r.name}` |" in table for r in LIBRARY_ROLES)
