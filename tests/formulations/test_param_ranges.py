"""Every numeric parameter with a declared range refuses a value outside it, from text (``--param``) and from
Python, with a FormulationError naming the parameter and the range; values at the edge of an inclusive range and
the defaults pass.

Before the ranges, ``sorct`` took ``lambda_l=-1`` (dropped silently: the solve ran without the l1 block),
``n_starts=0``, ``cost=-1`` and ``lambda_g=-1``; ``oct`` / ``octh`` a negative ``alpha``; the MARGOT variants a
negative ``budget``; and every tree formulation ``depth=0`` or ``depth=40`` until its topology was built.
"""

from __future__ import annotations

import re

import pytest

from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulations import REGISTRY, get_formulation
from treeopt_dsl.formulations.spec import Param, floats
from treeopt_dsl.topology import MAX_DEPTH

RANGED = [(name, p) for name in REGISTRY for p in REGISTRY[name].params
          if p.minimum is not None or p.maximum is not None]


def _outside(p: Param) -> list[float]:
    out = []
    if p.minimum is not None:
        out.append(p.minimum if p.exclusive else p.minimum - 1)
    if p.maximum is not None:
        out.append(p.maximum + 1)
    return out


def test_the_silent_ones_now_have_a_range() -> None:
    names = {(n, p.name) for n, p in RANGED}
    for pair in [("sorct", "lambda_l"), ("sorct", "lambda_g"), ("sorct", "cost"), ("sorct", "n_starts"),
                 ("sorct", "depth"), ("oct", "alpha"), ("octh", "alpha"), ("margot_hfs", "budget"),
                 ("margot_sfs", "budget"), ("olct", "l1"), ("olct_univariate", "l1"), ("oct", "depth")]:
        assert pair in names, pair


@pytest.mark.parametrize(("name", "param"), RANGED, ids=[f"{n}-{p.name}" for n, p in RANGED])
def test_a_value_outside_the_range_is_refused_by_name(name: str, param: Param) -> None:
    for bad in _outside(param):
        value = int(bad) if param.parse is int else float(bad)
        for given in (value, str(value)):
            with pytest.raises(FormulationError, match=rf"bad value .* for parameter '{param.name}': expected "
                                                       rf".*{re.escape(param.range())}"):
                get_formulation(name, **{param.name: given})


@pytest.mark.parametrize(("name", "param"), RANGED, ids=[f"{n}-{p.name}" for n, p in RANGED])
def test_the_edges_inside_the_range_and_the_default_pass(name: str, param: Param) -> None:
    inside = [v for v in (param.minimum, param.maximum) if v is not None]
    if param.exclusive:
        inside = [v for v in inside if v != param.minimum] + [param.minimum + 1e-3]
    for value in inside:
        value = int(value) if param.parse is int else float(value)
        assert get_formulation(name, **{param.name: value}).values[param.name] == value
    assert get_formulation(name).values[param.name] == param.default


def test_a_per_level_list_is_held_item_by_item() -> None:
    with pytest.raises(FormulationError, match=r"bad value \[0.1, -1.0\] for parameter 'C': expected numbers >= 0"):
        get_formulation("olct", C="0.1,-1")
    assert get_formulation("olct", C=[0.1, 0.0]).values["C"] == [0.1, 0.0]
    assert Param("C", 1.0, floats, "", minimum=0.0).coerce("0,2") == [0.0, 2.0]


def test_words_and_none_are_not_numbers_to_hold() -> None:
    assert get_formulation("olct", big_m="derived", w_bound=1.0, b_bound=5.0).values["big_m"] == "derived"
    assert get_formulation("sorct", max_iter=None).values["max_iter"] is None


def test_the_depth_range_is_the_topologys() -> None:
    depth = next(p for p in REGISTRY["oct"].params if p.name == "depth")
    assert (depth.minimum, depth.maximum) == (1, MAX_DEPTH)
    assert get_formulation("oct", depth=MAX_DEPTH).topology().depth == MAX_DEPTH


def test_the_range_is_listed_with_the_parameters() -> None:
    rows = {r["name"]: r for r in REGISTRY["sorct"].describe()["params"]}
    assert rows["gamma"]["range"] == "> 0" and rows["n_starts"]["range"] == ">= 1" and rows["rho"]["range"] == ""
