"""DSL against the floor, interleaved in one process (less run-to-run noise than fresh interpreters).

    .venv/bin/python benchmarks/compile_interleaved.py              # OLCT depth 2, N = 5000, p = 50, 21 pairs
    .venv/bin/python benchmarks/compile_interleaved.py --n 20000 --pairs 11

Each pair times the DSL (build + compile + hand-off to HiGHS) and the floor (numpy CSR straight into
``passModel``) in alternating order, after two warm-up rounds. Prints the medians, the ratio of the
medians, of the minima, and the median of the paired ratios. ``--steady-heap`` re-runs the script
with glibc keeping freed memory (see ``compile_speed.py``), which takes page faults out of both.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import compile_speed as cs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--p", type=int, default=50)
    ap.add_argument("--pairs", type=int, default=21)
    ap.add_argument("--steady-heap", action="store_true", help="glibc keeps freed memory: no page-fault noise")
    args = ap.parse_args()
    if args.steady_heap and not cs.steady_heap_active():
        os.execve(sys.executable, [sys.executable, *sys.argv], cs.worker_env(True))  # tunables act at start
    X, y = cs.make_data(args.n, args.p)
    for _ in range(2):
        cs.run_once("dsl", X, y)
        cs.run_once("floor", X, y)
    times: dict[str, list[float]] = {"dsl": [], "floor": []}
    for k in range(args.pairs):
        for tool in ("dsl", "floor") if k % 2 == 0 else ("floor", "dsl"):
            gc.collect()
            t0 = time.perf_counter()
            handle = cs.run_once(tool, X, y)
            times[tool].append(time.perf_counter() - t0)
            del handle
    d, f = np.array(times["dsl"]), np.array(times["floor"])
    print(f"N = {args.n}, p = {args.p}, {args.pairs} pairs{', steady heap' if cs.steady_heap_active() else ''}")
    print(f"dsl   median {np.median(d):.4f} s [{d.min():.4f}-{d.max():.4f}]")
    print(f"floor median {np.median(f):.4f} s [{f.min():.4f}-{f.max():.4f}]")
    print(f"ratio of medians {np.median(d) / np.median(f):.2f}, of minima {d.min() / f.min():.2f}, "
          f"median of paired ratios {np.median(d / f):.2f}")


if __name__ == "__main__":
    main()
