"""Pictures of fitted models: matplotlib figures and Graphviz DOT text.

Every tree-shaped model is first described as a :class:`Graph` (boxes with text, edges labelled
``yes``/``no``: a sample for which a node's rule holds goes to its ``yes`` child, the left one); the
same graph is drawn by :func:`draw` (matplotlib, imported only when drawing: ``pip install
treeopt-dsl[plot]``) and written by :func:`to_dot` (plain text, no Graphviz needed to produce it; render
it with ``dot -Tpng``). A one-feature split is printed in the feature's original units, ``name <= value``. An
oblique split is printed one term a line, largest first, on the *scaled* features the model was fitted on
(``units="scaled"``, the default: standardized ``(x - mean) / sd`` or min-max ``(x - min) / (max - min)``, the
picture's title says which), divided by the largest coefficient: a coefficient then says how much its feature
matters, and the terms left out are summed up as ``+ 12 more, each |coef| <= 0.04``. ``units="raw"`` prints the
coefficients on the raw features instead (what a reader applies by hand; their sizes depend on the features'
units). A subtree no sample can reach (behind a node whose rule is constant) is drawn as one grey, dashed
``unreachable`` box. The models' ``plot()`` and ``to_dot()`` methods are thin calls into this module, and every
``plot()`` returns a :class:`matplotlib.figure.Figure`.

Example::

    >>> from treeopt_dsl.models.decision_tree import DecisionTree
    >>> t = DecisionTree([0, -1, -1], [1.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1],
    ...                  classes=["no", "yes"], feature_names=("age",))
    >>> print(to_dot(decision_tree_graph(t)).splitlines()[4])
      n0 [label="age <= 1.5", fillcolor="#f2f2f2"];
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError, TreeoptError
from treeopt_dsl.numeric import logistic_cdf

__all__ = ["Graph", "GraphNode", "categorical_graph", "decision_tree_graph", "draw", "linear_rule", "linear_rule_lines",
           "plot_score_card", "pyplot", "randomized_graph", "scale_note", "to_dot", "tree_model_graph"]

#: leaf colours by class index (matplotlib's tab10, light)
PALETTE = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d",
           "#9edae5")
INNER = "#f2f2f2"
#: fill of a box no sample can reach
MUTED = "#e6e6e6"
#: the picture's units for oblique rules
UNITS = ("scaled", "raw")


@dataclass
class GraphNode:
    """A box of the picture: its text, whether it is a leaf, the class index that colours a leaf, and whether
    no sample can reach it (``muted``: drawn grey and dashed)."""

    id: str
    label: str
    leaf: bool = False
    klass: int | None = None
    muted: bool = False


@dataclass
class Graph:
    """A rooted tree to draw: ``nodes`` (the root first) and ``edges`` ``(parent, child, label)``, the
    ``yes`` (left) child of a node listed before its ``no`` child."""

    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    title: str = ""

    def add(self, id: str, label: str, leaf: bool = False, klass: int | None = None, muted: bool = False) -> str:
        self.nodes.append(GraphNode(id, label, leaf, klass, muted))
        return id

    def muted_ids(self) -> set[str]:
        return {n.id for n in self.nodes if n.muted}

    def children(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {n.id: [] for n in self.nodes}
        for a, b, _ in self.edges:
            out[a].append(b)
        return out


def pyplot() -> Any:
    """matplotlib.pyplot, or a :class:`~treeopt_dsl.errors.TreeoptError` naming the extra that installs it. The
    backend is matplotlib's own choice (Agg without a display, inline in notebooks): never switched here."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise TreeoptError("plotting needs matplotlib: `pip install treeopt-dsl[plot]`") from None
    return plt


# ---------------------------------------------------------------------------------------------- rules
def _num(v: float, digits: int = 3) -> str:
    return f"{v:.{digits}g}"


def _num_up(v: float) -> str:
    """``v > 0`` rounded *up* to 2 significant digits (a printed bound that holds)."""
    q = 10.0 ** (math.floor(math.log10(v)) - 1)
    return f"{math.ceil(v / q - 1e-9) * q:.2g}"


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


def linear_rule_lines(coef: np.ndarray, const: float, names: Sequence[str], op: str, max_terms: int = 3,
                      zero_tol: float = 0.0, weight: np.ndarray | None = None) -> str:
    """``sum_j coef_j x_j + const  op  0`` one term a line, largest ``|coef_j|`` first, divided by the largest
    (so the first coefficient is ±1), then a line for the terms left out (how many, and the largest of their
    ``|coef|``, so a reader knows they are small) and the right-hand side. ``weight`` (one per feature): order
    the terms by ``|weight_j|`` instead (e.g. raw coefficients ordered by their weight on standardized features;
    the line of the left-out terms then gives their number alone).

    Example::

        >>> print(linear_rule_lines(np.array([0.1, -4.0, 2.0, 0.2]), 2.0, ["a", "b", "c", "d"], "<=", max_terms=2))
        -1 b
        + 0.5 c
        + 2 more, each |coef| <= 0.05
        <= -0.5
    """
    if max_terms < 1:
        raise DataError(f"max_terms must be at least 1, got {max_terms}")
    coef = np.asarray(coef, dtype=float)
    used = np.flatnonzero(np.abs(coef) > zero_tol)
    if used.size == 0:
        return f"0 {op} {_num(-const, 4)}"
    key = np.abs(coef if weight is None else np.asarray(weight, dtype=float))
    order = used[np.argsort(-key[used], kind="stable")]
    k = float(np.abs(coef[used]).max())
    lines = []
    for i, j in enumerate(order[:max_terms]):
        c = coef[j] / k
        sign = ("-" if c < 0 else "") if i == 0 else ("- " if c < 0 else "+ ")
        lines.append(f"{sign}{_num(abs(c))} {names[j]}")
    rest = order[max_terms:]
    if rest.size and weight is None:
        lines.append(f"+ {rest.size} more, each |coef| <= {_num_up(float(np.abs(coef[rest]).max()) / k)}")
    elif rest.size:
        lines.append(f"+ {rest.size} more")
    lines.append(f"{op} {_num(-const / k, 4)}")
    return "\n".join(lines)


def scale_note(scaler: Any) -> str:
    """What the scaled features of an oblique rule are, for a picture's title (``""`` for raw features)."""
    kind = getattr(scaler, "kind", None)
    if kind == "standard":
        return "oblique rules on standardized features (x - mean) / sd, largest coefficient 1"
    if kind == "minmax":
        return "oblique rules on features scaled to [0, 1]: (x - min) / (max - min), largest coefficient 1"
    return ""


def _check_units(units: str) -> None:
    if units not in UNITS:
        raise DataError(f"units must be one of {', '.join(map(repr, UNITS))}, got {units!r}")


# ---------------------------------------------------------------------------------------------- graphs
def _counts_text(counts: np.ndarray | None, classes: Sequence[Any]) -> str:
    if counts is None:
        return ""
    counts = np.asarray(counts)
    if counts.ndim == 0:
        return f"\nn = {int(counts)}"
    return "\n" + " / ".join(f"{c:.4g}" for c in counts) + " (" + " / ".join(str(c) for c in classes) + ")"


def tree_model_graph(model: Any, max_terms: int = 5, X: Any = None, y: Any = None, units: str = "scaled") -> Graph:
    """The :class:`~treeopt_dsl.models.tree.TreeModel` as a :class:`Graph`.

    Branch nodes of the inner levels show when a sample goes left (``yes``); a last-layer node shows when it
    predicts ``classes[0]`` (its ``yes`` leaf) rather than ``classes[1]`` (its ``no`` leaf), or, for a
    multiclass tree, when it sends a sample to its ``yes`` leaf. Oblique rules are printed one term a line on the
    scaled features (``units="scaled"``, the title says which scaling) or the raw ones (``units="raw"``), see
    :func:`linear_rule_lines`. Leaves show their class and the training samples that reach them (``n``; a
    multiclass tree's stored training weight per class), or, with raw ``X`` and labels ``y``, the samples of each
    class (``y`` in the original labels). The side of a constant node (``always 'yes'``) no sample takes is one
    grey ``unreachable`` box.
    """
    _check_units(units)
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
    elif getattr(model, "leaf_samples", None) is not None:  # a lean model: the counts it kept
        leaf_counts = np.asarray(model.leaf_samples)
    rules = {int(t): _tree_node_rule(model, int(t), int(topo.level[t]) == topo.depth, names, cuts, max_terms, units)
             for t in topo.nodes}
    title = f"tree of depth {topo.depth}: a sample goes 'yes' when the node's rule holds"
    oblique = any(np.count_nonzero(np.abs(W[t]) > model.zero_tol) > 1 for t in topo.nodes)
    note = scale_note(sc) if oblique and units == "scaled" and not cuts else ""
    if oblique and units == "raw":
        note = "oblique rules on the raw features, largest coefficient 1"
    g = Graph(title=f"{title}\n{note}" if note else title)
    reach = {0: True}
    for t in topo.nodes:  # parents before children (breadth first)
        t = int(t)
        if not reach[t]:
            continue
        g.add(f"n{t}", rules[t])
        const = _constant_side(model, t, int(topo.level[t]) == topo.depth, cuts)
        sides = [(0, "yes", const is not True), (1, "no", const is not False)]
        if int(topo.level[t]) < topo.depth:
            for side, word, ok in sides:
                child = 2 * t + 1 + side
                reach[child] = ok
                cid = f"n{child}" if ok else g.add(f"u{child}", "unreachable", leaf=True, muted=True)
                g.edges.append((f"n{t}", cid, word))
            continue
        li = int(t - topo.last[0])
        for side, word, ok in sides:
            lid = f"leaf{2 * li + side}"
            if not ok:
                g.add(lid, "unreachable", leaf=True, muted=True)
            else:
                cnt = None if leaf_counts is None else leaf_counts[2 * li + side]
                k = side if codes is None else int(codes[2 * li + side])
                g.add(lid, f"{classes[k]}{_counts_text(cnt, shown)}", leaf=True, klass=k)
            g.edges.append((f"n{t}", lid, word))
    order = {n.id: i for i, n in enumerate(g.nodes)}
    g.edges.sort(key=lambda e: order[e[0]])  # each node's yes edge before its no edge, parents first
    return g


def _constant_side(model: Any, t: int, last: bool, cuts: bool) -> bool | None:
    """``None`` if node ``t``'s rule depends on a feature, else the side every sample takes (``True``: right, 'no')."""
    w, b = model.W[t], model.b[t]
    used = np.flatnonzero(np.abs(w) > model.zero_tol)
    if used.size == 0:
        return bool(model._side(np.array([b]), last)[0])
    if used.size == 1 and cuts:
        s0, s1 = (bool(model._side(np.array([v]), last)[0]) for v in (b, w[int(used[0])] + b))
        return s0 if s0 == s1 else None
    return None


def _tree_node_rule(model: Any, t: int, last: bool, names: list[str], cuts: bool, max_terms: int,
                    units: str = "scaled") -> str:
    """The condition under which node ``t`` sends a sample left (inner) or predicts ``classes[0]`` (last)."""
    w, b = model.W[t], model.b[t]
    used = np.flatnonzero(np.abs(w) > model.zero_tol)
    strict = not last or model.leaf_threshold > 0  # right/positive side: v > thr (strict) or v >= 0
    const_side = _constant_side(model, t, last, cuts)
    if const_side is not None:
        return "always 'no'" if const_side else "always 'yes'"
    if used.size == 1 and cuts:
        j = int(used[0])
        s1 = bool(model._side(np.array([w[j] + b]), last)[0])
        return names[j].replace(" > ", " <= ", 1) if s1 else names[j]
    if used.size == 1:
        j = int(used[0])
        cut = model._printed_cut(t, j, last)
        up = w[j] > 0  # right iff x > cut (or >=); left is the complement
        op = ("<=" if strict else "<") if up else (">=" if strict else ">")
        return f"{names[j]} {op} {cut}"
    thr = (model.leaf_threshold if model.leaf_threshold > 0 else 0.0) if last else model.threshold
    wz = np.where(np.abs(w) > model.zero_tol, w, 0.0)
    op = "<=" if strict else "<"
    if units == "scaled" and not cuts:
        return linear_rule_lines(wz, b - thr, names, op, max_terms=max_terms)
    shift, scale = np.asarray(model.scaler.shift_, float), np.asarray(model.scaler.scale_, float)
    coef = wz / scale
    const = b - float(np.sum(coef * shift)) - thr
    return linear_rule_lines(coef, const, names, op, max_terms=max_terms, weight=None if cuts else wz)


def decision_tree_graph(tree: Any, decimals: int | None = None, X: Any = None, y: Any = None,
                        counts: Any = None) -> Graph:
    """A :class:`~treeopt_dsl.models.decision_tree.DecisionTree` as a :class:`Graph` (``name <= value``; the
    value with ``decimals`` decimals, or 6 significant digits when ``None``).

    Leaves show their class and, like the other trees' pictures, the samples reaching them: ``n = ...`` for
    raw ``X``, per class for ``X`` and labels ``y`` (``y`` in ``tree.classes``), or ``counts`` given per node
    (``(n_nodes,)`` samples, or ``(n_nodes, n_classes)`` training weight per class, as the estimators keep them).
    """
    leaf_counts = None
    if counts is not None:
        leaf_counts = np.asarray(counts, dtype=float)
        if leaf_counts.shape[0] != tree.n_nodes:
            raise DataError(f"counts has {leaf_counts.shape[0]} rows, the tree has {tree.n_nodes} nodes")
    elif X is not None:
        node = tree.apply(X)
        if y is None:
            leaf_counts = np.bincount(node, minlength=tree.n_nodes)
        else:
            codes = np.searchsorted(np.asarray(tree.classes), np.asarray(y))
            codes = np.where(codes < len(tree.classes), codes, 0)
            if not np.array_equal(np.asarray(tree.classes)[codes], np.asarray(y)):
                raise DataError(f"y holds labels that are not the tree's classes {list(tree.classes)}")
            leaf_counts = np.zeros((tree.n_nodes, len(tree.classes)))
            np.add.at(leaf_counts, (node, codes), 1.0)
    g = Graph(title=f"decision tree: depth {tree.depth}, {tree.n_leaves} leaves")
    for v in range(tree.n_nodes):
        if tree.left[v] < 0:
            k = int(tree.value[v])
            cnt = None if leaf_counts is None else leaf_counts[v]
            g.add(f"n{v}", f"{tree.classes[k]}{_counts_text(cnt, tuple(tree.classes))}", leaf=True, klass=k)
        else:
            thr = float(tree.threshold[v])
            text = f"{thr:.{decimals}f}" if decimals is not None else f"{thr:.6g}"
            g.add(f"n{v}", f"{tree._name(int(tree.feature[v]))} <= {text}")
            g.edges += [(f"n{v}", f"n{int(tree.left[v])}", "yes"), (f"n{v}", f"n{int(tree.right[v])}", "no")]
    return g


def categorical_graph(model: Any, wrap: int | None = None) -> Graph:
    """A :class:`~treeopt_dsl.models.categorical.CategoricalTreeModel` ([gunluk-odt-categorical]) as a
    :class:`Graph`: set tests (wrapped at ``wrap`` characters when given), leaves with their class and training
    counts per class; the side of a test that holds for every value (or none) is one grey ``unreachable`` box."""
    shape = model.shape
    g = Graph(title=f"categorical tree (shape {shape.name}): a sample goes 'yes' when its value is in the set")
    stack: list[tuple[str, int]] = [("node", 0)]
    while stack:  # from the root: a subtree behind a constant test is not drawn
        kind, i = stack.pop()
        if kind == "leaf":
            sign = int(model.leaf_sign[i])
            cnt = model.leaf_counts[i] if model.leaf_counts.size else None
            g.add(f"leaf{i}", f"{model.classes[1] if sign > 0 else model.classes[0]}"
                              f"{_counts_text(cnt, model.classes)}", leaf=True, klass=int(sign > 0))
            continue
        text = model.condition(i + 1) + " ?"
        g.add(f"n{i}", textwrap.fill(text, wrap) if wrap else text)
        left = model.left_levels(i + 1)
        lc, rc = shape.children[i]
        for child, word, ok in ((lc, "yes", bool(left.any())), (rc, "no", not bool(left.all()))):
            cid = f"n{child[1]}" if child[0] == "node" else f"leaf{child[1]}"
            if not ok:
                cid = g.add(f"u{cid}", "unreachable", leaf=True, muted=True)
            g.edges.append((f"n{i}", cid, word))
        stack += [c for c, ok in ((rc, not bool(left.all())), (lc, bool(left.any()))) if ok]
    return g


def randomized_graph(model: Any, max_terms: int = 3, units: str = "scaled") -> Graph:
    """A :class:`~treeopt_dsl.models.randomized.RandomizedTreeModel` (S-ORCT [blanquero-2020-sorct]) as a
    :class:`Graph`.

    A node sends ``x`` left (``yes``) with probability ``F(s (u - c))``, ``F`` the logistic CDF: the box shows
    the deterministic rule ``u >= c`` (``u`` the combination of the features divided by its largest coefficient;
    a one-feature rule in the feature's original units, an oblique one one term a line on the scaled features
    with ``units="scaled"``, the title says which, or on the raw ones with ``units="raw"``) and the steepness
    ``s`` in the same units (``inf``: a deterministic split). Leaves show the class probabilities.
    """
    _check_units(units)
    topo, A, mu = model.topology, model.A, model.mu
    p = A.shape[1]
    shift, scale = np.asarray(model.scaler.shift_, float), np.asarray(model.scaler.scale_, float)
    names = list(model.feature_names)
    title = f"randomized tree (S-ORCT), depth {topo.depth}: 'yes' = left with probability F(s (u - c))"
    g = Graph(title=title)
    oblique = False
    for t in topo.nodes:
        a = np.where(np.abs(A[t]) > model.zero_tol, A[t], 0.0)
        coef = a / (p * scale)  # v = coef . x_raw - (mu + coef . shift)
        const = -(float(mu[t]) + float(np.sum(coef * shift)))
        used = np.flatnonzero(coef)
        if used.size == 0:  # no feature: the same probability for every sample

            g.add(f"n{t}", f"no feature: 'yes' w.p. {float(logistic_cdf(np.array(-mu[t]), model.gamma)):.2f}")
            continue
        if used.size > 1 and units == "scaled":  # v = (a / p) . x_scaled - mu
            oblique = True
            coef, const = a / p, -float(mu[t])
            rule = linear_rule_lines(coef, const, names, ">=", max_terms=max_terms)
        elif used.size > 1:
            oblique = True
            rule = linear_rule_lines(coef, const, names, ">=", max_terms=max_terms, weight=a)
        else:
            rule = linear_rule(coef, const, names, ">=", max_terms=max_terms)
        k = float(np.abs(coef[used]).max())
        s = model.gamma * k
        steep = "deterministic" if not np.isfinite(s) else f"steepness s = {_num(s)}"
        g.add(f"n{t}", f"{rule}\n{steep}")
    note = (scale_note(model.scaler) if units == "scaled" else "oblique rules on the raw features") if oblique else ""
    g.title = f"{title}\n{note}" if note else title
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
def _fill(n: GraphNode) -> str:
    if n.muted:
        return MUTED
    return PALETTE[(n.klass or 0) % len(PALETTE)] if n.leaf else INNER


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
    muted = graph.muted_ids()
    for n in graph.nodes:
        color = _fill(n)
        style = ', style="rounded,filled,dashed", fontcolor="#808080"' if n.muted else ""
        lines.append(f"  {n.id} [label={_dot_quote(n.label)}, fillcolor=\"{color}\"{style}];")
    for a, b, lab in graph.edges:
        style = ", style=dashed" if b in muted else ""
        lines.append(f"  {a} -> {b} [label={_dot_quote(lab)}{style}];")
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
    plt = pyplot()
    n_leaves = sum(1 for n in graph.nodes if n.leaf or not graph.children()[n.id])
    if n_leaves > max_leaves:
        raise DataError(f"the tree has {n_leaves} leaves, more than max_leaves={max_leaves}: use text() "
                        "or raise max_leaves")
    x, depth = _layout(graph)
    max_depth = max(depth.values())
    if ax is None:
        widest = max(len(line) for n in graph.nodes for line in n.label.split("\n"))
        tallest = max(n.label.count("\n") + 1 for n in graph.nodes)
        per_leaf = min(3.2, max(1.3, 0.065 * widest))
        per_level = max(1.4, 0.6 + 0.17 * tallest)
        title_w = 0.075 * max((len(line) for line in graph.title.split("\n")), default=0) * (fontsize + 1) / 8
        _, ax = plt.subplots(figsize=(min(40.0, max(4.5, per_leaf * n_leaves, title_w)),
                                      max(2.5, per_level * (max_depth + 1) + 0.3 * graph.title.count("\n"))))
    muted = graph.muted_ids()
    for a, b, lab in graph.edges:
        ax.plot([x[a], x[b]], [-depth[a], -depth[b]], color="0.6", lw=1, zorder=1, ls="--" if b in muted else "-")
        ax.text((x[a] + x[b]) / 2, -(depth[a] + depth[b]) / 2, lab, fontsize=fontsize - 1, color="0.35",
                ha="center", va="center", bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"}, zorder=2)
    for n in graph.nodes:
        box = {"boxstyle": "round,pad=0.3", "fc": _fill(n), "ec": "0.6" if n.muted else "0.3"}
        if n.muted:
            box["ls"] = "--"
        ax.text(x[n.id], -depth[n.id], n.label, ha="center", va="center", fontsize=fontsize, zorder=3,
                multialignment="center" if n.leaf else "left", color="0.45" if n.muted else "black", bbox=box)
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
    plt = pyplot()
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
