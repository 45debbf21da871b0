"""Depth-2 OCT over every midpoint of continuous features: the DP route (the depth-2 count's rank histograms and
boundary cuts, ``treeopt_dsl.exact.depth2``) against STreeD and DL8.5 on the same threshold columns, and CART (issue
14, part 2: "continuous features are binarized at every midpoint ... (exact)").

    .venv/bin/python benchmarks/exact_depth2_continuous.py                      # the thesis' ten Table 3.1 datasets
    .venv/bin/python benchmarks/exact_depth2_continuous.py --datasets sonar --peer-time-limit 30

Per dataset (all rows, OCT's standardized features; the cuts are every midpoint between consecutive distinct
values, ``treeopt_dsl.exact.binarize``): ours is ``get_formulation("oct", depth=2).solve(data, solver="streed")``
(scaling, binarization, the count, the certified tree; wall time); the peers get the 0/1 matrix (binarizing is
not in their time): ``pystreed.STreeDClassifier(max_depth=2)`` and ``pydl85.DL85Classifier(max_depth=2)`` with
``--peer-time-limit`` seconds each; CART (``max_depth=2``) on the raw features. Errors are counted from each
model's predictions on the data. DL8.5 is a benchmark peer only (``pip install pydl8.5``).
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


def run(name: str, peer_limit: float) -> dict[str, Any]:
    from pystreed import STreeDClassifier
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
    t = time.perf_counter()
    st = STreeDClassifier(max_depth=2, time_limit=peer_limit).fit(Z, y01)
    row.update(streed_s=time.perf_counter() - t, streed_optimal=bool(st.fit_result.is_optimal()),
               streed_err=int(np.sum(st.predict(Z) != y01)))
    try:
        from pydl85 import DL85Classifier
    except ImportError:
        row.update(dl85_s=None, dl85_optimal=None, dl85_err=None)
    else:
        t = time.perf_counter()
        m = DL85Classifier(max_depth=2, time_limit=peer_limit).fit(Z, y01)
        row.update(dl85_s=time.perf_counter() - t, dl85_optimal=not bool(m.timeout_),
                   dl85_err=int(np.sum(np.asarray(m.predict(Z)) != y01)))
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(d.X, y01)
    row["cart_err"] = int(np.sum(cart.predict(d.X) != y01))
    proven = [row[f"{k}_s"] for k in ("streed", "dl85") if row.get(f"{k}_optimal")]
    row["fastest_proven_peer_s"] = min(proven) if proven else None
    return row


def _f(v: Any, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


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
                  f"STreeD {r['streed_err']} {r['streed_s']:.1f} s (optimal {r['streed_optimal']}), "
                  f"DL8.5 {r['dl85_err']} {_f(r['dl85_s'], '.1f')} s (optimal {r['dl85_optimal']}), "
                  f"CART {r['cart_err']}", flush=True)
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
        st = f"{r['streed_s']:.2f}" + ("" if r["streed_optimal"] else " (limit)")
        dl = "-" if r["dl85_s"] is None else f"{r['dl85_s']:.2f}" + ("" if r["dl85_optimal"] else " (limit)")
        print(f"| {r['dataset']} | {r['n']} | {r['p']} | {r['cols']} | {r['ours_err']} | {r['ours_s']:.2f} "
              f"| {r['ours_status']} | {r['streed_err']} | {st} | {_f(r['dl85_err'], 'd')} | {dl} | {r['cart_err']} "
              f"| {_f(ratio, '.1f')}x |")


if __name__ == "__main__":
    main()
