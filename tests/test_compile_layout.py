"""The tree formulations compile without padding terms, and the benchmark's floor is the DSL's model.

Rows built level by level (``Topology.by_level``) from contractions that keep only the mask's nonzeros
(``LinExpr.dot``) have one length per family, so the compiler writes them into the CSR arrays as they are
(no mask, no gather) and the model's families then view those arrays.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from treeopt_dsl import Dataset
from treeopt_dsl.formulations import get_formulation

ROOT = Path(__file__).resolve().parents[1]


def _data(n: int = 60, p: int = 5, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return Dataset.from_arrays(X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int))


@pytest.mark.parametrize("name, depth", [("olct", 2), ("olct", 3), ("margot", 3), ("oct", 3), ("octh", 2),
                                         ("olct_univariate", 3)])
def test_tree_rows_carry_no_padding(name, depth):
    """Every row term of the routing, forwarding and loss families is a real nonzero (the data have no
    zeros), and after compile those families share the matrix's memory."""
    built = get_formulation(name, depth=depth).build(_data())
    families = {k: c for k, c in built.model.constraints.items()
                if k.startswith(("forward_", "loss_pieces", "zero_one", "hinge", "route"))}
    assert any(k.startswith("forward_") for k in families) and len(families) >= 3
    for k, c in families.items():
        assert np.all(c.expr.coef != 0) and np.all(c.expr.vars >= 0), f"{k} has padding terms"
    sf = built.compile()
    for k, c in families.items():
        assert np.shares_memory(c.expr.coef, sf.A.data), f"{k} was gathered, not written as it is"


def test_floor_builds_the_dsl_model(monkeypatch):
    """``benchmarks/compile_speed.py`` times a hand-written CSR "floor": it must be the DSL's model entry
    by entry (rows, columns, values, bounds, costs, kinds), or its ratio means nothing."""
    spec = importlib.util.spec_from_file_location("compile_speed", ROOT / "benchmarks" / "compile_speed.py")
    cs = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "compile_speed", cs)  # its dataclasses look themselves up there
    spec.loader.exec_module(cs)
    X, y = cs.make_data(200, 7, seed=3)
    out = cs.check_floor_equals_dsl(X, y)
    assert out["nnz"] > 200 * 7 and out["max_coef_diff"] <= 1e-12
