"""Millisecond calls of the exact route on the 7 binary sets (issue 32): the median in-process wall time of
``get_formulation("oct", depth=d).solve(data)`` per set and depth (25 calls after a warm-up, 5 on mushrooms), on one
line, so that two whole processes (this one and ``exact_calls_peers.py`` in the peers' environment, or this one on
two checkouts) can be run in turn and compared pair by pair.

    PYTHONPATH=. .venv/bin/python benchmarks/exact_calls.py
    PYTHONPATH=. .venv/bin/python benchmarks/exact_calls.py --dump /tmp/cases
    .venv-exact/bin/python benchmarks/exact_calls_peers.py --cases /tmp/cases

Printed: ``name:depth:median_ms:route:objective:min_ms`` per case (the smallest call is the undisturbed one: on a
shared machine a millisecond call either runs through or loses a time slice to another process, and at load 5 on
2 cores the median of such calls moves by 2-3x between two runs of the same code).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from treeopt_dsl.datasets import load
from treeopt_dsl.exact.binarize import binarize
from treeopt_dsl.formulations import get_formulation

BINARY = ("monks-1", "monks-3", "tic-tac-toe", "breast-wisconsin-original", "votes", "krkp", "mushrooms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", type=Path, help="write each set's scaled X, exact binarization Z and class codes y "
                    "as NAME.npz into this folder (for exact_calls_peers.py) and stop")
    args = ap.parse_args()
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
        for name in BINARY:
            prep = get_formulation("oct", depth=2).prepare(load(name))
            np.savez(args.dump / f"{name}.npz", X=prep.X, Z=binarize(prep.X).Z.astype(np.int32),
                     y=prep.class_index.astype(np.int32))
        return
    out = []
    for name in BINARY:
        data = load(name)
        for depth in (2, 3):
            spec = get_formulation("oct", depth=depth)
            spec.solve(data)
            times = []
            for _ in range(5 if name == "mushrooms" else 25):
                t = time.perf_counter()
                res = spec.solve(data)
                times.append(time.perf_counter() - t)
            out.append(f"{name}:{depth}:{statistics.median(times) * 1e3:.2f}ms:{res.solver}:{res.objective}:"
                       f"{min(times) * 1e3:.2f}ms")
    print(" ".join(out))


if __name__ == "__main__":
    main()
