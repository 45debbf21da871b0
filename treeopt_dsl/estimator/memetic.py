"""scikit-learn classifiers for the heuristic axis-aligned trees: :class:`TAOClassifier` (CART improved by
Tree Alternating Optimization, Carreira-Perpiñán & Tavallali 2018) and :class:`TMOClassifier` (the
memetic algorithm of [aldinucci-memetic], :func:`~treeopt_dsl.starts.memetic.tmo.tmo`).

Both take any number of classes (leaf classes: :func:`~treeopt_dsl.starts.tao.tao_multiclass`; with two,
as the papers, ``classes_[0]`` is mapped to -1 and ``classes_[1]`` to +1), take
``sample_weight``, work on the raw features (axis-aligned splits do not need scaling) and keep the
fitted tree as a :class:`~treeopt_dsl.models.decision_tree.DecisionTree` (``tree_``: ``text()``,
``plot()``, predictions exactly those of the optimized hyperplanes ``W_``, ``b_``). ``predict_proba``
is the weighted class frequency of the training samples in the sample's leaf. scikit-learn's tree interface:
``to_sklearn()`` (a fitted :class:`sklearn.tree.DecisionTreeClassifier` with the same nodes), ``get_depth()``,
``get_n_leaves()``, ``apply(X)``, ``decision_path(X)`` and ``feature_importances_`` (scikit-learn's impurity
decrease on the training data); ``fit`` and ``predict`` take scipy sparse ``X`` (densified within the memory
budget, docs/sklearn.md).

Example::

    >>> from sklearn.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> tao = TAOClassifier(depth=2, random_state=0).fit(X, y)
    >>> tmo = TMOClassifier(depth=2, n_trees=10, n_generations=2, random_state=0).fit(X, y)
    >>> bool(tmo.score(X, y) >= tmo.initial_score_), tao.tree_.depth <= 2
    (True, True)
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from treeopt_dsl.errors import DataError, OptionError
from treeopt_dsl.estimator.base import SPARSE_FORMATS, dense_features
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.models.sklearn_tree import impurity_importances, node_weights, sklearn_classifier
from treeopt_dsl.starts.memetic.tmo import tmo
from treeopt_dsl.starts.tao import from_sklearn, from_sklearn_multiclass, tao, tao_multiclass, to_decision_tree
from treeopt_dsl.starts.tao_nodes import AUTHOR_PASSES, TAO_VARIANTS, tao_nodes
from treeopt_dsl.topology import Topology, check_depth

__all__ = ["TAOClassifier", "TMOClassifier"]


def _check_variant(variant: Any, n_classes: int) -> None:
    """The ``variant`` of :class:`TAOClassifier` and :class:`TMOClassifier`, or an :class:`OptionError`."""
    if variant not in TAO_VARIANTS:
        raise OptionError(f"variant must be one of {', '.join(map(repr, TAO_VARIANTS))}, got {variant!r}")
    if variant == "seed004" and n_classes > 2:
        raise OptionError(f"variant='seed004' (the author's TAO) takes two classes, got {n_classes}")


class _AxisTreeClassifier(ClassifierMixin, BaseEstimator):
    """Validation, the +/-1 labels, the tree and prediction shared by the two estimators."""

    #: whether ``fit`` takes more than two classes (leaf classes, :func:`~treeopt_dsl.starts.tao.tao_multiclass`)
    _multiclass: bool = False

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self._multiclass
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True  # densified (dense_features)
        return tags

    def _validate(self, X: Any) -> np.ndarray:
        """``X`` for prediction: validated against the fit and dense."""
        X = validate_data(self, X, accept_sparse=SPARSE_FORMATS, dtype=np.float64, ensure_all_finite=True,
                          reset=False)
        return dense_features(X, type(self).__name__)

    def _seed(self) -> int:
        rs = self.random_state
        if isinstance(rs, numbers.Integral):
            return int(rs)
        return int(check_random_state(rs).randint(np.iinfo(np.int32).max))

    def _prepare(self, X: Any, y: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validated dense ``X``, the class codes of ``y`` (positions in ``classes_``) and the sample weights."""
        check_depth(self.depth)
        X, y = validate_data(self, X, y, accept_sparse=SPARSE_FORMATS, dtype=np.float64, ensure_all_finite=True)
        X = dense_features(X, type(self).__name__)
        check_classification_targets(y)
        classes = np.unique(y)
        kind = type_of_target(y)
        if kind != "binary" and not (kind == "multiclass" and self._multiclass):
            raise DataError(f"Only binary classification is supported; y has {classes.size} classes. "
                            f"{type(self).__name__} is binary (the papers' setting): pick one class against the rest")
        if classes.size < 2:
            raise DataError(f"{type(self).__name__} needs two classes in y, found 1 class")
        self.classes_ = classes
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
        cw = getattr(self, "class_weight", None)
        if cw is not None:  # scikit-learn's semantics: w_i = sample_weight_i * class_weight[y_i]
            sw = sw * compute_sample_weight(cw, y)
        return X, np.searchsorted(classes, y), sw

    def _keep(self, X: np.ndarray, codes: np.ndarray, sw: np.ndarray, W: np.ndarray, b: np.ndarray,
              leaf_classes: np.ndarray | None = None) -> None:
        """The fitted tree (``leaf_classes``: the multiclass layout of
        :func:`~treeopt_dsl.starts.tao.tao_multiclass`), its training weights per node and class, the leaves'
        class frequencies and the impurity importances."""
        names = getattr(self, "feature_names_in_", None)
        self.W_, self.b_ = W, b
        if leaf_classes is not None:
            self.leaf_classes_ = np.asarray(leaf_classes)
        self.tree_ = to_decision_tree(W, b, Topology(int(self.depth)), classes=self.classes_,
                                      feature_names=None if names is None else [str(n) for n in names],
                                      leaf_classes=leaf_classes)
        K = len(self.classes_)
        weights, counts = node_weights(self.tree_.decision_path(X), codes, K, sw)
        self._node_weights, self._node_counts = weights, counts
        tot = weights.sum(1, keepdims=True)
        own = np.zeros_like(weights)  # an empty leaf: its own class
        leaf = self.tree_.value >= 0
        own[np.flatnonzero(leaf), self.tree_.value[leaf]] = 1.0
        proba = np.where(tot > 0, weights / np.maximum(tot, 1e-300), own)
        # a leaf whose class ties another's frequency: argmax picks the leaf's own class (what predict says)
        tie = leaf & (np.argmax(proba, axis=1) != np.maximum(self.tree_.value, 0)) & \
            (proba[np.arange(proba.shape[0]), np.maximum(self.tree_.value, 0)] >= proba.max(1))
        proba[tie] = np.where(own[tie] > 0, np.nextafter(proba[tie], 2.0), proba[tie])
        self.leaf_proba_ = proba
        tree = self.tree_
        self.feature_importances_ = impurity_importances(tree.left, tree.right, tree.feature, weights, X.shape[1])

    def predict(self, X: Any) -> np.ndarray:
        """The class of each sample (``y``'s labels): the tree's leaf class."""
        check_is_fitted(self, "tree_")
        X = self._validate(X)
        return self.tree_.predict(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """One column per class of ``classes_``: the weighted training frequencies of the classes in the sample's
        leaf (an empty leaf: 1 for its own class)."""
        check_is_fitted(self, "tree_")
        X = self._validate(X)
        return self.leaf_proba_[self.tree_.apply(X)]

    def text(self, decimals: int = 2) -> str:
        """The fitted tree as an indented listing (:meth:`DecisionTree.text`)."""
        check_is_fitted(self, "tree_")
        return self.tree_.text(decimals)

    def plot(self, ax: Any = None) -> Any:
        """Draw the fitted tree with matplotlib (:meth:`DecisionTree.plot`), each leaf with the training weight
        of each class (the sample counts without weights) as the other trees' pictures; returns the figure."""
        check_is_fitted(self, "tree_")
        return self.tree_.plot(ax=ax, counts=getattr(self, "_node_weights", None))

    # ------------------------------------------------------------------ scikit-learn's tree interface
    def to_sklearn(self) -> DecisionTreeClassifier:
        """The fitted tree as a fitted :class:`sklearn.tree.DecisionTreeClassifier` (same nodes and numbering as
        ``tree_``, training values and impurities), for ``plot_tree``/``export_text``/``export_graphviz``. It
        predicts as this estimator except within float32 rounding of a threshold (scikit-learn compares
        ``float32(x)``)."""
        check_is_fitted(self, "tree_")
        t = self.tree_
        return sklearn_classifier(t.left, t.right, t.feature, t.threshold, t.value,
                                  getattr(self, "_node_weights", None), getattr(self, "_node_counts", None),
                                  self.classes_, self.n_features_in_, getattr(self, "feature_names_in_", None))

    def get_depth(self) -> int:
        """The depth of the fitted tree."""
        check_is_fitted(self, "tree_")
        return self.tree_.depth

    def get_n_leaves(self) -> int:
        """The number of leaves of the fitted tree."""
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    def apply(self, X: Any) -> np.ndarray:
        """The leaf (node index of ``tree_``) each sample reaches."""
        check_is_fitted(self, "tree_")
        return self.tree_.apply(self._validate(X))

    def decision_path(self, X: Any) -> sp.csr_matrix:
        """The nodes each sample passes, a sparse ``(n_samples, n_nodes)`` indicator matrix (scikit-learn's)."""
        check_is_fitted(self, "tree_")
        return sp.csr_matrix(self.tree_.decision_path(self._validate(X)).astype(np.int64))


class TAOClassifier(_AxisTreeClassifier):
    """CART of ``depth``, then Tree Alternating Optimization (Carreira-Perpiñán & Tavallali, NeurIPS 2018):
    the thesis' "TAO" baseline ([aldinucci-thesis-2024] §3.3, Tables 3.4-3.6). The training error never increases
    (``variant="library"``).

    Any number of classes: with more than two, every leaf holds a class (CART's start, then
    :func:`~treeopt_dsl.starts.tao.tao_multiclass`: TAO's leaf step relabels each leaf with its weighted majority
    class and the decision nodes are refitted on their care sets, as the paper states TAO for ``K`` classes).

    Parameters
    ----------
    depth : int, default=2
        The tree depth (CART's ``max_depth``).
    max_iter : int, default=20
        TAO passes at most (each from the deepest level to the root; stops when nothing changes).
    random_state : int, numpy RandomState or None, default=0
        CART's seed (a ``RandomState`` is handed to CART itself: the TAO start is then the tree a CART fitted with
        that stream would be).
    class_weight : None, "balanced" or dict, default=None
        scikit-learn's semantics, multiplied into ``sample_weight``.
    variant : {"library", "seed004"}, default="library"
        ``"library"``: TAO on the complete layout of ``depth`` (:func:`~treeopt_dsl.starts.tao.tao`), each node's
        cut exact over all its rows' values and kept on a tie. ``"seed004"``: TAO as seed 004's author runs it
        (:mod:`~treeopt_dsl.starts.tao_nodes`: on CART's own nodes, cuts on the care points' values, the first
        least-error cut, ``max_iter`` passes (the author's 7), pure and dead branches pruned), two classes only;
        its training error can increase where a node's best care-set cut is not its current one.

    Attributes
    ----------
    tree_ : DecisionTree
        The fitted tree (:class:`~treeopt_dsl.models.decision_tree.DecisionTree`).
    W_, b_ : numpy.ndarray
        The library's hyperplane layout of the same tree.
    history_ : list of float
        The training error after each pass (``n_iter_`` passes).
    cart_error_ : float
        CART's weighted training error.
    leaf_classes_ : numpy.ndarray
        With more than two classes: the class code of each of the ``2**depth`` leaves of ``W_``.

    ``feature_importances_``, ``classes_`` and ``n_features_in_`` as scikit-learn's trees.
    """

    _multiclass = True

    def __init__(self, depth: int = 2, max_iter: int = 20, random_state: int | np.random.RandomState | None = 0,
                 class_weight: Any = None, variant: str = "library") -> None:
        self.depth = depth
        self.max_iter = max_iter
        self.random_state = random_state
        self.class_weight = class_weight
        self.variant = variant

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> TAOClassifier:
        X, codes, sw = self._prepare(X, y, sample_weight)
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 0:
            raise OptionError(f"max_iter must be a whole number >= 0, got {self.max_iter!r}")
        depth = int(self.depth)
        # a RandomState goes to CART as it is (its stream continues, as a CART fitted beside it would draw)
        rs = self.random_state
        cart = DecisionTreeClassifier(max_depth=depth,
                                      random_state=rs if isinstance(rs, np.random.RandomState) else self._seed())
        _check_variant(self.variant, len(self.classes_))
        leaves = None
        if self.variant == "seed004":
            ypm = np.where(codes == 1, 1, -1)
            cart.fit(X, ypm, sample_weight=sw)
            nodes, history = tao_nodes(X, ypm, DecisionTree.from_sklearn(cart, dtype="float64"),
                                       n_iter=int(self.max_iter), sample_weight=sw)
            W, b = from_sklearn(nodes.sklearn_view(), depth, X.shape[1])
            self.cart_error_ = float(sw[cart.predict(X) != ypm].sum())
        elif len(self.classes_) > 2:  # leaf classes (tao_multiclass): the papers' TAO is stated for K classes
            cart.fit(X, codes, sample_weight=sw)
            W, b, leaves, history = tao_multiclass(X, codes, *from_sklearn_multiclass(cart, depth, X.shape[1]),
                                                   depth, max_iter=int(self.max_iter), sample_weight=sw)
            self.cart_error_ = float(sw[cart.predict(X) != codes].sum())
        else:
            ypm = np.where(codes == 1, 1, -1)
            cart.fit(X, ypm, sample_weight=sw)
            W0, b0 = from_sklearn(cart, depth, X.shape[1])
            W, b, history = tao(X, ypm, W0, b0, depth, max_iter=int(self.max_iter), sample_weight=sw)
            self.cart_error_ = float(sw[cart.predict(X) != ypm].sum())
        self.history_ = history
        self.n_iter_ = len(history)
        self._keep(X, codes, sw, W, b, leaves)
        return self


class TMOClassifier(_AxisTreeClassifier):
    """TMO, the memetic algorithm for trees of a given depth ([aldinucci-memetic], Algorithm 1; thesis §3.3).

    Parameters
    ----------
    depth : int, default=2
        The maximum depth ``d``.
    n_trees : int, default=100
        The population size ``k`` (a random forest of ``k`` trees, each TAO-optimized; the paper's value, §4).
    n_generations : int, default=5
        ``n_gen`` (the paper's value).
    crossover_rate : float, default=0.75
        ``CR`` (the paper's value).
    schedule : {"sequential", "generational"}, default="sequential"
        ``"sequential"``: Algorithm 1 as printed; ``"generational"``: every child of a generation from the
        population at its start (parallel with ``n_jobs``).
    n_jobs : int or None, default=None
        joblib workers for the children's TAO runs (``"generational"`` only).
    time_limit : float or None, default=None
        Seconds; at the limit the best tree so far is kept (``result_.stopped``).
    random_state : int or None, default=0
        Seed of the forest, the bootstrap samples, the partners and the crossover.
    class_weight : None, "balanced" or dict, default=None
        scikit-learn's semantics, multiplied into ``sample_weight``.
    variant : {"library", "seed004"}, default="library"
        The TAO every tree of the population runs: the library's (as :class:`TAOClassifier`'s default, at most 20
        passes), or seed 004's author's (as ``TAOClassifier(variant="seed004")``, 7 passes; a child's over the
        rows of its generation's bootstrap sample), two classes and equal sample weights only.

    Attributes
    ----------
    tree_ : DecisionTree
        The fitted tree; ``W_``, ``b_`` its hyperplane layout.
    result_ : TMOResult
        :class:`~treeopt_dsl.starts.memetic.tmo.TMOResult`: fitness, history per generation, TAO runs, why it stopped.
    initial_score_ : float
        The best training accuracy of the initial TAO-optimized population (the returned tree is never below it).
    leaf_classes_ : numpy.ndarray
        With more than two classes, as :class:`TAOClassifier`'s.

    ``feature_importances_``, ``classes_`` and ``n_features_in_`` as scikit-learn's trees.

    Any number of classes: the forest is grown on the classes, a child's leaves take the weighted majority class of
    their samples (the paper's decoding rule, which does not depend on ``K``) and TAO is
    :func:`~treeopt_dsl.starts.tao.tao_multiclass`.
    """

    _multiclass = True

    def __init__(self, depth: int = 2, n_trees: int = 100, n_generations: int = 5, crossover_rate: float = 0.75,
                 schedule: str = "sequential", n_jobs: int | None = None, time_limit: float | None = None,
                 random_state: int | None = 0, class_weight: Any = None, variant: str = "library") -> None:
        self.depth = depth
        self.n_trees = n_trees
        self.n_generations = n_generations
        self.crossover_rate = crossover_rate
        self.schedule = schedule
        self.n_jobs = n_jobs
        self.time_limit = time_limit
        self.random_state = random_state
        self.class_weight = class_weight
        self.variant = variant

    def fit(self, X: Any, y: Any, sample_weight: Any = None, callback: Any = None) -> TMOClassifier:
        """Run TMO on ``(X, y)``; ``callback`` receives a dict after the initial population and each generation."""
        X, codes, sw = self._prepare(X, y, sample_weight)
        multiclass = len(self.classes_) > 2
        _check_variant(self.variant, len(self.classes_))
        res = tmo(X, codes if multiclass else np.where(codes == 1, 1, -1), int(self.depth), n_trees=self.n_trees,
                  n_generations=self.n_generations, crossover_rate=self.crossover_rate, seed=self._seed(),
                  schedule=self.schedule, n_jobs=self.n_jobs, time_limit=self.time_limit, sample_weight=sw,
                  callback=callback, multiclass=multiclass, tao_variant=self.variant,
                  **({"max_iter": AUTHOR_PASSES} if self.variant == "seed004" else {}))
        self.result_ = res
        self.initial_score_ = res.initial_best
        self._keep(X, codes, sw, res.W, res.b, res.leaf_classes)
        return self
