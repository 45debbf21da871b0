"""Optimal categorical decision trees (Günlük et al., seed 002): encoding, shapes, blocks, formulation.

The reference for every optimum is a brute force that enumerates, node by node, every group and
every admissible subset of its levels (all subsets; prefixes/suffixes for ordinal groups, §4.4;
small or large subsets with max.card, §4.5), recursing into the two subtrees independently.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from treeopt_dsl import Dataset
from treeopt_dsl.backends import SolveOptions, get_backend
from treeopt_dsl.datasets import data_dir, load_dataset
from treeopt_dsl.datasets.encoding import NONE_LEVEL, GroupEncoder, encode_groups, structure
from treeopt_dsl.errors import DataError, FormulationError
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.formulations.categorical import TABLE2
from treeopt_dsl.models.subset_cart import fit_subset_cart
from treeopt_dsl.topology.shapes import Shape

SHARED = data_dir()
needs_shared = pytest.mark.skipif(SHARED is None, reason="the shared data directory (../shared/data) is absent")


# ------------------------------------------------------------------------------------------ helpers
def raw_data(rng: np.random.Generator, n: int, sizes: list[int], kinds: list[str]) -> tuple[Dataset, tuple[int, ...]]:
    """Integer-coded columns: 'cat' columns are category codes, 'num' columns small ordinal numbers."""
    X = np.column_stack([rng.integers(0, m, n) for m in sizes]).astype(float)
    y = rng.choice([-1, 1], n)
    y[:2] = [-1, 1]
    cats = tuple(j for j, k in enumerate(kinds) if k == "cat")
    return Dataset.from_arrays(X, y), cats


def subsets(m: int, ordinal: bool, max_card: int | None) -> list[np.ndarray]:
    """Admissible left sets of a group with m levels, as bool masks."""
    out = []
    for bits in itertools.product([False, True], repeat=m):
        s = np.array(bits)
        if ordinal and m >= 3:
            k = int(s.sum())
            if not (s[:k].all() or s[m - k:].all()):
                continue
        elif max_card is not None and m > max_card:
            if not (s.sum() <= max_card or s.sum() >= m - max_card):
                continue
        out.append(s)
    return out


def choices(enc: GroupEncoder, lev: np.ndarray, ordinal: bool, max_card: int | None,
            allowed: np.ndarray | None = None) -> list[np.ndarray]:
    """Every (group, subset) test as the bool vector 'goes left' over the samples."""
    out = []
    for g, grp in enumerate(enc.groups_):
        if allowed is not None and not allowed[g]:
            continue
        for s in subsets(len(grp.levels), ordinal and grp.ordinal, max_card):
            out.append(s[lev[:, g]])
    return out


def brute_force(shape: Shape, tests: list[np.ndarray], y: np.ndarray, C: float) -> float:
    """max (8a) over all trees of ``shape``: the subtrees of a node are optimized independently."""
    memo: dict[tuple, float] = {}

    def best(child: tuple[str, int], mask: np.ndarray) -> float:
        kind, i = child
        if kind == "leaf":
            sign = shape.leaf_sign[i]
            return float(((y == sign) & mask).sum()) * (1.0 if sign > 0 else C)
        key = (i, mask.tobytes())
        if key not in memo:
            lc, rc = shape.children[i]
            memo[key] = max(best(lc, mask & t) + best(rc, mask & ~t) for t in tests)
        return memo[key]

    return best(("node", 0), np.ones(y.size, dtype=bool))


def total_weight(y: np.ndarray, C: float) -> float:
    return float((y > 0).sum()) + C * float((y < 0).sum())


def solve(data: Dataset, **params):
    res = get_formulation("odt_categorical", **params).solve(data, gap=0.0, time_limit=60)
    assert res.status.value == "optimal", res.status
    assert res.certificate is not None and res.certificate.ok, res.certificate
    return res


def reference(data: Dataset, res, shape: str, C: float = 1.0, numeric: str = "ordinal",
              max_card: int | None = None) -> float:
    enc: GroupEncoder = res.built.ctx.data.meta["encoder"]
    tests = choices(enc, enc.levels(data.X), numeric == "ordinal", max_card,
                    res.built.ctx.data.meta.get("allowed_groups"))
    return total_weight(data.y, C) - brute_force(Shape.named(shape), tests, data.y, C)


# ------------------------------------------------------------------------------------------ shapes
def test_shapes_match_figures_2_and_3():
    s3, s25, ib = Shape.named("3"), Shape.named("2.5"), Shape.named("imbalanced")
    assert (s3.n_nodes, s3.n_leaves, s25.n_nodes, s25.n_leaves, ib.n_nodes, ib.n_leaves) == (7, 8, 5, 6, 7, 8)
    assert s3.path(4) == [(1, "L"), (2, "R"), (4, "R")] and s3.path(5) == [(1, "R"), (5, "L"), (6, "L")]
    assert ib.path(5) == [(1, "L"), (2, "R"), (6, "L")] and ib.path(8) == [(1, "R"), (7, "R")]
    assert ib.depth == 4 and s25.depth == 3
    # anchors only at symmetric nodes not adjacent to a leaf (§4.3.2); never at the imbalanced root
    assert s3.anchored.tolist() == [True, True, False, False, True, False, False]
    assert Shape.named("2").anchored.tolist() == [True, False, False]
    assert ib.anchored.tolist() == [False, False, True, False, False, False, False]
    assert (s3.leaf_sign == [-1, 1, -1, 1, -1, 1, -1, 1]).all()  # B+ = even labels
    assert (s3.KL.sum(1) + s3.KR.sum(1) == 3).all() and (s3.KL & s3.KR).sum() == 0


def test_shape_routing_and_validation():
    ib = Shape.named("imbalanced")
    gl = np.array([[1, 1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 0, 0], [1, 1, 0, 1, 0, 0, 0]], bool)
    assert ib.route(gl).tolist() == [0, 4, 7, 3]
    assert Shape.balanced(3).KL.tolist() == Shape.named("3").KL.tolist()
    with pytest.raises(FormulationError, match="one leaf and one decision node"):
        Shape(((None, None), None))
    with pytest.raises(FormulationError, match="unknown tree shape"):
        Shape.named("4")


# ------------------------------------------------------------------------------------------ encoding
def test_numeric_deciles_fitted_on_training_data_and_reused():
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    X = np.column_stack([x, rng.integers(0, 3, 300), (x > 0).astype(float)])
    d = Dataset.from_arrays(X, np.where(x > 0.3, 1, 0))
    enc = GroupEncoder(categorical_columns=[1]).fit(d)
    num, cat, binary = enc.groups_
    assert (num.kind, len(num.levels)) == ("numeric", 10) and num.edges.size == 9
    assert np.isin(num.edges, x).all()  # every edge is a training value: no empty bin
    counts = np.bincount(num.level_of(X), minlength=10)
    assert (counts >= 25).all() and counts.sum() == 300
    assert (cat.kind, cat.levels, binary.levels) == ("categorical", ("0", "1", "2"), ("0", "1"))
    A = enc.transform_X(X)
    assert A.shape == (300, 15) and (A.sum(1) == 3).all()
    # the same edges at predict time: a new value lands in the bin of the training edges
    new = np.array([[num.edges[3], 1.0, 0.0], [num.edges[-1] + 100.0, 7.0, 1.0]])
    lev = enc.levels(new)
    assert lev[0].tolist() == [3, 1, 0] and lev[1].tolist() == [9, -1, 1]
    assert enc.transform_X(new)[1, 10:13].sum() == 0  # unseen category: no level set (goes right)
    with pytest.raises(DataError, match="raw columns"):
        enc.transform_X(np.zeros((2, 5)))


def test_onehot_groups_from_the_loader_and_unseen_levels():
    X = np.array([[1, 0, 0, 2.0], [0, 1, 0, 5.0], [0, 1, 0, 5.0], [1, 0, 0, 7.0]])
    d = dataclasses.replace(Dataset.from_arrays(X, [0, 1, 1, 0], feature_names=["c=a", "c=b", "c=z", "n"]),
                            groups=(0, 0, 0, 1), meta={"categorical": {"c": ["a", "b", "z"]}})
    e = encode_groups(d)
    enc = e.meta["encoder"]
    assert e.feature_names == ("c=a", "c=b", "n=2", "n=5", "n=7")  # the level z never occurs: dropped
    assert e.groups == (0, 0, 1, 1, 1) and structure(e).ordinal.tolist() == [False, True]
    assert enc.groups_[1].exact and enc.levels(np.array([[0, 0, 1, 6.0]])).tolist() == [[-1, 2]]


@needs_shared
def test_inferred_groups_reproduce_table_1():
    mush = GroupEncoder().fit(load_dataset("mushrooms"))
    assert (len(mush.groups_), mush.n_features) == (20, 111)  # Table 1: 20 groups, 111 features
    a1a = GroupEncoder().fit(load_dataset("a1a"))
    assert len(a1a.groups_) == 14 and sum(NONE_LEVEL in g.levels for g in a1a.groups_) == 3
    for name, groups, feats in (("krkp", 36, 73), ("tic-tac-toe", 9, 27), ("monks-1", 6, 17), ("votes", 16, 48),
                                ("spect-heart", 22, 44)):
        enc = GroupEncoder().fit(load_dataset(name))
        assert (len(enc.groups_), enc.n_features) == (groups, feats), name


# ------------------------------------------------------------------------------------------ optimum
@pytest.mark.parametrize("shape", ["1", "2", "2.5", "3", "imbalanced"])
def test_optimum_equals_brute_force(shape):
    rng = np.random.default_rng(7)
    data, cats = raw_data(rng, 24, [3, 2, 3], ["cat", "cat", "num"])
    for C in (1.0, 2.5):
        res = solve(data, shape=shape, C=C, categorical=cats)
        assert res.objective == pytest.approx(reference(data, res, shape, C), abs=1e-6)
        # the decoded tree reproduces the objective on the training data
        pred = res.model.predict(data.X)
        wrong = pred != data.labels_of(data.y)
        assert np.sum(np.where(data.y > 0, 1.0, C) * wrong) == pytest.approx(res.objective, abs=1e-6)


def test_max_card_and_categorical_numeric_against_brute_force():
    rng = np.random.default_rng(3)
    data, cats = raw_data(rng, 30, [5, 4, 4], ["cat", "cat", "num"])
    for max_card, numeric in ((1, "ordinal"), (2, "categorical"), (None, "categorical"), (None, "ordinal")):
        res = solve(data, shape="2", categorical=cats, max_card=max_card, numeric=numeric)
        assert res.objective == pytest.approx(reference(data, res, "2", 1.0, numeric, max_card), abs=1e-6)
    simple = solve(data, shape="2", categorical=cats, max_card=1, numeric="categorical").objective
    assert simple >= res.objective - 1e-9  # simple branching (Table 6) can only be worse


CONFIGS = {**TABLE2, "All, keep c": dict(drop_c=False), "Nothing, keep c (8)": dict(**TABLE2["Nothing"], drop_c=False)}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), shape=st.sampled_from(["1", "2", "2.5", "3", "imbalanced"]),
       n=st.integers(6, 22), C=st.sampled_from([1.0, 2.0]), max_card=st.sampled_from([None, 1]),
       kinds=st.lists(st.sampled_from(["cat", "num"]), min_size=1, max_size=2))
def test_every_enhancement_leaves_the_optimum_unchanged(seed, shape, n, C, max_card, kinds):
    rng = np.random.default_rng(seed)
    sizes = [int(rng.integers(2, 4)) if shape in ("3", "imbalanced") else int(rng.integers(2, 5)) for _ in kinds]
    data, cats = raw_data(rng, n, sizes, kinds)
    assume(np.ptp(data.X, axis=0).max() > 0)  # a constant matrix has no split: refused with a DataError
    objs = {}
    for name, cfg in CONFIGS.items():
        res = solve(data, shape=shape, C=C, categorical=cats, max_card=max_card, **cfg)
        objs[name] = res.objective
    ref = reference(data, res, shape, C, "ordinal", max_card)
    assert all(v == pytest.approx(ref, abs=1e-6) for v in objs.values()), (objs, ref)


def lp_bound(built) -> float:
    sf = built.compile()
    lp = dataclasses.replace(sf, integrality=np.zeros_like(sf.integrality))
    raw = get_backend("highs").solve(lp, "highs", SolveOptions())
    assert raw.status.value == "optimal"
    return float(raw.objective)


def test_strengthened_lp_bound_is_never_weaker():
    rng = np.random.default_rng(11)
    gains = []
    for trial in range(16):
        data, cats = raw_data(rng, 30, [3, 3, 2], ["cat", "cat", "num"])
        shape = ["2", "2.5", "3", "imbalanced"][trial % 4]
        for anchor, drop_c in ((True, True), (False, False), (True, False)):
            kw = dict(shape=shape, categorical=cats, anchor=anchor, drop_c=drop_c)
            basic = lp_bound(get_formulation("odt_categorical", strengthen=False, **kw).build(data))
            strong = lp_bound(get_formulation("odt_categorical", strengthen=True, **kw).build(data))
            assert strong >= basic - 1e-7, (shape, anchor, drop_c, basic, strong)  # min: a larger bound is tighter
            gains.append(strong - basic)
    assert max(gains) > 0.5  # and it is strictly tighter on some of these instances


def test_relaxed_variables_are_integral_at_optimality():
    """Proposition 3: with v, z at leaf-adjacent nodes and c continuous the optimum is integral, both in
    the MILP solution and at an extreme point of the LP with the remaining binary z fixed."""
    rng = np.random.default_rng(5)
    for shape in ("2.5", "3"):
        data, cats = raw_data(rng, 40, [4, 3, 5], ["cat", "cat", "num"])
        res = solve(data, shape=shape, categorical=cats)
        sf = res.built.compile()
        cont = sf.integrality == 0
        assert cont.sum() > sf.integrality.sum()  # most columns are continuous
        assert np.allclose(res.x[cont], np.round(res.x[cont]), atol=1e-6)
        z = res.built.model["z"]
        lo, up = sf.col_lower.copy(), sf.col_upper.copy()
        fixed = sf.integrality > 0  # the binary z (and the binary w of §4.4) at their optimal values
        lo[fixed] = up[fixed] = np.round(res.x[fixed])
        lp = dataclasses.replace(sf, integrality=np.zeros_like(sf.integrality), col_lower=lo, col_upper=up)
        raw = get_backend("highs").solve(lp, "highs", SolveOptions())
        assert raw.objective == pytest.approx(res.objective, abs=1e-6)
        assert np.allclose(raw.x, np.round(raw.x), atol=1e-7)
        # integer variables: z off the leaf-adjacent nodes, and the w of the numeric group (§4.4)
        assert sf.integrality.sum() == z.size + res.built.model["w_ord"].size


def _relaxed_leaf_z(data, extra_block, **params):
    """The model with z at leaf-adjacent nodes continuous even though ``extra_block`` is present."""
    from treeopt_dsl import blocks as B
    from treeopt_dsl.formulation import Formulation
    from treeopt_dsl.models.categorical import decode_categorical_tree

    spec = get_formulation("odt_categorical", **params)
    f = Formulation("relaxed", [B.GroupSelection(True), B.FeatureSubset(True), B.BranchIndicators(),
                                B.PathRouting(), B.AnchorFeatures(), *extra_block],
                    decoder=decode_categorical_tree, decisions=("v", "z", "z_leaf"))
    return f.build(spec.prepare(data), spec.topology()).solve(gap=0.0)


def test_max_card_and_rate_constraint_keep_leaf_z_binary():
    """Proposition 3 does not cover the rows of §4.5 and (15): relaxing z there gives fractional optima that
    are better than any tree (found by a random search, kept as regression instances); the formulation
    therefore keeps z_leaf binary with them, and matches the brute force."""
    from treeopt_dsl import blocks as B

    rng = np.random.default_rng(438594764)
    rng.integers(2), rng.integers(2, 4), rng.integers(3, 6), rng.integers(3, 6)  # the search's draws
    data, cats = raw_data(rng, int(rng.integers(8, 30)), [5, 5], ["cat", "cat"])
    kw = dict(shape="2", categorical=cats, max_card=1)
    wrong = _relaxed_leaf_z(data, [B.MaxCardinality(1), B.ClassWeightedAccuracy()], **kw)
    right = solve(data, **kw)
    ref = reference(data, right, "2", max_card=1)
    assert right.objective == pytest.approx(ref, abs=1e-6) and wrong.certificate.objective_solver < ref - 0.25
    assert not wrong.certificate.ok and wrong.status.value == "uncertified"
    assert right.built.model["z_leaf"].kind.value == "binary"

    rng = np.random.default_rng(582673061)
    rng.integers(1, 3), rng.integers(2, 5)
    data, cats = raw_data(rng, int(rng.integers(8, 30)), [2], ["cat"])
    kw = dict(shape="2", categorical=cats, min_sensitivity=0.9)
    wrong = _relaxed_leaf_z(data, [B.RateConstraint(min_sensitivity=0.9)], **kw)
    right = solve(data, **kw)
    assert wrong.certificate.objective_solver < right.objective - 0.5 and not wrong.certificate.ok


def test_integer_variable_count_is_independent_of_the_sample_size():
    rng = np.random.default_rng(2)
    sizes = []
    for n in (20, 80):
        data, cats = raw_data(rng, n, [3, 3], ["cat", "cat"])
        sf = get_formulation("odt_categorical", shape="3", categorical=cats).build(data).compile()
        sizes.append(int(sf.integrality.sum()))
    assert sizes[0] == sizes[1] == 3 * 6  # 3 nodes not adjacent to a leaf x 6 features


# ------------------------------------------------------------------------------------------ (15)-(16)
def test_sensitivity_constraint_holds_and_is_optimal():
    rng = np.random.default_rng(9)
    data, cats = raw_data(rng, 40, [3, 4], ["cat", "num"])
    y = data.y
    for rate in (0.8, 0.95):
        res = solve(data, shape="2", categorical=cats, min_sensitivity=rate)
        pred = res.model.predict(data.X) == data.classes[1]
        tpr, tnr = pred[y > 0].mean(), (~pred)[y < 0].mean()
        assert tpr >= rate - 1e-12
        assert res.objective == pytest.approx(float((y < 0).sum()) * (1 - tnr), abs=1e-6)  # missed negatives (16)
        # brute force over all depth-2 trees: max TN subject to TP >= ceil(rate |I+|)
        enc = res.built.ctx.data.meta["encoder"]
        tests = np.array(choices(enc, enc.levels(data.X), True, None))
        k = math.ceil(rate * (y > 0).sum() - 1e-9)
        best = -1
        for root in tests:
            tp = [((~t) & side & (y > 0)).sum(1) for side, t in ((root, tests), (~root, tests))]
            tn = [(t & side & (y < 0)).sum(1) for side, t in ((root, tests), (~root, tests))]
            ok = (tp[0][:, None] + tp[1][None, :]) >= k
            if ok.any():
                best = max(best, int(((tn[0][:, None] + tn[1][None, :]))[ok].max()))
        assert res.objective == pytest.approx((y < 0).sum() - best, abs=1e-6)
    spec_only = solve(data, shape="2", categorical=cats, min_specificity=0.9)
    pred = spec_only.model.predict(data.X) == data.classes[1]
    assert (~pred)[y < 0].mean() >= 0.9


# ------------------------------------------------------------------------------------------ decoding
def test_decoding_reproduces_the_solvers_leaf_assignment():
    rng = np.random.default_rng(4)
    data, cats = raw_data(rng, 40, [3, 2, 4], ["cat", "cat", "num"])
    for cfg in (dict(drop_c=False, relax=False, strengthen=False), dict()):
        res = solve(data, shape="2.5", categorical=cats, **cfg)
        model, ctx = res.model, res.built.ctx
        leaf = model.apply(data.X)
        assert (leaf == model.apply_encoded(ctx.data.X)).all()
        for lv in ctx["c"].values():
            c = lv.family.values(res.x)
            hit = c.max(1) > 0.5
            assert hit.any()
            assert (lv.leaves[np.argmax(c[hit], 1)] - 1 == leaf[lv.samples[hit]]).all()
            if not cfg:  # dropped c (14): a sample without a scoring c sits in a leaf of the other label
                assert (model.leaf_sign[leaf[lv.samples[~hit]]] != lv.sign).all()
        assert model.leaf_counts.sum() == data.n_samples
        proba = model.predict_proba(data.X)
        assert ((proba[:, 1] > 0.5) == (model.predict(data.X) == data.classes[1])).all()
        assert ((model.decision_function(data.X) > 0) == (proba[:, 1] > 0.5)).all()


def test_text_reads_as_set_membership_and_thresholds():
    rng = np.random.default_rng(1)
    n = 200
    color = rng.integers(0, 4, n)
    age = rng.uniform(18, 80, n)
    X = np.column_stack([color, age])
    y = np.where(np.isin(color, [0, 2]) & (age <= np.quantile(age, 0.6)), 1, 0)
    d = Dataset.from_arrays(X, y, feature_names=["color", "age"])
    res = solve(d, shape="2", categorical=("color",))
    assert res.objective == pytest.approx(0.0, abs=1e-6)
    txt = res.model.text()
    assert "color in {0, 2}" in txt or "color in {1, 3}" in txt
    assert "age <=" in txt or "age >" in txt
    assert (res.model.predict(X) == y).all()
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = res.model.plot()
    assert isinstance(fig, Figure)  # as every model's plot()
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert sum("?" in t for t in labels) == 3 and labels.count("yes") == 3


def test_errors_are_actionable():
    rng = np.random.default_rng(0)
    data, _ = raw_data(rng, 10, [2, 2], ["cat", "cat"])
    with pytest.raises(FormulationError, match="at most one of"):
        get_formulation("odt_categorical", min_sensitivity=0.9, min_specificity=0.9)
    with pytest.raises(FormulationError, match="max_card"):
        get_formulation("odt_categorical", max_card=0)
    with pytest.raises(FormulationError, match="unknown tree shape"):
        get_formulation("odt_categorical", shape="5")
    with pytest.raises(DataError, match="categorical column"):
        get_formulation("odt_categorical", categorical=("nope",)).build(data)


# ------------------------------------------------------------------------------------------ export, CLI
@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_lp_mps_round_trip_gives_the_same_optimum(tmp_path, suffix):
    import highspy

    from treeopt_dsl.io import write_model

    rng = np.random.default_rng(6)
    data, cats = raw_data(rng, 30, [3, 4], ["cat", "num"])
    built = get_formulation("odt_categorical", shape="2.5", categorical=cats, max_card=2).build(data)
    res = built.solve(gap=0.0)
    path = write_model(built, tmp_path / f"m{suffix}")
    h = highspy.Highs()
    h.silent()
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.setOptionValue("mip_rel_gap", 0.0)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getInfo().objective_function_value == pytest.approx(res.objective, abs=1e-6)


@needs_shared
def test_cli_fit_and_compile(tmp_path, capsys):
    from treeopt_dsl.cli import main

    rc = main(["fit", "odt_categorical", "--data", "tic-tac-toe", "--sample", "100", "--seed", "0",
               "--param", "shape=2", "--time-limit", "60", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["status"] == "optimal" and out["certificate"]["ok"]
    assert 0.5 < out["metrics"]["test"]["accuracy"] <= 1.0 and out["n_train"] == 80
    rc = main(["compile", "odt_categorical", "--data", "tic-tac-toe", "--output", str(tmp_path / "x.lp")])
    assert rc == 0 and (tmp_path / "x.lp").stat().st_size > 0
    assert "odt_categorical on tic-tac-toe" in capsys.readouterr().out
    rc = main(["fit", "odt_categorical", "--data", "tic-tac-toe", "--param", "shape=7"])
    assert rc == 2


@needs_shared
def test_cart_preselection_restricts_the_groups():
    d = load_dataset("breast-wisconsin-original").subsample(80, seed=1)
    res = solve(d, shape="2", preselect="cart")
    allowed = res.built.ctx.data.meta["allowed_groups"]
    assert 0 < allowed.sum() < allowed.size
    assert allowed[res.model.node_group].all()
    full = solve(d, shape="2")
    assert full.objective <= res.objective + 1e-9  # restricting the groups cannot improve the optimum
    assert res.objective == pytest.approx(reference(d, res, "2"), abs=1e-6)


@needs_shared
def test_rpart_preselection_keeps_the_groups_of_rpart_s_pruned_tree():
    """``preselect=rpart`` (§5.1 read with line 394: the paper's CART is rpart with its defaults) keeps exactly the
    groups rpart's pruned subset tree branches on, on the formulation's own groups: fewer than scikit-learn's whole
    tree keeps (on breast-wisconsin all 9 of 9), and the ODT's nodes use only those."""
    d = load_dataset("breast-wisconsin-original").subsample(300, seed=1)
    res = solve(d, shape="2", preselect="rpart")
    allowed = res.built.ctx.data.meta["allowed_groups"]
    enc = res.built.ctx.data.meta["encoder"]
    tree = fit_subset_cart(d, encoder=enc)
    assert np.array_equal(np.flatnonzero(allowed), np.unique(tree.group[tree.group >= 0]))
    whole = solve(d, shape="2", preselect="cart").built.ctx.data.meta["allowed_groups"]
    assert 0 < allowed.sum() < whole.sum()
    assert allowed[res.model.node_group].all()
    assert res.objective == pytest.approx(reference(d, res, "2"), abs=1e-6)
    with pytest.raises(FormulationError, match="preselect must be one of none, cart, rpart"):
        get_formulation("odt_categorical", preselect="rpart2")


@needs_shared
def test_rpart_preselection_keeps_at_least_k_groups_from_the_least_lowered_cp():
    """``preselect_min_groups = k`` (§5.7: "making sure that at least 4 features are selected"): the groups of
    rpart's tree pruned at the largest cp below 0.01 that leaves at least k of them, checked against trees grown
    and pruned afresh at that cp (at least k) and just above it (fewer); the ODT then uses only those, and its
    optimum is no worse than with rpart's default few."""
    d = load_dataset("fico-heloc").subsample(300, seed=1)  # rpart keeps 6 of 23 groups at cp 0.01, 8 at 0.002
    few = solve(d, shape="2", preselect="rpart")
    enc = few.built.ctx.data.meta["encoder"]
    k = int(few.built.ctx.data.meta["allowed_groups"].sum()) + 1
    res = solve(d, shape="2", preselect="rpart", preselect_min_groups=k)
    allowed = np.flatnonzero(res.built.ctx.data.meta["allowed_groups"])
    cp = fit_subset_cart(d, encoder=enc, cp=None).cp_for_groups(k)
    assert 0.0 < cp < 0.01 and len(allowed) >= k

    def groups(c: float) -> np.ndarray:
        tree = fit_subset_cart(d, encoder=enc, cp=c)
        return np.unique(tree.group[tree.group >= 0])

    assert np.array_equal(allowed, groups(cp)) and len(groups(cp + 1e-9)) < k
    assert np.isin(res.model.node_group[res.model.node_group >= 0], allowed).all()
    assert res.objective <= few.objective + 1e-9
    assert res.objective == pytest.approx(reference(d, res, "2"), abs=1e-6)
    with pytest.raises(FormulationError, match="preselect_min_groups must be an integer >= 1"):
        get_formulation("odt_categorical", preselect="rpart", preselect_min_groups=0)


def test_preselection_keeps_every_group_when_rpart_does_not_split():
    """Fewer rows than rpart's ``minsplit`` (20): its tree is a leaf, and the preselection keeps every group rather
    than none (an ODT with no feature to test)."""
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(15, 3)).astype(float)
    d = Dataset.from_arrays(codes, np.where(codes[:, 0] == 1, 1, -1))
    res = solve(d, shape="2", preselect="rpart", categorical=(0, 1, 2))
    assert res.built.ctx.data.meta["allowed_groups"].all()
    assert res.objective == pytest.approx(solve(d, shape="2", categorical=(0, 1, 2)).objective, abs=1e-6)


# ------------------------------------------------------------------------------------------ estimator
def test_estimator_fit_predict_and_categorical_features():
    from treeopt_dsl.estimator import CategoricalTreeClassifier

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 5, 120), rng.normal(size=120)])
    cut = np.quantile(X[:, 1], 0.6, method="inverted_cdf")  # a decile edge: the rule is representable
    y = np.where(np.isin(X[:, 0], [1, 3]) ^ (X[:, 1] > cut), "yes", "no")
    clf = CategoricalTreeClassifier(shape="2", categorical_features=[0], time_limit=30).fit(X, y)
    assert clf.score(X, y) == 1.0 and clf.result_.status.value == "optimal"
    assert set(clf.predict(X)) <= {"yes", "no"} and clf.predict_proba(X).shape == (120, 2)
    assert "x0 in {" in clf.explain() or "x0 not in {" in clf.explain()


def test_estimator_passes_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    from treeopt_dsl.estimator import CategoricalTreeClassifier

    # fit takes sample_weight since issue 19: predict_proba's leaf shares (models/categorical.py) count the training
    # samples unweighted, and the quantile bins are fitted on the rows, so a weighted fit and the repeated rows
    # differ there; the objective's equivalence is tested in tests/estimator/test_weights_multiclass.py
    # More than two classes are one-vs-rest (issue 35): with quartile bins (n_bins=4) three one-split trees reach
    # 0.80 accuracy on the check's three blobs (a quartile edge is not between the blobs), deciles 0.87 (> 0.83).
    # class_weight {0: 1000, others: 1e-4} on three noisy blobs: the class-0 tree's exact optimum isolates a pure
    # pocket of the light classes (it lowers the weighted objective), so 84% of the test points, not 87%, are 0
    # (the reason OCT's and TAO's checks give for the binary case)
    check_estimator(CategoricalTreeClassifier(shape="1", time_limit=20, n_bins=10), expected_failed_checks={
        "check_sample_weight_equivalence_on_dense_data": "leaf shares and bins are unweighted (see above)",
        "check_sample_weight_equivalence_on_sparse_data": "the dense check's twin: sparse X is densified",
        "check_class_weight_classifiers": "pure pockets of the 1e-4-weight classes are kept (lower weighted error)"})
