"""What the exact engines cost before they run: seconds and peak bytes from the rows ``n``, features ``p``, threshold
columns ``c`` and depth ``d``. ``--solver auto`` compares the seconds (:meth:`treeopt_dsl.exact.route.StreedEngine.
estimate`); a run whose bytes exceed the memory budget (:func:`treeopt_dsl.defaults.memory_budget`) is refused before
it starts, naming what would fit.

Fitted by ``benchmarks/exact_cost_fit.py`` (least squares on the logarithms of the whole call less its fixed part;
rows in ``benchmarks/results/exact_cost_fit_2026-11-27.jsonl``: the 7 binary sets and the 9 Table 3.1 sets at depth
2 and 3, each engine forced on the same data back to back, the smallest of 9 calls on the binary sets, haberman,
heart, parkinsons and wholesale, the median of 5 on the others, and the depth-4 rows of
``exact_routes_depth4_2026-11-27.jsonl``). On those 23 cases where both engines ran, ``auto`` picks the engine
measured fastest in 22 (haberman at depth 2: the count 2.5 ms against ConTree's 1.0 ms); before this fit, 21
(breast-wisconsin-original and heart at depth 2 went to the count).

* the **count** (depth 1-2, :mod:`~treeopt_dsl.exact.depth2`): its products (0/1 data) ``~ n c`` (a fit with an ``n
  c^2`` term gave that term no weight: at these sizes the products are memory-bound), its rank histograms (many cuts
  per feature) ``~ n p^2 + c^2`` (one histogram per root feature over every child feature; the tables);
* **STreeD** (depth 3 and deeper on the binarization): ``~ n c^3`` at depth 3 (a factor ``(c/p)^g`` for the cuts
  per feature fitted ``g = 0.03``: none), a factor ``c / 20`` per level deeper; its caches grow with ``c^2`` (3,990
  columns peaked at 2.3 GB at depth 3; 15,310 took over 12 GB at depth 2);
* **ConTree** (continuous features, no binarization): ``~ n p^(d-1) (c/p)^g`` per depth, ``g`` 0.35 at depth 2 and
  0.65 at depth 3: a feature with many distinct values costs more than a binary one (breast-wisconsin-original, 80
  cuts over 9 features, depth 2: 1.9 ms, where the old ``n p`` model estimated 16 ms and sent it to the count's 7 ms;
  monks at depth 3: 22 ms, estimated 1.6 s before). At depth 4 the fit is poor: measured over estimated spans
  0.01-65 on the seven rows (breast 1.1 s and parkinsons 0.17 s, near-perfect trees whose bounds prune, against
  haberman 1.0 s on 3 features): ConTree's bounds decide there, not ``n``, ``p`` and ``c``; breast is now estimated
  at 186 s (610 s before). Memory per sample and feature (adult, 45,222 x 104: 0.48 GB at its peak with the data);
* the **binarization** both of the first two need: per sample and column, the comparison's float64 and bool and the
  int32 columns at once.

>>> s, b = binarized(n=297, p=22, c=388, depth=3)
>>> 1 < s < 30 and b < 2**30
True
"""

from __future__ import annotations

import numpy as np

from treeopt_dsl.defaults import memory_text
from treeopt_dsl.exact.depth2 import BLOCK_BYTES, MAX_DEPTH, RANKS_FROM

__all__ = ["binarized", "binarized_fits", "contree", "streed_setup"]

#: seconds per ``n c`` of the count's products (0/1 data: fewer than ``RANKS_FROM`` cuts per feature), and per
#: ``n p^2`` and per ``c^2`` of its rank histograms (many cuts per feature)
COUNT_COST = (1.4e-8, 1.45e-7, 1.4e-8)
#: the rank histograms' fixed seconds (the rank tables' setup): in the fit, ConTree was faster than the count's rank
#: regime in 15 of 15 measured cases while the fit without it sent haberman at depth 2 to the count (1.2-1.4 ms
#: measured, 1.0 ms estimated, against ConTree's 0.53-0.58 ms; 2026-11-27); with it no other measured choice changes
COUNT_RANKS_FIXED = 1e-3
#: seconds per ``n c^3`` of STreeD at depth 3 (fitted with a factor ``(c/p)^g`` for the cuts per feature: ``g``
#: came out 0.03)
STREED_COST = 1.36e-10
#: seconds per ``n c^2`` of STreeD's setup before its search, outside its own clock (heart, 388 columns: 0.11 s;
#: spectf, 1,843: 1.4 s; parkinsons, 3,892: 4.6 s, so 10 s under a 5 s limit; climate, 9,702: 109 s under 60 s)
STREED_SETUP_COST = 1.6e-9
#: ConTree per depth: seconds per ``n p^(d-1)`` and the exponent of the cuts per feature (``benchmarks/
#: exact_cost_fit.py``); depth 1 takes depth 2's
CONTREE_COST: dict[int, tuple[float, float]] = {2: (3.2e-7, 0.35), 3: (3.2e-7, 0.65), 4: (2.1e-7, 0.65)}
#: the factor per level below the deepest fitted depth
CONTREE_DEEPER = 4.0
#: a call's fixed seconds (the smallest calls measured: 0.6-0.7 ms, the count on monks and ConTree on haberman)
OVERHEAD_S = 5e-4
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
        work = (COUNT_COST[0] * n * c if c < RANKS_FROM * p  # the products (depth2.solve chooses)
                else COUNT_RANKS_FIXED + COUNT_COST[1] * n * float(p) ** 2 + COUNT_COST[2] * float(c) ** 2)
        return (OVERHEAD_S + work,
                table + COUNT_RANK_BYTES * n * p + min(2 * BLOCK_BYTES, 16 * float(c) ** 2))
    return (OVERHEAD_S + STREED_COST * n * float(c) ** 3 * (c / 20) ** (depth - 3),
            table + STREED_BYTES * float(c) ** 2)


def streed_setup(n: int, c: int) -> float:
    """Seconds STreeD spends on ``n`` rows and ``c`` threshold columns before its clock starts (its time limit is
    the search's): its search gets the time left less this, and a run whose setup alone exceeds the time left is
    not started (:func:`~treeopt_dsl.exact.dp.fit_tree`).

    >>> round(streed_setup(540, 9702))
    81
    """
    return STREED_SETUP_COST * n * float(c) ** 2


def contree(n: int, p: int, depth: int, cuts: int | None = None) -> tuple[float, float]:
    """``(seconds, bytes)`` of ConTree on ``n`` rows and ``p`` features with ``cuts`` distinct cuts in all (``None``:
    one per feature, binary features): ``k_d n p^(d-1) (cuts/p)^g_d`` (:data:`CONTREE_COST`), a factor
    :data:`CONTREE_DEEPER` per level below the deepest fitted.

    >>> round(contree(683, 9, 2, cuts=80)[0], 4) < round(binarized(683, 9, 80, 2)[0], 4)  # ConTree on few values
    True
    """
    c = max(1.0, (p if cuts is None else cuts) / max(p, 1))  # cuts per feature
    deepest = max(CONTREE_COST)
    k, g = CONTREE_COST[min(max(depth, 2), deepest)]
    seconds = k * n * p ** max(1, depth - 1) * c**g * CONTREE_DEEPER ** max(0, depth - deepest)
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
