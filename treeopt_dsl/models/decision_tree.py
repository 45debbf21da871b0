"""A general axis-aligned binary decision tree stored as flat arrays (the layout of scikit-learn's ``tree_``).

Unlike :class:`~treeopt_dsl.models.tree.TreeModel` (a *balanced* tree of hyperplanes), a
:class:`DecisionTree` may be unbalanced and multiclass: node ``i`` is a leaf iff ``left[i] == -1``;
otherwise a sample goes to ``left[i]`` iff ``x[feature[i]] <= threshold[i]`` (scikit-learn's rule too),
else to ``right[i]``. Leaves hold a class *index* in ``value``; ``classes[value]`` is the label. Node 0 is the
root. The born-again trees of :mod:`treeopt_dsl.bornagain` are DecisionTrees, and so are the trees of the
ensembles they reproduce.

Example::

    >>> import numpy as np
    >>> t = DecisionTree(feature=[0, -1, -1], threshold=[0.5, 0.0, 0.0], left=[1, -1, -1],
    ...                  right=[2, -1, -1], value=[-1, 0, 1], classes=["no", "yes"])
    >>> t.predict(np.array([[0.2], [0.9]])).tolist()
    ['no', 'yes']
    >>> t.depth, t.n_leaves
    (1, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError
from treeopt_dsl.models.pictures import decision_tree_graph, draw, to_dot

__all__ = ["DecisionTree"]


def feature_matrix(X: Any, n_features: int, who: str) -> np.ndarray:
    """``X`` as a float64 (samples x features) matrix (one row if 1-d), or a :class:`DataError` naming ``who``."""
    Xa = np.asarray(X, dtype=np.float64)
    if Xa.ndim == 1:
        Xa = Xa.reshape(1, -1)
    if Xa.ndim != 2 or Xa.shape[1] != n_features:
        got = Xa.shape[1] if Xa.ndim == 2 else f"shape {Xa.shape}"
        raise DataError(f"X has {got} features, {who} expects {n_features}")
    return Xa


def _int_array(values: Any, name: str) -> np.ndarray:
    a = np.asarray(values)
    if a.ndim != 1:
        raise DataError(f"DecisionTree.{name} must be one-dimensional, got shape {a.shape}")
    if a.size and not np.all(np.equal(np.mod(a, 1), 0)):
        raise DataError(f"DecisionTree.{name} must hold integers")
    return a.astype(np.int64)


@dataclass(eq=False)
class DecisionTree:
    """An axis-aligned binary classification tree as flat arrays.

    Attributes
    ----------
    feature
        Feature index tested at each node (``-1`` at leaves).
    threshold
        Split value of each node; a sample goes left iff ``x[feature] <= threshold``.
    left, right
        Child indices (``-1`` at leaves).
    value
        Class index (into ``classes``) at each leaf, ``-1`` at internal nodes.
    classes
        The class labels (default ``0 .. max(value)``).
    n_features
        Number of input features (default ``max(feature) + 1``).
    feature_names
        Names used by :meth:`text` (default ``x0, x1, ...``).
    dtype
        The precision inputs are cast to before comparing (``"float64"``; ``"float32"`` reproduces
        scikit-learn, which compares ``float32(x)`` with its float64 thresholds).

    Example::

        >>> t = DecisionTree.from_dict({"feature": [1, -1, -1], "threshold": [2.0, 0, 0],
        ...                             "left": [1, -1, -1], "right": [2, -1, -1], "value": [-1, 1, 0]})
        >>> t.apply(np.array([[0.0, 1.0], [0.0, 3.0]])).tolist()
        [1, 2]
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    classes: np.ndarray | None = None
    n_features: int | None = None
    feature_names: tuple[str, ...] | None = None
    dtype: str = "float64"
    _depths: np.ndarray | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.feature = _int_array(self.feature, "feature")
        self.threshold = np.asarray(self.threshold, dtype=np.float64).reshape(-1)
        self.left = _int_array(self.left, "left")
        self.right = _int_array(self.right, "right")
        self.value = _int_array(self.value, "value")
        n = self.feature.size
        if n == 0:
            raise DataError("a DecisionTree needs at least one node (the root)")
        for name in ("threshold", "left", "right", "value"):
            if getattr(self, name).size != n:
                raise DataError(f"DecisionTree.{name} has {getattr(self, name).size} entries, feature has {n}")
        leaf = self.left < 0
        if np.any(leaf != (self.right < 0)):
            raise DataError("DecisionTree: a node has exactly one child (left and right must both be -1 or neither)")
        children = np.concatenate([self.left[~leaf], self.right[~leaf]])
        if children.size and (children.min() < 1 or children.max() >= n):
            raise DataError(f"DecisionTree: child index out of range 1..{n - 1}")
        if children.size != np.unique(children).size:
            raise DataError("DecisionTree: a node is the child of two parents")
        if np.any(self.feature[~leaf] < 0):
            raise DataError("DecisionTree: an internal node has a negative feature index")
        bad = np.flatnonzero(~leaf & ~np.isfinite(self.threshold))
        if bad.size:  # NaN compares false both ways: such a node sends everything right, whatever x is
            raise DataError(f"DecisionTree: node {int(bad[0])} splits at threshold {self.threshold[bad[0]]} "
                            f"({bad.size} internal node(s) with a NaN or infinite threshold); a split needs a finite "
                            "threshold")
        if np.any(self.value[leaf] < 0):
            raise DataError("DecisionTree: a leaf has no class (value < 0)")
        self.feature = np.where(leaf, -1, self.feature)
        self.value = np.where(leaf, self.value, -1)
        if self.classes is None:
            self.classes = np.arange(int(self.value.max()) + 1)
        else:
            self.classes = np.asarray(self.classes)
            if self.value.max() >= self.classes.size:
                raise DataError(f"DecisionTree: a leaf's class index {int(self.value.max())} is out of range "
                                f"(there are {self.classes.size} classes)")
        f_max = int(self.feature.max()) + 1
        if self.n_features is None:
            self.n_features = f_max
        elif f_max > self.n_features:
            raise DataError(f"DecisionTree: feature index {f_max - 1} >= n_features={self.n_features}")
        self.n_features = int(self.n_features)
        if self.feature_names is not None:
            self.feature_names = tuple(str(s) for s in self.feature_names)
            if len(self.feature_names) != self.n_features:
                raise DataError(f"DecisionTree: {len(self.feature_names)} feature names for "
                                f"{self.n_features} features")
        if self.dtype not in ("float64", "float32"):
            raise DataError(f"DecisionTree.dtype must be 'float64' or 'float32', got {self.dtype!r}")
        self._node_depths()  # also rejects cycles / unreachable nodes

    # ------------------------------------------------------------------ structure
    def _node_depths(self) -> np.ndarray:
        """Depth of every node (root 0), by a level-by-level sweep from the root."""
        if self._depths is None:
            n = self.feature.size
            depths = np.full(n, -1, dtype=np.int64)
            frontier = np.array([0])
            d = 0
            while frontier.size:
                depths[frontier] = d
                inner = frontier[self.left[frontier] >= 0]
                frontier = np.concatenate([self.left[inner], self.right[inner]])
                d += 1
                if d > n:
                    raise DataError("DecisionTree: the child links contain a cycle")
            if np.any(depths < 0):
                raise DataError(f"DecisionTree: {int(np.sum(depths < 0))} node(s) unreachable from the root")
            self._depths = depths
        return self._depths

    @property
    def is_leaf(self) -> np.ndarray:
        """Boolean mask of the leaves."""
        return self.left < 0

    @property
    def depth(self) -> int:
        """Length of the longest root-to-leaf path (a single leaf has depth 0)."""
        return int(self._node_depths().max())

    @property
    def n_leaves(self) -> int:
        return int(np.sum(self.left < 0))

    @property
    def n_nodes(self) -> int:
        return int(self.feature.size)

    @property
    def node_depth(self) -> np.ndarray:
        """Depth of each node (root 0)."""
        return self._node_depths().copy()

    # ------------------------------------------------------------------ evaluation
    def _check_X(self, X: Any) -> np.ndarray:
        Xa = feature_matrix(X, int(self.n_features or 0), "the tree")
        if self.dtype == "float32":
            Xa = Xa.astype(np.float32)
        return Xa

    def apply(self, X: Any, root: int = 0) -> np.ndarray:
        """Index of the leaf each sample reaches from node ``root`` (the tree's root by default; another node:
        its subtree's leaf), one numpy step per depth level, not per sample."""
        Xa = self._check_X(X)
        if not 0 <= int(root) < self.n_nodes:
            raise DataError(f"root must be a node of the tree, 0..{self.n_nodes - 1}, got {root}")
        node = np.full(Xa.shape[0], int(root), dtype=np.int64)
        active = np.flatnonzero(self.left[node] >= 0)
        while active.size:
            nd = node[active]
            go_left = Xa[active, self.feature[nd]] <= self.threshold[nd]
            node[active] = np.where(go_left, self.left[nd], self.right[nd])
            active = active[self.left[node[active]] >= 0]
        return node

    def decision_path(self, X: Any) -> np.ndarray:
        """Boolean ``(n_samples, n_nodes)``: node ``i`` lies on the sample's path (one numpy step per level).

        Example::

            >>> t = DecisionTree([0, -1, -1], [1.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1])
            >>> t.decision_path(np.array([[0.0], [2.0]])).astype(int).tolist()
            [[1, 1, 0], [1, 0, 1]]
        """
        Xa = self._check_X(X)
        n = Xa.shape[0]
        on = np.zeros((n, self.n_nodes), dtype=bool)
        node = np.zeros(n, dtype=np.int64)
        on[:, 0] = True
        active = np.flatnonzero(self.left[node] >= 0)
        while active.size:
            nd = node[active]
            go_left = Xa[active, self.feature[nd]] <= self.threshold[nd]
            node[active] = np.where(go_left, self.left[nd], self.right[nd])
            on[active, node[active]] = True
            active = active[self.left[node[active]] >= 0]
        return on

    def predict_index(self, X: Any, root: int = 0) -> np.ndarray:
        """Class index (into ``classes``) of each sample, by the subtree of node ``root`` (the whole tree by
        default)."""
        return self.value[self.apply(X, root)]

    def predict(self, X: Any) -> np.ndarray:
        """Class label of each sample."""
        assert self.classes is not None
        return self.classes[self.predict_index(X)]

    # ------------------------------------------------------------------ display / conversion
    def _name(self, j: int) -> str:
        return self.feature_names[j] if self.feature_names is not None else f"x{j}"

    def text(self, decimals: int = 2) -> str:
        """An indented if/else listing, like :func:`sklearn.tree.export_text`.

        Example::

            >>> print(DecisionTree([0, -1, -1], [1.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1]).text())
            |--- x0 <= 1.50
            |   |--- class: 0
            |--- x0 >  1.50
            |   |--- class: 1
        """
        assert self.classes is not None
        lines: list[str] = []
        # stack items: an already formatted line (str) or a subtree to expand (node, depth)
        stack: list[str | tuple[int, int]] = [(0, 0)]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                lines.append(item)
                continue
            node, depth = item
            pad = "|   " * depth
            if self.left[node] < 0:
                lines.append(f"{pad}|--- class: {self.classes[self.value[node]]}")
                continue
            name, thr = self._name(int(self.feature[node])), float(self.threshold[node])
            stack.extend([(int(self.right[node]), depth + 1), f"{pad}|--- {name} >  {thr:.{decimals}f}",
                          (int(self.left[node]), depth + 1)])
            lines.append(f"{pad}|--- {name} <= {thr:.{decimals}f}")
        return "\n".join(lines)

    def plot(self, ax: Any = None, decimals: int = 2, max_leaves: int = 64, X: Any = None, y: Any = None,
             counts: Any = None) -> Any:
        """Draw the tree with matplotlib (``pip install treeopt-dsl[plot]``): each split ``name <= value``,
        each leaf its class and the samples reaching it (``X``: ``n = ...``; ``X`` and ``y``: per class;
        ``counts``: given per node), leaves in order left to right and nodes at their depth. Returns the figure.

        Trees with more than ``max_leaves`` leaves are refused (a picture of thousands of leaves says less
        than :meth:`text`); raise it to draw them anyway. The drawing is :func:`treeopt_dsl.models.pictures.draw` (the
        backend is matplotlib's choice: inline in notebooks, Agg without a display).

        Example::

            >>> t = DecisionTree([0, -1, -1], [1.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1])
            >>> t.plot(X=np.array([[1.0], [2.0], [3.0]])).savefig("/tmp/tree.png")  # doctest: +SKIP
        """
        return draw(decision_tree_graph(self, decimals, X, y, counts), ax=ax, max_leaves=max_leaves)

    def to_dot(self, decimals: int | None = None, X: Any = None, y: Any = None, counts: Any = None) -> str:
        """The tree as Graphviz DOT text (``name <= value`` at splits, ``yes`` = left, leaves with the samples of
        ``X`` / ``y`` / ``counts`` as :meth:`plot`; render with ``dot -Tpng``).

        Example::

            >>> t = DecisionTree([0, -1, -1], [1.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1])
            >>> t.to_dot().count("->")
            2
        """
        return to_dot(decision_tree_graph(self, decimals, X, y, counts))

    @classmethod
    def from_sklearn(cls, estimator: Any, feature_names: Sequence[str] | None = None,
                     dtype: str = "float32") -> DecisionTree:
        """Convert a fitted :class:`sklearn.tree.DecisionTreeClassifier` (single output).

        Leaves get the class of largest value (first on ties, as scikit-learn's ``predict``); ``dtype`` is
        ``"float32"`` by default because scikit-learn compares ``float32(x)`` with its thresholds (``"float64"``
        compares ``x`` itself, as code that reads ``tree_``'s arrays does).

        Example::

            >>> from sklearn.tree import DecisionTreeClassifier
            >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
            >>> DecisionTree.from_sklearn(DecisionTreeClassifier().fit(X, y)).predict(X).tolist()
            [0, 0, 1, 1]
        """
        tree_ = getattr(estimator, "tree_", None)
        if tree_ is None:
            raise DataError(f"{type(estimator).__name__} is not a fitted scikit-learn tree (no tree_)")
        if tree_.n_outputs != 1:
            raise DataError("only single-output scikit-learn trees can be converted")
        if feature_names is None and hasattr(estimator, "feature_names_in_"):
            feature_names = [str(s) for s in estimator.feature_names_in_]
        left = np.asarray(tree_.children_left, dtype=np.int64)
        leaf = left < 0
        return cls(feature=np.where(leaf, -1, tree_.feature), threshold=np.where(leaf, 0.0, tree_.threshold),
                   left=left, right=np.asarray(tree_.children_right, dtype=np.int64),
                   value=np.where(leaf, np.argmax(tree_.value[:, 0, :], axis=1), -1),
                   classes=np.asarray(estimator.classes_), n_features=int(tree_.n_features),
                   feature_names=tuple(feature_names) if feature_names is not None else None, dtype=dtype)

    def sklearn_view(self) -> SimpleNamespace:
        """The tree as a fitted scikit-learn classifier looks to code that reads its arrays: ``classes_`` and
        ``tree_`` (``children_left`` / ``children_right``, ``feature``, ``threshold``, ``max_depth``, ``n_outputs``,
        ``n_features``, ``value``: one-hot ``n_nodes x 1 x n_classes`` of each leaf's class, zero at inner nodes).
        A copy.

        Example::

            >>> t = DecisionTree([0, -1, -1], [1.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1])
            >>> t.sklearn_view().tree_.value[:, 0].tolist()
            [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
        """
        assert self.classes is not None
        leaves = np.flatnonzero(self.left < 0)
        value = np.zeros((self.n_nodes, 1, self.classes.size))
        value[leaves, 0, self.value[leaves]] = 1.0
        tree_ = SimpleNamespace(children_left=self.left.copy(), children_right=self.right.copy(),
                                feature=self.feature.copy(), threshold=self.threshold.copy(),
                                max_depth=self.depth, value=value, n_outputs=1, n_features=self.n_features)
        return SimpleNamespace(tree_=tree_, classes_=self.classes.copy())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable dict (:meth:`from_dict` reads it back)."""
        assert self.classes is not None
        return {"feature": self.feature.tolist(), "threshold": self.threshold.tolist(), "left": self.left.tolist(),
                "right": self.right.tolist(), "value": self.value.tolist(), "classes": self.classes.tolist(),
                "n_features": self.n_features,
                "feature_names": list(self.feature_names) if self.feature_names is not None else None,
                "dtype": self.dtype}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DecisionTree:
        """Inverse of :meth:`to_dict`."""
        missing = {"feature", "threshold", "left", "right", "value"} - set(d)
        if missing:
            raise DataError(f"DecisionTree.from_dict: missing key(s) {sorted(missing)}")
        return cls(feature=d["feature"], threshold=d["threshold"], left=d["left"], right=d["right"],
                   value=d["value"], classes=d.get("classes"), n_features=d.get("n_features"),
                   feature_names=d.get("feature_names"), dtype=d.get("dtype", "float64"))

    def node_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-node bounds ``(lower, upper)``, each of shape (n_nodes, n_features): the samples reaching node
        ``i`` are those with ``lower[i] < x <= upper[i]`` coordinatewise (``±inf`` when unbounded). Computed one
        depth level at a time."""
        n, p = self.feature.size, int(self.n_features or 0)
        lo = np.full((n, p), -np.inf)
        hi = np.full((n, p), np.inf)
        depths = self._node_depths()
        for d in range(self.depth):
            nodes = np.flatnonzero((depths == d) & (self.left >= 0))
            f, t = self.feature[nodes], self.threshold[nodes]
            for child in (self.left[nodes], self.right[nodes]):
                lo[child], hi[child] = lo[nodes], hi[nodes]
            hi[self.left[nodes], f] = np.minimum(hi[nodes, f], t)
            lo[self.right[nodes], f] = np.maximum(lo[nodes, f], t)
        return lo, hi
