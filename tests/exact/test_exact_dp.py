"""The exact DP route (STreeD, van der Linden et al. 2023) for OCT (Bertsimas & Dunn 2017): its optimum is the
brute-force optimum over every axis-aligned tree, agrees with the MILP where HiGHS proves it, and comes back
certified by the formulation's own blocks."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pystreed")

from brute_force import brute_force, small_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treeopt_dsl import blocks as B
from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import CapabilityError
from treeopt_dsl.exact import binarize, maybe_solve_dp, recognize, why_not_dp
from treeopt_dsl.exact.dp import fit_dp
from treeopt_dsl.formulation import Formulation
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.result import Status
from treeopt_dsl.topology import Topology


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_data(), st.sampled_from([1, 2]), st.sampled_from([0.0, 0.5, 1.5]))
def test_dp_optimum_equals_brute_force(data: tuple[np.ndarray, np.ndarray], depth: int, alpha: float) -> None:
    X, y = data
    built = get_formulation("oct", depth=depth, alpha=alpha).build(Dataset.from_arrays(X, y))
    res = maybe_solve_dp(built, "streed")
    assert res is not None and res.status is Status.OPTIMAL and res.certificate.ok
    assert res.objective == pytest.approx(brute_force(X, y, depth, alpha), abs=1e-9)


@pytest.mark.parametrize("depth", [1, 2])
def test_milp_and_dp_agree_where_the_milp_proves_it(depth: int) -> None:
    rng = np.random.default_rng(depth)
    X = rng.integers(0, 3, size=(14, 2)).astype(float)
    y = np.where(X[:, 0] + rng.normal(0, 0.8, 14) > 1, 1, -1)
    d = Dataset.from_arrays(X, y)
    milp = get_formulation("oct", depth=depth).solve(d, solver="highs", time_limit=60)
    dp = maybe_solve_dp(get_formulation("oct", depth=depth).build(d), "streed")
    assert dp is not None and dp.status is Status.OPTIMAL
    if milp.status is Status.OPTIMAL:
        assert dp.objective == pytest.approx(milp.objective, abs=1e-6)
    else:
        assert dp.objective <= milp.objective + 1e-6


def test_result_is_certified_and_predicts_like_the_dp_tree() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, -2.0]
    y = np.where(X[:, 0] * X[:, 2] > 0.1, 1, -1)
    d = Dataset.from_arrays(X, y)
    built = get_formulation("oct", depth=2, alpha=0.5).build(d)
    res = maybe_solve_dp(built, "streed", time_limit=30)
    assert res is not None and res.status is Status.OPTIMAL and res.certificate.ok
    assert res.solver == "streed" and res.backend == "dp" and res.bound == res.objective
    task = recognize(built)
    assert task is not None and task.depth == 2 and task.alpha == 0.5
    tree = fit_dp(built, task)
    assert np.array_equal(res.model.predict(X), d.labels_of(tree.predictions))
    assert res.model.is_axis_aligned()
    assert res.objective == pytest.approx(tree.errors + 0.5 * tree.n_splits)


@pytest.mark.parametrize("name, why", [("octh", "oblique"), ("olct", "TangentLogisticLoss")])
def test_unrecognized_compositions_raise_capability_error(name: str, why: str) -> None:
    d = Dataset.from_arrays([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0]], [1, -1, 1, -1])
    built = get_formulation(name, depth=1).build(d)
    assert recognize(built) is None and why in why_not_dp(built)
    with pytest.raises(CapabilityError, match=why):
        maybe_solve_dp(built, "streed")
    assert maybe_solve_dp(built, "highs") is None  # other solvers: not this route


def test_hinge_loss_is_not_a_dp_task() -> None:
    f = Formulation("hinge-tree", [B.ObliqueSplit(w_bound=1.0, b_bound="auto"), B.L0(budget=1), B.Routing(),
                                   B.BigMForwarding(M="derived"), B.HingeLoss(levels="last", M="derived")])
    built = f.build(Dataset.from_arrays([[0.0], [1.0], [2.0]], [1, -1, 1]), Topology(1))
    assert recognize(built) is None and "HingeLoss" in why_not_dp(built)


def test_binarize_exact_and_quantile() -> None:
    X = np.array([[0.0, 1.0], [1.0, 1.0], [3.0, 0.0], [3.0, 0.0], [7.0, 1.0]])
    bz = binarize(X)
    assert bz.exact and bz.feature.tolist() == [0, 0, 0, 1] and bz.threshold.tolist() == [0.5, 2.0, 5.0, 0.5]
    assert np.array_equal(bz.Z, (X[:, bz.feature] > bz.threshold).astype(int))
    assert np.array_equal(bz.transform(X), bz.Z)
    q = binarize(np.arange(100.0)[:, None], max_thresholds=4)
    assert not q.exact and 1 <= q.n_columns <= 4
    close = binarize(np.array([[0.0], [1e-9], [1.0]]), min_gap=1e-6)  # 0 and 1e-9 cannot be separated
    assert close.n_columns == 1 and close.threshold[0] == pytest.approx(0.5)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(1, 5), st.integers(0, 2**31 - 1), st.booleans(),
       st.sampled_from([0.0, 0.3, 1.0]))
def test_binarize_equals_a_per_column_reference_and_leaves_x_alone(n: int, p: int, seed: int, fortran: bool,
                                                                    min_gap: float) -> None:
    """The whole-matrix binarization gives the columns of a per-feature ``np.unique`` reference, and never sorts
    the caller's array in place (a Fortran-ordered ``X`` once was: ``X.T`` is then contiguous, not a copy)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, p)), 1)
    X = np.asfortranarray(X) if fortran else X
    before = X.copy()
    bz = binarize(X, min_gap=min_gap, count_below=0.25)
    assert np.array_equal(X, before)
    feats, thrs, closer = [], [], []
    for j in range(p):
        v = np.unique(X[:, j])
        keep = np.diff(v) > min_gap
        feats += [j] * int(keep.sum())
        thrs += list((v[:-1] + np.diff(v) / 2)[keep])
        closer.append(int(np.sum((np.diff(v) > 0) & (np.diff(v) < 0.25))))
    assert bz.feature.tolist() == feats and np.allclose(bz.threshold, thrs) and bz.closer.tolist() == closer
    assert np.array_equal(bz.Z, (X[:, bz.feature] > bz.threshold).astype(int))


def test_node_limited_runs_find_the_optimum() -> None:
    """Regression: pystreed 1.4's depth-2 terminal solver under max_num_nodes=2 reported 1 error (proven) where
    the 2-split tree below has none; with alpha = 0.5 the optimum is 0 errors + 2 splits = 1.0."""
    X = np.array([[0, 0], [1, 1], [0, 3], [0, 3], [2, 1], [0, 2], [2, 1], [3, 2], [1, 2]], dtype=float)
    y = np.array([-1, 1, 1, 1, 1, 1, 1, -1, 1])
    res = maybe_solve_dp(get_formulation("oct", depth=2, alpha=0.5).build(Dataset.from_arrays(X, y)), "streed")
    assert res is not None and res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(brute_force(X, y, 2, 0.5)) == pytest.approx(1.0)


def _csv(tmp_path, X: np.ndarray, y: np.ndarray) -> str:
    path = tmp_path / "d.csv"
    cols = ",".join(f"f{j}" for j in range(X.shape[1]))
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=f"{cols},y", comments="", fmt="%g")
    return str(path)


def test_command_line_route(tmp_path, capsys) -> None:
    """``treeopt solve oct --solver streed``: the proven optimum as one JSON document; a composition the DP
    cannot take is one line and exit 2."""
    import json

    from treeopt_dsl.cli import main

    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(60, 5)).astype(float)
    y = np.where((X[:, 0] == 1) ^ (X[:, 1] == 1), 1, -1)
    path = _csv(tmp_path, X, y)
    assert main(["solve", "oct", "--data", path, "--label", "y", "--depth", "2", "--solver", "streed", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "optimal" and doc["solver"] == "streed" and doc["objective"] == 0.0
    assert main(["solve", "olct", "--data", path, "--label", "y", "--depth", "1", "--solver", "streed"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot solve olct" in err[0]


def test_auto_start_proven_by_the_dp_skips_the_milp() -> None:
    """``warm_start="auto"`` on a composition the DP solves exactly: the DP tree is the proven optimum (it equals
    brute force), so the MILP is not run; the same data with a MILP-only start gives the same optimum."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(14, 2)).astype(float)
    y = rng.choice([-1, 1], 14)
    data = Dataset.from_arrays(X, y)
    res = get_formulation("oct", depth=2).solve(data, solver="highs", warm_start="auto", time_limit=60)
    assert res.status is Status.OPTIMAL and res.solver == "streed" and res.start["proven"]
    assert res.certificate.ok and res.objective == pytest.approx(brute_force(res.built.ctx.data.X, y, 2, 0.0))
    milp = get_formulation("oct", depth=2).solve(data, solver="highs", warm_start="cart", time_limit=60)
    assert milp.status is Status.OPTIMAL and milp.objective == pytest.approx(res.objective)


def test_dp_answers_compile_no_matrix_and_report_the_compiled_size() -> None:
    """The DP route and a proven DP start hand no matrix to a solver, so nothing is compiled (on mushrooms at depth 3
    that was a third of the route's time); the size they report, counted on the model, is the compiled one."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = np.where(X[:, 0] + rng.integers(0, 2, 60) > 2, 1, -1)
    data = Dataset.from_arrays(X, y)
    spec = get_formulation("oct", depth=2)
    built = spec.build(spec.prepare(data))
    res = maybe_solve_dp(built, "streed")
    assert res.status is Status.OPTIMAL and res.certificate.ok
    assert built._sf is None  # not compiled
    assert res.size == built.compile().summary()
    auto = get_formulation("oct", depth=2).solve(data, solver="highs", warm_start="auto", time_limit=30)
    assert auto.solver == "streed" and auto.built._sf is None
    assert auto.size == auto.built.compile().summary() and auto.objective == pytest.approx(res.objective)


@pytest.mark.parametrize("name,params", [("olct", {"depth": 2}), ("margot", {"depth": 2}), ("octh", {"depth": 2}),
                                         ("ors", {"T": 3}), ("oct", {"depth": 2, "routing": "flow"})])
def test_model_size_counts_what_the_compiler_keeps(name: str, params: dict) -> None:
    """``Model.size()`` (no compile) equals ``StandardForm.summary()`` (rows, nonzeros, integers, class)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 4))
    if name == "oct":
        X = (X > 0).astype(float)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=30) > 0, 1, -1)
    spec = get_formulation(name, **params)
    built = spec.build(spec.prepare(Dataset.from_arrays(X, y)))
    assert built.model.size() == built.compile().summary()


def test_auto_start_on_other_trees_is_a_start_not_a_proof() -> None:
    """For olct (oblique, logistic) the DP tree is one candidate among CART and the greedy start: never proven."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    res = get_formulation("olct", depth=1).solve(Dataset.from_arrays(X, y), warm_start="auto", time_limit=30)
    assert not res.start["proven"] and isinstance(res.start["candidates"]["dp"], float)
    assert res.solver == "highs" and res.objective <= res.start["objective"] + 1e-9


def test_the_start_searches_every_cut_only_where_that_proves_the_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    """The DP start's budget of threshold columns: the large one (every cut, a proof) for a composition the DP
    solves (oct), the small one (quantile cuts, a start) for any other tree (olct), where every cut buys no proof
    and cost the default job 1.3 s."""
    import treeopt_dsl.exact.dp as dp
    import treeopt_dsl.starts.dp as start

    rng = np.random.default_rng(2)
    X = np.round(rng.normal(size=(60, 3)), 2)  # about 150 exact threshold columns
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    d = Dataset.from_arrays(X, y)
    monkeypatch.setattr(start, "START_COLUMNS", {1: 1000, 2: 1000})
    monkeypatch.setattr(start, "START_COLUMNS_ONLY_START", {1: 20, 2: 20})
    seen: list = []
    fit_tree = dp.fit_tree

    def spy(data, task, b_cap=1.0, time_limit=None, max_thresholds=None, **kw):
        tree = fit_tree(data, task, b_cap, time_limit, max_thresholds, **kw)
        seen.append((max_thresholds, tree.n_columns))
        return tree

    monkeypatch.setattr(dp, "fit_tree", spy)
    monkeypatch.setattr(start, "_contree_takes", lambda *a: False)  # the count's budget is the subject
    assert int(start.cuts_per_feature(get_formulation("oct", depth=2).prepare(d).X).sum()) > 100
    _, proven = start.dp_candidate(get_formulation("oct", depth=2).build(d))
    assert proven and seen[-1][0] is None  # every cut
    _, proven = start.dp_candidate(get_formulation("olct", depth=2).build(d))
    assert not proven and seen[-1][0] is not None and seen[-1][1] <= 20  # quantile cuts within the small budget


def test_cuts_all_expresses_a_cut_closer_than_eps() -> None:
    """Two values 2e-12 apart: with the scaled features OCT's margin eps cannot put a cut between them (its
    optimum makes one error, and the result says why); with ``cuts="all"`` every distinct cut is a 0/1
    column, the optimum is the brute force's 0 errors, and the model predicts raw inputs through the cuts."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    X[:20, 0] = np.round(X[:20, 0], 1)
    X[5, 0] = X[6, 0] + 2e-12
    y = np.where(X[:, 0] > X[6, 0] + 1e-12, 1, -1)
    data = Dataset.from_arrays(X, y)
    for warm in (None, "auto"):
        coarse = get_formulation("oct", depth=1).solve(data, solver="highs", warm_start=warm, time_limit=30)
        fine = get_formulation("oct", depth=1, cuts="all").solve(data, solver="highs", warm_start=warm, time_limit=30)
        assert coarse.status is Status.OPTIMAL and coarse.objective == pytest.approx(1.0)
        assert coarse.resolution["unseparable_pairs"] == 1 and "cuts=all" in coarse.message
        assert fine.status is Status.OPTIMAL and fine.objective == pytest.approx(brute_force(X, y, 1, 0.0)) == 0.0
        assert fine.resolution is None and fine.certificate.ok
        np.testing.assert_array_equal(fine.model.predict(X), y)


def test_cuts_all_refuses_a_model_too_large_to_build() -> None:
    from treeopt_dsl.errors import FormulationError

    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 30))  # ~12 000 distinct cuts
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(FormulationError, match=r"cuts='all' gives \d+ threshold columns"):
        get_formulation("oct", depth=2, cuts="all").build(Dataset.from_arrays(X, y))


def test_a_dp_stopped_early_or_on_fewer_cuts_is_certified_but_not_optimal() -> None:
    """The DP's tree at its time limit, or optimal only over quantile cuts, passes the certificate: its status
    says what is proven (``time_limit`` / ``feasible``), never ``optimal`` and never ``uncertified``."""
    pytest.importorskip("pystreed")
    from treeopt_dsl.datasets import load
    from treeopt_dsl.exact.dp import solve_dp
    from treeopt_dsl.result import Status

    built = get_formulation("oct", depth=5).build(load("krkp"))  # STreeD needs about a second at depth 5
    early = solve_dp(built, time_limit=0.1)
    assert early.status is Status.TIME_LIMIT and early.certificate.ok and early.bound is None
    assert "not proven (time limit)" in early.message
    data = load("sonar")
    coarse = solve_dp(get_formulation("oct", depth=2).build(data), max_thresholds=3)
    assert coarse.status is Status.FEASIBLE and coarse.certificate.ok
