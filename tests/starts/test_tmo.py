"""TMO (seed 004): the encoding, the crossover's conversions (Figures 2-5), the algorithm's guarantees,
the exact tree conversion, the estimators, ``treeopt fit tmo|tao`` and the ``tmo`` warm start."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score
from sklearn.tree import DecisionTreeClassifier

from treeopt_dsl.cli import main
from treeopt_dsl.data import Dataset
from treeopt_dsl.errors import DataError, FormulationError, OptionError
from treeopt_dsl.estimator.memetic import TAOClassifier, TMOClassifier
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.starts.memetic.crossover import RandomSplits, combine, crossover
from treeopt_dsl.starts.memetic.encoding import LEAF, NIL, Genome, decode, encode
from treeopt_dsl.starts.memetic.tmo import tmo
from treeopt_dsl.starts.resolver import resolve, start_point
from treeopt_dsl.starts.tao import AxisBins, _sides, _subtree_predictions, from_sklearn, tao, to_decision_tree
from treeopt_dsl.starts.tao_nodes import tao_nodes
from treeopt_dsl.topology import Topology


def _library_predict(X: np.ndarray, W: np.ndarray, b: np.ndarray, depth: int, eps: float = 0.0,
                     lt: float | None = None) -> np.ndarray:
    """+1/-1 of the hyperplane tree, by the dense product (independent of the axis-aligned fast path)."""
    topo = Topology(depth)
    lt_ = eps / 2 if lt is None else lt
    return np.where(_subtree_predictions(_sides(X @ W.T + b, topo, eps / 2, lt_), topo)[:, 0], 1, -1)


def _data(seed: int, n: int = 200, p: int = 4, rounded: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if rounded:
        X = np.round(X * 2) / 2
    y = np.where((X[:, 0] > 0.2) ^ (X[:, 1] > -0.3), 1, -1)
    y[rng.random(n) < 0.1] *= -1
    return X, y


def _genome(kinds: str, features: dict[int, int] | None = None) -> Genome:
    f = np.array([{"B": 0, "L": LEAF, ".": NIL}[c] for c in kinds], dtype=np.int64)
    for z, j in (features or {}).items():
        f[z] = j
    thr = np.where(f >= 0, 0.5, np.nan)
    g = Genome(f, thr)
    g.check()
    return g


# --------------------------------------------------------------------------- the exact tree conversion
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 3), lt=st.sampled_from([None, 0.0, 0.25]),
       rounded=st.booleans())
def test_to_decision_tree_predicts_exactly_as_the_hyperplanes(seed: int, depth: int, lt: float | None,
                                                             rounded: bool) -> None:
    """CART, then TAO (which sets +/- unit splits, constants and both leaf orientations): the DecisionTree
    predicts every sample as the hyperplanes do, including samples exactly at a threshold (rounded data)."""
    X, y = _data(seed, 120, 3, rounded)
    cart = DecisionTreeClassifier(max_depth=depth, random_state=seed).fit(X, y)
    W, b = from_sklearn(cart, depth, 3, leaf_threshold=lt)
    W, b, _ = tao(X, y, W, b, depth, leaf_threshold=lt)
    tree = to_decision_tree(W, b, depth, leaf_threshold=lt)
    grid = np.vstack([X, X + 1e-12, X - 1e-12, np.round(X * 4) / 4])
    assert np.array_equal(tree.predict(grid), _library_predict(grid, W, b, depth, 0.0, lt))


def test_to_decision_tree_refuses_oblique_nodes() -> None:
    with pytest.raises(DataError, match="axis-aligned"):
        to_decision_tree(np.array([[1.0, 1.0]]), np.zeros(1), 1)


# --------------------------------------------------------------------------- encoding
def test_encoding_of_figure_1() -> None:
    """Seed 004 Figure 1: [(f0, t0), (-1, -1), (f2, t2), nil, nil, (f5, t5), (-1, -1)]."""
    tree = DecisionTree(feature=[0, -1, 2, 5, -1, -1, -1], threshold=[0.1, 0, 0.2, 0.5, 0, 0, 0],
                        left=[1, -1, 3, 5, -1, -1, -1], right=[2, -1, 4, 6, -1, -1, -1],
                        value=[-1, 0, -1, -1, 1, 0, 1], n_features=6)
    g = encode(tree, 3)
    assert g.kinds() == "BLB..BL"
    assert g.feature.tolist() == [0, LEAF, 2, NIL, NIL, 5, LEAF]
    assert g.threshold[[0, 2, 5]].tolist() == [0.1, 0.2, 0.5]
    with pytest.raises(DataError, match="does not fit"):
        encode(tree, 2)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 4))
def test_decode_with_majority_leaves_gives_back_a_pure_tree(seed: int, depth: int) -> None:
    """Labels made by a CART tree: every leaf is pure, so majority decoding reproduces the tree exactly."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(150, 3))
    teacher = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, rng.integers(0, 2, 150) * 2 - 1)
    y = teacher.predict(X)
    W, b = from_sklearn(teacher, depth, 3)
    g = encode(to_decision_tree(W, b, depth), depth)
    g.check()
    W2, b2 = decode(g, X, y, np.ones(150))
    assert np.array_equal(_library_predict(X, W2, b2, depth), y)


# --------------------------------------------------------------------------- crossover (seed 004 §3.2)
def _splits() -> RandomSplits:
    return RandomSplits(AxisBins.of(np.arange(40.0).reshape(10, 4)))


def _take(*positions: int) -> np.ndarray:
    m = np.zeros(7, dtype=bool)
    m[list(positions)] = True
    return m


FIG1 = "BLB..BL"  # seed 004 Figure 1


def test_branch_leaf_prunes_the_node() -> None:  # Figure 2, one level deeper to have a subtree to prune
    first, second = _genome("BBBLLLL"), _genome("BBLLL..")
    child = combine(first, second, _take(2), np.random.default_rng(0), _splits())
    assert child.kinds() == "BBLLL.."


def test_leaf_branch_grows_two_leaves() -> None:  # Figure 3
    first, second = _genome(FIG1), _genome("BBBLLLL", {1: 3})
    child = combine(first, second, _take(1), np.random.default_rng(0), _splits())
    assert child.kinds() == "BBBLLBL" and child.feature[1] == 3


def test_branch_nil_makes_the_father_a_leaf() -> None:  # Figure 4
    first, second = _genome(FIG1), _genome("BBLLL..")
    child = combine(first, second, _take(5), np.random.default_rng(0), _splits())
    assert child.kinds() == "BLL...."


def test_nil_branch_grows_a_random_father_and_a_leaf_brother() -> None:  # Figure 5
    first, second = _genome(FIG1), _genome("BBBBLLL", {3: 2})
    child = combine(first, second, _take(3), np.random.default_rng(0), _splits())
    assert child.kinds() == "BBBBLBL" and child.feature[3] == 2
    assert 0 <= child.feature[1] < 4 and np.isfinite(child.threshold[1])  # the random father


def _random_genome(draw: st.DrawFn, depth: int) -> Genome:
    g = Genome.empty(depth)
    for z in range(g.feature.size):
        parent_ok = z == 0 or g.feature[(z - 1) // 2] >= 0
        if parent_ok:
            g.feature[z] = draw(st.integers(0, 3)) if draw(st.booleans()) else LEAF
            g.threshold[z] = 0.5 if g.feature[z] >= 0 else np.nan
        else:
            g.feature[z], g.threshold[z] = NIL, np.nan
    return g


@st.composite
def parents(draw: st.DrawFn) -> tuple[Genome, Genome, np.ndarray]:
    depth = draw(st.integers(1, 4))
    a, b = _random_genome(draw, depth), _random_genome(draw, depth)
    take = np.array(draw(st.lists(st.booleans(), min_size=a.feature.size, max_size=a.feature.size)))
    return a, b, take


@settings(max_examples=200, deadline=None)
@given(pb=parents(), seed=st.integers(0, 1000))
def test_every_child_is_a_tree_and_the_rates_0_and_1_copy_a_parent(pb: tuple, seed: int) -> None:
    a, b, take = pb
    rng = np.random.default_rng(seed)
    child = combine(a, b, take, rng, _splits())
    child.check()
    assert np.all(child.feature[take & (b.feature >= 0)] == b.feature[take & (b.feature >= 0)])  # branches taken
    assert combine(a, b, np.zeros_like(take), rng, _splits()).kinds() == a.kinds()
    full = combine(a, b, np.ones_like(take), rng, _splits())
    assert np.array_equal(full.feature, b.feature)
    assert crossover(a, b, rng, 0.0, _splits()).kinds() == a.kinds()


# --------------------------------------------------------------------------- the algorithm
def test_tmo_is_reproducible_and_never_below_its_initial_population() -> None:
    X, y = _data(3, 300)
    runs = [tmo(X, y, 2, n_trees=12, n_generations=3, seed=7) for _ in range(2)]
    assert np.array_equal(runs[0].W, runs[1].W) and np.array_equal(runs[0].b, runs[1].b)
    r = runs[0]
    acc = float(np.mean(_library_predict(X, r.W, r.b, 2) == y))
    assert r.fitness == pytest.approx(acc, abs=1e-12)
    assert r.fitness >= r.initial_best and r.n_tao == 12 + 3 * 12
    assert [h["generation"] for h in r.history] == [1, 2, 3]
    assert all(a["best"] <= b["best"] for a, b in zip(r.history, r.history[1:], strict=False))
    other = tmo(X, y, 2, n_trees=12, n_generations=3, seed=8)
    assert other.initial_best != r.initial_best or not np.array_equal(other.W, r.W)  # the seed matters


def test_initial_population_is_the_tao_optimized_forest() -> None:
    """With no generation, the answer is the best TAO-optimized tree of the forest: at least as accurate as
    each forest tree, and TAO never made any of them worse."""
    from sklearn.ensemble import RandomForestClassifier

    X, y = _data(4, 250)
    r = tmo(X, y, 2, n_trees=8, n_generations=0, seed=1)
    forest = RandomForestClassifier(n_estimators=8, max_depth=2, random_state=1).fit(X, y)
    best_tree = max(float(np.mean(forest.classes_[est.predict(X).astype(int)] == y)) for est in forest.estimators_)
    assert r.fitness == r.initial_best >= best_tree - 1e-12 and r.history == []


def test_the_authors_tao_variant_optimizes_each_forest_tree_on_its_own_nodes() -> None:
    """``tao_variant="seed004"`` with no generation: the answer is the best of the forest's trees each run through
    the author's TAO on its own nodes (recomputed here tree by tree with ``tao_nodes``), and the library layout
    it returns predicts as that tree does; with generations it stays reproducible and never below it."""
    from sklearn.ensemble import RandomForestClassifier

    X, y = _data(4, 250, rounded=True)  # ties among the values: the author's cut rule matters
    r = tmo(X, y, 3, n_trees=8, n_generations=0, seed=1, tao_variant="seed004", max_iter=7)
    forest = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=1).fit(X, y)
    trees = []
    for est in forest.estimators_:
        nodes = DecisionTree.from_sklearn(est, dtype="float64")
        nodes.classes = forest.classes_
        trees.append(tao_nodes(X, y, nodes, n_iter=7)[0])
    accs = [float(np.mean(t.predict(X) == y)) for t in trees]
    assert r.fitness == r.initial_best == max(accs)
    assert (_library_predict(X, r.W, r.b, 3) == trees[int(np.argmax(accs))].predict(X)).all()
    runs = [tmo(X, y, 3, n_trees=8, n_generations=2, seed=1, tao_variant="seed004", max_iter=7) for _ in range(2)]
    assert np.array_equal(runs[0].W, runs[1].W) and runs[0].fitness >= r.fitness and runs[0].n_tao == 8 + 2 * 8
    est = TMOClassifier(depth=3, n_trees=8, n_generations=2, random_state=1, variant="seed004").fit(X, y)
    assert est.result_.fitness == runs[0].fitness and (est.predict(X) == _library_predict(X, runs[0].W, runs[0].b,
                                                                                           3)).all()


def test_generational_schedule_does_not_depend_on_n_jobs() -> None:
    X, y = _data(5, 200)
    one = tmo(X, y, 2, n_trees=6, n_generations=2, seed=3, schedule="generational")
    two = tmo(X, y, 2, n_trees=6, n_generations=2, seed=3, schedule="generational", n_jobs=2)
    assert np.array_equal(one.W, two.W) and np.array_equal(one.b, two.b) and one.fitness == two.fitness


def test_time_limit_keeps_the_best_so_far() -> None:
    X, y = _data(6, 200)
    r = tmo(X, y, 2, n_trees=10, n_generations=50, seed=0, time_limit=0.0)
    assert r.stopped == "time_limit" and r.fitness >= r.initial_best and r.n_tao >= 1


@pytest.mark.parametrize("kw,match", [({"n_trees": 1}, "n_trees"), ({"crossover_rate": 1.5}, "crossover_rate"),
                                      ({"schedule": "x"}, "schedule"), ({"n_jobs": 2}, "generational"),
                                      ({"time_limit": -1}, "time_limit"), ({"tao_variant": "paper"}, "tao_variant"),
                                      ({"tao_variant": "seed004", "sample_weight": np.arange(40.0)},
                                       "equal sample weights")])
def test_bad_options_are_named(kw: dict, match: str) -> None:
    X, y = _data(0, 40)
    with pytest.raises(OptionError, match=match):
        tmo(X, y, 2, **kw)
    with pytest.raises(DataError, match="labels"):
        tmo(X, (y > 0).astype(int), 2)


# --------------------------------------------------------------------------- estimators
@pytest.mark.parametrize("est", [TAOClassifier(), TMOClassifier(n_trees=4, n_generations=1)], ids=["tao", "tmo"])
def test_check_estimator(est: object) -> None:
    from sklearn.utils.estimator_checks import check_estimator

    # a forest's bootstrap draws rows, so weights are not equivalent to repeated rows (as for RandomForest)
    # (sparse X is densified: its twin fails for the same reason)
    xfail = {f"check_sample_weight_equivalence_on_{kind}_data": "random forest start: bootstrap of rows"
             for kind in ("dense", "sparse")}
    # class_weight (issue 19): a depth-2 tree keeps the pure pockets of the 1e-4-weight class (they lower the
    # weighted training error), so fewer than 87% of the test points are predicted as the 1000-weight class
    cw = {"check_class_weight_classifiers": "pure pockets of the light class are kept (lower weighted error)"}
    results = check_estimator(est, on_fail=None,
                              expected_failed_checks={**cw, **xfail} if isinstance(est, TMOClassifier) else cw)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert failed == []


def test_estimators_predict_as_their_hyperplanes_and_weights_count() -> None:
    X, y = _data(8, 300)
    labels = np.where(y > 0, "yes", "no")
    tao_ = TAOClassifier(depth=3).fit(X, labels)
    assert np.array_equal(tao_.predict(X) == "yes", _library_predict(X, tao_.W_, tao_.b_, 3) > 0)
    assert tao_.history_[-1] <= tao_.cart_error_
    w = np.where(y > 0, 5.0, 1.0)  # weighing the positives moves the tree towards them
    heavy = TAOClassifier(depth=2).fit(X, labels, sample_weight=w)
    plain = TAOClassifier(depth=2).fit(X, labels)
    assert np.mean(heavy.predict(X) == "yes") >= np.mean(plain.predict(X) == "yes")
    tmo_ = TMOClassifier(depth=2, n_trees=8, n_generations=2, random_state=0).fit(X, labels)
    assert tmo_.score(X, labels) == pytest.approx(tmo_.result_.fitness) and tmo_.score(X, labels) >= tmo_.initial_score_
    proba = tmo_.predict_proba(X)
    assert np.array_equal(tmo_.classes_[proba.argmax(1)] == "yes", tmo_.predict(X) == "yes") or \
        np.all(np.abs(proba[:, 1] - 0.5) < 1e-12)


# --------------------------------------------------------------------------- command line
def test_fit_tmo_and_tao_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["fit", "tmo", "--data", "ionosphere", "--depth", "2", "--param", "n_trees=6", "--param",
               "n_generations=1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["fitter"] == "tmo" and out["status"] == "feasible"
    assert out["tmo"]["fitness"] == pytest.approx(out["metrics"]["train"]["accuracy"])
    assert out["tmo"]["fitness"] >= out["tmo"]["initial_best"] and out["n_train"] + out["n_test"] == 351
    rc = main(["fit", "tao", "--data", "ionosphere", "--depth", "2", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["tao"]["history"][-1] <= out["tao"]["cart_error"] and out["tree"].startswith("|---")
    rc = main(["fit", "tao", "--data", "ionosphere", "--depth", "2", "--param", "variant=seed004", "--param",
               "max_iter=7", "--json"])  # the thesis' TAO as its author runs it
    seed004 = json.loads(capsys.readouterr().out)
    assert rc == 0 and seed004["params"]["variant"] == "seed004" and len(seed004["tao"]["history"]) == 7
    rc = main(["fit", "tmo", "--data", "ionosphere", "--depth", "2", "--param", "n_trees=6", "--param",
               "n_generations=1", "--param", "variant=seed004", "--json"])  # TMO with the author's TAO inside
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["params"]["variant"] == "seed004"
    assert out["tmo"]["fitness"] == pytest.approx(out["metrics"]["train"]["accuracy"])


@pytest.mark.parametrize("fitter,extra", [("tao", []), ("tmo", ["--param", "n_trees=4", "--param", "n_generations=1"])])
def test_fit_tmo_tao_auc_scores_the_positive_class_when_it_sorts_first(
        fitter: str, extra: list[str], capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    # issue 33: the positive "M" sorts before "R" (sonar's labels), so the estimator's probability column of "M"
    # is 0; reading column 1 printed 1 - AUC
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    labels = np.where(X[:, 0] + 0.8 * rng.normal(size=80) > 0, "M", "R")
    lines = ["a,b,c,kind"] + [f"{x[0]},{x[1]},{x[2]},{lab}" for x, lab in zip(X, labels, strict=True)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    rc = main(["fit", fitter, "--data", str(tmp_path / "d.csv"), "--label", "kind", "--positive", "M", "--depth",
               "2", "--seed", "0", "--test-size", "0.25", *extra, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["data"]["classes"] == ["R", "M"]
    train, test = Dataset.from_arrays(X, labels, positive="M").split(0.25, seed=0)
    kw = {"n_trees": 4, "n_generations": 1} if fitter == "tmo" else {}
    est = (TMOClassifier if fitter == "tmo" else TAOClassifier)(depth=2, random_state=0, **kw)
    est.fit(train.X, train.labels_of(train.y))
    assert list(est.classes_) == ["M", "R"]
    for part, d in (("train", train), ("test", test)):
        want = roc_auc_score(d.labels_of(d.y) == "M", est.predict_proba(d.X)[:, 0])
        assert out["metrics"][part]["auc"] == pytest.approx(want, abs=1e-12)
    assert out["metrics"]["train"]["auc"] > 0.5  # a tree that learned something ranks "M" higher


@pytest.mark.parametrize("argv,match", [(["--param", "k=3"], "no parameter 'k'"),
                                        (["--param", "n_trees=x"], "bad value"),
                                        (["--solver", "highs"], "has no solver"),
                                        (["--param", "variant=paper"], "variant must be one of")])
def test_fit_tmo_bad_options(argv: list[str], match: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", "tmo", "--data", "ionosphere", *argv]) == 2
    assert match in capsys.readouterr().err


# --------------------------------------------------------------------------- warm start of the MILPs
@pytest.mark.parametrize("name,solver", [("oct", "highs"), ("octh", "highs"), ("olct", "highs"),
                                         ("olct_univariate", "highs"), ("margot", "scip"), ("margot_hfs", "scip"),
                                         ("margot_sfs", "scip")])
def test_tmo_start_is_accepted_and_never_beaten_by_the_result(name: str, solver: str) -> None:
    from treeopt_dsl.data import Dataset
    from treeopt_dsl.formulations import get_formulation
    from treeopt_dsl.starts.resolver import start_point, tmo_start

    pytest.importorskip("pyscipopt") if solver == "scip" else None
    X, y = _data(9, 60)
    data = Dataset.from_arrays(X, y)
    spec = get_formulation(name, depth=2)
    built = spec.build(data)
    x = start_point(built, "tmo")
    assert built.model.max_violation(x) <= 1e-6
    W, _ = tmo_start(built)
    assert np.all((W != 0).sum(1) <= 1)  # an axis-aligned tree, whatever the formulation
    res = spec.solve(data, solver=solver, warm_start="tmo", time_limit=5)
    assert res.status.has_solution and res.start["chosen"] == "tmo"
    assert res.start["objective"] == pytest.approx(float(built.compile().objective(x)), rel=1e-6, abs=1e-6)
    assert res.objective <= res.start["objective"] + 1e-6 * max(1.0, abs(res.start["objective"]))


# --------------------------------------------------------------------------- DecisionTree starts
@pytest.mark.parametrize("name,params", [("oct", {}), ("oct", {"cuts": "all"}), ("olct", {}), ("octh", {})])
def test_a_fitted_decision_tree_starts_every_tree_formulation(name: str, params: dict) -> None:
    """The tree of an estimator fitted on raw features and the data's own labels (here TMO's and CART's) is a
    warm start: feasible, and for oct its objective is exactly the tree's training errors."""
    from treeopt_dsl.data import Dataset
    from treeopt_dsl.formulations import get_formulation
    from treeopt_dsl.starts.resolver import start_point

    X, y = _data(10, 80)
    X = X * np.array([100.0, 0.01, 5.0, 1.0]) + 3.0  # raw units far from the formulation's scaled ones
    labels = np.where(y > 0, "yes", "no")
    data = Dataset.from_arrays(X, labels, positive="yes")
    built = get_formulation(name, depth=2, **params).build(data)
    tmo_ = TMOClassifier(depth=2, n_trees=6, n_generations=1, random_state=0).fit(X, labels)
    cart = DecisionTree.from_sklearn(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, labels))
    for tree in (tmo_.tree_, cart):
        x = start_point(built, tree)
        assert built.model.max_violation(x) <= 1e-6
        errors = int(np.sum(tree.predict(X) != labels))
        if name == "oct":
            assert float(built.compile().objective(x)) == pytest.approx(errors)
        model = built.decode(x)
        assert np.array_equal(model.predict(X), tree.predict(X))  # the start is the same classifier
    with pytest.raises(Exception, match="classes"):
        start_point(built, DecisionTree([0, -1, -1], [0.0, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1],
                                        classes=np.array(["a", "b"]), n_features=4))


def test_tao_refuses_bins_of_another_matrix() -> None:
    X, y = _data(11, 50)
    W, b = from_sklearn(DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y), 1, X.shape[1])
    with pytest.raises(DataError, match="bins were built"):
        tao(X, y, W, b, 1, bins=AxisBins.of(X[:10]))
    # the same bins as tao builds itself: the same tree
    assert np.array_equal(tao(X, y, W, b, 1, bins=AxisBins.of(X))[0], tao(X, y, W, b, 1)[0])


def test_warm_start_tmo_is_the_tree_fit_tmo_returns(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33: ``fit oct --warm-start tmo --seed s`` started from another tree than ``fit tmo --seed s`` (24 training
    errors against 20 here): the start's forest was grown without weights and the estimator's with weights 1
    (scikit-learn draws another forest), and the start ignored the seed. Same seed, same tree."""
    common = ["--data", "banknote", "--depth", "3", "--seed", "0", "--json"]
    assert main(["fit", "tmo", *common]) == 0
    fitted = json.loads(capsys.readouterr().out)
    errors = round((1.0 - fitted["metrics"]["train"]["accuracy"]) * fitted["n_train"])
    assert main(["fit", "oct", *common, "--warm-start", "tmo", "--solver", "highs", "--time-limit", "2"]) in (0, 1)
    started = json.loads(capsys.readouterr().out)
    assert started["start"]["chosen"] == "tmo" and started["start"]["objective"] == pytest.approx(errors)


def test_the_tmo_start_follows_the_solves_seed() -> None:
    data = Dataset.from_arrays(*_data(5, n=120))
    built = get_formulation("oct", depth=2).build(data)
    for seed in (0, 4):
        ref = TMOClassifier(depth=2, random_state=seed).fit(data.X, data.y)
        tree = built.decode(built.polish(start_point(built, "tmo", seed=seed)))
        assert np.sum(tree.predict(data.X) != data.y) == np.sum(ref.predict(data.X) != data.y)
    assert resolve(built, "tmo", seed=4).x.tolist() == start_point(built, "tmo", seed=4).tolist()


@pytest.mark.parametrize("depth", [0, 7, 2.5, True])
def test_depth_is_checked_once_as_every_tree_is(depth: object) -> None:
    """TMO, TAO's estimator and the formulations hold one rule for ``depth`` (:func:`treeopt_dsl.topology.check_depth`,
    1 .. MAX_DEPTH): TMO had its own (any whole number >= 1), so depth 7 passed it and failed later, elsewhere."""
    X, y = _data(0, 40)
    with pytest.raises(FormulationError, match="depth must be an integer from 1 to 6") as direct:
        tmo(X, y, depth, n_trees=2, n_generations=0)
    with pytest.raises(FormulationError, match="depth must be an integer from 1 to 6") as estimator:
        TMOClassifier(depth=depth, n_trees=2, n_generations=0).fit(X, y)
    assert str(direct.value) == str(estimator.value)


@pytest.mark.parametrize("cls", [TAOClassifier, TMOClassifier])
def test_memetic_estimators_refuse_one_class_with_a_data_error(cls: type) -> None:
    with pytest.raises(DataError, match="needs two classes in y, found 1"):
        cls().fit(np.zeros((6, 2)), np.ones(6, dtype=int))


def test_tao_given_a_random_state_starts_from_the_cart_that_stream_fits() -> None:
    """A ``RandomState`` reaches CART itself (``split = "sklearn"``: the stream after the split): with every
    feature twice, which copy CART splits on is the stream's draw, and TAO with no pass (``max_iter = 0``) is
    that CART tree, feature for feature, where an integer drawn from the stream would seed another draw."""
    rng = np.random.default_rng(3)
    base = rng.normal(size=(120, 3))
    X = base[:, [0, 0, 1, 1, 2, 2]]
    y = np.where(base[:, 0] + 0.5 * base[:, 1] > 0, 1, 0)
    picked = set()
    for s in range(8):
        cart = DecisionTreeClassifier(max_depth=2, random_state=np.random.RandomState(s)).fit(X, y)
        tao_ = TAOClassifier(depth=2, max_iter=0, random_state=np.random.RandomState(s)).fit(X, y)
        root = int(np.flatnonzero(tao_.W_[0])[0])  # W_: one row per branch node, the root first
        assert root == int(cart.tree_.feature[0]), s
        assert set(np.nonzero(tao_.W_)[1].tolist()) <= set(cart.tree_.feature.tolist()), s
        picked.add(root)
    assert len(picked) > 1  # the root's copy differs between streams: the check above can fail
