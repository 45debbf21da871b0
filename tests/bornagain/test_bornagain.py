"""Born-again tree ensembles (treeopt_dsl.bornagain): exactness of the DP against a brute force, faithfulness,
the BA-Trees file format, scikit-learn conversion and post-pruning."""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treeopt_dsl.bornagain import (
    CellSpace,
    DecisionTree,
    Ensemble,
    born_again,
    check_faithful,
    node_counts,
    prune_empty_splits,
    read_ba_forest,
    write_ba_forest,
)
from treeopt_dsl.datasets import data_dir
from treeopt_dsl.errors import DataError, OptionError


# --------------------------------------------------------------------------------------------- random ensembles
def random_tree(rng: np.random.Generator, n_features: int, n_classes: int, max_depth: int,
                levels: list[float]) -> DecisionTree:
    """A random (possibly unbalanced) tree with thresholds drawn from ``levels``."""
    feature, threshold, left, right, value = [], [], [], [], []

    def grow(d: int) -> int:
        i = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        left.append(-1)
        right.append(-1)
        value.append(-1)
        if d == max_depth or (d > 0 and rng.random() < 0.3):
            value[i] = int(rng.integers(n_classes))
            return i
        feature[i] = int(rng.integers(n_features))
        threshold[i] = float(rng.choice(levels))
        left[i] = grow(d + 1)
        right[i] = grow(d + 1)
        return i

    grow(0)
    return DecisionTree(feature, threshold, left, right, value, classes=np.arange(n_classes), n_features=n_features)


def random_ensemble(seed: int) -> Ensemble:
    rng = np.random.default_rng(seed)
    p = int(rng.integers(2, 4))
    k = int(rng.integers(2, 4))
    levels = [0.5, 1.5, 2.5][: int(rng.integers(2, 4))]
    trees = [random_tree(rng, p, k, int(rng.integers(1, 4)), levels) for _ in range(int(rng.integers(2, 5)))]
    return Ensemble.hard_vote(trees, n_classes=k, n_features=p)


# --------------------------------------------------------------------------------------------- brute force
def brute_force(ens: Ensemble, objective: str) -> int:
    """Dynamic Program 1 verbatim on the unfiltered grid: explicit homogeneity test, every split, no bounds."""
    space = CellSpace.from_ensemble(ens)
    p = space.n_features

    @functools.cache
    def phi(lo: tuple[int, ...], hi: tuple[int, ...]) -> tuple[int, int]:  # (depth, leaves)
        if space.is_homogeneous(lo, hi):
            return (0, 1)
        best: tuple[int, int] | None = None
        for j in range(p):
            for m in range(lo[j], hi[j]):
                a = phi(lo, hi[:j] + (m,) + hi[j + 1:])
                b = phi(lo[:j] + (m + 1,) + lo[j + 1:], hi)
                if objective == "depth":
                    c = (1 + max(a[0], b[0]), 0)
                elif objective == "leaves":
                    c = (0, a[1] + b[1])
                else:
                    c = (1 + max(a[0], b[0]), a[1] + b[1])
                best = c if best is None or c < best else best
        assert best is not None
        return best

    d, leaves = phi((0,) * p, tuple(n - 1 for n in space.shape))
    return {"depth": d, "leaves": leaves, "depth-leaves": (d, leaves)}[objective]  # type: ignore[return-value]


def min_depth_by_enumeration(ens: Ensemble) -> int:
    """The smallest d such that some tree of depth <= d over the split levels reproduces every cell."""
    space = CellSpace.from_ensemble(ens)

    @functools.cache
    def feasible(lo: tuple[int, ...], hi: tuple[int, ...], d: int) -> bool:
        if space.is_homogeneous(lo, hi):
            return True
        if d == 0:
            return False
        return any(feasible(lo, hi[:j] + (m,) + hi[j + 1:], d - 1) and feasible(lo[:j] + (m + 1,) + lo[j + 1:], hi,
                                                                               d - 1)
                   for j in range(space.n_features) for m in range(lo[j], hi[j]))

    top = tuple(n - 1 for n in space.shape)
    return next(d for d in itertools.count() if feasible((0,) * space.n_features, top, d))


# --------------------------------------------------------------------------------------------- DP exactness
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1))
def test_dp_matches_brute_force(seed: int) -> None:
    ens = random_ensemble(seed)
    assert born_again(ens, "depth").depth == min_depth_by_enumeration(ens) == brute_force(ens, "depth")
    for objective in ("depth", "leaves", "depth-leaves"):
        for method in ("recursion", "table"):
            res = born_again(ens, objective, method=method)
            assert res.status == "optimal"
            tree = res.tree
            assert tree is not None
            if objective == "depth":
                assert tree.depth == res.value == brute_force(ens, "depth")
            elif objective == "leaves":
                assert tree.n_leaves == res.value + 1 == brute_force(ens, "leaves")
            else:
                assert (tree.depth, tree.n_leaves) == brute_force(ens, "depth-leaves")
            assert check_faithful(tree, ens).ok
            assert check_faithful(tree, ens, max_cells=0).ok  # the leaf-region sweep


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_check_faithful_detects_a_wrong_tree(seed: int) -> None:
    ens = random_ensemble(seed)
    tree = born_again(ens, "leaves").tree
    assert tree is not None
    leaves = np.flatnonzero(tree.is_leaf)
    value = tree.value.copy()
    value[leaves[seed % leaves.size]] = (value[leaves[seed % leaves.size]] + 1) % ens.n_classes
    bad = DecisionTree(tree.feature, tree.threshold, tree.left, tree.right, value, classes=tree.classes,
                       n_features=tree.n_features)
    for max_cells in (10**6, 0):
        res = check_faithful(bad, ens, max_cells=max_cells)
        assert not res.ok
        x = res.counterexample.reshape(1, -1)
        assert ens.predict(x)[0] == res.ensemble_class != res.tree_class == bad.predict(x)[0]


def test_born_again_agrees_with_the_ensemble_on_random_points() -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 4, size=(2000, 3))
    for seed in range(10):
        ens = random_ensemble(seed)
        for objective in ("depth", "leaves", "depth-leaves"):
            tree = born_again(ens, objective).tree
            assert tree is not None
            Xp = X[:, : ens.n_features]
            np.testing.assert_array_equal(tree.predict(Xp), ens.predict(Xp))


def test_options_are_checked() -> None:
    ens = random_ensemble(1)
    with pytest.raises(OptionError):
        born_again(ens, "size")
    with pytest.raises(OptionError):
        born_again(ens, "depth", method="magic")
    with pytest.raises(OptionError):
        born_again(ens, "depth", time_limit=0)
    res = born_again(ens, "leaves", method="table", time_limit=1e-9)
    assert res.status == "time_limit" and res.tree is None


# --------------------------------------------------------------------------------------------- DecisionTree
def test_decision_tree_basics() -> None:
    t = DecisionTree([0, 1, -1, -1, -1], [0.5, 2.0, 0, 0, 0], [1, 3, -1, -1, -1], [2, 4, -1, -1, -1],
                     [-1, -1, 2, 0, 1], classes=["a", "b", "c"], feature_names=["u", "v"])
    X = np.array([[0.5, 2.0], [0.5, 2.5], [0.6, 0.0]])
    assert t.predict(X).tolist() == ["a", "b", "c"]
    assert t.apply(X).tolist() == [3, 4, 2]
    assert (t.depth, t.n_leaves, t.n_nodes) == (2, 3, 5)
    assert t.text().splitlines() == ["|--- u <= 0.50", "|   |--- v <= 2.00", "|   |   |--- class: a",
                                     "|   |--- v >  2.00", "|   |   |--- class: b", "|--- u >  0.50",
                                     "|   |--- class: c"]
    back = DecisionTree.from_dict(t.to_dict())
    np.testing.assert_array_equal(back.predict(X), t.predict(X))
    assert back.feature_names == ("u", "v")
    with pytest.raises(DataError, match="3 features"):
        t.predict(np.zeros((2, 3)))
    with pytest.raises(DataError):
        DecisionTree([0, -1], [0.5, 0], [1, -1], [-1, -1], [-1, 0])  # one child only


def test_decision_tree_from_sklearn() -> None:
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] + X[:, 1] ** 2 > 0.5, "pos", "neg")
    clf = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    t = DecisionTree.from_sklearn(clf)
    Xt = rng.normal(size=(2000, 4))
    np.testing.assert_array_equal(t.predict(Xt), clf.predict(Xt))
    assert t.depth == clf.get_depth() and t.n_leaves == clf.get_n_leaves()


def test_a_subtree_predicts_as_its_root_would_and_the_sklearn_view_reads_back() -> None:
    """``apply(X, root)`` against the walk written out row by row from that node; ``sklearn_view`` read back by
    ``from_sklearn`` (scikit-learn's own layout) predicts every row as the tree does."""
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] * X[:, 1] > 0, "pos", "neg")
    t = DecisionTree.from_sklearn(DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y), dtype="float64")
    for root in range(t.n_nodes):
        want = []
        for x in X:
            node = root
            while t.left[node] >= 0:
                node = t.left[node] if x[t.feature[node]] <= t.threshold[node] else t.right[node]
            want.append(node)
        assert t.apply(X, root).tolist() == want
        assert t.predict_index(X, root).tolist() == t.value[want].tolist()
    for bad in (-1, t.n_nodes):
        with pytest.raises(DataError, match="root must be a node of the tree"):
            t.apply(X, bad)
    back = DecisionTree.from_sklearn(t.sklearn_view(), dtype="float64")
    np.testing.assert_array_equal(back.predict(X), t.predict(X))
    assert back.dtype == "float64" and DecisionTree.from_sklearn(t.sklearn_view()).dtype == "float32"


# --------------------------------------------------------------------------------------------- scikit-learn
@pytest.mark.parametrize("kind", ["rf", "et", "dt"])
def test_from_sklearn_reproduces_predict(kind: str) -> None:
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] + X[:, 2] > 0.3).astype(int)  # 3 classes
    model = {"rf": RandomForestClassifier(n_estimators=15, max_depth=4, random_state=0),
             "et": ExtraTreesClassifier(n_estimators=15, max_depth=4, random_state=0),
             "dt": DecisionTreeClassifier(max_depth=5, random_state=0)}[kind].fit(X, y)
    ens = Ensemble.from_sklearn(model)
    Xt = np.vstack([X, rng.normal(size=(3000, 5))])
    np.testing.assert_array_equal(ens.predict(Xt), model.predict(Xt))
    if kind != "dt":
        np.testing.assert_array_equal(ens.scores(Xt), model.predict_proba(Xt))


def test_born_again_of_a_sklearn_forest() -> None:
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] * X[:, 1] > 0, "x", "o")
    rf = RandomForestClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y)
    ens = Ensemble.from_sklearn(rf)
    res = born_again(ens, "leaves")
    assert res.tree is not None and check_faithful(res.tree, ens).ok
    Xt = rng.normal(size=(5000, 3))
    np.testing.assert_array_equal(res.tree.predict(Xt), rf.predict(Xt))


# --------------------------------------------------------------------------------------------- file format
def test_ba_format_round_trip(tmp_path: Path) -> None:
    ens = random_ensemble(5)
    tree = born_again(ens, "depth").tree
    assert tree is not None
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 4, size=(500, ens.n_features))
    for model in (tree, ens):
        path = write_ba_forest(model, tmp_path / "m.txt", dataset_name="random")
        back = read_ba_forest(path)
        np.testing.assert_array_equal(back.predict(X), model.predict(X))
        first = back.trees[0]
        src = model if isinstance(model, DecisionTree) else model.trees[0]
        for name in ("feature", "threshold", "left", "right", "value"):
            np.testing.assert_array_equal(getattr(first, name), getattr(src, name))
    assert [p.name for p in tmp_path.iterdir()] == ["m.txt"]  # no temporary file left behind


def test_ba_format_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("NB_TREES: 1\nNB_FEATURES: 2\nNB_CLASSES: 2\n\n[TREE 0]\nNB_NODES: 3\n"
                    "0 IN 1 2 0 0.5 0 -1\n1 XX -1 -1 -1 -1 1 0\n2 LN -1 -1 -1 -1 1 1\n")
    with pytest.raises(DataError, match=r"bad\.txt:8: node type"):
        read_ba_forest(path)
    path.write_text("NB_TREES: 1\nNB_FEATURES: 2\nNB_CLASSES: 2\n\n[TREE 0]\nNB_NODES: 3\n"
                    "0 IN 1 2 5 0.5 0 -1\n1 LN -1 -1 -1 -1 1 0\n2 LN -1 -1 -1 -1 1 1\n")
    with pytest.raises(DataError, match=r"bad\.txt:7: feature 5"):
        read_ba_forest(path)
    path.write_text("NB_TREES: 2\nNB_FEATURES: 2\nNB_CLASSES: 2\n\n[TREE 0]\nNB_NODES: 1\n0 LN -1 -1 -1 -1 0 1\n")
    with pytest.raises(DataError, match="NB_TREES: 2"):
        read_ba_forest(path)


# --------------------------------------------------------------------------------------------- pruning
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_pruning_keeps_training_predictions(seed: int) -> None:
    ens = random_ensemble(seed)
    tree = born_again(ens, "depth").tree
    assert tree is not None
    rng = np.random.default_rng(seed)
    X = rng.choice([0.0, 1.0, 2.0, 3.0], size=(int(rng.integers(1, 12)), ens.n_features))
    pruned = prune_empty_splits(tree, X)
    np.testing.assert_array_equal(pruned.predict(X), tree.predict(X))
    assert pruned.n_leaves <= tree.n_leaves and pruned.depth <= tree.depth
    counts = node_counts(pruned, X)
    inner = ~pruned.is_leaf
    assert np.all(counts[pruned.left[inner]] > 0) and np.all(counts[pruned.right[inner]] > 0)


# --------------------------------------------------------------------------------------------- the paper's data
def _ba_dir() -> Path:
    root = data_dir()
    if root is None or not (root / "ba-trees" / "forests").is_dir():
        pytest.skip("the ba-trees data (forests and splits of Vidal & Schiffer 2020) is not available")
    return root / "ba-trees"


def _walk_file(path: Path, x: np.ndarray) -> int:
    """An independent reading of a BA-Trees forest file: walk every tree node by node, count the votes."""
    lines = path.read_text().splitlines()
    n_classes = int(next(ln for ln in lines if ln.startswith("NB_CLASSES")).split(":")[1])
    votes = [0] * n_classes
    i = 0
    while i < len(lines):
        if lines[i].startswith("[TREE"):
            n = int(lines[i + 1].split(":")[1])
            nodes = {int(r.split()[0]): r.split() for r in lines[i + 2: i + 2 + n]}
            k = 0
            while nodes[k][1] == "IN":
                k = int(nodes[k][2]) if x[int(nodes[k][4])] <= float(nodes[k][5]) else int(nodes[k][3])
            votes[int(nodes[k][7])] += 1
            i += 2 + n
        else:
            i += 1
    return max(range(n_classes), key=lambda c: (votes[c], -c))  # first maximum


def test_ba_forest_file_predictions() -> None:
    base = _ba_dir()
    forest = base / "forests" / "HTRU2" / "HTRU2.RF1.txt"
    ens = read_ba_forest(forest)
    data = np.loadtxt(base / "datasets" / "HTRU2" / "HTRU2.test1.csv", delimiter=",", skiprows=1)
    X = data[:60, :-1]
    assert ens.predict(X).tolist() == [_walk_file(forest, x) for x in X]


@pytest.mark.parametrize(("objective", "depth", "leaves"), [("depth", 6, 21), ("leaves", 6, 11),
                                                            ("depth-leaves", 6, 11)])
def test_paper_forest_htru2_fold1(objective: str, depth: int, leaves: int) -> None:
    """HTRU2 fold 1: the values of the authors' code (the paper's Table 2 averages them over 10 folds)."""
    ens = read_ba_forest(_ba_dir() / "forests" / "HTRU2" / "HTRU2.RF1.txt")
    res = born_again(ens, objective)
    assert (res.depth, res.n_leaves) == (depth, leaves)
    assert res.tree is not None and check_faithful(res.tree, ens).ok


def test_paper_bounds_with_the_default_method_reproduce_the_papers_143_leaves() -> None:
    """Issue 33: ``paper_bounds=True`` was ignored by ``method="auto"`` (the table, no bounds): PD fold 2 gave the
    exact 134 leaves, not the authors' 143 that the docs promise."""
    ens = read_ba_forest(_ba_dir() / "forests" / "Pima-Diabetes" / "Pima-Diabetes.RF2.txt")
    res = born_again(ens, "depth-leaves", paper_bounds=True)
    assert (res.method, res.depth, res.n_leaves) == ("recursion", 10, 143)
    assert res.tree is not None and check_faithful(res.tree, ens).ok
    with pytest.raises(OptionError, match=r"paper_bounds=True.*method='recursion'"):
        born_again(ens, "depth-leaves", method="table", paper_bounds=True)
