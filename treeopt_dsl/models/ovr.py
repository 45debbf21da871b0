"""One view of a one-vs-rest bundle of binary trees (OLCT, MARGOT and the other binary tree formulations on more than
two classes, docs/multiclass.md): :class:`OneVsRestTrees` prints them one after the other and draws them side by
side in one figure.

It is not one tree: class ``k``'s tree separates ``k`` from the other classes, and a sample is predicted the class
whose tree gives it the highest score, so reading a prediction means following ``K`` paths (one per tree) and
comparing their ``K`` scores. The view says so in its header and titles.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any

import numpy as np

from treeopt_dsl.errors import DataError
from treeopt_dsl.models.pictures import pyplot


class OneVsRestTrees(tuple):
    """The ``K`` binary trees of a one-vs-rest fit (a tuple: ``trees[k]`` is class ``classes[k]`` against the rest),
    with one text (:meth:`text`) and one figure (:meth:`plot`).

    Each tree was fitted on ``y == classes[k]`` (labels 0/1); the view names its two sides ``classes[k]`` and
    ``not classes[k]``. ``predict`` of the estimator is the class of the tree with the highest score
    (``decision_function`` gives the ``K`` scores).

    Example::

        >>> clf = OptimalTreeClassifier(formulation="olct", depth=1).fit(X_iris, y_iris)  # doctest: +SKIP
        >>> print(clf.tree_)                                   # the three trees, one after the other  # doctest: +SKIP
        >>> clf.tree_.plot().savefig("ovr.png")                # side by side in one figure  # doctest: +SKIP
    """

    classes: tuple[Any, ...]

    def __new__(cls, trees: Any, classes: Any) -> OneVsRestTrees:
        obj = super().__new__(cls, tuple(trees))
        if len(obj) != len(tuple(classes)):
            raise DataError(f"OneVsRestTrees: {len(obj)} trees for {len(tuple(classes))} classes")
        obj.classes = tuple(classes)
        return obj

    def __getnewargs__(self) -> tuple[Any, ...]:  # pickling: the trees and the classes
        return (tuple(self), self.classes)

    def sided(self, k: int) -> Any:
        """Tree ``k`` with its two classes named ``not <class>`` and ``<class>`` (for printing and drawing)."""
        c = self.classes[k]
        tree = self[k]
        try:
            return replace(tree, classes=(f"not {c}", f"{c}"))
        except TypeError:  # not a dataclass with classes: as it is
            return tree

    def lean(self) -> OneVsRestTrees:
        """Every tree without its training data (:meth:`TreeModel.lean <treeopt_dsl.models.tree.TreeModel.lean>`)."""
        return OneVsRestTrees([t.lean() if hasattr(t, "lean") else t for t in self], self.classes)

    def text(self, max_terms: int = 6) -> str:
        """The ``K`` trees one after the other, each headed by the class it separates from the rest."""
        lines = [f"one-vs-rest: {len(self)} binary trees, one per class; a sample is predicted the class whose tree "
                 "gives it the highest score (follow each tree's path, compare the K scores)"]
        for k, c in enumerate(self.classes):
            lines += ["", f"[{k + 1}/{len(self)}] {c} vs rest:", _call(self.sided(k).text, max_terms=max_terms)]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def to_dot(self) -> str:
        """The ``K`` trees as one Graphviz DOT text (the trees' own ``to_dot``, one graph after the other)."""
        return "\n".join(_call(self.sided(k).to_dot) for k in range(len(self)))

    def plot(self, max_terms: int = 3, X: Any = None, y: Any = None, fontsize: float = 7.0,
             width: float | None = None) -> Any:
        """The ``K`` trees side by side in one matplotlib figure (one panel per class, titled ``<class> vs rest``);
        returns the figure. With raw ``X`` and labels ``y`` every leaf shows the training samples of ``<class>`` and
        of the rest that reach it. ``width``: the figure's width in inches (default: 5 per tree, at most 40)."""
        plt = pyplot()
        K = len(self)
        depth = max(int(getattr(getattr(t, "topology", None), "depth", 2)) for t in self)
        fig, axes = plt.subplots(1, K, figsize=(width or min(40.0, 5.0 * K), max(2.8, 1.5 * (depth + 1) + 0.6)),
                                 squeeze=False)
        for k, c in enumerate(self.classes):
            yk = None if y is None else np.where(np.asarray(y) == c, f"{c}", f"not {c}")
            _call(self.sided(k).plot, ax=axes[0, k], max_terms=max_terms, X=X, y=yk, fontsize=fontsize)
            axes[0, k].set_title(f"{c} vs rest", fontsize=fontsize + 2)
        fig.suptitle("one-vs-rest: the predicted class is the one whose tree scores highest", fontsize=fontsize + 2)
        fig.tight_layout()
        return fig


def _call(method: Any, **kw: Any) -> Any:
    """``method`` with the keyword arguments it takes (the tree models' ``text`` / ``plot`` differ in options)."""
    params = inspect.signature(method).parameters
    return method(**{k: v for k, v in kw.items() if k in params})
