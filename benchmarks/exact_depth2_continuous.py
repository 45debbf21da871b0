"""Depth-2 OCT over every midpoint of continuous features: the DP route (the depth-2 count's rank histograms and
boundary cuts, ``treeopt_dsl.exact.depth2``) against STreeD and DL8.5 on the same threshold columns, and CART (issue
14, part 2: "continuous features are binarized at every midpoint ... (exact)").

    .venv/bin/python benchmarks/exact_depth2_continuous.py                      # the thesis' ten Table 3.1 datasets
    .venv/bin/python benchmarks/exact_depth2_continuous.py --datasets sonar --peer-time-limit 30

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(TABLE31))
    ap.add_argument("--peer-time-limit", type=float, default=120.0, help="seconds for STreeD and DL8.5 each")
    ap.add_argument("--json-out", type=Path, default=None)
    a = ap.parse_args()
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
    print("\n| dataset | n | p | threshold columns | ours err | ours s | status | STreeD err | STreeD s | DL8.5 err "
          "| DL8.5 s | CART err | fastest proven peer / ours |")
    print("|---|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        ratio = None if r["fastest_proven_peer_s"] is None else r["fastest_proven_peer_s"] / r["ours_s"]
        st, dl = (_peer_time(r, k) for k in ("streed", "dl85"))
        print(f"| {r['dataset']} | {r['n']} | {r['p']} | {r['cols']} | {r['ours_err']} | {r['ours_s']:.2f} "
              f"| {r['ours_status']} | {_f(r['streed_err'], 'd')} | {st} | {_f(r['dl85_err'], 'd')} | {dl} "
              f"| {r['cart_err']} | {_f(ratio, '.1f')}x |")


if __name__ == "__main__":
    main()
