"""Fitted categorical decision trees (Günlük et al., [gunluk-odt-categorical]): subset tests on grouped features.

Every decision node tests one original attribute: "is its value in the set ``S``?" (§3, line 67);
a sample with a value in ``S`` goes left. ``S`` reads as set membership in the attribute's
categories ("odor in {almond, anise, none}") or, for a binned numeric attribute whose set is a
run of the lowest / highest bins (§4.4), as a threshold ("age <= 37"). The leaves carry the fixed
labels of the formulation (``B+`` = even leaf labels, the right leaf of every leaf-parent).

The model applies to *raw* rows (the columns the dataset was loaded with, or the estimator's ``X``):
the fitted :class:`~treeopt_dsl.datasets.encoding.GroupEncoder` maps them to the binary features first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from treeopt_dsl.data import pick_labels
from treeopt_dsl.datasets.encoding import NONE_LEVEL, Group, GroupEncoder
from treeopt_dsl.errors import FormulationError
from treeopt_dsl.models.pictures import categorical_graph, draw, to_dot
from treeopt_dsl.topology.shapes import Shape

_TINY = float(np.finfo(float).smallest_normal)


@dataclass
class CategoricalTreeModel:
    """A categorical decision tree of a fixed :class:`~treeopt_dsl.topology.shapes.Shape`.

    ``Z[k, j]`` is 1 when encoded feature ``j`` is in the subset of node ``k`` (the solver's ``z``,
    rounded); ``node_group[k]`` is the group tested (the solver's ``v``). ``leaf_counts[b]`` are the
    training samples of class -1 and +1 that reach leaf ``b``.
    """

    shape: Shape
    encoder: GroupEncoder
    Z: np.ndarray
    node_group: np.ndarray
    classes: tuple[Any, Any]
    leaf_counts: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))

    # ---------------------------------------------------------------- evaluation
    def goes_left(self, X: Any) -> np.ndarray:
        """``L(i, k)`` (3) on raw rows: (sample, node) bool."""
        A = self.encoder.transform_X(X)
        return (A @ self.Z.T) > 0.5

    def apply(self, X: Any) -> np.ndarray:
        """Leaf position (0-based) reached by every raw row."""
        return self.shape.route(self.goes_left(X))

    def apply_encoded(self, A: np.ndarray) -> np.ndarray:
        """Leaf position reached by rows of the binary encoding (the training data the model was built on)."""
        return self.shape.route((np.asarray(A, dtype=float) @ self.Z.T) > 0.5)

    @property
    def leaf_sign(self) -> np.ndarray:
        return self.shape.leaf_sign

    def leaf_proba(self) -> np.ndarray:
        """``P(+1)`` per leaf: the Laplace-smoothed share of positive training samples in the leaf, clipped
        to the leaf's side of 1/2 so that the probabilities agree with the leaf's fixed label."""
        n_neg, n_pos = self.leaf_counts[:, 0], self.leaf_counts[:, 1]
        p = (n_pos + 1.0) / (n_neg + n_pos + 2.0)
        half_up = float(np.nextafter(0.5, 1.0))
        half_down = float(np.nextafter(0.5, 0.0))
        return np.where(self.leaf_sign > 0, np.maximum(p, half_up), np.minimum(p, half_down))

    def decision_function(self, X: Any) -> np.ndarray:
        """Log-odds of :meth:`leaf_proba` at the reached leaf: ``> 0`` exactly when the leaf predicts +1."""
        p = self.leaf_proba()
        score = np.log(p) - np.log1p(-p)
        score = np.where(self.leaf_sign > 0, np.maximum(score, _TINY), np.minimum(score, -_TINY))
        return score[self.apply(X)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Columns ``[P(classes[0]), P(classes[1])]`` (see :meth:`leaf_proba`)."""
        p = self.leaf_proba()[self.apply(X)]
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        """The leaf label of every raw row, in the original class labels."""
        pos = self.leaf_sign[self.apply(X)] > 0
        return pick_labels(self.classes, pos)

    # ---------------------------------------------------------------- explanation
    def left_levels(self, node: int) -> np.ndarray:
        """Bool over the levels of the tested group: the subset ``S`` of node ``node`` (a label, 1-based)."""
        k = node - 1
        g = int(self.node_group[k])
        start = int(self.encoder.offsets[g])
        return self.Z[k, start:start + len(self.encoder.groups_[g].levels)] > 0.5

    def condition(self, node: int) -> str:
        """The test of ``node`` as text; a sample for which it holds goes left ("yes")."""
        return subset_condition(self.encoder.groups_[int(self.node_group[node - 1])], self.left_levels(node))

    def _leaf_text(self, b: int) -> str:
        sign = int(self.leaf_sign[b])
        cls = self.classes[1] if sign > 0 else self.classes[0]
        n_neg, n_pos = (int(v) for v in self.leaf_counts[b]) if self.leaf_counts.size else (0, 0)
        return (f"leaf {b + 1}: predict {cls!r} ({sign:+d})   [train: {n_neg} x {self.classes[0]!r}, "
                f"{n_pos} x {self.classes[1]!r}]")

    def text(self) -> str:
        """The tree as indented text: each node's test, then its yes (left) and no (right) branches."""
        lines: list[str] = []

        def walk(child: tuple[str, int], pad: str, edge: str) -> None:
            kind, i = child
            if kind == "leaf":
                lines.append(f"{pad}{edge}{self._leaf_text(i)}")
                return
            lines.append(f"{pad}{edge}node {i + 1}: {self.condition(i + 1)} ?")
            lc, rc = self.shape.children[i]
            walk(lc, pad + "    ", "yes -> ")
            walk(rc, pad + "    ", "no  -> ")

        walk(("node", 0), "", "")
        lines.append(f"(shape {self.shape.name}; a sample whose value is in the set goes to 'yes' (left); "
                     f"classes: -1 = {self.classes[0]!r}, +1 = {self.classes[1]!r})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def plot(self, ax: Any = None, fontsize: float = 8.0, wrap: int = 28) -> Any:
        """Draw the tree like the paper's Figure 4 (tests in boxes wrapped at ``wrap`` characters, yes/no edges,
        leaves by class with their training counts per class) with
        :func:`~treeopt_dsl.models.pictures.draw`, as the other models' ``plot()``.

        Needs matplotlib (``pip install treeopt-dsl[plot]``). Returns the matplotlib figure.

        Example::

            >>> model.plot().savefig("categorical.png")  # doctest: +SKIP
        """
        return draw(categorical_graph(self, wrap=wrap), ax=ax, fontsize=fontsize)

    def to_dot(self) -> str:
        """The tree as Graphviz DOT text: set tests (``yes`` = left), leaves with class and training counts."""
        return to_dot(categorical_graph(self), name="categorical_tree")


def subset_condition(g: Group, left: np.ndarray) -> str:
    """The test "is the value of group ``g`` in the levels ``left`` (bool over its levels)?" as text: a threshold
    for a run of an ordinal group's lowest or highest levels, else the shorter of "in {...}" / "not in {...}"."""
    if left.all():
        return f"{g.name}: any value (every training sample goes left)"
    if not left.any():
        return f"{g.name}: no value (every sample goes right)"
    rule = g.threshold_text(left)
    if rule is not None:
        if g.exact and len(g.levels) == 2:
            return f"{g.name} = {g.levels[int(np.argmax(left))]}"
        return rule
    levels = np.array(g.levels, dtype=object)
    if left.sum() <= (~left).sum() or NONE_LEVEL in levels[~left]:
        return f"{g.name} in {{{', '.join(map(str, levels[left]))}}}"
    return f"{g.name} not in {{{', '.join(map(str, levels[~left]))}}}"


def decode_categorical_tree(ctx: Any, x: np.ndarray) -> CategoricalTreeModel:
    """Read ``(v, z)`` from a solution: the group of each node is ``argmax_g v[k, g]`` and its subset the
    levels of that group with ``z > 1/2`` (with ``z <= v`` (2) and Proposition 1 no other ``z`` matters)."""
    shape = ctx.topology
    enc = ctx.data.meta.get("encoder")
    if not isinstance(enc, GroupEncoder):
        raise FormulationError("decoding a categorical tree needs the GroupEncoder in data.meta['encoder'] "
                               "(build through the odt_categorical formulation or encode_groups)")
    V = ctx["v"].values(x)
    Zall = ctx["subset"].evaluate(x) > 0.5
    group = np.argmax(V, axis=1)
    Z = np.zeros(Zall.shape)
    g_of = enc.group_of
    Z[g_of[None, :] == group[:, None]] = 1.0
    Z *= Zall  # keep the chosen group's levels only
    model = CategoricalTreeModel(shape, enc, Z, group, ctx.data.classes)
    leaf = model.apply_encoded(ctx.data.X)
    y = ctx.data.y
    counts = np.zeros((shape.n_leaves, 2))
    np.add.at(counts, (leaf, (y > 0).astype(int)), 1.0)
    model.leaf_counts = counts
    return model
