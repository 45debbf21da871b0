"""The tree formulations compile without padding terms, the benchmark's floor is the DSL's model, and
the benchmark's ``--steady-heap`` reaches the interpreters that time.

Rows built level by level (``Topology.by_level``) from contractions that keep only the mask's nonzeros
(``LinExpr.dot``) have one length per family, so the compiler writes them into the CSR arrays as they are
(no mask, no gather) and the model's families then view those arrays.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from treeopt_dsl import Dataset
from treeopt_dsl.formulations import get_formulation

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.fixture
def cs(monkeypatch):
    """``benchmarks/compile_speed.py`` as a module."""
    spec = importlib.util.spec_from_file_location("compile_speed", ROOT / "benchmarks" / "compile_speed.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "compile_speed", module)  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def test_floor_builds_the_dsl_model(cs):
    """``benchmarks/compile_speed.py`` times a hand-written CSR "floor": it must be the DSL's model entry
    by entry (rows, columns, values, bounds, costs, kinds), or its ratio means nothing."""
    X, y = cs.make_data(200, 7, seed=3)
    out = cs.check_floor_equals_dsl(X, y)
    assert out["nnz"] > 200 * 7 and out["max_coef_diff"] <= 1e-12


def test_steady_heap_reaches_the_workers(cs, monkeypatch):
    """``--steady-heap`` starts each timed interpreter with glibc's tunables (they act at start only): the
    worker reports them in its environment, a worker started without the option does not, and the option
    is refused where no fresh interpreter is started."""
    for k in cs.STEADY_HEAP_ENV:
        monkeypatch.delenv(k, raising=False)
    for steady in (True, False):
        r = cs.run_worker("floor", 60, 4, 1, write=False, trace=False, in_process=False, steady_heap=steady)
        assert "error" not in r, r
        assert r["steady_heap"] is steady and len(r["times"]) == 1
    with pytest.raises(SystemExit):
        cs.main(["--sizes", "60", "--steady-heap", "--in-process"])


def test_interleaved_restarts_itself_with_a_steady_heap(monkeypatch):
    """``compile_interleaved.py --steady-heap`` re-executes itself with the tunables set and says so only
    when they are in effect."""
    for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"):
        monkeypatch.delenv(k, raising=False)
    script = str(ROOT / "benchmarks" / "compile_interleaved.py")
    for flag, said in ((["--steady-heap"], True), ([], False)):
        out = subprocess.run([sys.executable, script, "--n", "60", "--p", "4", "--pairs", "1", *flag],
                             capture_output=True, text=True, check=True).stdout
        assert out.startswith("N = 60, p = 4, 1 pairs")
        assert ("steady heap" in out.splitlines()[0]) is said
