"""Depth-2 OCT over every midpoint of continuous features: the DP route (the depth-2 count's rank histograms and
boundary cuts, ``treeopt_dsl.exact.depth2``) against STreeD and DL8.5 on the same threshold columns, and CART (issue
14, part 2: "continuous features are binarized at every midpoint ... (exact)").

    .venv/bin/python benchmarks/exact_depth2_continuous.py                      # the thesis' ten Table 3.1 datasets
    .venv/bin/python benchmarks/exact_depth2_continuous.py --datasets sonar --peer-time-limit 30
    .venv/bin/python benchmarks/exact_depth2_continuous.py \
        --rows benchmarks/results/exact_depth2_continuous_2026-11-24.jsonl \
        --plot docs/benchmarks/exact_depth2_continuous.png      # the table and the picture from saved rows

Per dataset (all rows, OCT's standardized features; the cuts are every midpoint between consecutive distinct
values, ``treeopt_dsl.exact.binarize``): ours is ``get_formulation("oct", depth=2).solve(data, solver="streed")``
(scaling, binarization, the count, the certified tree; wall time); the peers get the 0/1 matrix (binarizing is
not in their time): ``pystreed.STreeDClassifier(max_depth=2)`` and ``pydl85.DL85Classifier(max_depth=2)`` with
``--peer-time-limit`` seconds each, each in a child process capped at 12 GB of address space (STreeD took the
machine's 24 GB on breast-cancer's 15,310 columns and was killed; a capped peer is reported "out of memory");
CART (``max_depth=2``) on the raw features. Errors are counted from each model's predictions on the data. DL8.5 is
a benchmark peer only (``pip install pydl8.5``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from cli_paths import refuse_missing, refuse_unwritable, refuse_wrong_kind

TABLE31 = ("breast-cancer", "climate", "haberman", "heart", "ionosphere", "parkinsons", "sonar", "spectf",
           "tic-tac-toe", "wholesale")


#: the peers run in a child process with this address-space limit: STreeD took all 24 GB of the machine on
#: breast-cancer's 15,310 columns and was killed, taking the benchmark with it
PEER_MEMORY_GB = 12

_PEER = """
import json, sys, time
import numpy as np
kind, path, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = np.load(path)
Z, y = data["Z"], data["y"]
if kind == "streed":
    from pystreed import STreeDClassifier as Peer
else:
    from pydl85 import DL85Classifier as Peer
t = time.perf_counter()  # the fit alone: imports and loading are not timed
m = Peer(max_depth=2, time_limit=limit).fit(Z, y)
optimal = bool(m.fit_result.is_optimal()) if kind == "streed" else not bool(m.timeout_)
s = time.perf_counter() - t
print(json.dumps({"s": s, "optimal": optimal, "err": int(np.sum(np.asarray(m.predict(Z)) != y))}))
"""


def peer(kind: str, Z: np.ndarray, y: np.ndarray, limit: float) -> dict[str, Any]:
    """One peer's fit in a child process under :data:`PEER_MEMORY_GB`: seconds, proven optimal, errors, or why not
    (``failed``: out of memory, not installed, ...)."""
    import resource
    import subprocess
    import sys
    import tempfile

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (PEER_MEMORY_GB * 2**30, PEER_MEMORY_GB * 2**30))

    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/zy.npz"
        np.savez(path, Z=Z, y=y)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _PEER, kind, path, str(limit)], capture_output=True, text=True,
                              preexec_fn=cap, timeout=limit + 300)
        wall = time.perf_counter() - t
    if proc.returncode == 0:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    err = proc.stderr.strip().splitlines()
    oom = any("bad_alloc" in e or "MemoryError" in e for e in err) or proc.returncode < 0
    why = f"out of memory (> {PEER_MEMORY_GB} GB)" if oom else (err[-1] if err else f"exit {proc.returncode}")
    return {"s": wall, "optimal": None, "err": None, "failed": why}


def run(name: str, peer_limit: float) -> dict[str, Any]:
    from sklearn.tree import DecisionTreeClassifier

    from treeopt_dsl.datasets import load
    from treeopt_dsl.exact import binarize
    from treeopt_dsl.formulations import get_formulation

    d = load(name)
    spec = get_formulation("oct", depth=2)
    y01 = (np.asarray(d.y) > 0).astype(np.int32)
    labels = d.labels_of(d.y)
    t = time.perf_counter()
    ours = spec.solve(d, solver="streed")
    row: dict[str, Any] = {"dataset": name, "n": d.n_samples, "p": d.n_features, "ours_s": time.perf_counter() - t,
                           "ours_status": ours.status.value,
                           "ours_err": int(np.sum(ours.model.predict(d.X) != labels)),
                           "cols": ours.size.get("n_threshold_columns")}
    Z = binarize(spec.prepare(d).X, min_gap=float(spec["eps"]) * (1 + 1e-6)).Z
    for kind in ("streed", "dl85"):
        r = peer(kind, Z, y01, peer_limit)
        row.update({f"{kind}_s": r["s"], f"{kind}_optimal": r["optimal"], f"{kind}_err": r["err"],
                    f"{kind}_failed": r.get("failed")})
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(d.X, y01)
    row["cart_err"] = int(np.sum(cart.predict(d.X) != y01))
    proven = [row[f"{k}_s"] for k in ("streed", "dl85") if row.get(f"{k}_optimal")]
    row["fastest_proven_peer_s"] = min(proven) if proven else None
    return row


def _f(v: Any, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def _peer_time(r: dict[str, Any], k: str) -> str:
    if r.get(f"{k}_failed"):
        return f"{r[f'{k}_s']:.1f} ({r[f'{k}_failed']})"
    return f"{r[f'{k}_s']:.2f}" + ("" if r[f"{k}_optimal"] else " (time limit)")


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Seconds per dataset (log scale) of ours, STreeD and DL8.5, datasets by threshold columns; a peer that ran
    out of memory or time is drawn hatched at the time it gave up."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(rows, key=lambda r: r["cols"])
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(9, 4))
    for k, (key, label) in enumerate((("ours", "treeopt (count)"), ("streed", "STreeD"), ("dl85", "DL8.5"))):
        secs = [r[f"{key}_s"] for r in rows]
        done = [key == "ours" or bool(r.get(f"{key}_optimal")) for r in rows]
        bars = ax.bar(x + (k - 1) * 0.27, secs, 0.27, label=label, color=f"C{k}")
        for bar, ok in zip(bars, done, strict=True):
            if not ok:
                bar.set_hatch("//")
                bar.set_alpha(0.5)
    ax.set_yscale("log")
    ax.set_ylabel("seconds (log)")
    ax.set_xticks(x, [f"{r['dataset']}\n{r['cols']:,} cols" for r in rows], rotation=40, ha="right", fontsize=8)
    ax.set_title("OCT depth 2 over every midpoint: time to the proven optimum (hatched: out of memory)")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    tmp.replace(path)  # written beside the target, then moved into place
    plt.close(fig)


def table(rows: list[dict[str, Any]]) -> str:
    out = ["| dataset | n | p | threshold columns | ours err | ours s | status | STreeD err | STreeD s | DL8.5 err "
           "| DL8.5 s | CART err | fastest proven peer / ours |",
           "|---|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        ratio = None if r["fastest_proven_peer_s"] is None else r["fastest_proven_peer_s"] / r["ours_s"]
        st, dl = (_peer_time(r, k) for k in ("streed", "dl85"))
        out.append(f"| {r['dataset']} | {r['n']} | {r['p']} | {r['cols']} | {r['ours_err']} | {r['ours_s']:.2f} "
                   f"| {r['ours_status']} | {_f(r['streed_err'], 'd')} | {st} | {_f(r['dl85_err'], 'd')} | {dl} "
                   f"| {r['cart_err']} | {_f(ratio, '.1f')}x |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(TABLE31))
    ap.add_argument("--peer-time-limit", type=float, default=120.0, help="seconds for STreeD and DL8.5 each")
    ap.add_argument("--json-out", type=Path, default=None)
    ap.add_argument("--rows", type=Path, default=None, help="print (and --plot) these saved rows instead of running")
    ap.add_argument("--plot", type=Path, default=None, help="draw the times here (PNG; needs matplotlib)")
    a = ap.parse_args(argv)
    refuse_missing(ap, "--rows", a.rows, "give the --json-out file of an earlier run")
    refuse_wrong_kind(ap, "--plot", a.plot, "give a .png file name")  # its directory is made if missing
    if a.rows is None:  # refused before the first dataset's solves
        refuse_unwritable(ap, "--json-out", a.json_out, "the rows")
    if a.rows is not None:
        rows = [json.loads(line) for line in a.rows.read_text().splitlines() if line.strip()]
        print(table(rows))
        if a.plot is not None:
            plot(rows, a.plot)
        return
    rows = []
    out = a.json_out.open("w") if a.json_out else None
    try:
        for name in a.datasets:
            r = run(name, a.peer_time_limit)
            rows.append(r)
            print(f"# {name}: ours {r['ours_err']} err {r['ours_s']:.2f} s ({r['ours_status']}), "
                  f"STreeD {r['streed_err']} {_peer_time(r, 'streed')} s, DL8.5 {r['dl85_err']} "
                  f"{_peer_time(r, 'dl85')} s, CART {r['cart_err']}", flush=True)
            if out:
                out.write(json.dumps(r) + "\n")
                out.flush()
    finally:
        if out:
            out.close()
    print()
    print(table(rows))
    if a.plot is not None:
        plot(rows, a.plot)


if __name__ == "__main__":
    main()
