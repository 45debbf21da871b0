"""Pictures of fitted models: matplotlib figures and Graphviz DOT text.

Every tree-shaped model is first described as a :class:`Graph` (boxes with text, edges labelled
``yes``/``no``: a sample for which a node's rule holds goes to its ``yes`` child, the left one); the
same graph is drawn by :func:`draw` (matplotlib, imported only when drawing: ``pip install
treeopt-dsl[plot]``) and written by :func:`to_dot` (plain text, no Graphviz needed to produce it; render
it with ``dot -Tpng``). Rules are printed in the features' original units: a one-feature split as
``name <= value``, an oblique split as its largest terms, ``0.8 radius - 0.3 texture + ... <= c``
(coefficients on raw features, divided by the largest one, terms ordered by their weight on standardized
features). The models' ``plot()`` and ``to_dot()`` methods are thin calls into this module.

Example::

    >>> from treeopt_dsl.models.decision_tree import DecisionTree
    >>> t = DecisionTree([0, -1, -1], [1.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1],
    ...                  classes=["no", "yes"], feature_names=("age",))
    >>> print(to_dot(decision_tree_graph(t)).splitlines()[4])
      n0 [label="age <= 1.5", fillcolor="#f2f2f2"];
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError, TreeoptError
from treeopt_dsl.numeric import logistic_cdf

__all__ = ["Graph", "GraphNode", "categorical_graph", "decision_tree_graph", "draw", "linear_rule", "plot_score_card",
           "randomized_graph", "to_dot", "tree_model_graph"]

#: leaf colours by class index (matplotlib's tab10, light)
PALETTE = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d",
           "#9edae5")
INNER = "#f2f2f2"


@dataclass
class GraphNode:
    """A box of the picture: its text, whether it is a leaf, and the class index that colours a leaf."""

    id: str
    label: str
    leaf: bool = False
    klass: int | None = None


@dataclass
class Graph:
    """A rooted tree to draw: ``nodes`` (the root first) and ``edges`` ``(parent, child, label)``, the
    ``yes`` (left) child of a node listed before its ``no`` child."""

    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    title: str = ""

    def add(self, id: str, label: str, leaf: bool = False, klass: int | None = None) -> str:
        self.nodes.append(GraphNode(id, label, leaf, klass))
        return id

    def children(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {n.id: [] for n in self.nodes}
        for a, b, _ in self.edges:
            out[a].append(b)
        return out


def _pyplot() -> Any:
    """matplotlib.pyplot (its own backend choice: Agg without a display, inline in notebooks)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise TreeoptError("plotting needs matplotlib: `pip install treeopt-dsl[plot]`") from None
    return plt


# ---------------------------------------------------------------------------------------------- rules
def _num(v: float, digits: int = 3) -> str:
    return f"{v:.{digits}g}"


def linear_rule(coef: np.ndarray, const: float, names: Sequence[str], op: str, order: np.ndarray | None = None,
                max_terms: int = 3, zero_tol: float = 0.0) -> str:
    """``sum_j coef_j x_j + const  op  0`` as ``a x + b y + ... op c``, divided by the largest ``|coef_j|``
    (so the leading coefficient is ±1 or the largest is 1) and showing at most ``max_terms`` terms, the
    first ones in ``order`` (default: largest ``|coef|`` first).

    Example::

        >>> linear_rule(np.array([2.0, -0.5]), -1.0, ["radius", "texture"], "<=")
        '1 radius - 0.25 texture <= 0.5'
    """
    coef = np.asarray(coef, dtype=float)
    used = np.flatnonzero(np.abs(coef) > zero_tol)
    if used.size == 0:
        return f"0 {op} {_num(-const, 4)}"
    k = float(np.abs(coef[used]).max())
    if order is None:
        order = used[np.argsort(-np.abs(coef[used]), kind="stable")]
    else:
        order = np.asarray([j for j in order if j in set(used.tolist())])
    parts = []
    for i, j in enumerate(order[:max_terms]):
        c = coef[j] / k
        sign = ("-" if c < 0 else "") if i == 0 else (" - " if c < 0 else " + ")
        parts.append(f"{sign}{_num(abs(c))} {names[j]}")
    more = f" + ... ({used.size - max_terms} more)" if used.size > max_terms else ""
    return f"{''.join(parts)}{more} {op} {_num(-const / k, 4)}"


# ---------------------------------------------------------------------------------------------- graphs
def _counts_text(counts: np.ndarray | None, classes: Sequence[Any]) -> str:
    if counts is None:
        return ""
    counts = np.asarray(counts)
    if counts.ndim == 0:
        return f"\nn = {int(counts)}"
    return "\n" + " / ".join(f"{c:.4g}" for c in counts) + " (" + " / ".join(str(c) for c in classes) + ")"


def tree_model_graph(model: Any, max_terms: int = 3, X: Any = None, y: Any = None) -> Graph:
    """The :class:`~treeopt_dsl.models.tree.TreeModel` as a :class:`Graph`.

    Branch nodes of the inner levels show when a sample goes left (``yes``); a last-layer node shows when it
    predicts ``classes[0]`` (its ``yes`` leaf) rather than ``classes[1]`` (its ``no`` leaf), or, for a
    multiclass tree, when it sends a sample to its ``yes`` leaf. Leaves show their class and the training
    samples that reach them (``n``; a multiclass tree's stored training weight per class), or, with raw ``X``
    and labels ``y``, the samples of each class (``y`` in the original labels).
    """
    topo, W, b = model.topology, model.W, model.b
    sc = model.scaler
    cuts = getattr(sc, "kind", None) == "cuts"
    names = list(getattr(sc, "names", None) or model.feature_names) if cuts else list(model.feature_names)
    leaf_counts: np.ndarray | None = None
    classes = tuple(model.classes)
    codes = getattr(model, "leaf_classes", None)  # K > 2: the class code of leaf 2j + side
    shown = classes if codes is not None else classes[:2]
    if codes is not None and X is None and getattr(model, "leaf_counts", None) is not None:
        leaf_counts = np.asarray(model.leaf_counts, dtype=float)
    elif X is not None or model.X_train is not None:
        Xs = model._scaled(X) if X is not None else model.X_train
        v = Xs @ W.T + b
        last = topo.route(v > model.threshold)
        node = topo.last[last]
        pos = model._side(v[np.arange(v.shape[0]), node], True)
        leaf = 2 * last + pos.astype(int)
        if y is not None:
            yk = np.asarray(y)
            cols = np.stack([yk == c for c in shown], axis=1).astype(int)
            leaf_counts = np.zeros((2 * topo.last.size, len(shown)), dtype=int)
            np.add.at(leaf_counts, leaf, cols)
        else:
            leaf_counts = np.bincount(leaf, minlength=2 * topo.last.size)
    g = Graph(title=f"tree of depth {topo.depth}: a sample goes 'yes' when the node's rule holds")
    for t in topo.nodes:
        h = int(topo.level[t])
        last = h == topo.depth
        g.add(f"n{t}", _tree_node_rule(model, int(t), last, names, cuts, max_terms))
    for t in topo.nodes:
        if int(topo.level[t]) < topo.depth:
            g.edges += [(f"n{t}", f"n{2 * t + 1}", "yes"), (f"n{t}", f"n{2 * t + 2}", "no")]
        else:
            li = int(t - topo.last[0])
            for side, word in ((0, "yes"), (1, "no")):
                lid = f"leaf{2 * li + side}"
                cnt = None if leaf_counts is None else leaf_counts[2 * li + side]
                k = side if codes is None else int(codes[2 * li + side])
                g.add(lid, f"{classes[k]}{_counts_text(cnt, shown)}", leaf=True, klass=k)
                g.edges.append((f"n{t}", lid, word))
    return g


def _tree_node_rule(model: Any, t: int, last: bool, names: list[str], cuts: bool, max_terms: int) -> str:
    """The condition under which node ``t`` sends a sample left (inner) or predicts ``classes[0]`` (last)."""
    w, b = model.W[t], model.b[t]
    used = np.flatnonzero(np.abs(w) > model.zero_tol)
    strict = not last or model.leaf_threshold > 0  # right/positive side: v > thr (strict) or v >= 0
    if used.size == 0:
        right = bool(model._side(np.array([b]), last)[0])
        return "always 'no'" if right else "always 'yes'"
    if used.size == 1 and cuts:
        j = int(used[0])
        s0, s1 = (bool(model._side(np.array([v]), last)[0]) for v in (b, w[j] + b))
        if s0 == s1:
            return "always 'no'" if s0 else "always 'yes'"
        return names[j].replace(" > ", " <= ", 1) if s1 else names[j]
    if used.size == 1:
        j = int(used[0])
        cut = model._printed_cut(t, j, last)
        up = w[j] > 0  # right iff x > cut (or >=); left is the complement
        op = ("<=" if strict else "<") if up else (">=" if strict else ">")
        return f"{names[j]} {op} {cut}"
    shift, scale = np.asarray(model.scaler.shift_, float), np.asarray(model.scaler.scale_, float)
    coef = np.where(np.abs(w) > model.zero_tol, w, 0.0) / scale
    thr = (model.leaf_threshold if model.leaf_threshold > 0 else 0.0) if last else model.threshold
    const = b - float(np.sum(coef * shift)) - thr
    order = used[np.argsort(-np.abs(w[used]), kind="stable")]
    return linear_rule(coef, const, names, "<=" if strict else "<", order=order, max_terms=max_terms)


def decision_tree_graph(tree: Any, decimals: int | None = None) -> Graph:
    """A :class:`~treeopt_dsl.models.decision_tree.DecisionTree` as a :class:`Graph` (``name <= value``; the
    value with ``decimals`` decimals, or 6 significant digits when ``None``)."""
    g = Graph(title=f"decision tree: depth {tree.depth}, {tree.n_leaves} leaves")
    for v in range(tree.n_nodes):
        if tree.left[v] < 0:
            k = int(tree.value[v])
            g.add(f"n{v}", str(tree.classes[k]), leaf=True, klass=k)
        else:
            thr = float(tree.threshold[v])
            text = f"{thr:.{decimals}f}" if decimals is not None else f"{thr:.6g}"
            g.add(f"n{v}", f"{tree._name(int(tree.feature[v]))} <= {text}")
            g.edges += [(f"n{v}", f"n{int(tree.left[v])}", "yes"), (f"n{v}", f"n{int(tree.right[v])}", "no")]
    return g


def categorical_graph(model: Any) -> Graph:
    """A :class:`~treeopt_dsl.models.categorical.CategoricalTreeModel` ([gunluk-odt-categorical]) as a
    :class:`Graph`: set tests, leaves with their class and training counts per class."""
    shape = model.shape
    g = Graph(title=f"categorical tree (shape {shape.name})")
    for k in range(len(shape.children)):
        g.add(f"n{k}", model.condition(k + 1) + " ?")
    for i in range(shape.n_leaves):
        sign = int(model.leaf_sign[i])
        cnt = model.leaf_counts[i] if model.leaf_counts.size else None
        g.add(f"leaf{i}", f"{model.classes[1] if sign > 0 else model.classes[0]}"
                          f"{_counts_text(cnt, model.classes)}", leaf=True, klass=int(sign > 0))
    for k, (lc, rc) in enumerate(shape.children):
        for (kind, i), word in ((lc, "yes"), (rc, "no")):
            g.edges.append((f"n{k}", f"n{i}" if kind == "node" else f"leaf{i}", word))
    return g


def randomized_graph(model: Any, max_terms: int = 3) -> Graph:
    """A :class:`~treeopt_dsl.models.randomized.RandomizedTreeModel` (S-ORCT [blanquero-2020-sorct]) as a
    :class:`Graph`.

    A node sends ``x`` left (``yes``) with probability ``F(s (u - c))``, ``F`` the logistic CDF: the box shows
    the deterministic rule ``u >= c`` in original units (``u`` the normalized combination of raw features) and
    the steepness ``s`` in those units (``inf``: a deterministic split). Leaves show the class probabilities.
    """
    topo, A, mu = model.topology, model.A, model.mu
    p = A.shape[1]
    shift, scale = np.asarray(model.scaler.shift_, float), np.asarray(model.scaler.scale_, float)
    names = list(model.feature_names)
    g = Graph(title=f"randomized tree (S-ORCT), depth {topo.depth}: 'yes' = left with probability F(s (u - c))")
    for t in topo.nodes:
        a = np.where(np.abs(A[t]) > model.zero_tol, A[t], 0.0)
        coef = a / (p * scale)  # v = coef . x_raw - (mu + coef . shift)
        const = -(float(mu[t]) + float(np.sum(coef * shift)))
        used = np.flatnonzero(coef)
        if used.size == 0:  # no feature: the same probability for every sample

            g.add(f"n{t}", f"no feature: 'yes' w.p. {float(logistic_cdf(np.array(-mu[t]), model.gamma)):.2f}")
            continue
        k = float(np.abs(coef[used]).max())
        order = used[np.argsort(-np.abs(a[used]), kind="stable")]
        rule = linear_rule(coef, const, names, ">=", order=order, max_terms=max_terms)
        s = model.gamma * k
        steep = "deterministic" if not np.isfinite(s) else f"steepness s = {_num(s)}"
        g.add(f"n{t}", f"{rule}\n{steep}")
    n_inner = topo.n_nodes
    for t in topo.nodes:
        for side, word in ((1, "yes"), (2, "no")):
            child = 2 * t + side
            g.edges.append((f"n{t}", f"n{child}" if child < n_inner else f"leaf{child - n_inner}", word))
    for leaf in range(topo.n_leaves):
        probs = model.C[:, leaf]
        k = int(np.argmax(probs))
        lines = [f"{c}: {max(q, 0.0):.2f}" for c, q in zip(model.classes, probs, strict=True)]  # Ipopt: -1e-9
        g.add(f"leaf{leaf}", f"{model.classes[k]}\n" + "\n".join(lines), leaf=True, klass=k)
    return g


# ---------------------------------------------------------------------------------------------- output
def _dot_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph: Graph, name: str = "tree") -> str:
    """Graphviz DOT text of ``graph``: one statement per node and per edge (render: ``dot -Tpng``).

    Example::

        >>> g = Graph(); _ = g.add("n0", "x <= 1"); _ = g.add("a", "no", leaf=True, klass=0)
        >>> g.edges.append(("n0", "a", "yes")); print(to_dot(g))  # doctest: +NORMALIZE_WHITESPACE
        digraph tree {
          node [shape=box, style="rounded,filled", fontname="Helvetica"];
          edge [fontname="Helvetica", fontsize=10];
          n0 [label="x <= 1", fillcolor="#f2f2f2"];
          a [label="no", fillcolor="#aec7e8"];
          n0 -> a [label="yes"];
        }
    """
    ident = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "tree"
    lines = [f"digraph {ident} {{", '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];']
    if graph.title:
        lines.insert(1, f"  label={_dot_quote(graph.title)}; labelloc=t;")
    for n in graph.nodes:
        color = PALETTE[(n.klass or 0) % len(PALETTE)] if n.leaf else INNER
        lines.append(f"  {n.id} [label={_dot_quote(n.label)}, fillcolor=\"{color}\"];")
    for a, b, lab in graph.edges:
        lines.append(f"  {a} -> {b} [label={_dot_quote(lab)}];")
    lines.append("}")
    return "\n".join(lines)


def _layout(graph: Graph) -> tuple[dict[str, float], dict[str, int]]:
    """x (leaves 0, 1, ... left to right; a parent above the middle of its children) and depth per node."""
    kids = graph.children()
    x: dict[str, float] = {}
    depth: dict[str, int] = {}
    root = graph.nodes[0].id
    nxt = [0]

    def place(v: str, d: int) -> float:  # trees here are at most a few levels deep
        depth[v] = d
        if not kids[v]:
            x[v] = float(nxt[0])
            nxt[0] += 1
        else:
            xs = [place(c, d + 1) for c in kids[v]]
            x[v] = sum(xs) / len(xs)
        return x[v]

    place(root, 0)
    return x, depth


def draw(graph: Graph, ax: Any = None, fontsize: float = 7.0, max_leaves: int = 64) -> Any:
    """Draw ``graph`` with matplotlib (boxes, ``yes``/``no`` edges, leaves coloured by class); returns the
    figure. Graphs with more than ``max_leaves`` leaves are refused (:class:`~treeopt_dsl.errors.DataError`).

    Example::

        >>> g = Graph(); _ = g.add("r", "x <= 1"); _ = g.add("a", "no", True, 0); _ = g.add("b", "yes", True, 1)
        >>> g.edges += [("r", "a", "yes"), ("r", "b", "no")]
        >>> draw(g).savefig("/tmp/g.png")  # doctest: +SKIP
    """
    plt = _pyplot()
    n_leaves = sum(1 for n in graph.nodes if n.leaf or not graph.children()[n.id])
    if n_leaves > max_leaves:
        raise DataError(f"the tree has {n_leaves} leaves, more than max_leaves={max_leaves}: use text() "
                        "or raise max_leaves")
    x, depth = _layout(graph)
    max_depth = max(depth.values())
    if ax is None:
        widest = max(len(line) for n in graph.nodes for line in n.label.split("\n"))
        per_leaf = min(3.2, max(1.3, 0.065 * widest))
        _, ax = plt.subplots(figsize=(min(40.0, max(4.5, per_leaf * n_leaves)), max(2.5, 1.4 * (max_depth + 1))))
    for a, b, lab in graph.edges:
        ax.plot([x[a], x[b]], [-depth[a], -depth[b]], color="0.6", lw=1, zorder=1)
        ax.text((x[a] + x[b]) / 2, -(depth[a] + depth[b]) / 2, lab, fontsize=fontsize - 1, color="0.35",
                ha="center", va="center", bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"}, zorder=2)
    for n in graph.nodes:
        color = PALETTE[(n.klass or 0) % len(PALETTE)] if n.leaf else INNER
        ax.text(x[n.id], -depth[n.id], n.label, ha="center", va="center", fontsize=fontsize, zorder=3,
                bbox={"boxstyle": "round,pad=0.3", "fc": color, "ec": "0.3"})
    ax.set_xlim(-0.7, max(n_leaves - 0.3, 0.7))
    ax.set_ylim(-max_depth - 0.6, 0.6)
    ax.axis("off")
    if graph.title:
        ax.set_title(graph.title, fontsize=fontsize + 1)
    ax.figure.tight_layout()
    return ax.figure


def plot_score_card(model: Any, ax: Any = None, title: str | None = None) -> Any:
    """A risk score card as a figure: the points of every rule (a table) beside the predicted risk of every
    total score. Works for :class:`~treeopt_dsl.models.risk.RiskScoreModel` and
    :class:`~treeopt_dsl.models.risk.GeneralizedRiskScoreModel` (anything with ``score_card()``,
    ``risk_table()`` and ``classes``). Returns the figure."""
    plt = _pyplot()
    card = model.score_card()
    table = model.risk_table()
    if ax is None:
        fig, (ax_card, ax_risk) = plt.subplots(1, 2, figsize=(10, max(2.8, 0.45 * len(card) + 1.6)),
                                               gridspec_kw={"width_ratios": [1.1, 1.0]})
    else:
        fig = ax.figure
        ax_card, ax_risk = ax, ax.inset_axes([1.05, 0.0, 0.9, 1.0])
    ax_card.axis("off")
    rows = [[name, f"{p:+d}"] for name, p in card] or [["(no rule used)", "0"]]
    tab = ax_card.table(cellText=rows, colLabels=["rule", "points"], loc="upper center", cellLoc="left",
                        colWidths=[0.8, 0.2])
    tab.auto_set_font_size(False)
    tab.set_fontsize(9)
    tab.scale(1.0, 1.3)
    totals = [t for t, _ in table]
    risk = [100.0 * r for _, r in table]
    ax_risk.bar(totals, risk, color="#ff9896", edgecolor="0.3")
    for t, r in zip(totals, risk, strict=True):
        ax_risk.text(t, r + 1.0, f"{r:.1f}", ha="center", va="bottom", fontsize=7)
    ax_risk.set_xlabel("total score")
    ax_risk.set_ylabel(f"risk of {model.classes[1]} (%)")
    ax_risk.set_ylim(0, 110)
    ax_risk.set_xticks(totals)
    fig.suptitle(title or f"score card: P({model.classes[1]}) by total score (else {model.classes[0]})",
                 fontsize=10)
    fig.tight_layout()
    return fig
