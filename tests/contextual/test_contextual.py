"""Contextual decision trees (thesis chapter 5): rewards (5.4)-(5.5) by hand, the supervised baseline's labels,
the policy learning to pick the right tree per region, reproducibility, scikit-learn's check_estimator,
explanations, the training plot, and ``treeopt fit cct|crt`` end to end."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from treeopt_dsl.contextual import (
    ContextualTreeClassifier,
    ContextualTreeRegressor,
    classification_rewards,
    normalized_squared_error,
    regression_rewards,
    supervised_labels_classification,
    supervised_labels_regression,
)
from treeopt_dsl.contextual.policy import PolicyConfig, train_policy
from treeopt_dsl.errors import OptionError

SMALL = {"n_trees": 5, "epochs": 5, "patience": 5}  # the default width: a 16-wide net barely moves in 5 epochs


# ---------------------------------------------------------------- rewards, by hand
def test_classification_rewards_by_hand() -> None:
    pred = np.array([[0, 1, 2], [1, 1, 0], [-1, 1, 1]])
    y = np.array([2, 1, -1])
    assert classification_rewards(pred, y).tolist() == [[-1, -1, 1], [1, 1, -1], [1, -1, -1]]


def test_regression_rewards_by_hand() -> None:
    # squared errors 1, 0, 4 -> d = 1/4, 0, 1 -> r = 1 - 2d = 0.5, 1, -1
    pred = np.array([[1.0, 2.0, 4.0], [0.0, 3.0, 1.5], [5.0, 5.0, 5.0], [0.0, 2.0, 1.0]])
    y = np.array([2.0, 1.0, 1.0, 1.0])
    # row 2: errors 1, 4, 0.25 -> d = 0.75/3.75 = 0.2, 1, 0
    # row 3: every tree errs by 16: best == worst -> d = 0, reward +1 for all
    # row 4: errors 1, 1, 0 -> d = 1, 1, 0
    expected_d = [[0.25, 0.0, 1.0], [0.2, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    np.testing.assert_allclose(normalized_squared_error(pred, y), expected_d)
    np.testing.assert_allclose(regression_rewards(pred, y), 1.0 - 2.0 * np.array(expected_d))
    r = regression_rewards(pred, y)
    assert r.min() >= -1.0 and r.max() <= 1.0


def test_rewards_reject_bad_shapes() -> None:
    with pytest.raises(ValueError):
        classification_rewards(np.zeros((3, 2)), np.zeros(4))
    with pytest.raises(ValueError):
        regression_rewards(np.zeros(3), np.zeros(3))


def test_supervised_labels_follow_the_thesis_rule() -> None:
    rng = np.random.default_rng(0)
    # row 0: trees 0 and 1 right, tree 1 gives the true class more probability -> 1
    # row 1: only tree 2 right -> 2 even though tree 0 is surer of its (wrong) class
    pred = np.array([[1, 1, 0], [0, 0, 1]])
    proba_true = np.array([[0.6, 0.9, 0.95], [0.1, 0.1, 0.55]])
    assert supervised_labels_classification(pred, proba_true, np.array([1, 1]), rng).tolist() == [1, 2]
    # no tree right: uniform over all trees; ties among the best: uniform among them
    n = 3000
    none_right = supervised_labels_classification(np.zeros((n, 4), int), np.zeros((n, 4)), np.ones(n, int), rng)
    counts = np.bincount(none_right, minlength=4)
    assert counts.min() > 0.2 * n and counts.max() < 0.3 * n
    tied = supervised_labels_classification(np.ones((n, 3), int), np.tile([0.7, 0.2, 0.7], (n, 1)),
                                            np.ones(n, int), rng)
    assert set(np.unique(tied)) == {0, 2} and abs(np.mean(tied == 0) - 0.5) < 0.05
    reg = supervised_labels_regression(np.array([[1.0, 2.2, 3.0], [0.0, 5.0, 9.0]]), np.array([2.0, 8.0]), rng)
    assert reg.tolist() == [1, 2]


# ---------------------------------------------------------------- the policy learns which tree to trust where
def test_policy_picks_the_right_tree_per_half() -> None:
    """A hand-made forest of 4 'trees': tree 0 is right exactly where x0 < 0.5, tree 1 exactly where x0 >= 0.5,
    trees 2 and 3 are right at random 60 % of the time. REINFORCE on (5.4) must route each half to its tree."""
    pytest.importorskip("torch")
    from treeopt_dsl.contextual.policy import PolicyConfig, policy_logits, train_policy

    rng = np.random.default_rng(1)
    X = rng.random((1200, 2))
    left = X[:, 0] < 0.5
    right_mask = np.column_stack([left, ~left, rng.random(1200) < 0.6, rng.random(1200) < 0.6])
    R = np.where(right_mask, 1.0, -1.0)
    tr, va, te = slice(0, 800), slice(800, 1000), slice(1000, 1200)

    def val_score(sel: np.ndarray) -> float:
        return float(right_mask[va][np.arange(200), sel].mean())

    fit = train_policy(X[tr], R[tr], X[va], val_score, PolicyConfig(hidden=32, epochs=150, patience=40, seed=0))
    sel = policy_logits(fit, X[te]).argmax(axis=1)
    acc = right_mask[te][np.arange(200), sel].mean()
    singles = right_mask[te].mean(axis=0)
    assert acc > singles.max() + 0.3, (acc, singles)
    assert np.mean(sel[left[te]] == 0) > 0.9 and np.mean(sel[~left[te]] == 1) > 0.9
    assert fit.history["selection"].shape == (fit.n_epochs, 4)
    assert fit.history["reward"][-1] > fit.history["reward"][0]


def _halves(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    return X, np.where(X[:, 0] < 0.5, X[:, 1] > 0.5, X[:, 2] > 0.5).astype(int)


def test_cct_beats_every_single_tree_on_synthetic_halves() -> None:
    """y follows x1 on the left half (x0 < 0.5) and x2 on the right half: a stump on x1 is right on the left
    half only, one on x2 on the right half only (each about 75 % overall); the estimator's forest of stumps
    holds both, and the policy must route each half to its stump."""
    pytest.importorskip("torch")
    X, y = _halves(1500, 0)
    Xt, yt = _halves(600, 1)
    clf = ContextualTreeClassifier(n_trees=12, max_depth=1, epochs=120, patience=40, hidden=32,
                                   random_state=0).fit(X, y)
    feats = np.array([t.tree_.feature[0] for t in clf.forest_.estimators_])
    assert {1, 2} <= set(feats.tolist())  # the premise: the forest holds a stump on x1 and one on x2
    single = [float(np.mean(t.predict(Xt).astype(int) == yt)) for t in clf.forest_.estimators_]
    acc = float(np.mean(clf.predict(Xt) == yt))
    assert acc > max(single) + 0.1, (acc, max(single))
    assert acc > clf.cart_.score(Xt, yt)
    sel = clf.select(Xt)
    left = Xt[:, 0] < 0.5
    assert np.mean(feats[sel[left]] == 1) > 0.85 and np.mean(feats[sel[~left]] == 2) > 0.85


def test_the_chosen_trees_are_warm_starts_of_the_exact_formulations() -> None:
    """``tree(k)`` is an ordinary fitted tree of the library: a feasible start of ``oct`` whose objective is the
    tree's training errors, and the MILP's answer is never worse than it."""
    pytest.importorskip("torch")
    from treeopt_dsl.data import Dataset
    from treeopt_dsl.formulations import get_formulation
    from treeopt_dsl.starts.resolver import start_point

    X, y = _halves(120, 5)
    clf = ContextualTreeClassifier(n_trees=5, max_depth=2, epochs=5, hidden=8, fallback=False, random_state=0).fit(X, y)
    tree = clf.tree(int(np.bincount(clf.select(X)).argmax()))  # the tree the policy picks most
    data = Dataset.from_arrays(X, y)
    built = get_formulation("oct", depth=2).build(data)
    x = start_point(built, tree)
    errors = int(np.sum(tree.predict(X) != y))
    assert built.model.max_violation(x) <= 1e-6 and float(built.compile().objective(x)) == pytest.approx(errors)
    res = get_formulation("oct", depth=2).solve(data, warm_start=tree, time_limit=5)
    assert res.status.has_solution and res.objective <= errors + 1e-6


def test_same_seed_same_model_other_seed_other_training() -> None:
    pytest.importorskip("torch")
    X, y = _halves(300, 2)
    a = ContextualTreeClassifier(n_trees=8, epochs=15, random_state=3).fit(X, y)
    b = ContextualTreeClassifier(n_trees=8, epochs=15, random_state=3).fit(X, y)
    c = ContextualTreeClassifier(n_trees=8, epochs=15, random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.history_["reward"], b.history_["reward"])
    np.testing.assert_array_equal(a.history_["selection"], b.history_["selection"])
    assert not np.array_equal(a.history_["selection"], c.history_["selection"])


def test_regressor_rewards_route_and_predict() -> None:
    """CRT on y = x1 (left half) / x2 (right half): beats its CART and fits what its chosen trees say."""
    pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    X = rng.random((1200, 3))
    y = np.where(X[:, 0] < 0.5, 4 * X[:, 1], 4 * X[:, 2])
    reg = ContextualTreeRegressor(n_trees=10, max_depth=2, epochs=80, patience=30, hidden=32,
                                  random_state=0).fit(X[:900], y[:900])
    rmse = np.sqrt(np.mean((reg.predict(X[900:]) - y[900:]) ** 2))
    cart = np.sqrt(np.mean((reg.cart_.predict(X[900:]) - y[900:]) ** 2))
    assert rmse < cart, (rmse, cart)
    sel = reg.select(X[900:950])
    for k in np.unique(sel):
        rows = np.flatnonzero(sel == k)
        np.testing.assert_allclose(reg.tree(int(k)).predict(X[900:950][rows]), reg.predict(X[900:950][rows]))


# ---------------------------------------------------------------- faces
def test_explain_tree_and_histogram_agree_with_predict() -> None:
    pytest.importorskip("torch")
    X, y = _halves(400, 3)
    clf = ContextualTreeClassifier(n_trees=6, max_depth=3, epochs=20, fallback=False, random_state=0).fit(X, y)
    Xs = X[:40]
    expl = clf.explain(Xs)
    pred, sel = clf.predict(Xs), clf.select(Xs)
    assert [e.tree for e in expl] == sel.tolist()
    for i, e in enumerate(expl):
        assert e.prediction == pred[i]
        lines = e.path.splitlines()
        assert lines[-1].strip().endswith(f"class: {pred[i]}")
        for line in lines[:-1]:  # every test on the path holds for the row
            m = re.search(r"x(\d+) (<=|> ) (-?[\d.]+)", line)
            assert m is not None, line
            j, op, thr = int(m.group(1)), m.group(2), float(m.group(3))
            assert (Xs[i, j] <= thr + 0.005) if op == "<=" else (Xs[i, j] > thr - 0.005)
        t = clf.tree(e.tree)
        assert t.predict(Xs[i:i + 1])[0] == pred[i]
        assert len(lines) - 1 <= t.depth <= clf.depth_
    hist = clf.selection_histogram(Xs)
    assert hist.sum() == 40 and hist.tolist() == np.bincount(sel, minlength=6).tolist()
    assert clf.selection_histogram().sum() == clf.n_train_
    np.testing.assert_allclose(clf.predict_proba(Xs).sum(axis=1), 1.0)
    with pytest.raises(IndexError):
        clf.tree(6)


def test_plot_training_draws_reward_and_histograms() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    X, y = _halves(200, 4)
    clf = ContextualTreeClassifier(n_trees=7, epochs=9, patience=100, random_state=0).fit(X, y)
    fig = clf.plot_training(title="halves")
    assert isinstance(fig, Figure)
    images = [im for ax in fig.axes for im in ax.get_images()]
    assert len(images) == 1 and images[0].get_array().shape == (7, 9)
    assert len(fig.axes[0].get_lines()[0].get_ydata()) == 9


def test_early_stopping_time_limit_and_eval_set() -> None:
    pytest.importorskip("torch")
    X, y = _halves(300, 6)
    clf = ContextualTreeClassifier(n_trees=5, epochs=400, patience=3, random_state=0).fit(X[:200], y[:200],
                                                                                        eval_set=(X[200:], y[200:]))
    assert clf.n_val_ == 100 and clf.n_train_ == 200
    assert clf.stopped_ == "early stopping" and clf.n_epochs_ - 1 - clf.best_epoch_ == 3
    assert clf.best_val_score_ == max(clf.history_["val_score"])
    assert clf.best_val_score_ == pytest.approx(np.mean(clf.predict(X[200:]) == y[200:]))
    once = ContextualTreeClassifier(n_trees=5, epochs=400, time_limit=0, random_state=0).fit(X, y)
    assert once.stopped_ == "time limit" and once.n_epochs_ == 1
    sup = ContextualTreeClassifier(n_trees=5, epochs=10, method="supervised", random_state=0).fit(X, y)
    assert sup.history_["loss"][-1] < sup.history_["loss"][0]
    with pytest.raises(ValueError, match="method"):
        ContextualTreeClassifier(method="greedy").fit(X, y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")  # check_array_api_input: no SCIPY_ARRAY_API
@pytest.mark.filterwarnings("ignore::treeopt_dsl.errors.FallbackWarning")  # 5-epoch policies on tiny data
def test_check_estimator() -> None:
    pytest.importorskip("torch")
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(ContextualTreeClassifier(**SMALL))
    check_estimator(ContextualTreeRegressor(**SMALL))


def test_import_does_not_load_torch() -> None:
    code = "import sys, treeopt_dsl, treeopt_dsl.contextual; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- the command
def test_cli_fit_cct_json(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    pytest.importorskip("torch")
    from treeopt_dsl.cli import main

    out_file = tmp_path / "trees.json"
    rc = main(["fit", "cct", "--data", "breast-cancer", "--seed", "1", "--param", "n_trees=6", "--param", "epochs=8",
               "--param", "hidden=16", "--output", str(out_file), "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    doc = json.loads(captured.out)  # exactly one JSON document
    assert doc["formulation"] == "cct" and doc["n_trees"] == 6 and doc["params"]["epochs"] == 8
    assert doc["n_train"] + doc["n_val"] + doc["n_test"] == 569
    assert abs(doc["n_test"] / 569 - 0.2) < 0.01 and abs(doc["n_val"] / 569 - 0.16) < 0.01
    assert doc["depth"] in (2, 3, 4) and set(doc["depth_scores"]) == {"2", "3", "4"}
    for part in ("train", "validation", "test"):
        assert 0.5 < doc["metrics"][part]["accuracy"] <= 1.0
        assert 0.5 < doc["baselines"]["cart"][part]["accuracy"] <= 1.0
    hist = doc["selection_histogram"]["test"]
    assert doc["selected"] in ("policy", "cart", "tree")  # index 6 is CART after a fallback to it
    assert len(hist) == 6 + (doc["selected"] == "cart") and sum(hist) == doc["n_test"]
    if doc["selected"] != "policy":
        assert doc["trees_used"] == [doc["fallback_stats"]["single_tree"]]
    assert doc["trees_used"] == [k for k, v in enumerate(hist) if v]
    written = json.loads(out_file.read_text())
    assert sorted(written["trees"]) == sorted(str(k) for k in doc["trees_used"])


def test_cli_fit_crt_friedman_text(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    from treeopt_dsl.cli import main

    rc = main(["fit", "crt", "--data", "friedman", "--sample", "300", "--depth", "2", "--param", "n_trees=4",
               "--param", "epochs=5"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "300 rows x 20 features" in out and "4 trees of depth 2" in out and "CRT RMSE" in out
    assert re.search(r"^test\s+\d+\.\d+\s+\d+\.\d+\s+\d+\.\d+$", out, re.M)


@pytest.mark.parametrize("argv, message", [
    (["fit", "cct", "--data", "breast-cancer", "--param", "trees=5"], "n_trees"),
    (["fit", "cct", "--data", "breast-cancer", "--param", "epochs=many"], "epochs"),
    (["fit", "cct", "--data", "breast-cancer", "--param", "method=greedy"], "reinforce"),
    (["fit", "cct", "--data", "breast-cancer", "--param", "n_trees=0"], "n_trees"),
    (["fit", "cct", "--data", "breast-cancer", "--solver", "gurobi"], "--solver"),
    (["fit", "crt", "--data", "breast-cancer"], "friedman"),
    (["fit", "cct", "--data", "breast-cancer", "--output", "/missing/dir/trees.json"],  # before the training
     "(--output) to '/missing/dir/trees.json': the directory '/missing/dir' does not exist"),
])
def test_cli_bad_input_exits_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from treeopt_dsl.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("treeopt: error:") and message in err


# ---------------------------------------------------------------- determinism across environments and the fallback

_FIT_IN_SUBPROCESS = """
import json, sys
import numpy as np
from treeopt_dsl.contextual import ContextualTreeClassifier
rng = np.random.default_rng(7); X = rng.random((400, 6))
y = (np.where(X[:, 0] < 0.5, X[:, 1] + 0.3 * X[:, 3], X[:, 2] - 0.2 * X[:, 4]) > 0.4).astype(int)
m = ContextualTreeClassifier(n_trees=12, epochs=40, patience=40, fallback=False, random_state=5,
                             n_threads=int(sys.argv[1])).fit(X, y)
Xt = np.random.default_rng(8).random((500, 6))
print(json.dumps({"select": m.select(Xt).tolist(), "predict": m.predict(Xt).tolist(),
                  "selection": m.history_["selection"].tolist(), "val": m.history_["val_score"].tolist(),
                  "weights": [a.ravel().tolist() for wb in m.policy_.weights for a in wb]}))
"""


def test_same_seed_same_model_under_other_threads_and_cpu_kernels() -> None:
    """Two fits in two fresh processes, one with one thread and the default CPU kernels, the other with two
    PyTorch / OpenMP / MKL / OpenBLAS threads and PyTorch's and MKL's AVX2 kernels instead of AVX-512 (what
    another machine runs): the same training (sampled actions per epoch, validation scores), the same
    predictions, and the same parameters to 1e-9 (float32 training differed in its sampled actions here)."""
    pytest.importorskip("torch")
    import os

    runs = []
    for threads, extra in ((1, {}), (2, {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                                         "OPENBLAS_CORETYPE": "Haswell"})):
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
               "OPENBLAS_NUM_THREADS": str(threads), **extra}
        out = subprocess.run([sys.executable, "-c", _FIT_IN_SUBPROCESS, str(threads)], capture_output=True,
                             text=True, check=True, env=env)
        runs.append(json.loads(out.stdout))
    a, b = runs
    assert a["selection"] == b["selection"] and a["val"] == b["val"]
    assert a["select"] == b["select"] and a["predict"] == b["predict"]
    assert len(set(a["select"])) > 1  # a real policy, not a constant
    for wa, wb in zip(a["weights"], b["weights"], strict=True):
        np.testing.assert_allclose(wa, wb, rtol=1e-9, atol=1e-12)


def _one_feature_task(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """y = [x0 > 0.5] among 8 features: a CART stump is exact; most stumps of a forest with max_features =
    sqrt(8) = 2 never see x0 and are near chance."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 8))
    return X, (X[:, 0] > 0.5).astype(int)


def test_fallback_to_cart_when_the_policy_is_worse_on_validation() -> None:
    """A policy trained for one epoch at a tiny learning rate picks trees almost at random; CART's stump is exact.
    The estimator must notice on validation (recomputed here by hand), predict with CART, warn, and say so."""
    pytest.importorskip("torch")
    from treeopt_dsl.errors import FallbackWarning

    X, y = _one_feature_task(400, 0)
    X_val, y_val = _one_feature_task(200, 1)
    X_te, y_te = _one_feature_task(300, 2)
    kw = {"n_trees": 20, "max_depth": 1, "epochs": 1, "patience": 1, "learning_rate": 1e-6, "random_state": 0}
    with pytest.warns(FallbackWarning, match="does not beat its best single tree"):
        clf = ContextualTreeClassifier(**kw).fit(X, y, eval_set=(X_val, y_val))
    raw = ContextualTreeClassifier(fallback=False, **kw).fit(X, y, eval_set=(X_val, y_val))
    # the premise, independently: the policy's own choices are worse than CART on validation
    pol = raw.predict(X_val)
    assert raw.selected_ == "policy" and np.mean(pol == y_val) < raw.cart_.score(X_val, y_val) - 0.1
    assert clf.selected_ == "cart" and clf.fallback_tree_ == clf.n_trees_
    assert not clf.fallback_stats_["policy_beats_single"]
    assert clf.fallback_stats_["policy_val"] == pytest.approx(np.mean(pol == y_val))
    assert clf.fallback_stats_["single_val"] == pytest.approx(clf.cart_.score(X_val, y_val))
    np.testing.assert_array_equal(clf.predict(X_te), clf.cart_.predict(X_te))
    np.testing.assert_allclose(clf.predict_proba(X_te), clf.cart_.predict_proba(X_te))
    assert clf.score(X_te, y_te) > raw.score(X_te, y_te) + 0.1
    assert set(clf.select(X_te).tolist()) == {clf.n_trees_}
    e = clf.explain(X_te[:3])
    assert all(x.tree == clf.n_trees_ for x in e) and e[0].path.splitlines()[0].lstrip("|- ").startswith("x")
    np.testing.assert_array_equal(clf.tree(clf.n_trees_).predict(X_te), clf.cart_.predict(X_te))
    with pytest.raises(IndexError):
        raw.tree(raw.n_trees_)  # no CART index without a fallback to it


def test_no_fallback_when_the_policy_beats_every_single_tree() -> None:
    """The synthetic halves: the policy routes each half to its stump and beats every stump and CART on
    validation by far more than the noise, so it is kept; the recorded statistics agree with a recount."""
    pytest.importorskip("torch")
    X, y = _halves(1500, 0)
    X_val, y_val = _halves(400, 3)
    clf = ContextualTreeClassifier(n_trees=12, max_depth=1, epochs=120, patience=40, hidden=32,
                                   random_state=0).fit(X, y, eval_set=(X_val, y_val))
    fs = clf.fallback_stats_
    assert clf.selected_ == "policy" and fs["policy_beats_single"]
    assert fs["policy_val"] == pytest.approx(clf.score(X_val, y_val))
    trees = [float(np.mean(t.predict(X_val).astype(int) == y_val)) for t in clf.forest_.estimators_]
    single = clf.cart_.score(X_val, y_val) if fs["single"] == "cart" else trees[fs["single_tree"]]
    assert fs["single_val"] == pytest.approx(single) and fs["policy_val"] > max(trees + [single]) + 0.1
    assert fs["mean_gain"] == pytest.approx(fs["policy_val"] - fs["single_val"]) and fs["mean_gain"] > fs["margin"]


@pytest.mark.parametrize(("param", "value"), [
    ("method", "greedy"), ("entropy", "gini"), ("n_trees", 0), ("n_trees", 2.5), ("epochs", True), ("patience", -1),
    ("max_depth", 0), ("depths", ()), ("depths", (2, 0)), ("depths", "23"), ("validation_fraction", 1.0),
    ("validation_fraction", "0.2"), ("dropout", float("nan")), ("learning_rate", 0), ("learning_rate", float("nan")),
    ("entropy_weight", -0.1), ("fallback", "yes"), ("fallback_z", float("inf")), ("time_limit", -1.0),
    ("time_limit", "60"),
])
def test_bad_hyperparameters_are_refused_with_an_option_error_naming_them(param: str, value: object) -> None:
    kwargs = {"max_depth": None} if param == "depths" else {}
    clf = ContextualTreeClassifier(**kwargs).set_params(**{param: value})
    X, y = np.zeros((10, 2)), np.arange(10) % 2
    with pytest.raises(OptionError, match=param):
        clf.fit(X, y)


def test_policy_training_refuses_an_unknown_method_with_an_option_error() -> None:
    with pytest.raises(OptionError, match="method"):
        train_policy(np.zeros((4, 2)), np.zeros((4, 3)), np.zeros((2, 2)), lambda t: 0.0, PolicyConfig(), "greedy")
