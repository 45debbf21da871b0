"""Memetic classification trees: TMO ([aldinucci-memetic]; thesis §3.3), built on TAO (:mod:`treeopt_dsl.starts.tao`).

* :func:`~treeopt_dsl.starts.memetic.tmo.tmo`: the memetic algorithm (Algorithm 1);
* :mod:`~treeopt_dsl.starts.memetic.encoding`: the fixed-length encoding (§3.1) and majority decoding;
* :mod:`~treeopt_dsl.starts.memetic.crossover`: the stochastic node-wise crossover with its conversions (§3.2);
* :mod:`~treeopt_dsl.estimator.memetic`: :class:`TMOClassifier` and :class:`TAOClassifier` (scikit-learn);
* ``treeopt fit tmo`` / ``treeopt fit tao``: :mod:`treeopt_dsl.cli.memetic`.
"""

from treeopt_dsl.starts.memetic.tmo import TMOResult, tmo

__all__ = ["TMOResult", "tmo"]
