"""What the exact engines cost before they run: seconds and peak bytes from the rows ``n``, features ``p``, threshold
columns ``c`` and depth ``d``. ``--solver auto`` compares the seconds (:meth:`treeopt_dsl.exact.route.StreedEngine.
estimate`); a run whose bytes exceed the memory budget (:func:`treeopt_dsl.defaults.memory_budget`) is refused before
it starts, naming what would fit.

Fitted on measurements here (2-core Xeon, 2026-11-25; ``benchmarks/exact_routes.py``, docs/benchmarks.md "Exact
routes"):

* the **count** (depth 1-2, :mod:`~treeopt_dsl.exact.depth2`): ``~ n c + c^2``;
* **STreeD** (depth 3 and deeper on the binarization): ``~ n c^3 max(1, c/p)`` at depth 3, a factor ``c / 20`` per
  level deeper: many cuts per feature cost more than as many binary features (refitted 2026-11-27, the whole call
  under load 10-13: heart, 297 rows, 388 cuts over 22 features: 3.8 s, where ``n c^3`` alone predicted 0.87 s and
  the route took STreeD over ConTree's 0.5 s; breast-wisconsin-original, 80 over 9: 0.10 s; krkp, 73 binary:
  0.09 s; mushrooms, 111 binary: 0.3-0.6 s; heart at depth 4 did not finish in 300 s, ConTree proves it in 53 s);
  its caches grow with ``c^2`` (3,990 columns peaked at 2.3 GB at depth 3; 15,310 took over 12 GB at depth 2);
* **ConTree** (continuous features, no binarization): ``~ n p^(d-1) 4^(d-2)``, refitted on
  ``benchmarks/results/exact_routes_2026-11-27.jsonl`` (the whole call: 2.1-2.9e-6 s per ``n p`` at depth 2 on
  breast, heart, ionosphere, climate; 0.75-1.1e-5 per ``n p^2`` at depth 3 on breast, climate, ionosphere, sonar,
  up to 6e-5 on spectf), memory per sample and feature (adult, 45,222 x 104: 0.48 GB at its peak with the data);
* the **binarization** both of the first two need: per sample and column, the comparison's float64 and bool and the
  int32 columns at once.

>>> s, b = binarized(n=297, p=22, c=388, depth=3)
>>> 1 < s < 30 and b < 2**30
True
"""

from __future__ import annotations

import numpy as np

from treeopt_dsl.defaults import memory_text
from treeopt_dsl.exact.depth2 import BLOCK_BYTES, MAX_DEPTH

__all__ = ["binarized", "binarized_fits", "contree", "streed_setup"]

#: seconds per ``n c`` and per ``c^2`` of the count
COUNT_COST = (1.2e-7, 7e-9)
#: seconds per ``n c^3 max(1, c/p)`` of STreeD at depth 3
STREED_COST = 4e-11
#: seconds per ``n c^2`` of STreeD's setup before its search, outside its own clock (heart, 388 columns: 0.11 s;
#: spectf, 1,843: 1.4 s; parkinsons, 3,892: 4.6 s, so 10 s under a 5 s limit; climate, 9,702: 109 s under 60 s)
STREED_SETUP_COST = 1.6e-9
#: seconds per ``n p^(d-1)`` of ConTree at depth 2, and the factor per level deeper
CONTREE_COST = (2.5e-6, 4.0)
#: a call's fixed seconds
OVERHEAD_S = 1e-3
#: bytes per sample and threshold column of the binarization at its peak
BINARIZED_BYTES = 13
#: bytes per sample and feature of the count's rank tables
COUNT_RANK_BYTES = 16
#: bytes per squared threshold column of STreeD's caches
STREED_BYTES = 145
#: bytes per sample and feature of ConTree, and its fixed part
CONTREE_BYTES = (64, 64 * 2**20)


def binarized(n: int, p: int, c: int, depth: int) -> tuple[float, float]:
    """``(seconds, bytes)`` of the count (depth <= 2) or STreeD (deeper) on ``n`` rows, ``p`` features and ``c``
    threshold columns."""
    table = BINARIZED_BYTES * n * c
    if depth <= MAX_DEPTH:
        return (OVERHEAD_S + COUNT_COST[0] * n * c + COUNT_COST[1] * c * c,
                table + COUNT_RANK_BYTES * n * p + min(2 * BLOCK_BYTES, 16 * float(c) ** 2))
    per_feature = max(1.0, c / max(p, 1))  # cuts per feature: a continuous feature's cuts cost more than binaries
    return (OVERHEAD_S + STREED_COST * n * float(c) ** 3 * per_feature * (c / 20) ** (depth - 3),
            table + STREED_BYTES * float(c) ** 2)


def streed_setup(n: int, c: int) -> float:
    """Seconds STreeD spends on ``n`` rows and ``c`` threshold columns before its clock starts (its time limit is
    the search's): its search gets the time left less this, and a run whose setup alone exceeds the time left is
    not started (:func:`~treeopt_dsl.exact.dp.fit_tree`).

    >>> round(streed_setup(540, 9702))
    81
    """
    return STREED_SETUP_COST * n * float(c) ** 2


def contree(n: int, p: int, depth: int) -> tuple[float, float]:
    """``(seconds, bytes)`` of ConTree on ``n`` rows and ``p`` features."""
    seconds = CONTREE_COST[0] * n * p ** max(1, depth - 1) * CONTREE_COST[1] ** max(0, depth - 2)
    return OVERHEAD_S + seconds, CONTREE_BYTES[0] * n * p + CONTREE_BYTES[1]


def binarized_fits(n: int, cuts: np.ndarray, depth: int, budget: float) -> list[str]:
    """What would fit ``budget`` bytes for the count or STreeD on ``n`` rows whose features have ``cuts`` distinct
    cuts each, when every cut does not: the largest ``--max-thresholds K`` (quantile cuts, an approximation) and
    the deepest smaller depth over every cut.

    >>> binarized_fits(10_000, np.full(10, 1_000), 3, 2**30)
    ['--max-thresholds 128 (at most 128 quantile cuts per feature, an approximation: ~385 MB)']
    """
    p, out = cuts.size, []
    for k in (256, 128, 64, 32, 16, 8, 4, 2, 1):
        need = binarized(n, p, int(np.minimum(cuts, k).sum()), depth)[1]
        if need <= budget:
            out.append(f"--max-thresholds {k} (at most {k} quantile cuts per feature, an approximation: "
                       f"~{memory_text(need)})")
            break
    for d in range(depth - 1, 0, -1):
        if binarized(n, p, int(cuts.sum()), d)[1] <= budget:
            out.append(f"depth {d} (every cut)")
            break
    return out
