"""Millisecond calls of the exact route on the 7 binary sets (issue 32): the median in-process wall time of
``get_formulation("oct", depth=d).solve(data)`` per set and depth (25 calls after a warm-up, 5 on mushrooms), on one
line, so that two whole processes (this one and ``exact_calls_peers.py`` in the peers' environment, or this one on
two checkouts) can be run in turn and compared pair by pair.

    PYTHONPATH=. .venv/bin/python benchmarks/exact_calls.py
    PYTHONPATH=. .venv/bin/python benchmarks/exact_calls.py --dump /tmp/cases
    .venv-exact/bin/python benchmarks/exact_calls_peers.py --cases /tmp/cases
    .venv/bin/python benchmarks/exact_calls.py --pairs runs.txt --plot docs/img/exact_calls.png  # table, picture
    .venv/bin/python benchmarks/exact_calls.py --first-call ../main . --rounds 5   # fresh processes, checkouts in turn

(``runs.txt``: lines ``ours LINE`` and ``peers LINE`` from whole runs in turn, e.g.
``benchmarks/results/exact_calls_pairs_2026-11-27.txt``.)

Printed: ``name:depth:median_ms:route:objective:min_ms`` per case (the smallest call is the undisturbed one: on a
shared machine a millisecond call either runs through or loses a time slice to another process, and at load 5 on
2 cores the median of such calls moves by 2-3x between two runs of the same code).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from cli_paths import refuse_missing

from treeopt_dsl.datasets import load
from treeopt_dsl.exact.binarize import binarize
from treeopt_dsl.formulations import get_formulation

BINARY = ("monks-1", "monks-3", "tic-tac-toe", "breast-wisconsin-original", "votes", "krkp", "mushrooms")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", type=Path, help="write each set's scaled X, exact binarization Z and class codes y "
                    "as NAME.npz into this folder (for exact_calls_peers.py) and stop")
    ap.add_argument("--pairs", type=Path, help="a file of whole runs in turn, one per line: 'ours OUTPUT' (this "
                    "script's line) and 'peers OUTPUT' (exact_calls_peers.py's; other labels, e.g. 'main', are "
                    "compared with ours too): print the table of the ratios per case (the median over the rounds of "
                    "each round's ratio) and draw them (--plot)")
    ap.add_argument("--plot", type=Path, default=Path("docs/img/exact_calls.png"))
    ap.add_argument("--first-call", nargs="+", type=Path, metavar="CHECKOUT",
                    help="the first call in a fresh process, for each checkout in turn (PYTHONPATH=CHECKOUT): "
                    "get_formulation('oct', depth=D).solve(load(SET)) and `treeopt fit oct --data SET --depth D`; "
                    "the process' CPU (user + system) and wall seconds, the call's and the engine's own seconds")
    ap.add_argument("--rounds", type=int, default=5, help="--first-call: rounds of the checkouts in turn")
    ap.add_argument("--case", default="monks-3:3", help="--first-call: SET:DEPTH")
    args = ap.parse_args(argv)
    # refused before the first checkout runs
    refuse_missing(ap, "--first-call", args.first_call, "give checkouts of this repository", kind="directory")
    refuse_missing(ap, "--pairs", args.pairs, "give a file of whole runs, e.g. "
                   "benchmarks/results/exact_calls_pairs_2026-11-27.txt")
    if args.first_call:
        name, depth = args.case.split(":")
        print(first_calls(args.first_call, args.rounds, name, int(depth)))
        return
    if args.pairs:
        print(pairs(args.pairs, args.plot))
        return
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


#: a fresh interpreter's first call: import, load, one solve; the call's seconds, the engine's, the objective and
#: where the package came from (the checkout under test, not the editable install)
FIRST_CALL = """import time
from treeopt_dsl.datasets import load
from treeopt_dsl.formulations import get_formulation
import treeopt_dsl
d = load({name!r})
t = time.perf_counter()
r = get_formulation("oct", depth={depth}).solve(d)
print(time.perf_counter() - t, r.runtime_s, r.objective, treeopt_dsl.__file__)
"""


def _run_child(cmd: list[str], root: Path) -> tuple[float, float, str]:
    """The process' CPU (user + system, from the children's rusage) and wall seconds, and its stdout."""
    env = {**os.environ, "PYTHONPATH": str(root.resolve())}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=root)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, out.stdout


def first_calls(roots: list[Path], rounds: int, name: str, depth: int) -> str:
    """``--first-call``: each checkout in turn, ``rounds`` times, the library call and the command line; a line per
    run and the medians per checkout."""
    lines, rows = [], []
    treeopt = str(Path(sys.executable).parent / "treeopt")
    for r in range(rounds):
        for root in roots:
            cpu, wall, out = _run_child([sys.executable, "-c", FIRST_CALL.format(name=name, depth=depth)], root)
            call, engine, objective, where = out.split()[-4:]
            assert where.startswith(str(root.resolve())), where
            rows.append((str(root), "api", cpu, wall, float(call), float(engine)))
            lines.append(f"round {r} {root} api: cpu {cpu:.2f} s wall {wall:.2f} s call {float(call):.3f} s engine "
                         f"{float(engine):.4f} s objective {objective}")
            cpu, wall, out = _run_child([treeopt, "fit", "oct", "--data", name, "--depth", str(depth), "--quiet"],
                                        root)
            rows.append((str(root), "cli", cpu, wall, float("nan"), float("nan")))
            lines.append(f"round {r} {root} cli: cpu {cpu:.2f} s wall {wall:.2f} s")
    for root in roots:
        for kind in ("api", "cli"):
            mine = [row for row in rows if row[0] == str(root) and row[1] == kind]
            lines.append(f"median {root} {kind}: cpu {statistics.median(x[2] for x in mine):.2f} s (range "
                         f"{min(x[2] for x in mine):.2f}-{max(x[2] for x in mine):.2f}), wall "
                         f"{statistics.median(x[3] for x in mine):.2f} s (range {min(x[3] for x in mine):.2f}-"
                         f"{max(x[3] for x in mine):.2f})"
                         + (f", call {statistics.median(x[4] for x in mine):.3f} s, engine "
                            f"{statistics.median(x[5] for x in mine):.4f} s" if kind == "api" else ""))
    return "\n".join(lines)


def _parse(text: str) -> dict[tuple[str, int], tuple[float, str, float]]:
    """One run's line: per case, the median ms, the route (ours) or peer, and the smallest call's ms."""
    out = {}
    for tok in text.split():
        f = tok.split(":")
        out[f[0], int(f[1])] = (float(f[2][:-2]), f[3], float(f[5 if len(f) == 6 and f[5].endswith("ms") else 4][:-2]))
    return out


def pairs(path: Path, plot: Path) -> str:
    """The markdown table of ``--pairs`` and the picture of our default call over the fastest peer (log scale)."""
    rounds: list[dict[str, dict]] = [{}]
    for line in path.read_text().splitlines():
        label, _, rest = line.partition(" ")
        if label in ("round", "end") or not rest.strip():
            continue
        if label in rounds[-1]:
            rounds.append({})
        rounds[-1][label] = _parse(rest)
    rounds = [r for r in rounds if "ours" in r and "peers" in r]
    others = sorted({k for r in rounds for k in r} - {"ours", "peers"})
    head = ("| data | d | route | ours ms (median / min) | fastest peer | peer ms (median / min) | ours / peer (median "
            "/ min) |" + "".join(f" ours / {o} (median / min) |" for o in others))
    lines = [head, "|" + "---|" * (7 + len(others))]
    ratios = []
    for case in rounds[0]["ours"]:
        ours = [r["ours"][case] for r in rounds]
        peer = [r["peers"][case] for r in rounds]
        med = statistics.median(a[0] / b[0] for a, b in zip(ours, peer, strict=True))
        low = statistics.median(a[2] / b[2] for a, b in zip(ours, peer, strict=True))
        ratios.append((case, med, low))
        row = (f"| {case[0]} | {case[1]} | {ours[0][1]} | {statistics.median(a[0] for a in ours):.2f} / "
               f"{statistics.median(a[2] for a in ours):.2f} | {'/'.join(sorted({b[1] for b in peer}))} | "
               f"{statistics.median(b[0] for b in peer):.2f} / {statistics.median(b[2] for b in peer):.2f} | "
               f"{med:.2f}x / {low:.2f}x |")
        for o in others:
            base = [r[o][case] for r in rounds]
            row += (f" {statistics.median(a[0] / b[0] for a, b in zip(ours, base, strict=True)):.2f}x / "
                    f"{statistics.median(a[2] / b[2] for a, b in zip(ours, base, strict=True)):.2f}x |")
        lines.append(row)
    geo = [statistics.geometric_mean([r[i] for r in ratios]) for i in (1, 2)]
    lines.append(f"\n{len(rounds)} rounds; ours / fastest peer: geometric mean {geo[0]:.2f}x of the medians "
                 f"({sum(r[1] <= 1.5 for r in ratios)}/{len(ratios)} within 1.5x), {geo[1]:.2f}x of the smallest calls "
                 f"({sum(r[2] <= 1.5 for r in ratios)}/{len(ratios)})")
    import matplotlib  # the picture only (matplotlib is the docs' extra)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.3 * len(ratios) + 1.5))
    y = np.arange(len(ratios))
    ax.barh(y - 0.2, [r[1] for r in ratios], 0.4, label="median call", color="#3c78d8")
    ax.barh(y + 0.2, [r[2] for r in ratios], 0.4, label="smallest call", color="#93c47d")
    ax.axvline(1.0, color="black", lw=0.8)
    ax.axvline(1.5, color="gray", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_yticks(y, [f"{c[0]} d={c[1]}" for c, _, _ in ratios], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("our default call / the fastest peer (log scale; dashed: 1.5x)")
    ax.set_title("Binary sets: the default exact route against STreeD, DL8.5 and ConTree")
    ax.legend(fontsize=8)
    fig.tight_layout()
    plot.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(plot, dpi=100)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
