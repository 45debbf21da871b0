"""FlowOCT and BendersOCT (Aghaei, Gómez, Vayanos) as routing blocks of ``oct``: the flow, Benders and big-M
routings reach the brute-force optimum on small data; Benders cuts are valid for every tree and cut off the
tree they were separated at; every lazy-constraint route (callbacks or row generation) gives the same optimum;
starts convert between layouts without changing a prediction."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import brute_force, small_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treeopt_dsl import blocks as B
from treeopt_dsl.backends import available_solvers
from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.formulation import Formulation
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.lazy import recomplete
from treeopt_dsl.models.embed import from_decisions
from treeopt_dsl.models.tree import TreeModel, decode_flow_tree
from treeopt_dsl.result import Status
from treeopt_dsl.starts.resolver import start_point
from treeopt_dsl.topology import Topology


def dataset(X: np.ndarray, y: np.ndarray) -> Dataset:
    return Dataset(np.asarray(X, dtype=float), np.asarray(y), tuple(f"x{j}" for j in range(X.shape[1])))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_data(values=3, max_n=18), st.sampled_from([1, 2]), st.sampled_from([0.0, 0.5, 1.5]))
def test_routings_reach_the_brute_force_optimum(data: tuple[np.ndarray, np.ndarray], depth: int,
                                                alpha: float) -> None:
    """Flow, Benders (HiGHS: row generation) and big-M on the cut columns: one optimum, the brute force's."""
    X, y = data
    want = brute_force(X, y, depth, alpha)
    for routing in ("flow", "benders", "bigm"):
        spec = get_formulation("oct", depth=depth, alpha=alpha, routing=routing, cuts="all")
        res = spec.solve(dataset(X, y), solver="highs", warm_start=None, time_limit=60)
        assert res.status is Status.OPTIMAL, (routing, res.message)
        assert res.certificate is not None and res.certificate.ok
        assert res.objective == pytest.approx(want, abs=1e-6), routing
        # the decoded tree scores the optimum on the raw inputs
        errors = int(np.sum(res.model.predict(X) != np.where(y > 0, 1, -1)))
        splits = int(np.count_nonzero(np.abs(res.model.W).sum(1)))
        assert errors + alpha * splits == pytest.approx(want, abs=1e-6), routing


LAZY_ROUTES = [(r["solver"], r["backend"]) for r in available_solvers()
               if r["installed"] and "MILP" in r["problem_classes"] and r["solver"] != "streed"]


@pytest.mark.parametrize(("solver", "backend"), LAZY_ROUTES)
def test_benders_agrees_with_flow_on_every_route(solver: str, backend: str) -> None:
    """Callbacks (Gurobi, CBC, SCIP: feature "lazy") and row generation (the others) reach FlowOCT's optimum."""
    rng = np.random.default_rng(3)
    X = (rng.random((70, 5)) > 0.5).astype(float)
    y = np.where(X[:, 0] + X[:, 1] * X[:, 3] + 0.9 * rng.random(70) > 1, 1, -1)
    d = dataset(X, y)
    flow = get_formulation("oct", depth=2, alpha=0.5, routing="flow").solve(d, solver="highs", warm_start=None)
    res = get_formulation("oct", depth=2, alpha=0.5, routing="benders").solve(
        d, solver=solver, backend=backend, warm_start=None, time_limit=120)
    assert flow.status is Status.OPTIMAL
    assert res.status is Status.OPTIMAL, res.message
    assert res.certificate is not None and res.certificate.ok
    assert res.objective == pytest.approx(flow.objective, abs=1e-6)
    lazy = [r for r in available_solvers() if (r["solver"], r["backend"]) == (solver, backend)][0]
    assert ("row generation" in res.message) == ("lazy" not in lazy["features"])


def random_tree(topo: Topology, p: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    S = np.zeros((topo.n_nodes, p))
    for t in topo.nodes:
        f = rng.integers(-1, p)
        if f >= 0:
            S[t, f] = 1.0
    C = np.zeros((topo.n_leaves, 2))
    C[np.arange(topo.n_leaves), rng.integers(0, 2, topo.n_leaves)] = 1.0
    return S, C


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([1, 2, 3]))
def test_benders_cuts_are_valid_and_cut_off_the_tree(seed: int, depth: int) -> None:
    """A cut separated at tree T (with every g_i = 1) is violated by that point and satisfied by the completed
    point of any other tree (Theorem 2: a cut's capacity bounds every tree's max flow)."""
    rng = np.random.default_rng(seed)
    X = (rng.random((25, 4)) > 0.5).astype(float)
    y = np.where(rng.random(25) > 0.5, 1, -1)
    if np.unique(y).size < 2:
        y[0] = -y[0]
    f = Formulation("benders", [B.BinarySplits(symmetry=False), B.BendersFlow()], decoder=decode_flow_tree,
                    decisions=("select", "leaf_class"))
    built = f.build(dataset(X, y), Topology(depth))
    S, C = random_tree(built.ctx.topo, 4, rng)
    x = from_decisions(built, {"select": S, "leaf_class": C})
    wrong = x[built.ctx["g"].ids] < 0.5
    x[built.ctx["g"].ids] = 1.0  # claim every sample is classified correctly
    cuts = built.separate(x)
    if not wrong.any():
        assert cuts is None
        return
    assert cuts is not None and cuts.n_rows == int(wrong.sum())
    assert np.all(cuts.violation(x) > 0.5)  # each cut removes the claim of one misclassified sample
    for _ in range(5):
        other = from_decisions(built, dict(zip(("select", "leaf_class"), random_tree(built.ctx.topo, 4, rng),
                                               strict=True)))
        assert np.all(cuts.violation(other) <= 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([1, 2, 3]))
def test_hyperplane_trees_convert_to_flow_decisions_with_the_same_predictions(seed: int, depth: int) -> None:
    """An axis-aligned hyperplane tree (either orientation, constant nodes, splits that send everything one way)
    becomes binary splits and leaf classes that predict the same on 0/1 inputs."""
    rng = np.random.default_rng(seed)
    p = 4
    topo = Topology(depth)
    X = (rng.random((60, p)) > 0.5).astype(float)
    W = np.zeros((topo.n_nodes, p))
    b = rng.choice([-0.7, -0.3, 0.3, 0.7, -2.0, 2.0], topo.n_nodes)
    for t in topo.nodes:
        if rng.random() < 0.7:
            W[t, rng.integers(p)] = rng.choice([-1.0, 1.0])
    y = np.where(rng.random(60) > 0.5, 1, -1)
    d = dataset(X, y)
    built = get_formulation("oct", depth=depth, routing="flow").build(d)
    from treeopt_dsl.data import Scaler

    tree = TreeModel(topo, W, b, d.feature_names, d.classes, Scaler("none").fit(X), threshold=5e-6,
                     leaf_threshold=5e-6)
    x = start_point(built, tree)
    assert np.array_equal(built.decode(x).predict(X), tree.predict(X))


def test_l0_on_a_binary_family_is_its_own_indicator() -> None:
    """``L0(of="select")`` adds no indicator columns or rows: the splits are 0/1 already."""
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], dtype=float)
    built = get_formulation("oct", depth=2, alpha=0.5, routing="flow").build(dataset(X, np.array([1, -1, 1, -1])))
    assert "select_used" not in built.model.variables
    assert not any(n.startswith("select_l0_up") for n in built.model.constraints)
    S = np.zeros((3, 2))
    S[0, 0] = S[1, 1] = 1.0
    x = from_decisions(built, {"select": S, "leaf_class": np.tile([1.0, 0.0], (4, 1))})
    assert built.model.objective_terms(x)["l0"] == pytest.approx(0.5 * 2)


def test_a_start_is_kept_when_row_generation_runs_out_of_time() -> None:
    """Benders on HiGHS with no time: the start comes back, not called optimal unless the bound proves it."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (120, 6)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(0, 1.5, 120) > 3, 1, -1)
    spec = get_formulation("oct", depth=3, routing="benders")
    built = spec.build(spec.prepare(dataset(X, y)))
    start = start_point(built, "cart")
    res = built.solve(solver="highs", warm_start=start, time_limit=0.0)
    assert res.objective <= float(built.compile().objective(start)) + 1e-9
    assert res.status is not Status.OPTIMAL or (res.bound is not None and res.bound >= res.objective - 1e-6)
    assert res.certificate is not None and res.certificate.ok


def test_row_generation_keeps_the_best_completed_point() -> None:
    """The master's own point claims every sample (g = 1) until cut; what comes back is a completed tree."""
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 4, dtype=float)
    y = np.array([-1, 1, 1, -1] * 4)  # xor: a depth-2 tree is exact, a depth-1 tree errs on half
    spec = get_formulation("oct", depth=1, routing="benders")
    res = spec.solve(dataset(X, y), solver="highs", warm_start=None)
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(8.0)
    x = recomplete(res.built, res.x)
    assert float(res.built.compile().objective(x)) == pytest.approx(res.objective)
    res2 = get_formulation("oct", depth=2, routing="benders").solve(dataset(X, y), solver="highs", warm_start=None)
    assert res2.objective == pytest.approx(0.0)


def test_bad_routing_and_non_binary_columns_get_clear_errors() -> None:
    X = np.array([[0.0, 2.0], [1.0, 0.5]])
    with pytest.raises(FormulationError, match="routing must be one of bigm, flow, benders"):
        get_formulation("oct", routing="flows").build(dataset(X, np.array([1, -1])))
    f = Formulation("f", [B.BinarySplits(), B.FlowRouting(), B.FlowZeroOneLoss()])
    with pytest.raises(FormulationError, match="0/1 features"):
        f.build(dataset(X, np.array([1, -1])), Topology(1))


def test_a_start_given_as_flow_decisions() -> None:
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3, dtype=float)
    y = np.array([-1, -1, 1, 1] * 3)
    spec = get_formulation("oct", depth=1, routing="flow")
    built = spec.build(spec.prepare(dataset(X, y)))
    x = start_point(built, {"select": [[1.0, 0.0]], "leaf_class": [[1.0, 0.0], [0.0, 1.0]]})
    assert float(built.compile().objective(x)) == pytest.approx(0.0)
    assert built.model.max_violation(x) <= 1e-9


def test_highs_never_reports_an_objective_its_point_does_not_have() -> None:
    """HiGHS 1.16 may return its warm start's vector with the objective of the start's presolved image (a Benders
    master: the same tree with larger g); the backend reports the point's own objective and no proof."""
    from treeopt_dsl.backends import SolveOptions, get_backend

    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 4, dtype=float)
    y = np.array([-1, 1, 1, -1] * 4)
    spec = get_formulation("oct", depth=1, routing="benders")
    built = spec.build(spec.prepare(dataset(X, y)))
    sf = cur = built.compile()
    be = get_backend("highs", "direct", sf)
    start = None
    for _ in range(3):
        raw = be.solve(cur, "highs", SolveOptions(warm_start=start))
        assert raw.objective == pytest.approx(cur.objective(raw.x), abs=1e-9)
        assert raw.status is not Status.OPTIMAL or raw.bound == pytest.approx(raw.objective, abs=1e-6)
        start = recomplete(built, raw.x)
        cuts = built.separate(raw.x)
        if cuts is None:
            break
        cur = cur.with_rows(cuts.A, cuts.lower, cuts.upper)


def test_a_tree_on_cut_columns_prints_the_cuts_themselves() -> None:
    """A node on a 0/1 cut column reads "x0 > 0.5" or "not (x0 > 0.5)" (not "(x0 > 0.5) > 0.5"), and what
    it says is what the tree does."""
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 4, dtype=float)
    y = np.array([-1, 1, 1, -1] * 4)
    res = get_formulation("oct", depth=2, routing="flow").solve(dataset(X, y), solver="highs", warm_start=None)
    text = res.model.text()
    assert "> 0.5 > 0.5" not in text and "> 0.5 <" not in text
    root = text.splitlines()[0]
    col = 0 if "x0 > 0.5" in root else 1
    goes_right = X[:, col] > 0.5 if "not (" not in root else X[:, col] <= 0.5
    assert np.array_equal(res.model.apply(X) >= res.model.topology.last.size // 2, goes_right)


def test_the_flow_model_reads_back_from_a_file_to_the_same_optimum_and_benders_is_not_written(tmp_path) -> None:
    import highspy

    from treeopt_dsl.errors import CapabilityError
    from treeopt_dsl.io import write_model

    rng = np.random.default_rng(5)
    X = (rng.random((40, 4)) > 0.5).astype(float)
    y = np.where(X[:, 0] + X[:, 2] * X[:, 3] + rng.random(40) > 1.2, 1, -1)
    spec = get_formulation("oct", depth=2, alpha=0.5, routing="flow")
    built = spec.build(spec.prepare(dataset(X, y)))
    res = built.solve(solver="highs", warm_start=None)
    path = write_model(built, tmp_path / "flow.mps")
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    assert h.getInfo().objective_function_value == pytest.approx(res.objective, abs=1e-6)
    benders = get_formulation("oct", depth=2, routing="benders")
    with pytest.raises(CapabilityError, match="lazily"):
        write_model(benders.build(benders.prepare(dataset(X, y))), tmp_path / "benders.lp")


@pytest.mark.parametrize("routing", ["flow", "benders"])
def test_a_point_short_of_its_flow_is_answered_by_its_tree(routing: str) -> None:
    """An incumbent whose flows (or g) are below what its tree carries is feasible and overstates the loss: the
    answer is the tree's own point and objective, certified (it was 'uncertified' on votes/krkp at 20 s)."""
    from treeopt_dsl.backends.base import RawResult
    from treeopt_dsl.result import SolveResult
    from treeopt_dsl.solve import _decode_and_certify

    rng = np.random.default_rng(2)
    X = (rng.random((50, 4)) > 0.5).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + rng.random(50) > 1.5, 1, -1)
    spec = get_formulation("oct", depth=2, routing=routing)
    built = spec.build(spec.prepare(dataset(X, y)))
    sf = built.compile()
    x = start_point(built, "cart")
    fam = built.ctx["flow"] if routing == "flow" else built.ctx["g"]
    vals = fam.values(x).copy()
    carried = np.flatnonzero(vals.reshape(vals.shape[0], -1)[:, 0] > 0.5)[:5]
    vals[carried] = 0.0  # five correctly classified samples carry nothing: still feasible
    x[fam.ids] = vals.reshape(fam.shape)
    assert built.model.max_violation(x) <= 1e-9
    claimed, true = float(sf.objective(x)), float(sf.objective(start_point(built, "cart")))
    assert claimed == pytest.approx(true + 5)
    res = SolveResult(status=Status.TIME_LIMIT, objective=claimed, bound=None, gap=None, runtime_s=0.0,
                      solver="highs", backend="direct", x=x, built=built)
    _decode_and_certify(res, built, RawResult(Status.TIME_LIMIT, x, claimed, None, None, 0.0, "limit"))
    assert res.certificate.ok and res.status is Status.TIME_LIMIT
    assert res.objective == pytest.approx(true)
