"""The peers' side of ``exact_calls.py``, run in their environment (``.venv-exact``): STreeD and DL8.5 on the exact
binarization and ConTree on the scaled features (where it is not minutes) of the cases ``exact_calls.py --dump``
wrote; per case the fastest peer's median wall time over 25 fits (5 on mushrooms), and the smallest fit of any
peer, on one line: ``name:depth:median_ms:peer:min_ms:peer``.

    .venv-exact/bin/python benchmarks/exact_calls_peers.py --cases /tmp/cases
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from cli_paths import refuse_missing

warnings.simplefilter("ignore")

BINARY = ("monks-1", "monks-3", "tic-tac-toe", "breast-wisconsin-original", "votes", "krkp", "mushrooms")
SLOW_FOR_CONTREE = ("tic-tac-toe", "votes", "krkp", "mushrooms")  # ConTree takes seconds to minutes at depth 3


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=Path, required=True)
    args = ap.parse_args(argv)
    refuse_missing(ap, "--cases", [args.cases / f"{n}.npz" for n in BINARY],
                   "give the folder exact_calls.py --dump wrote")
    from pycontree import ConTree
    from pydl85 import DL85Classifier
    from pystreed import STreeDClassifier

    out = []
    for name in BINARY:
        case = np.load(args.cases / f"{name}.npz")
        X, Z, y = case["X"], case["Z"], case["y"]
        for depth in (2, 3):
            fits = {"STreeD": lambda d=depth, Z=Z, y=y: STreeDClassifier(max_depth=d, time_limit=300).fit(Z, y),
                    "DL8.5": lambda d=depth, Z=Z, y=y: DL85Classifier(max_depth=d, time_limit=300).fit(Z, y)}
            if depth == 2 or name not in SLOW_FOR_CONTREE:
                fits["ConTree"] = lambda d=depth, X=X, y=y: ConTree(max_depth=d, time_limit=300).fit(X, y)
            best, least = {}, {}
            for peer, fit in fits.items():
                fit()
                times = []
                for _ in range(5 if name == "mushrooms" else 25):
                    t = time.perf_counter()
                    fit()
                    times.append(time.perf_counter() - t)
                best[peer] = statistics.median(times)
                least[peer] = min(times)
            fastest, quickest = min(best, key=best.get), min(least, key=least.get)
            out.append(f"{name}:{depth}:{best[fastest] * 1e3:.2f}ms:{fastest}:{least[quickest] * 1e3:.2f}ms:{quickest}")
    print(" ".join(out))


if __name__ == "__main__":
    main()
