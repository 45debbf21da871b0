"""TMO: the memetic algorithm for classification trees of a given depth ([aldinucci-memetic], Algorithm 1; thesis
§3.3, [aldinucci-thesis-2024] lines 793-1050).

1. **Population** (§3): a random forest of ``k`` trees of maximum depth ``d`` (scikit-learn defaults
   otherwise, as §4), each tree locally optimized by TAO on the training data
   (:func:`~treeopt_dsl.starts.tao.tao`), so every individual is a TAO local optimum.
2. **Generations** ``g = 1..n_gen`` (Algorithm 1): draw a bootstrap sample ``B_D^(g)`` of the training
   data; for every tree ``t_i`` draw a partner ``j ~ U{1..k} \\ {i}`` (no fitness pressure in the
   selection, §3), make the child by the node-wise crossover with rate ``CR``
   (:func:`~treeopt_dsl.starts.memetic.crossover.crossover`, §3.2), decode it with majority leaves, optimize it
   by TAO on ``B_D^(g)`` (the memetic step ``L(t; B_D)``), and score it by its *training* accuracy (the
   fitness ``f``). The child replaces ``t_i`` if it is strictly fitter, and the best tree so far if it
   is strictly fitter than that.
3. The answer is the best tree found; it is never less accurate on the training data than the best tree
   of the initial TAO-optimized population (``result.initial_best``).

Schedules (a reading the paper leaves to the implementation, docs/tmo.md): ``"sequential"`` is
Algorithm 1 as printed, one child after the other, a replaced ``t_i`` already a parent of the later
children of the same generation; ``"generational"`` makes every child of generation ``g`` from the
population as it was at the start of ``g`` (all random draws in the main process, in order), so the
children's TAO runs are independent and run in parallel with ``n_jobs`` (joblib), and the result does
not depend on ``n_jobs``. Both are reproducible for a seed.

Cost ([aldinucci-memetic] §6): a generation is ``k`` TAO runs, each comparable to a CART fit of the same depth; the
data's distinct values are indexed once (:class:`~treeopt_dsl.starts.tao.AxisBins`) for all of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError, OptionError
from treeopt_dsl.models.decision_tree import DecisionTree
from treeopt_dsl.starts.memetic.crossover import RandomSplits, crossover
from treeopt_dsl.starts.memetic.encoding import decode, decode_multiclass, encode
from treeopt_dsl.starts.tao import (
    AxisBins,
    _sides,
    _subtree_predictions,
    class_error,
    from_sklearn,
    from_sklearn_multiclass,
    scores,
    tao,
    tao_multiclass,
    to_decision_tree,
)
from treeopt_dsl.starts.tao_nodes import TAO_VARIANTS, tao_nodes
from treeopt_dsl.topology import Topology, check_depth

SCHEDULES = ("sequential", "generational")


@dataclass
class TMOResult:
    """What :func:`tmo` returns.

    Attributes
    ----------
    W, b
        The best tree in the library layout (:class:`~treeopt_dsl.models.tree.TreeModel`'s).
    fitness
        Its training accuracy (weighted when ``sample_weight`` was given).
    initial_best
        The best training accuracy of the initial TAO-optimized population.
    history
        One entry per generation run: ``{"generation", "best", "mean", "replaced", "time_s"}``.
    population
        The training accuracy of every individual at the end.
    n_tao
        TAO runs made (initial population and children).
    stopped
        ``"completed"``, ``"time_limit"`` or ``"interrupted"`` (Ctrl-C: the best so far is kept).
    time_s
        Wall time.
    leaf_classes
        ``multiclass=True``: the class code of each of the ``2**depth`` leaves
        (:func:`~treeopt_dsl.starts.tao.tao_multiclass`'s layout); ``None`` for the binary layout.
    """

    W: np.ndarray
    b: np.ndarray
    depth: int
    fitness: float
    initial_best: float
    history: list[dict[str, Any]] = field(default_factory=list)
    population: np.ndarray = field(default_factory=lambda: np.zeros(0))
    n_tao: int = 0
    stopped: str = "completed"
    time_s: float = 0.0
    leaf_classes: np.ndarray | None = None

#: one individual: ``(W, b, leaf_classes)`` (``leaf_classes`` is ``None`` in the binary layout)
Tree = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]


def _accuracy(X: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, topo: Topology, thr: float, lt: float,
              sw: np.ndarray, total: float) -> float:
    P = _subtree_predictions(_sides(scores(X, W, b), topo, thr, lt), topo)
    return float(sw[P[:, 0] == (y > 0)].sum()) / total  # as accuracy_score: the weight classified right


def _child_tao(X: np.ndarray, y: np.ndarray, tree: Tree, topo: Topology, weight: np.ndarray, bins: AxisBins,
               eps: float, lt: float | None, max_iter: int, variant: str = "library") -> Tree:
    W, b, leaves = tree
    if variant == "seed004":
        return _author_tao(X, y, to_decision_tree(W, b, topo, eps=eps, leaf_threshold=lt), topo, weight, eps, lt,
                           max_iter)
    if leaves is not None:  # class codes and leaf classes
        W2, b2, leaves2, _ = tao_multiclass(X, y, W, b, leaves, topo, max_iter=max_iter, sample_weight=weight,
                                            eps=eps, leaf_threshold=lt, bins=bins)
        return W2, b2, leaves2
    W2, b2, _ = tao(X, y, W, b, topo, max_iter=max_iter, sample_weight=weight, eps=eps, leaf_threshold=lt, bins=bins)
    return W2, b2, None


def _author_tao(X: np.ndarray, y: np.ndarray, nodes: DecisionTree, topo: Topology, counts: np.ndarray, eps: float,
                lt: float | None, max_iter: int) -> Tree:
    """Seed 004's author's TAO (:func:`~treeopt_dsl.starts.tao_nodes.tao_nodes`) on the tree's own nodes, over the
    rows of the sample: each row as often as ``counts`` says (a bootstrap's draws), in the library's layout."""
    rows = np.repeat(np.arange(len(y)), np.rint(counts).astype(int))
    nodes, _ = tao_nodes(X[rows], y[rows], nodes, n_iter=max_iter)
    return (*from_sklearn(nodes.sklearn_view(), topo.depth, X.shape[1], eps=eps, leaf_threshold=lt), None)


def tmo(X: Any, y: Any, depth: int, *, n_trees: int = 100, n_generations: int = 5, crossover_rate: float = 0.75,
        seed: int = 0, schedule: str = "sequential", n_jobs: int | None = None, time_limit: float | None = None,
        sample_weight: Any = None, eps: float = 0.0, leaf_threshold: float | None = None, max_iter: int = 20,
        callback: Callable[[dict[str, Any]], None] | None = None, multiclass: bool = False,
        tao_variant: str = "library") -> TMOResult:
    """Run TMO ([aldinucci-memetic], Algorithm 1) on ``X`` (n x p) and labels ``y`` in {-1, +1} for trees of ``depth``.

    ``multiclass=True``: ``y`` holds class codes ``0 .. K-1`` (any ``K >= 2``) and every leaf a class: the forest
    is grown on the codes, the children are decoded with majority leaves
    (:func:`~treeopt_dsl.starts.memetic.encoding.decode_multiclass`, the paper's rule for any number of classes) and
    optimized by :func:`~treeopt_dsl.starts.tao.tao_multiclass`; ``result.leaf_classes`` holds the leaves' classes.

    ``n_trees`` is the population size ``k`` (100 in §4), ``n_generations`` is ``n_gen`` (5),
    ``crossover_rate`` is ``CR`` (0.75). ``seed`` fixes the forest, the bootstrap samples, the partners,
    the crossover draws and the random branches: the same seed gives the same tree. ``time_limit``
    (seconds) stops between two children and returns the best tree so far, as Ctrl-C does.
    ``sample_weight`` weighs the fitness and the TAO runs (the bootstrap counts multiply it). ``eps`` and
    ``leaf_threshold`` are the library's decision rules (:func:`~treeopt_dsl.starts.tao.tao`); 0 gives
    exact thresholds. ``callback`` receives a dict after the initial population and after every generation.
    ``tao_variant="seed004"`` runs every TAO as seed 004's author does (:mod:`~treeopt_dsl.starts.tao_nodes`, on the
    tree's own nodes, ``max_iter`` passes: the author's 7), a child's on the rows of the generation's bootstrap
    sample, each drawn row as often as drawn (two classes, equal sample weights).

    Example::

        >>> import numpy as np
        >>> rng = np.random.default_rng(0); X = rng.normal(size=(300, 4))
        >>> y = np.where((X[:, 0] > 0) ^ (X[:, 1] > 0.5), 1, -1)
        >>> r = tmo(X, y, 2, n_trees=10, n_generations=2, seed=0)
        >>> r.fitness >= r.initial_best, r.fitness > 0.9
        (True, True)
    """
    from sklearn.ensemble import RandomForestClassifier

    t0 = time.perf_counter()
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (X.shape[0],) or X.shape[0] < 2:
        raise DataError(f"X must be (n, p) with n >= 2 and y (n,), got {X.shape} and {y.shape}")
    if not np.all(np.isfinite(X)):
        raise DataError("X holds NaN or infinite values")
    if multiclass:
        if not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
            raise DataError("TMO with multiclass=True takes class codes 0 .. K-1 in y")
    elif not np.all(np.isin(y, (-1, 1))):
        raise DataError("TMO takes labels y in {-1, +1}")
    depth = check_depth(depth)
    if int(n_trees) != n_trees or n_trees < 2:
        raise OptionError(f"n_trees (the population size k) must be a whole number >= 2, got {n_trees!r}")
    if int(n_generations) != n_generations or n_generations < 0:
        raise OptionError(f"n_generations must be a whole number >= 0, got {n_generations!r}")
    if not 0.0 <= float(crossover_rate) <= 1.0:
        raise OptionError(f"crossover_rate (CR) must be in [0, 1], got {crossover_rate!r}")
    if schedule not in SCHEDULES:
        raise OptionError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if n_jobs not in (None, 1) and schedule == "sequential":
        raise OptionError("n_jobs > 1 needs schedule='generational' (Algorithm 1's sequential schedule makes one "
                          "child after the other)")
    if time_limit is not None and not time_limit >= 0:
        raise OptionError(f"time_limit must be >= 0 seconds or None, got {time_limit!r}")
    if tao_variant not in TAO_VARIANTS:
        raise OptionError(f"tao_variant must be one of {', '.join(map(repr, TAO_VARIANTS))}, got {tao_variant!r}")
    n_trees, n_generations = int(n_trees), int(n_generations)
    y = y.astype(int)
    n = X.shape[0]
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if sw.shape != (n,) or not np.all(np.isfinite(sw)) or np.any(sw < 0) or sw.sum() <= 0:
        raise DataError("sample_weight must be n finite non-negative numbers, not all 0")
    if tao_variant == "seed004":
        if multiclass or not np.all(sw == sw[0]):
            raise OptionError("tao_variant='seed004' (the author's TAO) takes two classes and equal sample weights")
        sw = np.ones(n)  # the same accuracies; a bootstrap's weights are then its counts
    topo = Topology(depth)
    thr = eps / 2.0
    lt = thr if leaf_threshold is None else float(leaf_threshold)
    total = float(sw.sum())
    bins = AxisBins.of(X)
    splits = RandomSplits(bins)
    rng = np.random.default_rng(seed)
    deadline = None if time_limit is None else t0 + float(time_limit)

    K = int(y.max()) + 1 if multiclass else 2

    def fit(W: np.ndarray, b: np.ndarray, leaves: np.ndarray | None = None) -> float:
        if leaves is not None:
            return 1.0 - class_error(X, y, W, b, leaves, topo, eps=eps, leaf_threshold=lt, sample_weight=sw) / total
        return _accuracy(X, y, W, b, topo, thr, lt, sw, total)

    def genome(W: np.ndarray, b: np.ndarray, leaves: np.ndarray | None = None) -> Any:
        return encode(to_decision_tree(W, b, topo, eps=eps, leaf_threshold=lt, leaf_classes=leaves,
                                       classes=np.arange(K) if leaves is not None else (-1, 1)), depth)

    def decoded(g: Any, weight: np.ndarray) -> Tree:
        if multiclass:
            return decode_multiclass(g, X, y, weight, K, eps=eps, leaf_threshold=lt)
        return (*decode(g, X, y, weight, eps=eps, leaf_threshold=lt), None)

    # 1. the initial population: a random forest, every tree TAO-optimized on the training data
    forest = RandomForestClassifier(n_estimators=n_trees, max_depth=depth, random_state=seed)
    # equal weights are no weights: scikit-learn draws another forest for sample_weight=ones than for None (its
    # bootstrap follows the weights), so TMOClassifier (ones) and the warm start (None) grew different trees
    forest.fit(X, y, sample_weight=None if np.all(sw == sw[0]) else sw)
    pop: list[Tree] = []
    stopped = "completed"
    n_tao = 0
    try:
        for est in forest.estimators_:
            if multiclass:  # the forest's trees hold positions in forest.classes_: map them to the codes
                start: Tree = from_sklearn_multiclass(est.tree_, depth, X.shape[1], eps=eps, leaf_threshold=lt)
                start = (start[0], start[1], forest.classes_.astype(np.intp)[start[2]])
                pop.append(_child_tao(X, y, start, topo, sw, bins, eps, lt, max_iter))
            elif tao_variant == "seed004":  # the author's TAO on the forest tree's own nodes (its classes -1, +1)
                nodes = replace(DecisionTree.from_sklearn(est, dtype="float64"), classes=forest.classes_)
                pop.append(_author_tao(X, y, nodes, topo, sw, eps, lt, max_iter))
            else:
                start = (*from_sklearn(est.tree_, depth, X.shape[1], eps=eps, leaf_threshold=lt), None)  # [-1, 1]
                pop.append(_child_tao(X, y, start, topo, sw, bins, eps, lt, max_iter))
            n_tao += 1
            if deadline is not None and time.perf_counter() > deadline and len(pop) >= 1:
                stopped = "time_limit"
                break
    except KeyboardInterrupt:
        stopped = "interrupted"
        if not pop:
            raise
    fitness = np.array([fit(*tree) for tree in pop])
    best = int(np.argmax(fitness))
    best_tree, best_f = pop[best], float(fitness[best])
    initial_best = best_f
    history: list[dict[str, Any]] = []
    if callback is not None:
        callback({"generation": 0, "best": best_f, "mean": float(fitness.mean()), "replaced": 0,
                  "time_s": time.perf_counter() - t0})
    k = len(pop)

    def offer(i: int, tree: Tree) -> bool:
        """Algorithm 1's two updates for the child of ``t_i``: it replaces ``t_i`` and the best tree when strictly
        fitter; whether it replaced ``t_i``."""
        nonlocal best_tree, best_f
        f = fit(*tree)
        if f > best_f:
            best_tree, best_f = tree, f
        if f > fitness[i]:
            pop[i], fitness[i] = tree, f
            return True
        return False

    try:
        for g in range(1, n_generations + 1):
            if stopped != "completed" or k < 2:
                break
            boot = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float) * sw  # B_D^(g) as sample counts
            replaced = 0
            if schedule == "generational":
                genomes = [genome(*tree) for tree in pop]
                partners = [_partner(rng, i, k) for i in range(k)]
                children = [decoded(crossover(genomes[i], genomes[j], rng, crossover_rate, splits), boot)
                            for i, j in enumerate(partners)]
                done = _run_children(X, y, children, topo, boot, bins, eps, lt, max_iter, n_jobs, deadline,
                                     tao_variant)
                n_tao += len(done)
                for i, tree in enumerate(done):
                    replaced += offer(i, tree)
                if len(done) < k:
                    stopped = "time_limit"
            else:
                for i in range(k):
                    if deadline is not None and time.perf_counter() > deadline:
                        stopped = "time_limit"
                        break
                    j = _partner(rng, i, k)
                    child = crossover(genome(*pop[i]), genome(*pop[j]), rng, crossover_rate, splits)
                    tree = _child_tao(X, y, decoded(child, boot), topo, boot, bins, eps, lt, max_iter, tao_variant)
                    n_tao += 1
                    replaced += offer(i, tree)
            entry = {"generation": g, "best": best_f, "mean": float(fitness.mean()), "replaced": replaced,
                     "time_s": time.perf_counter() - t0}
            history.append(entry)
            if callback is not None:
                callback(entry)
    except KeyboardInterrupt:
        stopped = "interrupted"
    best_W, best_b, best_leaves = best_tree
    return TMOResult(W=best_W.copy(), b=best_b.copy(), depth=depth, fitness=best_f, initial_best=initial_best,
                     history=history, population=fitness.copy(), n_tao=n_tao, stopped=stopped,
                     time_s=time.perf_counter() - t0, leaf_classes=None if best_leaves is None else best_leaves.copy())


def _partner(rng: np.random.Generator, i: int, k: int) -> int:
    """``j ~ U{1..k} \\ {i}`` ([aldinucci-memetic] §3)."""
    j = int(rng.integers(0, k - 1))
    return j + (j >= i)


def _run_children(X: np.ndarray, y: np.ndarray, children: list[Tree], topo: Topology,
                  weight: np.ndarray, bins: AxisBins, eps: float, lt: float, max_iter: int, n_jobs: int | None,
                  deadline: float | None, variant: str = "library") -> list[Tree]:
    """TAO on every child of a generation (joblib when ``n_jobs`` asks; in order, up to the deadline, otherwise)."""
    if n_jobs not in (None, 1):
        from joblib import Parallel, delayed

        return list(Parallel(n_jobs=n_jobs)(delayed(_child_tao)(X, y, tree, topo, weight, bins, eps, lt, max_iter,
                                                                variant) for tree in children))
    out = []
    for tree in children:
        if deadline is not None and time.perf_counter() > deadline:
            break
        out.append(_child_tao(X, y, tree, topo, weight, bins, eps, lt, max_iter, variant))
    return out
