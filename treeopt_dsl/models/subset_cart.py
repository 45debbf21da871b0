"""CART as rpart grows it on categorical attributes: a node sends a *subset* of one attribute's levels left.

Günlük et al.'s CART-D3 column (seed 002 line 394: "CART as implemented in the package rpart for R ... the maximum
depth of the learned CART trees to 3") is rpart, which branches a factor on any subset of its levels, where
scikit-learn's CART on the one-hot columns tests one level against the rest. :func:`fit_subset_cart` grows that
tree on the groups of :class:`~treeopt_dsl.datasets.encoding.GroupEncoder` (the categorical trees' encoding: the same
attributes, levels and numeric bins, §4.4) with rpart's rules and defaults:

* **the split** of a node maximizes the decrease of the Gini impurity ``n I = 2 n_+ n_- / n`` summed over the two
  sides. For two classes the best subset of a nominal attribute's levels is a prefix of the levels ordered by their
  positive share (Breiman et al. 1984, Theorem 4.5; the rule rpart applies), so ``L - 1`` candidates per attribute
  are scored at once with cumulative sums; an ordinal group (a binned numeric column) splits at a threshold: a
  prefix of its levels in their order. Ties go to the first attribute, then the shortest prefix.
* **stopping**: ``max_depth``; a node with fewer than ``min_split`` rows is not split (rpart's ``minsplit``, 20),
  nor into a side of fewer than ``min_leaf`` rows (``minbucket``, ``round(minsplit / 3)`` = 7).
* **pruning** at the complexity parameter ``cp`` (rpart's 0.01) in the misclassification cost,
  :func:`~treeopt_dsl.models.sklearn_tree.cp_splits` (a split that does not lower the misclassified rows goes,
  as in rpart, even at ``cp = 0``; ``cp = None`` prunes nothing).

A level that no training row at a node has goes right there (the side of "not in S"), as a level unseen in
training does (``-1``), the convention of :class:`~treeopt_dsl.models.categorical.CategoricalTreeModel`; rpart
sends such rows with the node's majority. Binary classification only (the paper's setting).

    >>> import numpy as np
    >>> from treeopt_dsl.data import Dataset
    >>> colour = np.array([0, 1, 2, 3] * 10, dtype=float)          # four categories, coded 0..3
    >>> y = np.where(np.isin(colour, (0, 2)), 1, -1)                # classes by the subset {0, 2}
    >>> d = Dataset.from_arrays(colour[:, None], y, feature_names=("colour",))
    >>> tree = fit_subset_cart(d, max_depth=1, categorical=(0,))
    >>> print(tree.text().splitlines()[0]); float(np.mean(tree.predict(d.X) == d.labels_of(d.y)))
    node 1: colour in {1, 3} ?
    1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from treeopt_dsl.data import Dataset, pick_labels
from treeopt_dsl.datasets.encoding import GroupEncoder
from treeopt_dsl.errors import DataError, OptionError
from treeopt_dsl.models.categorical import subset_condition
from treeopt_dsl.models.pictures import Graph, draw, to_dot
from treeopt_dsl.models.sklearn_tree import cp_splits, kept_nodes

#: rpart's defaults (rpart.control): minsplit, minbucket = round(minsplit / 3), cp
RPART_MIN_SPLIT, RPART_MIN_LEAF, RPART_CP = 20, 7, 0.01
#: rpart's largest ``maxdepth`` (its default: 30)
RPART_MAX_DEPTH = 30


@dataclass
class SubsetTree:
    """A fitted binary tree whose node ``i`` sends the rows with a level of group ``group[i]`` in ``subset[i]`` left.

    ``left`` / ``right``: the children (``-1`` at a leaf), nodes numbered depth first (a child after its parent);
    ``counts[i]``: the training rows (their weights) of class -1 and +1 at node ``i``; ``classes``: the labels of -1
    and +1.
    """

    encoder: GroupEncoder
    left: np.ndarray
    right: np.ndarray
    group: np.ndarray
    subset: list[np.ndarray]
    counts: np.ndarray
    classes: tuple[Any, Any]

    def apply(self, X: Any) -> np.ndarray:
        """The leaf (node number) every raw row reaches: all rows move down one level per step (``depth`` steps)."""
        lev = self.encoder.levels(np.asarray(X, dtype=float))
        # goes_left[i, c]: level c of node i's group is in subset[i]; the last column (code -1, unseen) is False
        goes_left = np.zeros((self.left.size, max(s.size for s in self.subset) + 1), dtype=bool)
        for i, s in enumerate(self.subset):
            goes_left[i, :s.size] = s
        node = np.zeros(lev.shape[0], dtype=np.intp)
        rows = np.arange(lev.shape[0])
        while rows.size:
            rows = rows[self.left[node[rows]] >= 0]
            at = node[rows]
            node[rows] = np.where(goes_left[at, lev[rows, self.group[at]]], self.left[at], self.right[at])
        return node

    def predict_proba(self, X: Any) -> np.ndarray:
        """The training share of class -1 and +1 at each row's leaf (columns in the order of ``classes``)."""
        c = self.counts[self.apply(X)]
        return c / c.sum(1, keepdims=True)

    def predict(self, X: Any) -> np.ndarray:
        """The leaf's majority class (a tie: the first class, ``classes[0]``), in the original labels."""
        c = self.counts[self.apply(X)]
        return pick_labels(self.classes, c[:, 1] > c[:, 0])

    def get_n_leaves(self) -> int:
        return int(np.sum(self.left < 0))

    def groups_at(self, cp: float) -> np.ndarray:
        """The groups (sorted) the tree pruned at rpart's complexity parameter ``cp`` still branches on
        (:func:`~treeopt_dsl.models.sklearn_tree.cp_splits` on its own nodes; a tree grown with ``cp = None`` has
        them all)."""
        keep = cp_splits(self.left, self.right, self.counts, cp)
        old, nl, _ = kept_nodes(self.left, self.right, keep)
        return np.unique(self.group[old][nl >= 0])

    def cp_for_groups(self, k: int) -> float:
        """The largest ``cp`` (to 1e-12 of 0.01) below rpart's default 0.01 whose pruned tree branches on at least
        ``k`` groups: 0.01 itself when it does, 0.0 when even ``cp = 0`` gives fewer (the pruned trees are nested,
        so their groups only grow as ``cp`` falls; bisection on that step function, each step one pass over the
        nodes). Günlük et al. §5.7: "feature selection using CART, making sure that at least 4 features are
        selected"."""
        if k < 1 or len(self.groups_at(RPART_CP)) >= k:
            return RPART_CP
        if len(self.groups_at(0.0)) < k:
            return 0.0
        lo, hi = 0.0, RPART_CP
        while hi - lo > 1e-12:
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if len(self.groups_at(mid)) >= k else (lo, mid)
        return lo

    def get_depth(self) -> int:
        depth = np.zeros(self.left.size, dtype=int)
        for i in np.flatnonzero(self.left >= 0):
            depth[[self.left[i], self.right[i]]] = depth[i] + 1
        return int(depth.max())

    def text(self) -> str:
        """The tree as indented text: each node's test (``yes`` = left), each leaf's class and training counts."""
        lines: list[str] = []

        def walk(i: int, pad: str, edge: str) -> None:
            if self.left[i] < 0:
                n_neg, n_pos = (float(v) for v in self.counts[i])
                cls = self.classes[int(n_pos > n_neg)]
                lines.append(f"{pad}{edge}leaf: predict {cls!r}   [train: {n_neg:g} x {self.classes[0]!r}, "
                             f"{n_pos:g} x {self.classes[1]!r}]")
                return
            g = self.encoder.groups_[int(self.group[i])]
            lines.append(f"{pad}{edge}node {i + 1}: {subset_condition(g, self.subset[i])} ?")
            walk(int(self.left[i]), pad + "    ", "yes -> ")
            walk(int(self.right[i]), pad + "    ", "no  -> ")

        walk(0, "", "")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def graph(self) -> Graph:
        """The tree as a :class:`~treeopt_dsl.models.pictures.Graph`: set tests, leaves with class and counts."""
        g = Graph(title="CART with subset splits (rpart): a sample goes 'yes' when its value is in the set")
        for i in range(self.left.size):
            n_neg, n_pos = (float(v) for v in self.counts[i])
            if self.left[i] < 0:
                k = int(n_pos > n_neg)
                g.add(f"n{i}", f"{self.classes[k]}\n[{n_neg:g} / {n_pos:g}]", leaf=True, klass=k)
            else:
                g.add(f"n{i}", subset_condition(self.encoder.groups_[int(self.group[i])], self.subset[i]))
                g.edges += [(f"n{i}", f"n{self.left[i]}", "yes"), (f"n{i}", f"n{self.right[i]}", "no")]
        return g

    def plot(self, ax: Any = None, fontsize: float = 8.0) -> Any:
        """Draw the tree with matplotlib (leaves coloured by class, training counts of -1 / +1); the figure."""
        return draw(self.graph(), ax=ax, fontsize=fontsize)

    def to_dot(self) -> str:
        """The tree as Graphviz DOT text."""
        return to_dot(self.graph(), name="subset_cart")


def _best_split(lev: np.ndarray, w: np.ndarray, wpos: np.ndarray, sizes: np.ndarray, ordinal: np.ndarray,
                min_leaf: int) -> tuple[float, int, np.ndarray] | None:
    """The best subset split of the rows with levels ``lev`` (n, |G|), weights ``w`` and positive weights ``wpos``:
    (Gini decrease, group, bool over its levels going left), or ``None`` when no split leaves ``min_leaf`` rows on
    each side."""
    n, n_pos = float(w.sum()), float(wpos.sum())
    parent = 2.0 * n_pos * (n - n_pos) / n
    best: tuple[float, int, np.ndarray] | None = None
    for g in range(lev.shape[1]):
        k = sizes[g]
        code = lev[:, g] + 1  # 0: a level the encoder has not seen (it goes right, as at predict time)
        rows = np.bincount(code, minlength=k + 1)[1:]
        cnt = np.bincount(code, weights=w, minlength=k + 1)[1:]
        pcnt = np.bincount(code, weights=wpos, minlength=k + 1)[1:]
        present = np.flatnonzero((rows > 0) & (cnt > 0))
        # the prefixes that leave a row on the right: all but the last level, or every level when unseen rows are
        # there (they stay right)
        n_cut = present.size - int(rows.sum() == lev.shape[0])
        if n_cut < 1:
            continue
        order = present if ordinal[g] else present[np.argsort(pcnt[present] / cnt[present], kind="stable")]
        rl = np.cumsum(rows[order])[:n_cut]
        nl, pl = np.cumsum(cnt[order])[:n_cut], np.cumsum(pcnt[order])[:n_cut]
        nr, pr = n - nl, n_pos - pl
        gain = parent - 2.0 * pl * (nl - pl) / nl - 2.0 * pr * (nr - pr) / np.maximum(nr, 1e-300)
        gain[(rl < min_leaf) | (lev.shape[0] - rl < min_leaf)] = -np.inf
        m = int(np.argmax(gain))
        if gain[m] > 1e-12 * n and (best is None or gain[m] > best[0] + 1e-12 * n):
            subset = np.zeros(k, dtype=bool)
            subset[order[:m + 1]] = True
            best = (float(gain[m]), g, subset)
    return best


def fit_subset_cart(data: Dataset, max_depth: int = RPART_MAX_DEPTH, *, min_split: int = RPART_MIN_SPLIT,
                    min_leaf: int = RPART_MIN_LEAF, cp: float | None = RPART_CP, categorical: tuple[Any, ...] = (),
                    n_bins: int = 10, encoder: GroupEncoder | None = None) -> SubsetTree:
    """Grow rpart's CART on ``data`` (two classes) to ``max_depth`` (rpart's ``maxdepth``, 1..30) and prune it at
    ``cp`` (see the module).

    ``categorical``: raw columns holding category codes (as :class:`~treeopt_dsl.datasets.encoding.GroupEncoder`);
    one-hot groups of the loader, and the runs of exclusive 0/1 columns of a LIBSVM copy, are attributes already.
    ``cp = None`` keeps every split that decreases the Gini impurity (the tree as scikit-learn grows it; rpart
    collapses a split that does not decrease the misclassified rows even at ``cp = 0``), and ``min_split = 2,
    min_leaf = 1, cp = None`` grows the whole tree to ``max_depth``. ``encoder``: a :class:`GroupEncoder` already
    fitted on ``data`` (the categorical trees' own, so that the tree's groups are theirs; ``categorical`` and
    ``n_bins`` are then its). Sample weights (``data.sample_weight``) weigh the counts, the impurity and the
    pruning; ``min_split`` and ``min_leaf`` count rows, as rpart's."""
    for name, v, lo, hi in (("max_depth", max_depth, 1, RPART_MAX_DEPTH), ("min_split", min_split, 2, None),
                            ("min_leaf", min_leaf, 1, None)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo or (hi is not None and v > hi):
            raise OptionError(f"{name} must be a whole number >= {lo}" + (f" and <= {hi}" if hi else "")
                              + f", got {v!r}")
    if data.n_classes != 2:
        raise DataError(f"the subset CART is for two classes (the paper's setting); the data has {data.n_classes}")
    enc = GroupEncoder(n_bins=n_bins, categorical_columns=tuple(categorical)).fit(data) if encoder is None else encoder
    lev = enc.levels(np.asarray(data.X, dtype=float))
    pos = (np.asarray(data.y) > 0).astype(float)
    w = np.ones(pos.size) if data.sample_weight is None else np.asarray(data.sample_weight, dtype=float)
    sizes = np.array([len(g.levels) for g in enc.groups_])
    ordinal = np.array([g.ordinal for g in enc.groups_])
    left, right, group, subset, counts = [], [], [], [], []

    def grow(rows: np.ndarray, depth: int) -> int:
        i = len(left)
        left.append(-1), right.append(-1), group.append(-1), subset.append(np.zeros(0, dtype=bool))
        wr = w[rows]
        w_pos = float(wr @ pos[rows])
        counts.append((float(wr.sum()) - w_pos, w_pos))
        if depth == max_depth or rows.size < min_split or min(counts[i]) <= 0.0:
            return i
        best = _best_split(lev[rows], wr, wr * pos[rows], sizes, ordinal, min_leaf)
        if best is None:
            return i
        _, g, s = best
        code = lev[rows, g]
        go = (code >= 0) & s[np.maximum(code, 0)]
        group[i], subset[i] = g, s
        left[i] = grow(rows[go], depth + 1)
        right[i] = grow(rows[~go], depth + 1)
        return i

    grow(np.arange(pos.size), 0)
    L, R, C = np.array(left), np.array(right), np.array(counts, dtype=float)
    keep = L >= 0 if cp is None else cp_splits(L, R, C, cp)
    old, nl, nr = kept_nodes(L, R, keep)
    return SubsetTree(encoder=enc, left=nl, right=nr, group=np.where(nl >= 0, np.array(group)[old], -1),
                      subset=[subset[i] if keep[i] else np.zeros(0, dtype=bool) for i in old], counts=C[old],
                      classes=tuple(v.item() if isinstance(v, np.generic) else v
                                    for v in data.labels_of(np.array([-1, 1]))))
