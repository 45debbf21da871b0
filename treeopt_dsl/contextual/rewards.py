"""The rewards of the one-step contextual bandit (thesis §5.2, [aldinucci-thesis-2024] lines 1593-1606) and the labels
of the
supervised baseline (§5.3, line 1655).

Everything here works on the whole ``(n_samples, n_trees)`` matrix of the forest's predictions at once:
entry ``[i, k]`` is what tree ``k`` answers for sample ``i``. The matrix is computed once, before training
(:func:`treeopt_dsl.contextual.forest.tree_predictions`); an action ``a_i`` then only looks its reward up.

    >>> import numpy as np
    >>> pred = np.array([[0, 1, 1], [1, 1, 0]]); y = np.array([1, 0])
    >>> classification_rewards(pred, y).tolist()
    [[-1.0, 1.0, 1.0], [-1.0, -1.0, 1.0]]
    >>> regression_rewards(np.array([[1.0, 2.0, 4.0]]), np.array([2.0])).tolist()  # errors 1, 0, 4: d = 1/4, 0, 1
    [[0.5, 1.0, -1.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError

__all__ = ["classification_rewards", "normalized_squared_error", "regression_rewards",
           "supervised_labels_classification", "supervised_labels_regression"]


def _as_matrix(pred: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    P, t = np.asarray(pred), np.asarray(y)
    if P.ndim != 2 or t.ndim != 1 or P.shape[0] != t.shape[0]:
        raise DataError(f"pred must be (n_samples, n_trees) and y (n_samples,), got {P.shape} and {t.shape}")
    return P, t


def classification_rewards(pred: Any, y: Any) -> np.ndarray:
    """(5.4): ``r = +1`` where tree ``k`` predicts sample ``i``'s class, ``-1`` otherwise.

    ``pred`` is ``(n, B)`` (class codes or labels), ``y`` is ``(n,)`` in the same coding. The thesis states
    (5.4) for ``y`` in {-1, +1}; "correct / wrong" applies unchanged to more classes.
    """
    P, t = _as_matrix(pred, y)
    return np.where(P == t[:, None], 1.0, -1.0)


def normalized_squared_error(pred: Any, y: Any) -> np.ndarray:
    """The ``d`` of (5.5): per sample, the squared error of each tree rescaled to [0, 1] between the best
    (``d = 0``) and the worst (``d = 1``) tree of the forest (line 1606).

    When every tree makes the same squared error on a sample (best == worst; the thesis does not say), ``d``
    is 0 for every tree: all of them are the best, so each gets the best tree's reward, +1, as (5.4) gives +1
    to every tree when all of them are right.
    """
    P, t = _as_matrix(pred, y)
    E = (P.astype(np.float64) - t.astype(np.float64)[:, None]) ** 2
    lo, hi = E.min(axis=1, keepdims=True), E.max(axis=1, keepdims=True)
    span = hi - lo
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(span > 0, (E - lo) / np.where(span > 0, span, 1.0), 0.0)
    return d


def regression_rewards(pred: Any, y: Any) -> np.ndarray:
    """(5.5): ``r = 1 - 2 d``, with ``d`` from :func:`normalized_squared_error`: +1 for the sample's best tree,
    -1 for its worst, linear in the squared error in between."""
    return 1.0 - 2.0 * normalized_squared_error(pred, y)


def supervised_labels_classification(pred: Any, proba_true: Any, y: Any, rng: np.random.Generator) -> np.ndarray:
    """The supervised baseline's target tree per sample (line 1655): among the trees that predict the sample's
    class, the one giving that class the greatest probability; ties among them are broken uniformly at random
    (the thesis does not say how); where no tree is right, a tree drawn uniformly from the whole forest.

    ``pred``: ``(n, B)`` predicted classes; ``proba_true``: ``(n, B)`` probability each tree gives the true
    class; ``y``: ``(n,)`` true classes. Vectorized: random keys in [0, 1) break the ties.
    """
    P, t = _as_matrix(pred, y)
    Q = np.asarray(proba_true, dtype=np.float64)
    if Q.shape != P.shape:
        raise DataError(f"proba_true has shape {Q.shape}, pred {P.shape}")
    right = P == t[:, None]
    score = np.where(right, Q, -np.inf)
    best = right & (score == score.max(axis=1, keepdims=True))
    keys = np.where(best, rng.random(P.shape), -1.0)  # a uniform draw among the tied best
    label = keys.argmax(axis=1)
    none = ~right.any(axis=1)
    label[none] = rng.integers(0, P.shape[1], size=int(none.sum()))
    return label


def supervised_labels_regression(pred: Any, y: Any, rng: np.random.Generator) -> np.ndarray:
    """The supervised baseline's target tree for regression (line 1655): the tree of smallest squared error on
    the sample; exact ties broken uniformly at random."""
    P, t = _as_matrix(pred, y)
    E = (P.astype(np.float64) - t.astype(np.float64)[:, None]) ** 2
    best = E == E.min(axis=1, keepdims=True)
    return np.where(best, rng.random(P.shape), -1.0).argmax(axis=1)
