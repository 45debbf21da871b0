"""The exact routes for axis-aligned trees (OCT, 0-1 loss) against the peers a user would otherwise pick, side by side
in one run (issue 32): binary and continuous data, depth 2 and 3, and depth 4 where ConTree proves in the time limit.

    .venv/bin/python benchmarks/exact_routes.py                       # every set, depth 2 and 3 (about an hour)
    .venv/bin/python benchmarks/exact_routes.py --datasets heart votes --depths 2 3 --repeats 3
    .venv/bin/python benchmarks/exact_routes.py --depth4 --datasets table31 --json-out benchmarks/results/x.jsonl

Per dataset and depth, on the same data:

* ours, what a user calls: ``get_formulation("oct", depth=d).solve(data)`` (``solver="auto"``: the route registry
  picks the engine before anything is built; the route chosen is printed), and each engine forced
  (``solver="streed"``: the depth-1/2 count and STreeD on the exact binarization; ``solver="contree"``); wall
  time per call in this process (the median of ``--repeats`` after a warm-up; one call when it takes over 2 s),
  training errors, status;
* the first call in a fresh process (imports included), against the engine's own time in that call;
* the peers in their own environment (``.venv-exact``, ``benchmarks/exact_peers.py``): ConTree and pytrees-rs'
  ConTree on the continuous features, STreeD, DL8.5, pytrees-rs' DL8.5 and GOSDT on the exact binarization (when it
  has at most ``--max-columns`` columns), CART.

Printed: the ratio of our default call to the fastest exact peer (the issue's target is 1.5x), whether every exact
answer has the same errors (all are the optimum over every distinct cut), who proved optimality; a picture of the
ratios on a log scale (``--plot``).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from cli_paths import refuse_missing, refuse_unwritable, refuse_wrong_kind
from peer_envs import peer_python

from treeopt_dsl.datasets import load
from treeopt_dsl.exact.binarize import binarize
from treeopt_dsl.formulations import get_formulation

ROOT = Path(__file__).resolve().parents[1]
BINARY = ("monks-1", "monks-3", "tic-tac-toe", "breast-wisconsin-original", "votes", "krkp", "mushrooms")
TABLE31 = ("breast", "climate", "haberman", "heart", "ionosphere", "parkinsons", "sonar", "spectf", "wholesale")
LARGE = ("breast-cancer", "spambase", "adult")  # depth 2 only
EXACT_PEERS = ("ConTree", "pytrees ConTree", "STreeD", "DL8.5", "pytrees DL8.5", "GOSDT")


def timed(call, repeats: int):
    """The result of ``call`` and the median of its wall times (one call when it takes over two seconds)."""
    times, res = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        res = call()
        times.append(time.perf_counter() - t)
        if times[-1] > 2.0:
            break
    return res, statistics.median(times)


def ours(spec, data, solver: str | None, limit: float, repeats: int) -> dict:
    kw = {} if solver is None else {"solver": solver}
    try:
        res, s = timed(lambda: spec.solve(data, time_limit=limit, **kw), repeats)
    except Exception as exc:  # a refusal (ModelTooLarge, SolverNotAvailable) is a row, not a crash
        return {"s": None, "errors": None, "status": type(exc).__name__, "note": str(exc)[:160]}
    errors = int(round(float(res.certificate.terms.get("loss", res.objective)))) if res.certificate else None
    return {"s": s, "errors": errors, "status": res.status.value, "route": f"{res.solver}/{res.backend}",
            "why": (res.route or {}).get("why", "")}


def first_call(name: str, depth: int, limit: float) -> dict:
    """A fresh interpreter: import, load, solve once; the total and the engine's own time."""
    code = (f"import time; t=time.perf_counter()\nfrom treeopt_dsl.datasets import load\n"
            f"from treeopt_dsl.formulations import get_formulation\nd=load({name!r})\n"
            f"t1=time.perf_counter(); r=get_formulation('oct', depth={depth}).solve(d, time_limit={limit})\n"
            f"print(time.perf_counter()-t, time.perf_counter()-t1, r.runtime_s)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=limit * 3)
    if out.returncode != 0:
        return {"first_s": None}
    total, call, engine = (float(v) for v in out.stdout.split()[-3:])
    return {"first_s": total, "first_call_s": call, "first_engine_s": engine}


def peers(X: np.ndarray, y: np.ndarray, depth: int, limit: float, repeats: int, max_columns: int) -> list[dict]:
    bz = binarize(X)
    case = {"X": X, "y": y, "depth": depth, "time_limit": limit, "repeats": repeats}
    if bz.n_columns <= max_columns:
        case["Z"] = bz.Z.astype(np.int32)
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(Path(tmp) / "case.npz", **case)
        out = Path(tmp) / "out.json"
        try:
            subprocess.run([str(peer_python("exact")), str(ROOT / "benchmarks" / "exact_peers.py"),
                            str(Path(tmp) / "case.npz"), str(out)], check=True, timeout=limit * 20)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            return [{"peer": "all", "errors": None, "s": None, "note": str(exc)[:160]}]
        return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=[*BINARY, *TABLE31, *LARGE],
                    help="names, 'binary' or 'table31'")
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--depth4", action="store_true", help="also depth 4 on the Table 3.1 sets")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--forced-limit", type=float, default=60.0,
                    help="the time limit of the calls that force one engine (--solver streed / contree)")
    ap.add_argument("--forced", nargs="*", default=["streed", "contree"], choices=["streed", "contree"],
                    help="the engines forced one by one besides the default call (none: the default call only)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-columns", type=int, default=4000, help="the largest binarization the binary peers get")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "exact_routes.png")
    ap.add_argument("--from-json", type=Path, help="print the summary, a markdown table and the picture of the "
                    "rows of an earlier --json-out file instead of running")
    args = ap.parse_args(argv)
    refuse_missing(ap, "--from-json", args.from_json, "give the --json-out file of an earlier run")
    refuse_wrong_kind(ap, "--plot", args.plot, "give a .png file name")  # its directory is made if missing
    if not args.from_json:  # refused before the first dataset, not after it
        refuse_unwritable(ap, "--json-out", args.json_out, "the rows")
    if args.from_json:
        rows = [json.loads(t) for t in args.from_json.read_text().splitlines() if t.strip()]
        print(markdown(rows))
        summarize(rows, args.plot)
        return 0
    names = [n for a in args.datasets for n in (BINARY if a == "binary" else TABLE31 if a == "table31" else [a])]
    warm = load("votes")  # imports and first-call costs out of the timed rows
    get_formulation("oct", depth=2).solve(warm)
    get_formulation("oct", depth=2).solve(warm, solver="contree")
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, time limit {args.time_limit:g} s, "
          f"median of {args.repeats}")
    rows = []
    for name in names:
        data = load(name)
        depths = [2] if name in LARGE else list(args.depths) + ([4] if args.depth4 and name in TABLE31 else [])
        for depth in depths:
            spec = get_formulation("oct", depth=depth)
            prep = spec.prepare(data)
            row = {"dataset": name, "n": data.n_samples, "p": data.n_features, "depth": depth,
                   "cuts": binarize(prep.X).n_columns, "binary": bool(np.all([np.unique(c).size <= 2
                                                                             for c in prep.X.T]))}
            row["auto"] = ours(spec, data, None, args.time_limit, args.repeats)
            for solver in ("streed", "contree"):
                if solver not in args.forced:
                    row[solver] = {"s": None, "errors": None, "status": "not run"}
                    continue
                row[solver] = ours(spec, data, solver, min(args.time_limit, args.forced_limit), args.repeats)
            row.update(first_call(name, depth, args.time_limit))
            row["peers"] = [] if args.no_peers else peers(prep.X, prep.class_index, depth, args.time_limit,
                                                          args.repeats, args.max_columns)
            exact = [p for p in row["peers"] if p["peer"] in EXACT_PEERS and p["s"] is not None and p.get("proven")]
            best = min(exact, key=lambda p: p["s"]) if exact else None
            row["fastest_peer"] = best["peer"] if best else None
            row["ratio"] = (row["auto"]["s"] / best["s"]) if best and row["auto"]["s"] else None
            errs = {p["errors"] for p in exact} | {row["auto"]["errors"]}
            row["agree"] = len(errs - {None}) <= 1
            rows.append(row)
            print(line(row), flush=True)
            if args.json_out:
                with args.json_out.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
    summarize(rows, args.plot)
    return 0


def summarize(rows: list[dict], path: Path) -> None:
    """The geometric mean of the ratios, how many are within 1.5x, agree and are proven; the picture."""
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        agree = sum(r["agree"] for r in rows)
        proven = sum(r["auto"]["status"] == "optimal" for r in rows)
        print(f"\nours (default call) / fastest proven peer: geometric mean {geo:.2f}x, within 1.5x "
              f"{sum(r <= 1.5 for r in ratios)}/{len(ratios)}; answers agree {agree}/{len(rows)}; proven "
              f"{proven}/{len(rows)}")
        plot(rows, path)


def markdown(rows: list[dict]) -> str:
    """The rows as a markdown table: our default call (route, seconds, errors, status), the fastest proven peer,
    the ratio and the first call in a fresh process."""
    out = ["| data (n x p) | d | cuts | ours: route | ours s | errors | status | fastest proven peer | peer s | "
           "ratio | first call s (engine s) |", "|" + "---|" * 11]
    for r in rows:
        a, peer = r["auto"], [p for p in r["peers"] if p["peer"] == r["fastest_peer"]]
        ps = secs(peer[0]["s"]) if peer else "-"
        first = (f"{r['first_s']:.2f} ({r['first_engine_s']:.3g})" if r.get("first_s") is not None else "-")
        out.append(f"| {r['dataset']} ({r['n']}x{r['p']}) | {r['depth']} | {r['cuts']} | {a.get('route', '-')} | "
                   f"{secs(a['s'])} | {a['errors']} | {a['status']} | {r['fastest_peer'] or '-'} | {ps} | "
                   f"{'-' if r['ratio'] is None else format(r['ratio'], '.2f') + 'x'} | {first} |")
    return "\n".join(out)


def secs(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}s"


def line(row: dict) -> str:
    """One printed row: our calls, the first call, the peers (``?``: not proven), the ratio, the agreement."""
    a = row["auto"]
    peer_txt = " ".join(f"{p['peer']}={secs(p['s'])}/{p['errors']}{'' if p.get('proven') else '?'}"
                        for p in row["peers"] if p["s"] is not None)
    ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}x"
    return (f"{row['dataset']:<26} d={row['depth']} n={row['n']:<6} cuts={row['cuts']:<6} auto "
            f"{a.get('route', '-'):<15} {secs(a['s'])} err {a['errors']} {a['status']} | streed "
            f"{secs(row['streed']['s'])} contree {secs(row['contree']['s'])} | first {secs(row.get('first_s'))} | "
            f"{peer_txt} | ratio {ratio} agree {row['agree']}")


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [r for r in rows if r["ratio"]]
    fig, ax = plt.subplots(figsize=(10, 0.28 * len(done) + 1.5))
    labels = [f"{r['dataset']} d={r['depth']}" for r in done]
    ax.barh(range(len(done)), [r["ratio"] for r in done], color=["#3c78d8" if r["ratio"] <= 1.5 else "#cc4125"
                                                                for r in done])
    ax.axvline(1.0, color="black", lw=0.8)
    ax.axvline(1.5, color="gray", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_yticks(range(len(done)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("our default call / the fastest proven peer (log scale; dashed: 1.5x)")
    ax.set_title("Exact axis-aligned trees: time against the fastest peer")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
