"""Fitted oblique/axis-aligned trees whose branch nodes are linear classifiers (thesis §3.2)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from treeopt_dsl.data import Scaler, pick_labels
from treeopt_dsl.errors import DataError, FormulationError
from treeopt_dsl.models.pictures import draw, to_dot, tree_model_graph
from treeopt_dsl.numeric import hyperplane_scores, sigmoid
from treeopt_dsl.topology import Topology


def units_note(scaler: Any) -> str:
    """What the features of a tree's printed rules are, from the scaler the model was fitted with (its ``kind``).

    >>> from treeopt_dsl.data import Scaler
    >>> units_note(Scaler("minmax"))
    'oblique terms use features min-max scaled to [0, 1]: (x - min) / (max - min)'
    >>> units_note(None)
    'oblique terms use the raw features'
    """
    kind = getattr(scaler, "kind", None)
    if kind == "cuts":
        return "splits test threshold columns [x > c] of the raw features"
    if kind == "standard":
        return "oblique terms use standardized features (x - mean) / sd"
    if kind == "minmax":
        return "oblique terms use features min-max scaled to [0, 1]: (x - min) / (max - min)"
    if kind in (None, "none"):
        return "oblique terms use the raw features"
    return f"oblique terms use the features scaled by {kind!r}"


@dataclass
class TreeModel:
    """A balanced tree of depth ``d`` with a hyperplane ``(w_t, b_t)`` at every branch node.

    A sample goes right at node ``t`` iff ``w_t·x + b_t > threshold`` (``eps / 2``: see
    :class:`~treeopt_dsl.blocks.BigMForwarding`); the last-layer node it reaches classifies it by the
    sign of its score, and ``predict_proba`` is the sigmoid of that score (the calibrated reading of
    the thesis, [aldinucci-thesis-2024] lines 585-606). Coefficients act on *scaled* features; ``scaler`` maps
    raw inputs, and :meth:`text` prints thresholds in original units for axis-aligned nodes.

    **More than two classes** (OCT's leaf classes, docs/multiclass.md): ``leaf_classes[l]`` is the class code
    (into ``classes``) of leaf ``l = 2j + side``, the ``side`` (0 left, 1 right: ``v > leaf_threshold``) of the
    ``j``-th last-level node; ``leaf_counts[l, k]`` the training weight of class ``k`` in leaf ``l``
    (``predict_proba``). ``None`` for binary trees, which classify by the sign of the last-level score.
    """

    topology: Topology
    W: np.ndarray  # node x feature (scaled space)
    b: np.ndarray  # node
    feature_names: tuple[str, ...]
    classes: tuple[Any, Any]
    scaler: Scaler
    threshold: float = 0.0
    leaf_threshold: float = 0.0  # 0: s(v) >= 0.5 (logistic, hinge); eps/2 for the 0-1 loss (3.9)
    X_train: np.ndarray | None = field(default=None, repr=False)  # scaled, for feature influence
    zero_tol: float = 1e-7
    leaf_classes: np.ndarray | None = None  # K > 2: class code per leaf 2j + side
    leaf_counts: np.ndarray | None = field(default=None, repr=False)  # K > 2: training weight per (leaf, class)
    #: the printed cut of every one-feature node, kept by :meth:`lean` when it drops ``X_train`` (the training
    #: values choose its digits: :meth:`_printed_cut`)
    cut_text: dict[tuple[int, int], str] | None = field(default=None, repr=False)
    #: the training samples reaching each leaf ``2j + side``, kept by :meth:`lean` (the picture's ``n = ...``)
    leaf_samples: np.ndarray | None = field(default=None, repr=False)

    # ---------------------------------------------------------------- evaluation
    def _scaled(self, X: Any) -> np.ndarray:
        Xs = self.scaler.transform(X)
        if Xs.shape[1] != self.W.shape[1]:
            raise DataError(f"X has {Xs.shape[1]} features, the tree was fitted on {self.W.shape[1]}")
        return Xs

    def scores(self, X: Any, scaled: bool = False) -> np.ndarray:
        """``w_t·x + b_t`` for every sample and node (sample x node)."""
        Xs = np.asarray(X, dtype=float) if scaled else self._scaled(X)
        return hyperplane_scores(Xs, self.W, self.b)

    def apply(self, X: Any, scaled: bool = False) -> np.ndarray:
        """Index into the last layer ``T_d`` of the node each sample reaches."""
        return self.topology.route(self.scores(X, scaled) > self.threshold)

    def decision_function(self, X: Any, scaled: bool = False) -> np.ndarray:
        v = self.scores(X, scaled)
        last = self.topology.last[self.topology.route(v > self.threshold)]
        return v[np.arange(v.shape[0]), last]

    @property
    def multiclass(self) -> bool:
        """Whether the leaves hold one of ``K > 2`` classes (``leaf_classes``)."""
        return self.leaf_classes is not None

    def leaf(self, X: Any, scaled: bool = False) -> np.ndarray:
        """The leaf ``2j + side`` each sample reaches (``j``: its last-level node, ``side``: 1 iff its score there
        exceeds ``leaf_threshold``, the rule of :meth:`predict`)."""
        v = self.scores(X, scaled)
        j = self.topology.route(v > self.threshold)
        at = v[np.arange(v.shape[0]), self.topology.last[j]]
        side = at > self.leaf_threshold if self.leaf_threshold > 0 else at >= 0.0
        return 2 * j + side.astype(np.int64)

    def predict_codes(self, X: Any, scaled: bool = False) -> np.ndarray:
        """Class codes ``0..K-1`` (positions in ``classes``) of the samples."""
        if self.leaf_classes is None:
            s = self.decision_function(X, scaled)
            return (s > self.leaf_threshold if self.leaf_threshold > 0 else s >= 0.0).astype(np.int64)
        return np.asarray(self.leaf_classes, dtype=np.int64)[self.leaf(X, scaled)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Columns ``[P(classes[0]), P(classes[1])]``; ``P(+1) = sigmoid(score at the reached node)``.
        ``K > 2``: the Laplace-smoothed class shares of the training weight in the reached leaf, one-hot on the
        leaf's class where those shares would rank another class first (so ``argmax`` agrees with ``predict``)."""
        if self.leaf_classes is not None:
            K = len(self.classes)
            counts = (np.zeros((len(self.leaf_classes), K)) if self.leaf_counts is None
                      else np.asarray(self.leaf_counts, dtype=float))
            P = (counts + 1.0) / (counts.sum(1, keepdims=True) + K)
            own = np.asarray(self.leaf_classes, dtype=np.int64)
            bad = np.argmax(P, axis=1) != own
            P[bad] = np.eye(K)[own[bad]]
            return P[self.leaf(X)]
        p = sigmoid(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        if self.leaf_classes is not None:
            return np.asarray(self.classes)[self.predict_codes(X)]
        score = self.decision_function(X)
        pos = score > self.leaf_threshold if self.leaf_threshold > 0 else score >= 0.0  # s(v) >= 0.5, line 589
        return pick_labels(self.classes, pos)

    def decision_path(self, X: Any) -> np.ndarray:
        """Boolean (sample x node) matrix: node ``t`` lies on the sample's path."""
        last = self.apply(X)
        path = self.topology.path_nodes(last)
        out = np.zeros((path.shape[0], self.topology.n_nodes), dtype=bool)
        out[np.arange(path.shape[0])[:, None], path] = True
        return out

    # ---------------------------------------------------------------- explanation
    def feature_influence(self, X: Any | None = None) -> np.ndarray:
        """``r[t, j] = w_jt * sigma_jt`` ([aldinucci-thesis-2024] lines 567-583): sigma is the standard deviation of
        feature ``j`` over the (training) samples that pass through node ``t``; 0 where none do."""
        Xs = self.X_train if X is None else self._scaled(X)
        if Xs is None:
            raise DataError("no training data stored; pass X")
        on = self.decision_path(Xs * self.scaler.scale_ + self.scaler.shift_)
        r = np.zeros_like(self.W)
        for t in range(self.topology.n_nodes):  # one numpy op per node (at most 2^d - 1)
            rows = Xs[on[:, t]]
            if rows.shape[0]:
                r[t] = self.W[t] * rows.std(0)
        return r

    def n_features_used(self) -> np.ndarray:
        return (np.abs(self.W) > self.zero_tol).sum(1)

    def is_axis_aligned(self) -> bool:
        return bool(np.all(self.n_features_used() <= 1))

    def text(self, max_terms: int = 6) -> str:
        """A readable rendering: one line per node, the largest coefficients first."""
        lines = []
        for t in self.topology.nodes:
            h = int(self.topology.level[t])
            pad = "  " * (h - 1)
            w, b = self.W[t], self.b[t]
            used = np.flatnonzero(np.abs(w) > self.zero_tol)
            last = h == self.topology.depth
            role = "predict +1 if" if last else "go right if"
            if last and self.leaf_classes is not None:
                j = int(np.searchsorted(self.topology.last, t))
                lo, hi = (self.classes[int(self.leaf_classes[2 * j + s])] for s in (0, 1))
                role = f"predict {hi!r} (else {lo!r}) if"
            if used.size == 0:  # no feature: say what the node always does (as predict decides)
                right = bool(self._side(np.array([b]), last)[0])
                does = (f"predict {self._label(t, right)}" if last else f"go {'right' if right else 'left'}")
                lines.append(f"{pad}node {t} [level {h}]: {does} always  (constant score {b:+.4g})")
                continue
            if used.size == 1 and getattr(self.scaler, "kind", None) == "cuts":  # a 0/1 column [x > c]
                j = used[0]
                s0, s1 = (bool(self._side(np.array([v]), last)[0]) for v in (b, w[j] + b))
                if s0 == s1:  # both values of the column on one side: the node is constant
                    does = (f"predict {self._label(t, s0)}" if last else f"go {'right' if s0 else 'left'}")
                    lines.append(f"{pad}node {t} [level {h}]: {does} always")
                    continue
                cond = self.feature_names[j] if s1 else f"not ({self.feature_names[j]})"
            elif used.size == 1:
                j = used[0]
                strict = not last or self.leaf_threshold > 0  # predict uses s(v) >= 0.5 for logistic/hinge
                op = ('>' if w[j] > 0 else '<') + ('' if strict else '=')
                cond = f"{self.feature_names[j]} {op} {self._printed_cut(t, j, last)}"
            else:
                order = used[np.argsort(-np.abs(w[used]))]
                terms = " ".join(f"{w[j]:+.3g}*{self.feature_names[j]}" for j in order[:max_terms])
                more = f" ... ({used.size - max_terms} more)" if used.size > max_terms else ""
                cond = f"{terms}{more} {b:+.3g} > 0"
            lines.append(f"{pad}node {t} [level {h}]: {role} {cond}")
        units = units_note(self.scaler)
        if self.leaf_classes is not None:
            lines.append(f"(classes: {', '.join(repr(c) for c in self.classes)}; {units})")
        else:
            lines.append(f"(classes: -1 = {self.classes[0]!r}, +1 = {self.classes[1]!r}; {units})")
        return "\n".join(lines)

    def _label(self, t: int, right: bool) -> str:
        """What a constant last-level node ``t`` predicts: ``+1``/``-1``, or its leaf's class (``K > 2``)."""
        if self.leaf_classes is None:
            return "+1" if right else "-1"
        j = int(np.searchsorted(self.topology.last, t))
        return repr(self.classes[int(self.leaf_classes[2 * j + int(right)])])

    def _side(self, v: np.ndarray, last: bool) -> np.ndarray:
        """The model's rule on scores ``v``: right at inner nodes, +1 at the last layer (as ``predict``)."""
        if last:
            return v > self.leaf_threshold if self.leaf_threshold > 0 else v >= 0.0
        return v > self.threshold

    def _printed_cut(self, t: int, j: int, last: bool) -> str:
        """The threshold of a one-feature node in raw units, as text: the exact cut
        ``x_j = shift + scale (thr - b) / w`` with the fewest significant digits (at least 6) that keep
        every training sample on the side the model puts it (">"/"<" strictly; ">="/"<=" at a last-layer
        node whose rule is ``v >= 0``).
        (3.7b) puts training samples at ``v = eps`` from the hyperplane, a hair from the cut in raw
        units, so plain rounding could print a rule that disagrees with the model on them."""
        if self.X_train is None and self.cut_text is not None and (t, j) in self.cut_text:
            return self.cut_text[(t, j)]
        w, b = self.W[t, j], self.b[t]
        shift, scale = self.scaler.shift_[j], self.scaler.scale_[j]
        thr = (self.leaf_threshold if self.leaf_threshold > 0 else 0.0) if last else self.threshold
        cut = shift + scale * (thr - b) / w
        if self.X_train is None:
            return f"{cut:.6g}"
        xs = self.X_train[:, j]
        side = self._side(w * xs + b, last)  # a one-feature node: v = w x_scaled + b
        raw = xs * scale + shift
        up = w > 0  # "x > theta" when w > 0, "x < theta" when w < 0
        strict = not last or self.leaf_threshold > 0

        def agrees(theta: float) -> bool:
            if strict:
                return bool(np.array_equal(raw > theta if up else raw < theta, side))
            return bool(np.array_equal(raw >= theta if up else raw <= theta, side))

        mids = [cut]
        if side.any() and (~side).any():
            lo, hi = (raw[~side].max(), raw[side].min()) if up else (raw[side].max(), raw[~side].min())
            mids.append(0.5 * (lo + hi))
        for digits in range(6, 18):
            for c in mids:
                text = f"{c:.{digits}g}"
                if agrees(float(text)):
                    return text
        return repr(float(cut))

    def __str__(self) -> str:
        return self.text()

    def lean(self) -> TreeModel:
        """A copy without the training data: no ``X_train`` (the scaled training matrix), no 0/1 training columns in
        a cut scaler; the printed cuts are kept (``cut_text``), so :meth:`predict`, :meth:`text` and :meth:`plot`
        give what they gave (the training samples per leaf are kept in ``leaf_samples``; multiclass trees keep
        ``leaf_counts``). What a pickled estimator keeps by default (``keep_model=False``).

        Example::

            >>> model.lean().X_train is None  # doctest: +SKIP
            True
        """
        texts = dict(self.cut_text or {})
        if self.X_train is not None and getattr(self.scaler, "kind", None) != "cuts":
            for t in self.topology.nodes:
                used = np.flatnonzero(np.abs(self.W[t]) > self.zero_tol)
                if used.size == 1:
                    j, last = int(used[0]), int(self.topology.level[t]) == self.topology.depth
                    texts[(int(t), j)] = self._printed_cut(int(t), j, last)
        scaler = self.scaler
        bz = getattr(scaler, "bz", None)
        if bz is not None and getattr(bz, "Z", None) is not None and bz.Z.shape[0]:
            scaler = copy.copy(scaler)
            scaler.bz = replace(bz, Z=np.zeros((0, bz.Z.shape[1]), dtype=bz.Z.dtype))
        samples = self.leaf_samples
        if self.X_train is not None:
            samples = np.bincount(self.leaf(self.X_train, scaled=True), minlength=2 * self.topology.last.size)
        return replace(self, X_train=None, scaler=scaler, cut_text=texts or None, leaf_samples=samples)

    # ---------------------------------------------------------------- pictures (treeopt_dsl.models.pictures)
    def plot(self, ax: Any = None, max_terms: int = 5, X: Any = None, y: Any = None, fontsize: float = 7.0,
             units: str = "scaled") -> Any:
        """Draw the tree with matplotlib (``pip install treeopt-dsl[plot]``); returns the figure.

        One-feature rules in the feature's original units (``name <= value``); oblique rules one term a line, the
        ``max_terms`` largest, on the scaled features the model uses (``units="scaled"``: a coefficient says how
        much its feature matters; the title names the scaling) or on the raw features (``units="raw"``). Leaves
        show their class and the training samples reaching them (per class when raw ``X`` and labels ``y`` are
        given); the side of a constant node no sample takes is a grey ``unreachable`` box. See
        :func:`treeopt_dsl.models.pictures.tree_model_graph`.

        Example::

            >>> model.plot().savefig("tree.png")  # doctest: +SKIP
        """
        return draw(tree_model_graph(self, max_terms, X, y, units), ax=ax, fontsize=fontsize)

    def to_dot(self, max_terms: int = 5, X: Any = None, y: Any = None, units: str = "scaled") -> str:
        """The tree as Graphviz DOT text (the boxes of :meth:`plot`; render with ``dot -Tpng``).

        Example::

            >>> open("tree.dot", "w").write(model.to_dot())  # doctest: +SKIP
        """
        return to_dot(tree_model_graph(self, max_terms, X, y, units))


def decode_tree(ctx: Any, x: np.ndarray, scaler: Scaler | None = None) -> TreeModel:
    """Read ``w`` and ``b`` from a solution into a :class:`TreeModel` (tiny values set to 0)."""
    loss = ctx.roles.get("loss")
    leaf = float(loss.leaf_threshold(ctx)) if hasattr(loss, "leaf_threshold") else 0.0
    classes = None
    if ctx.data.n_classes > 2 and "leaf_class" in ctx.roles:  # OCT's leaf classes (K > 2)
        classes = np.argmax(ctx["leaf_class"].values(x), axis=1).astype(np.int64)
    return tree_of(ctx, ctx["w"].values(x), ctx["b"].values(x), leaf, classes, scaler)


def tree_of(ctx: Any, W: np.ndarray, b: np.ndarray, leaf_threshold: float, leaf_classes: np.ndarray | None = None,
            scaler: Scaler | None = None) -> TreeModel:
    """The :class:`TreeModel` of hyperplanes ``(W, b)`` on ``ctx``'s data, topology and eps (tiny values of ``W``
    set to 0); ``leaf_classes`` (``K > 2``) gets the training weight of every class per leaf."""
    W = np.array(W, dtype=float)
    W[np.abs(W) < 1e-9] = 0.0
    sc = scaler or ctx.data.meta.get("scaler") or Scaler("none").fit(ctx.data.X)
    tree = TreeModel(ctx.topo, W, np.array(b, dtype=float), ctx.data.feature_names, ctx.data.classes, sc,
                     threshold=ctx.numerics.eps / 2, leaf_threshold=leaf_threshold, X_train=ctx.data.X)
    if leaf_classes is not None:
        tree.leaf_classes = np.asarray(leaf_classes, dtype=np.int64)
        at = tree.leaf(ctx.data.X, scaled=True)
        counts = np.zeros((tree.leaf_classes.size, ctx.data.n_classes))
        np.add.at(counts, (at, ctx.data.class_index), ctx.data.weights)
        tree.leaf_counts = counts
    return tree


def decode_flow_tree(ctx: Any, x: np.ndarray) -> TreeModel:
    """The tree of ``b`` and ``c`` as the library's :class:`~treeopt_dsl.models.tree.TreeModel` on the 0/1
    columns: a node testing ``f`` is the hyperplane ``x_f - 1/2`` (right iff ``x_f = 1``), a node testing
    nothing is ``-1/2`` (all left); a last-level node classifies by ``±(x_f - 1/2)`` when its leaves differ,
    by the constant ``±1/2`` when they agree."""
    topo = ctx.topo
    S = np.round(ctx["select"].values(x))
    cls = np.round(ctx["leaf_class"].values(x))
    label = np.where(cls[:, 1] > 0.5, 1.0, -1.0)  # leaf x: +1 or -1
    W = np.zeros_like(S, dtype=float)
    b = np.full(topo.n_nodes, -0.5)
    for t in topo.nodes:
        f = np.flatnonzero(S[t] > 0.5)
        if topo.level[t] < topo.depth:
            if f.size:
                W[t, f[0]] = 1.0
            continue
        lo, hi = label[2 * t + 1 - topo.n_nodes], label[2 * t + 2 - topo.n_nodes]
        if f.size == 0 or lo == hi:
            b[t] = 0.5 * lo
        else:
            W[t, f[0]] = hi  # +1: predict +1 iff x_f = 1
            b[t] = -0.5 * hi
    sc = ctx.data.meta.get("scaler") or Scaler("none").fit(ctx.data.X)
    return TreeModel(topo, W, b, ctx.data.feature_names, ctx.data.classes, sc, threshold=0.0, leaf_threshold=0.0,
                     X_train=ctx.data.X)


def flow_decisions(topo: Topology, W: np.ndarray, b: np.ndarray, threshold: float,
                   leaf_threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """``(select, leaf_class)`` of an axis-aligned hyperplane tree ``(W, b)`` on 0/1 columns (a start for the
    flow routings): a node whose one feature sends ``x_f = 0`` right and ``x_f = 1`` left has its subtrees
    swapped; a node that sends every sample one way tests nothing, with that way's subtree moved to the left
    (the flow layout sends untested samples left). Predictions on 0/1 inputs are unchanged."""
    p = W.shape[1]
    S = np.zeros((topo.n_nodes, p))
    C = np.zeros((topo.n_leaves, 2))
    C[:, 0] = 1.0  # unreachable leaves predict -1

    def feature(t: int) -> int | None:
        nz = np.flatnonzero(np.abs(W[t]) > 0)
        if nz.size > 1:
            raise FormulationError(f"node {t} of the start tests {nz.size} features; flow routing takes one")
        return int(nz[0]) if nz.size else None

    def place(src: int, dst: int, h: int) -> None:
        f = feature(src)
        v0 = b[src]
        v1 = b[src] + (W[src, f] if f is not None else 0.0)
        if h == topo.depth:
            c0, c1 = (1 if v0 > leaf_threshold else 0), (1 if v1 > leaf_threshold else 0)
            lo, hi = 2 * dst + 1 - topo.n_nodes, 2 * dst + 2 - topo.n_nodes
            C[lo] = C[hi] = 0.0
            if f is not None and c0 != c1:
                S[dst, f] = 1.0
                C[lo, c0] = C[hi, c1] = 1.0
            else:
                C[lo, c0] = C[hi, c0] = 1.0
            return
        r0, r1 = v0 > threshold, v1 > threshold
        if f is not None and r0 != r1:
            S[dst, f] = 1.0
            first, second = (2 * src + 1, 2 * src + 2) if not r0 else (2 * src + 2, 2 * src + 1)
            place(first, 2 * dst + 1, h + 1)
            place(second, 2 * dst + 2, h + 1)
        else:  # everything goes one way: that subtree on the left, the right one unreachable (tests nothing)
            place(2 * src + 1 + int(r0), 2 * dst + 1, h + 1)

    place(0, 0, 1)
    return S, C


#: offset of a constant split's bias from the node's threshold (``W[t] = 0``)
CONSTANT_OFFSET = 1.0


def constant_subtree(b: np.ndarray, topo: Topology, t: int, positive: bool, threshold: float,
                     leaf_threshold: float) -> None:
    """Make the subtree of node ``t`` predict one class (``W`` rows of the subtree must be zero): every inner
    node sends everything left, every last-layer node is a constant of that class. The library's form of
    a leaf above the last layer (CART's early leaves, TMO's leaves)."""
    stack = [t]
    while stack:
        s = stack.pop()
        if topo.level[s] == topo.depth:
            b[s] = leaf_threshold + (CONSTANT_OFFSET if positive else -CONSTANT_OFFSET)
            continue
        b[s] = threshold - CONSTANT_OFFSET
        stack += [2 * s + 1, 2 * s + 2]
