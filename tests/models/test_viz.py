"""Pictures of every model kind (issue 19): ``plot()`` renders a PNG (Agg) whose texts carry feature and class
names, ``to_dot()`` is DOT with the tree's nodes and edges, rules are printed in original units, and the names
of features and classes reach ``text()``."""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd
import pytest

from treeopt_dsl import Dataset, Scaler, Topology
from treeopt_dsl.errors import DataError, OptionError
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.models.pictures import linear_rule
from treeopt_dsl.models.randomized import RandomizedTreeModel
from treeopt_dsl.models.risk import GeneralizedRiskScoreModel, RiskScoreModel
from treeopt_dsl.models.tree import TreeModel

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.table import Table  # noqa: E402
from matplotlib.text import Text  # noqa: E402


# ---------------------------------------------------------------------------------------------- helpers
def parse_dot(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """A strict reader of the DOT subset ``to_dot`` writes: ``digraph name { stmt; ... }`` with attribute
    defaults, graph attributes, node statements ``id [label="..", ...];`` and edges ``a -> b [label=".."];``.
    Raises AssertionError on anything else (unbalanced braces or quotes, unknown statements)."""
    m = re.fullmatch(r"\s*digraph\s+(\w+)\s*\{(.*)\}\s*", text, flags=re.S)
    assert m, "not a digraph { ... }"
    body = m.group(2)
    string = r'"(?:[^"\\]|\\.)*"'
    attr = rf'\w+=(?:{string}|[\w.#]+)'
    attrs = rf'\[\s*{attr}(?:\s*,\s*{attr})*\s*\]'
    stmt = re.compile(rf'\s*(?:(?P<dflt>node|edge)\s*{attrs}|(?P<g>{attr}(?:\s*;\s*{attr})*)'
                      rf'|(?P<a>\w+)\s*->\s*(?P<b>\w+)\s*(?P<ea>{attrs})?|(?P<n>\w+)\s*(?P<na>{attrs})?)\s*;', re.S)
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    pos = 0
    while body[pos:].strip():
        s = stmt.match(body, pos)
        assert s, f"cannot read DOT at: {body[pos:pos + 60]!r}"
        pos = s.end()
        if s.group("a"):
            lab = re.search(rf"label=({string})", s.group("ea") or "")
            edges.append((s.group("a"), s.group("b"), lab.group(1)[1:-1] if lab else ""))
        elif s.group("n"):
            lab = re.search(rf"label=({string})", s.group("na") or "")
            nodes[s.group("n")] = lab.group(1)[1:-1].replace("\\n", "\n") if lab else ""
    for a, b, _ in edges:
        assert a in nodes and b in nodes, f"edge {a} -> {b} to an undeclared node"
    return nodes, edges


def figure_texts(fig) -> str:
    """Every text of the figure, table cells included."""
    texts = [t.get_text() for t in fig.findobj(Text)]
    texts += [c.get_text().get_text() for tab in fig.findobj(Table) for c in tab.get_celld().values()]
    return "\n".join(texts)


def render(fig, tmp_path, name: str) -> None:
    out = tmp_path / f"{name}.png"
    fig.savefig(out)
    plt.close(fig)
    assert out.is_file() and out.stat().st_size > 1000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _tree(depth: int, W: np.ndarray, b: np.ndarray, X: np.ndarray, names: tuple[str, ...],
          classes=("benign", "malignant")) -> TreeModel:
    sc = Scaler("standard").fit(X)
    return TreeModel(Topology(depth), W, b, names, classes, sc, threshold=5e-6, X_train=sc.transform(X))


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(50, 10, 60), rng.normal(3, 1, 60), rng.normal(0, 5, 60)])
    return X


# ---------------------------------------------------------------------------------------------- TreeModel
def test_axis_aligned_tree_prints_raw_cuts_that_agree_with_the_model(data, tmp_path):
    W = np.zeros((3, 3))
    W[0, 0], W[1, 1], W[2, 2] = 1.0, -2.0, 0.5
    m = _tree(2, W, np.array([0.3, 0.1, -0.2]), data, ("age", "size", "dose"))
    nodes, edges = parse_dot(m.to_dot())
    assert len(nodes) == m.topology.n_nodes + m.topology.n_leaves and len(edges) == len(nodes) - 1
    assert [lab for *_, lab in edges].count("yes") == len(edges) // 2
    root = nodes["n0"]
    name, op, value = re.fullmatch(r"(\w+) (<=|>=|<|>) (\S+)", root).groups()
    assert name == "age" and op == "<="
    went_left = m.apply(data) < m.topology.last.size // 2  # the root's yes side: the first half of T_d
    assert np.array_equal(data[:, 0] <= float(value), went_left)  # the printed rule is the model's, raw units
    assert re.fullmatch(r"size > \S+", nodes["n1"])  # w < 0 flips the side; predicts +1 at v >= 0: yes is >
    leaves = [v for k, v in nodes.items() if k.startswith("leaf")]
    assert sum(int(re.search(r"n = (\d+)", v).group(1)) for v in leaves) == data.shape[0]
    fig = m.plot()
    texts = figure_texts(fig)
    assert "age" in texts and "malignant" in texts and "benign" in texts
    render(fig, tmp_path, "axis")


def test_leaf_counts_by_class_when_labels_are_given(data):
    W = np.zeros((1, 3))
    W[0, 0] = 1.0
    m = _tree(1, W, np.array([0.0]), data, ("age", "size", "dose"))
    y = np.where(data[:, 1] > 3, "malignant", "benign")
    nodes, _ = parse_dot(m.to_dot(X=data, y=y))
    counts = [tuple(map(int, re.search(r"(\d+) / (\d+) \(benign / malignant\)", nodes[f"leaf{i}"]).groups()))
              for i in range(2)]
    pred = m.predict(data)
    assert counts[0] == (int(np.sum((pred == "benign") & (y == "benign"))),
                         int(np.sum((pred == "benign") & (y == "malignant"))))
    assert sum(map(sum, counts)) == data.shape[0]


def parse_rule_lines(rule: str) -> tuple[dict[str, float], str, float, str]:
    """A rule of ``linear_rule_lines``: ``({name: coef}, op, rhs, the 'more' line or '')``."""
    lines = rule.split("\n")
    op, rhs = re.fullmatch(r"(<=|>=|<|>) (\S+)", lines[-1]).groups()
    more = lines[-2] if "more" in lines[-2] else ""
    coef = {}
    for line in lines[:len(lines) - 1 - bool(more)]:
        sign, v, name = re.fullmatch(r"([+-]?)\s*([\d.e+-]+) (.+)", line).groups()
        coef[name] = (-1.0 if sign == "-" else 1.0) * float(v)
    return coef, op, float(rhs), more


def test_oblique_split_in_scaled_units_classifies_like_the_model(data, tmp_path):
    W = np.array([[1.2, -0.7, 0.4]])
    m = _tree(1, W, np.array([0.1]), data, ("age", "size", "dose"))
    nodes, _ = parse_dot(m.to_dot(max_terms=3))
    coef, op, c, more = parse_rule_lines(nodes["n0"])
    assert list(coef) == ["age", "size", "dose"] and not more  # largest standardized weight first
    assert coef == pytest.approx({"age": 1.0, "size": -0.7 / 1.2, "dose": 0.4 / 1.2}, abs=6e-4)
    Z = m.scaler.transform(data)  # the title names the scaling: standardized (x - mean) / sd
    assert "(x - mean) / sd" in m.to_dot().split("\n")[1]
    lhs = coef["age"] * Z[:, 0] + coef["size"] * Z[:, 1] + coef["dose"] * Z[:, 2]
    pred_neg = m.predict(data) == "benign"  # the yes leaf of the last layer is classes[0]
    yes = lhs < c if op == "<" else lhs <= c  # '<' at the last level: predict +1 at v >= 0
    assert op == "<" and np.mean(yes == pred_neg) > 0.98  # 3-digit rounding
    short = parse_dot(m.to_dot(max_terms=1))[0]["n0"]
    assert parse_rule_lines(short)[3] == "+ 2 more, each |coef| <= 0.59"  # the hidden terms are said to be small
    render(m.plot(), tmp_path, "oblique")


def test_oblique_split_in_raw_units_classifies_like_the_model(data):
    W = np.array([[1.2, -0.7, 0.4]])
    m = _tree(1, W, np.array([0.1]), data, ("age", "size", "dose"))
    coef, op, c, _ = parse_rule_lines(parse_dot(m.to_dot(max_terms=3, units="raw"))[0]["n0"])
    assert list(coef) == ["age", "size", "dose"]  # ordered by the standardized weight, not the raw one
    lhs = coef["age"] * data[:, 0] + coef["size"] * data[:, 1] + coef["dose"] * data[:, 2]
    pred_neg = m.predict(data) == "benign"
    assert op == "<" and np.mean((lhs < c) == pred_neg) > 0.98  # 3-digit rounding
    assert max(abs(v) for v in coef.values()) == 1.0
    with pytest.raises(DataError, match="units must be one of 'scaled', 'raw'"):
        m.to_dot(units="z")


def test_a_small_term_stays_small_in_scaled_units():
    """A feature in large raw units (area ~ 1000) with a big standardized weight prints as the big term."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(1000, 300, 80), rng.normal(0.1, 0.03, 80), rng.normal(5, 1, 80)])
    W = np.array([[2.0, 0.1, 1.0]])
    m = _tree(1, W, np.array([0.0]), X, ("area", "smoothness", "texture"))
    coef, *_ = parse_rule_lines(parse_dot(m.to_dot())[0]["n0"])
    assert list(coef)[0] == "area" and coef["area"] == 1.0 and coef["smoothness"] == pytest.approx(0.05)
    raw, *_ = parse_rule_lines(parse_dot(m.to_dot(units="raw"))[0]["n0"])
    assert abs(raw["area"]) < abs(raw["smoothness"])  # in raw units the important feature looks negligible


def test_linear_rule_normalizes_and_orders():  # the one-line form (S-ORCT's one-feature rules)
    assert linear_rule(np.array([2.0, -0.5]), -1.0, ["a", "b"], "<=") == "1 a - 0.25 b <= 0.5"
    assert linear_rule(np.array([-4.0, 1.0, 0.0]), 2.0, ["a", "b", "c"], ">=", max_terms=1) == \
        "-1 a + ... (1 more) >= -0.5"


def test_linear_rule_lines_normalizes_orders_and_sums_up_the_rest():
    from treeopt_dsl.models.pictures import linear_rule_lines

    text = linear_rule_lines(np.array([0.1, -4.0, 2.0, 0.2]), 2.0, ["a", "b", "c", "d"], "<=", max_terms=2)
    assert text.split("\n") == ["-1 b", "+ 0.5 c", "+ 2 more, each |coef| <= 0.05", "<= -0.5"]
    _, _, rhs, _ = parse_rule_lines(text)  # -4b + 2c + 0.1a + 0.2d + 2 <= 0 over 4: the same half-space
    x = np.random.default_rng(0).normal(size=(200, 4))
    full = (x @ np.array([0.1, -4.0, 2.0, 0.2]) + 2.0 <= 0)
    shown = (-x[:, 1] + 0.5 * x[:, 2] + (0.1 * x[:, 0] + 0.2 * x[:, 3]) / 4 <= rhs)
    assert np.array_equal(full, shown)
    with pytest.raises(DataError, match="max_terms"):
        linear_rule_lines(np.ones(2), 0.0, ["a", "b"], "<=", max_terms=0)


def test_unreachable_leaves_are_marked_not_drawn_as_leaves(data, tmp_path):
    W = np.zeros((3, 3))
    W[0, 0] = 1.0  # root: age; node 1 has no feature and a negative score: always 'yes' (left)
    m = _tree(2, W, np.array([0.0, -1.0, 0.5]), data, ("age", "size", "dose"))
    nodes, _ = parse_dot(m.to_dot())
    assert nodes["n1"] == "always 'yes'" and nodes["n2"] == "always 'no'"
    reached = np.bincount(m.leaf(data), minlength=4)
    for leaf in range(4):
        label = nodes[f"leaf{leaf}"]
        if reached[leaf] == 0:
            assert label == "unreachable"
        else:
            assert label.endswith(f"n = {reached[leaf]}")
    assert [lab for lab in nodes.values()].count("unreachable") == 2
    dot = m.to_dot()
    assert re.search(r'leaf1 \[label="unreachable", fillcolor="#e6e6e6", style="rounded,filled,dashed"', dot)
    assert 'n1 -> leaf1 [label="no", style=dashed]' in dot
    W[1, 1] = 1.0  # node 1 now splits on size: all its leaves are reachable again
    m2 = _tree(2, W, np.array([0.0, -1.0, 0.5]), data, ("age", "size", "dose"))
    assert list(parse_dot(m2.to_dot())[0].values()).count("unreachable") == 1
    render(m.plot(), tmp_path, "unreachable")


def test_a_lean_tree_keeps_its_leaf_counts(data):
    W = np.zeros((1, 3))
    W[0, 0] = 1.0
    m = _tree(1, W, np.array([0.0]), data, ("age", "size", "dose"))
    lean = m.lean()
    assert lean.X_train is None
    assert parse_dot(lean.to_dot())[0] == parse_dot(m.to_dot())[0]  # the same n = ... per leaf


def test_names_reach_text_from_a_data_frame():
    from treeopt_dsl.estimator import OptimalTreeClassifier

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"radius": rng.normal(size=40), "texture": rng.normal(size=40)})
    y = np.where(X["radius"] > 0.2, "malignant", "benign")
    clf = OptimalTreeClassifier(formulation="olct", depth=1, time_limit=30).fit(X, y)
    model = clf.result_.model
    assert "radius" in model.text() and "'malignant'" in model.text()
    texts = figure_texts(model.plot())
    plt.close("all")
    assert "radius" in texts and "malignant" in texts


# ---------------------------------------------------------------------------------------------- risk scores
def test_score_card_figure(tmp_path):
    sc = Scaler("minmax").fit(np.array([[0.0, 0.0], [1.0, 1.0]]))
    m = RiskScoreModel(np.array([3, -2]), -1.0, ("smoker", "exercise"), ("healthy", "stroke"), sc)
    fig = m.plot()
    texts = figure_texts(fig)
    assert "smoker" in texts and "+3" in texts and "stroke" in texts and "-2" in texts
    table = dict(m.risk_table())
    assert f"{100 * table[3]:.1f}" in texts  # the risk of the highest total is drawn
    render(fig, tmp_path, "card")
    g = GeneralizedRiskScoreModel(np.array([0]), np.array([0.5]), np.array([2]), -1.0, ("age",), ("no", "yes"), sc)
    texts = figure_texts(g.plot())
    plt.close("all")
    assert "age >= 0.5" in texts and "yes" in texts


# ---------------------------------------------------------------------------------------------- S-ORCT
def test_randomized_tree_plot_shows_rules_steepness_and_leaf_probabilities(tmp_path):
    X = np.array([[4.0, 2.0], [7.0, 3.0], [5.0, 2.5]])
    sc = Scaler("minmax").fit(X)  # x0 in [4, 7]: scale 3
    A = np.array([[2.0, 0.0]])  # p = 2: v = x0s - mu
    C = np.array([[0.9, 0.2], [0.1, 0.8]])
    m = RandomizedTreeModel(Topology(1), A, np.array([0.5]), C, 64.0, ("setosa", "virginica"),
                            ("petal length", "petal width"), sc)
    nodes, edges = parse_dot(m.to_dot())
    assert len(nodes) == 3 and len(edges) == 2
    assert "1 petal length >= 5.5" in nodes["n0"]  # x0s >= 0.5 <=> x0 >= 4 + 0.5 * 3
    s = float(re.search(r"steepness s = (\S+)", nodes["n0"]).group(1))
    assert s == pytest.approx(64.0 / 3.0, rel=1e-2)  # F(64 v) with v = (x0 - 5.5) / 3
    assert "setosa: 0.90" in nodes["leaf0"] and "virginica: 0.80" in nodes["leaf1"]
    fig = m.plot()
    texts = figure_texts(fig)
    assert "petal length" in texts and "virginica" in texts
    render(fig, tmp_path, "sorct")
    assert "deterministic" in m.deterministic().to_dot()


# ---------------------------------------------------------------------------------------------- DecisionTree
def test_decision_tree_dot_and_plot(tmp_path):
    t = DecisionTree([0, 1, -1, -1, -1], [1.5, 0.25, 0, 0, 0], [1, 3, -1, -1, -1], [2, 4, -1, -1, -1],
                     [-1, -1, 1, 0, 1], classes=["no", "yes"], feature_names=("age", "bmi"))
    nodes, edges = parse_dot(t.to_dot())
    assert len(nodes) == t.n_nodes and len(edges) == t.n_nodes - 1
    assert nodes["n0"] == "age <= 1.5" and nodes["n1"] == "bmi <= 0.25" and nodes["n2"] == "yes"
    fig = t.plot()
    assert "age <= 1.50" in figure_texts(fig)
    render(fig, tmp_path, "dt")


def test_decision_tree_leaves_show_the_samples_that_reach_them():
    t = DecisionTree([0, 1, -1, -1, -1], [1.5, 0.25, 0, 0, 0], [1, 3, -1, -1, -1], [2, 4, -1, -1, -1],
                     [-1, -1, 1, 0, 1], classes=["no", "yes"], feature_names=("age", "bmi"))
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0, 3, 50), rng.uniform(0, 1, 50)])
    y = np.where(rng.random(50) < 0.5, "no", "yes")
    nodes, _ = parse_dot(t.to_dot(X=X))
    leaf = t.apply(X)
    for v in (2, 3, 4):
        assert nodes[f"n{v}"].split("\n")[1] == f"n = {np.sum(leaf == v)}"
    nodes, _ = parse_dot(t.to_dot(X=X, y=y))
    for v in (2, 3, 4):
        n_no, n_yes = np.sum((leaf == v) & (y == "no")), np.sum((leaf == v) & (y == "yes"))
        assert nodes[f"n{v}"].split("\n")[1] == f"{n_no} / {n_yes} (no / yes)"
    with pytest.raises(DataError, match="counts has 2 rows, the tree has 5 nodes"):
        t.to_dot(counts=np.ones(2))
    with pytest.raises(DataError, match="not the tree's classes"):
        t.to_dot(X=X, y=np.where(y == "no", "maybe", y))


@pytest.mark.parametrize("which", ["tmo", "tao", "born-again"])
def test_heuristic_and_born_again_trees_show_sample_counts(which, tmp_path):
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from treeopt_dsl.bornagain.estimator import BornAgainClassifier
    from treeopt_dsl.estimator import TAOClassifier, TMOClassifier

    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::4], np.where(y[::4] == 1, "benign", "malignant")
    if which == "born-again":
        X = X[:, [0, 7, 21]]  # a forest on three features: a born-again tree in a second
    clf = {"tmo": TMOClassifier(depth=2, n_trees=6, n_generations=2, random_state=0),
           "tao": TAOClassifier(depth=2, random_state=0),
           "born-again": BornAgainClassifier(RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0),
                                             objective="depth-leaves", time_limit=60)}[which].fit(X, y)
    fig = clf.plot()
    assert isinstance(fig, Figure)
    leaf = clf.tree_.apply(X)
    for v in np.unique(leaf):  # every reached leaf prints its training samples per class, in a box of the figure
        counts = f"{np.sum((leaf == v) & (y == 'benign'))} / {np.sum((leaf == v) & (y == 'malignant'))}"
        assert f"{clf.tree_.classes[clf.tree_.value[v]]}\n{counts} (benign / malignant)" in figure_texts(fig)
    render(fig, tmp_path, which)


# ---------------------------------------------------------------------------------------------- categorical
def test_categorical_tree_dot_plot_and_names(tmp_path):
    from treeopt_dsl.estimator import CategoricalTreeClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"colour": rng.integers(0, 3, 80), "weight": rng.normal(size=80)})
    y = np.where(X["colour"].isin([0, 2]), "edible", "poisonous")
    clf = CategoricalTreeClassifier(shape="1", categorical_features=["colour"], time_limit=30).fit(X, y)
    model = clf.result_.model
    nodes, edges = parse_dot(model.to_dot())
    assert len(nodes) == len(model.shape.children) + model.shape.n_leaves and len(edges) == len(nodes) - 1
    assert "colour" in nodes["n0"]
    assert "colour" in model.text() and "'edible'" in model.text()
    fig = model.plot()
    assert isinstance(fig, Figure)
    texts = figure_texts(fig)
    assert "colour" in texts and "edible" in texts
    render(fig, tmp_path, "cat")


def test_dataset_names_survive_a_headerless_manifest_file():
    from treeopt_dsl.datasets import find_data_dir, load

    if find_data_dir() is None:
        pytest.skip("the shared data directory is not available")
    iris = load("iris", multiclass=True)
    assert iris.feature_names[:2] == ("sepal length", "sepal width") and "Iris-setosa" in iris.classes
    bwo = load("breast-wisconsin-original")
    assert bwo.classes == ("benign", "malignant") and "clump thickness" in bwo.feature_names
    assert bwo.n_features == 9  # the sample id is still dropped
    assert isinstance(Dataset.from_arrays(bwo.X[:5], np.array([0, 1, 0, 1, 1])), Dataset)


def test_multiclass_tree_leaves_show_their_classes_and_counts(data):
    W = np.zeros((3, 3))
    W[0, 0], W[1, 1], W[2, 2] = 1.0, 1.0, 1.0
    m = _tree(2, W, np.zeros(3), data, ("age", "size", "dose"), classes=("low", "mid", "high"))
    m.leaf_classes = np.array([0, 1, 2, 2])
    y = np.array(["low", "mid", "high"])[m.predict_codes(data)]
    nodes, edges = parse_dot(m.to_dot(X=data, y=y))
    assert len(nodes) == 7 and len(edges) == 6
    for leaf, code in enumerate(m.leaf_classes):
        label = nodes[f"leaf{leaf}"]
        assert label.split("\n")[0] == m.classes[code]
        counts = [float(v) for v in label.split("\n")[1].split(" (")[0].split(" / ")]
        assert counts[code] == np.sum(m.leaf(data) == leaf) and sum(counts) == counts[code]  # y = the tree's own
    texts = figure_texts(m.plot())
    plt.close("all")
    assert "high" in texts and "mid" in texts


# ---------------------------------------------------------------------------------------------- backend, reports
def _store(path, rows):
    """A results store with one final row per ``(method, formulation, dataset, objective, seconds)``."""
    from treeopt_dsl.experiments import ResultStore

    with ResultStore(path) as store:
        for i, (method, form, dataset, obj, secs) in enumerate(rows):
            task = {"id": f"t{i}", "experiment": "e", "method": method, "formulation": form,
                    "dataset": {"name": dataset}, "seed": 0, "fold": None}
            store.add_tasks([task])
            store.record({"id": task["id"], "ok": True, "status": "optimal", "objective": obj, "runtime_s": secs,
                          "test_balanced_accuracy": 0.8, "features_per_node": 1.0}, final=True, task=task)
    return path


ROWS = [("olct-a", "olct", "d1", 10.0, 1.0), ("olct-b", "olct", "d1", 12.0, 2.0), ("olct-a", "olct", "d2", 5.0, 1.0),
        ("olct-b", "olct", "d2", 5.0, 1.5), ("oct", "oct", "d1", 3.0, 4.0), ("oct", "oct", "d2", 7.0, 3.0)]


def test_no_picture_switches_matplotlib_backend(tmp_path, data):
    """In a notebook a switch to Agg leaves ``plt.show()`` blind: every picture keeps the backend it found."""
    from treeopt_dsl.contextual.plots import plot_training
    from treeopt_dsl.experiments.report import write_report
    from treeopt_dsl.starts.multistart import plot_path

    class Point:  # what plot_path reads of a PathPoint
        def __init__(self, lam: float) -> None:
            self.row = {"lambda_l": lam, "delta_l": 50.0 * lam, "delta_g": 30.0, "train_accuracy": 0.9}

        def to_dict(self) -> dict:
            return self.row

    before = matplotlib.get_backend()
    matplotlib.use("pdf")  # a backend that is not Agg, as a notebook's inline one
    try:
        out = write_report(_store(tmp_path / "r.sqlite", ROWS), out=tmp_path / "rep")
        assert matplotlib.get_backend() == "pdf"
        assert all(p.is_file() for p in out["files"])
        history = {"reward": [0.1, 0.3, 0.4], "val_score": [0.5, 0.6, 0.6], "selection": [[3, 1], [2, 2], [0, 4]]}
        fig = plot_training(history, best_epoch=1)
        assert matplotlib.get_backend() == "pdf" and isinstance(fig, Figure)
        fig = plot_path([Point(0.1), Point(1.0)])
        assert matplotlib.get_backend() == "pdf" and isinstance(fig, Figure)
        W = np.zeros((1, 3))
        W[0, 0] = 1.0
        fig = _tree(1, W, np.zeros(1), data, ("age", "size", "dose")).plot()
        assert matplotlib.get_backend() == "pdf" and isinstance(fig, Figure)
    finally:
        plt.close("all")
        matplotlib.use(before)


def test_objective_gap_has_one_panel_per_formulation(tmp_path):
    from treeopt_dsl.experiments import ResultStore
    from treeopt_dsl.experiments.report import profile_figure

    with ResultStore(_store(tmp_path / "r.sqlite", ROWS)) as store:
        rows = store.rows()
    fig = profile_figure(rows, "objective")
    assert "one panel per formulation" in fig.get_suptitle()
    panels = [ax for ax in fig.axes if ax.get_lines()]
    assert [(ax.get_title(), [ln.get_label() for ln in ax.get_lines()]) for ax in panels] == \
        [("oct (2 instances)", ["oct"]), ("olct (2 instances)", ["olct-a", "olct-b"])]
    a, b = panels[1].get_lines()  # olct-a is best on both datasets; olct-b 2 above it on d1, equal on d2
    xb, yb = b.get_xdata(), b.get_ydata()
    assert a.get_ydata().min() == 1.0 and yb[list(xb).index(0.0)] == 0.5 and yb[list(xb).index(2.0)] == 1.0
    assert panels[0].get_lines()[0].get_ydata().min() == 1.0  # oct against itself alone, never against olct
    time = profile_figure(rows, "time")
    assert [ln.get_label() for ax in time.axes for ln in ax.get_lines()] == ["oct", "olct-a", "olct-b"]
    with pytest.raises(OptionError, match="what must be one of"):
        profile_figure(rows, "speed")


def test_exact_gap_reads_the_exact_objective_of_the_rows_that_record_it(tmp_path):
    """Thesis Fig. 3.8b: the gap in the exact training loss, not in the MILP's objective (whose order differs)."""
    from treeopt_dsl.experiments import ResultStore
    from treeopt_dsl.experiments.report import profile_figure, write_report

    path = _store(tmp_path / "r.sqlite", ROWS)
    with pytest.raises(OptionError, match="no row records an exact objective"):
        with ResultStore(path) as store:
            profile_figure(store.rows(), "exact")
    assert not any("exact" in p.name for p in write_report(path, out=tmp_path / "none")["files"])
    with ResultStore(path) as store:  # olct-b's exact objective is the best on d1 (the MILP said olct-a's)
        exact = {("olct-a", "d1"): 11.0, ("olct-b", "d1"): 9.0, ("olct-a", "d2"): 6.0, ("olct-b", "d2"): 6.0}
        for row in store.rows():
            if (row["method"], row["dataset"]) in exact:
                store.record({**row, "exact_objective": exact[row["method"], row["dataset"]]}, final=True)
        rows = store.rows()
    fig = profile_figure(rows, "exact")
    assert "exact objective" in fig.get_suptitle()
    panels = [ax for ax in fig.axes if ax.get_lines()]
    assert [(ax.get_title(), [ln.get_label() for ln in ax.get_lines()]) for ax in panels] == \
        [("olct (2 instances)", ["olct-a", "olct-b"])]  # oct records none: not drawn
    a, b = panels[0].get_lines()
    xa, ya = a.get_xdata(), a.get_ydata()
    assert b.get_ydata().min() == 1.0 and ya[list(xa).index(0.0)] == 0.5 and ya[list(xa).index(2.0)] == 1.0
    out = write_report(path, out=tmp_path / "rep")
    assert any(p.name == "gap_exact.png" for p in out["files"])
    # the table beside it: olct-b is lowest on both (a tie on d2); olct-a 11/9 above it on d1
    assert "| olct-a | 2 | 8.500 | 0.50 | 1.111 |" in out["markdown"]
    assert "| olct-b | 2 | 7.500 | 1.00 | 1.000 |" in out["markdown"] and "| oct | " not in out["markdown"].split(
        "Exact objective")[1]


def test_report_of_some_methods_reads_only_their_rows(tmp_path):
    from treeopt_dsl.cli import main
    from treeopt_dsl.experiments.report import write_report

    path = _store(tmp_path / "r.sqlite", ROWS)
    out = write_report(path, out=tmp_path / "rep", methods=["olct-a", "oct"], profiles=["objective"])
    assert "olct-a" in out["markdown"] and "oct" in out["markdown"] and "olct-b" not in out["markdown"]
    assert "4 finished task(s)" in out["markdown"]
    with pytest.raises(OptionError, match=r"--method 'olct-c'.*methods: oct, olct-a, olct-b"):
        write_report(path, out=tmp_path / "rep2", methods=["olct-c"])
    assert main(["experiment", "report", str(path), "--method", "olct-b", "--profile", "time",
                 "--out", str(tmp_path / "cli")]) == 0
    assert "olct-a" not in (tmp_path / "cli" / "report.md").read_text()


def test_profile_lines_carry_distinct_markers_and_dashes():
    from treeopt_dsl.experiments.report import _draw

    fig = plt.figure()
    ax = fig.add_subplot()
    rho = np.array([[0.5, 1.0, 1.0], [0.5, 1.0, 1.0], [0.0, 0.5, 1.0]])  # the first two coincide
    _draw(ax, "profile", np.array([1.0, 2.0, 4.0]), rho, ["a", "b", "c"])
    lines = ax.get_lines()
    plt.close(fig)
    assert len(lines) == 3
    assert len({ln.get_marker() for ln in lines}) == 3 and len({ln.get_linestyle() for ln in lines}) == 3
    assert np.array_equal(lines[0].get_ydata(), lines[1].get_ydata())  # coincident, told apart by marker and dash


# ---------------------------------------------------------------------------------------------- the gallery
def _gallery():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "docs" / "gallery.py"
    spec = importlib.util.spec_from_file_location("docs_gallery", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


GALLERY = _gallery()


def test_the_gallery_page_is_the_one_gallery_py_writes():
    from pathlib import Path

    page = (Path(GALLERY.__file__).parent / "gallery.md").read_text()
    assert page == GALLERY.page(), "docs/gallery.md is stale: run `python docs/gallery.py --page`"
    for e in GALLERY.ENTRIES:  # every picture on the page has its image in the docs
        assert f"(img/gallery/{e.name}.png)" in page
        png = GALLERY.IMG / f"{e.name}.png"
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 120_000


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name, marks=[pytest.mark.slow] if e.slow else [])
                                   for e in GALLERY.ENTRIES if not e.name.startswith("report")])
def test_every_gallery_picture_draws(entry, tmp_path):
    before = matplotlib.get_backend()
    fig = GALLERY.draw(entry, tmp_path)
    assert isinstance(fig, Figure) and matplotlib.get_backend() == before
    assert any(t.strip() for t in figure_texts(fig).split("\n"))  # labelled, not an empty canvas
    render(fig, tmp_path, entry.name)


@pytest.mark.slow
def test_the_report_gallery_pictures_draw(tmp_path):
    """The objective entry reads the store the profile entry wrote: drawn in order in one directory."""
    for e in [e for e in GALLERY.ENTRIES if e.name.startswith("report")]:
        fig = GALLERY.draw(e, tmp_path)
        assert isinstance(fig, Figure) and fig.get_suptitle()
        render(fig, tmp_path, e.name)


@pytest.mark.slow
def test_every_estimator_plot_returns_a_figure_one_panel_per_class_one_vs_rest():
    from sklearn.datasets import load_iris

    from treeopt_dsl.estimator import OptimalTreeClassifier, RiskScoreClassifier

    X, y = load_iris(return_X_y=True)
    X, y = X[::3], np.array(["setosa", "versicolor", "virginica"])[y[::3]]
    X = pd.DataFrame(X, columns=["sepal length", "sepal width", "petal length", "petal width"])
    ovr = OptimalTreeClassifier(formulation="olct", depth=1, time_limit=10).fit(X, y)
    assert isinstance(ovr.model_, tuple)
    fig = ovr.plot()
    titles = [ax.get_title() for ax in fig.axes]
    texts = figure_texts(fig)
    plt.close(fig)
    assert "petal" in texts and "rest" in texts and "virginica" in texts  # names and classes, not x2 and 0 / 1
    assert isinstance(fig, Figure) and len(titles) == 3
    assert [t.split(" against the rest")[0] for t in titles] == ["setosa", "versicolor", "virginica"]
    score = RiskScoreClassifier(T=2, time_limit=10).fit(X.iloc[:, :2], y == "setosa")
    fig = score.plot()
    assert isinstance(fig, Figure) and "points" in figure_texts(fig)
    plt.close(fig)


@pytest.mark.parametrize("kind", ["standard", "minmax", "none"])
def test_text_names_the_scaling_its_oblique_terms_use(data, kind):
    """The note under ``text()`` says what was done to the features; the printed terms, evaluated on the features
    transformed as the note says (computed here from the data), classify like the model."""
    sc = Scaler(kind).fit(data)
    m = TreeModel(Topology(1), np.array([[1.2, -0.7, 0.4]]), np.array([0.1]), ("age", "size", "dose"),
                  ("benign", "malignant"), sc, threshold=5e-6, X_train=sc.transform(data))
    text = m.text()
    note = text.splitlines()[-1]
    if kind == "standard":
        assert "standardized features (x - mean) / sd" in note
        Z = (data - data.mean(axis=0)) / data.std(axis=0)
    elif kind == "minmax":
        assert "min-max scaled to [0, 1]" in note and "standardized" not in note
        Z = (data - data.min(axis=0)) / (data.max(axis=0) - data.min(axis=0))
    else:
        assert "raw features" in note and "standardized" not in note
        Z = data
    terms = dict((n, float(c)) for c, n in re.findall(r"([+-][\d.e+-]+)\*(\w+)", text))
    const = float(re.search(r" ([+-][\d.e+-]+) > 0", text).group(1))
    score = terms["age"] * Z[:, 0] + terms["size"] * Z[:, 1] + terms["dose"] * Z[:, 2] + const
    assert np.mean((score >= 0) == (m.predict(data) == "malignant")) > 0.98  # 3-digit rounding
