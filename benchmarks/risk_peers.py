"""``ors`` (the thesis' optimal risk score, with the library's default beam start) vs FasterRisk (Liu et al.,
NeurIPS 2022) on the same [0, 1]-scaled matrices: time and the exact logistic loss of the score card
(issue 14, part 5).

    .venv/bin/python benchmarks/risk_peers.py                      # 3 datasets, T = 5, 120 s for ors
    .venv/bin/python benchmarks/risk_peers.py --datasets heart --time-limit 60

FasterRisk is a benchmark peer, not a dependency: ``pip install fasterrisk`` pins scikit-learn 1.2 and
numpy 1.26, which the library does not run on, so it lives in its own environment (``.venv-fasterrisk``,
made on first use with ``python3 -m venv`` and ``pip install fasterrisk``) and reads the matrices from a
file this script writes. Both sides report the logistic loss ``sum log(1 + exp(-y (s.x + beta) / m))``
of their card on the training data (FasterRisk's objective; ``ors`` optimizes its tangent approximation
(4.4) with ``m = 1`` unless ``--multiplier`` is given).

Four ``ors`` runs per dataset (``RUNS``): the default (beam start, the loss by its breakpoints: three rows per
sample, identical samples as one weighted row), the same with a row per sample (``compress=false``), the same
start with the thesis' rows (a row per tangent: 16 per sample with V3, a row per sample), and the thesis' plain
run (its rows, no start). All four prove the same optimum; the columns show what each part buys.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from cli_paths import refuse_unwritable
from peer_envs import peer_python

DATASETS = ("breast-wisconsin-original", "heart", "spambase")

PEER = r"""
import json, sys, time
import numpy as np
from fasterrisk.fasterrisk import RiskScoreOptimizer
d = np.load(sys.argv[1])
X, y, k = d["X"], d["y"], int(d["k"])
t = time.perf_counter()
opt = RiskScoreOptimizer(X=X, y=y, k=k, lb=-5, ub=5)
opt.optimize()
multipliers, beta0s, betas = opt.get_models()
secs = time.perf_counter() - t
losses = [float(np.sum(np.logaddexp(0.0, -y * (X @ b + b0) / m))) for m, b0, b in zip(multipliers, beta0s, betas)]
i = int(np.argmin(losses))
print(json.dumps({"time_s": secs, "loss": losses[i], "multiplier": float(multipliers[i]),
                  "nonzeros": int(np.count_nonzero(betas[i])), "points": np.asarray(betas[i]).tolist()}))
"""


#: the ors runs: (key, warm start, epigraph of the loss (4.4), compress); "plain" is the thesis' model and run
RUNS = (("ors_auto", "auto", "breakpoints", True), ("ors_rows", "auto", "breakpoints", False),
        ("ors_pieces", "auto", "pieces", False), ("ors_plain", None, "pieces", False))


def run(dataset: str, T: int, time_limit: float, multiplier: float, sample: int | None) -> dict[str, object]:
    from treeopt_dsl.datasets import load
    from treeopt_dsl.formulations import get_formulation

    data = load(dataset)
    if sample is not None and data.n_samples > sample:
        data = data.subsample(sample, seed=0)
    scaled = get_formulation("ors", T=T, multiplier=multiplier, compress=False).prepare(data)  # every row, in [0, 1]
    X, y = np.asarray(scaled.X, dtype=float), np.asarray(scaled.y, dtype=float)
    row: dict[str, object] = {"dataset": dataset, "n": data.n_samples, "p": data.n_features, "T": T}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.npz"
        np.savez(path, X=X, y=y, k=T)
        out = subprocess.run([str(peer_python("fasterrisk")), "-c", PEER, str(path)], capture_output=True, text=True)
    if out.returncode == 0:
        peer = json.loads(out.stdout.strip().splitlines()[-1])
        row.update(fr_time_s=peer["time_s"], fr_loss=peer["loss"], fr_multiplier=peer["multiplier"])
    else:
        row.update(fr_error=out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed")
    for key, start, epigraph, compress in RUNS:
        t = time.perf_counter()
        res = get_formulation("ors", T=T, multiplier=multiplier, epigraph=epigraph, compress=compress).solve(
            data, time_limit=time_limit, threads=1, warm_start=start)
        wall = time.perf_counter() - t
        card = res.model
        m = float(getattr(card, "multiplier", 1.0))
        loss = float(np.sum(np.logaddexp(0.0, -y * (card.total_score(X, scaled=True) + card.beta) / m)))
        row.update({f"{key}_status": res.status.value, f"{key}_time_s": wall, f"{key}_loss": loss,
                    f"{key}_incumbent_s": res.incumbent_time_s, f"{key}_objective": res.objective})
        if key == "ors_auto" and res.start is not None:
            row["start"], row["start_time_s"] = res.start.get("chosen"), res.start.get("time_s")
    return row


def warm_up() -> None:
    """One small solve before the timed ones: the first solve of a process pays for imports and first calls
    (about 0.9 s here), which FasterRisk's timing (taken after its imports) does not include either."""
    from treeopt_dsl.datasets import load
    from treeopt_dsl.formulations import get_formulation

    get_formulation("ors", T=2).solve(load("breast-wisconsin-original").subsample(40, seed=0), time_limit=10,
                                      threads=1)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--T", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--multiplier", type=float, default=1.0)
    ap.add_argument("--sample", type=int, default=2000, help="rows at most (spambase: 2000, as the issue)")
    ap.add_argument("--json-out", type=Path)
    a = ap.parse_args(argv)
    refuse_unwritable(ap, "--json-out", a.json_out, "the rows")  # refused before the first dataset, not after it
    print(f"{'dataset':<26} {'n':>5} | {'FR s':>6} {'FR loss':>9} | {'ors s':>7} {'status':<10} {'ors loss':>9} | "
          f"{'rows s':>7} | {'pieces s':>8} {'status':<10} | {'plain s':>7} {'status':<10} | {'start s':>7} | "
          f"{'t ors/FR':>8} {'loss ors/FR':>11}")
    warm_up()
    for ds in a.datasets:
        r = run(ds, a.T, a.time_limit, a.multiplier, a.sample)
        fr_t, fr_l = r.get("fr_time_s"), r.get("fr_loss")
        ratio_t = f"{r['ors_auto_time_s'] / fr_t:8.1f}" if fr_t else "       -"
        ratio_l = f"{r['ors_auto_loss'] / fr_l:11.4f}" if fr_l else "          -"
        print(f"{ds:<26} {r['n']:>5} | {fr_t if fr_t is not None else float('nan'):6.2f} "
              f"{fr_l if fr_l is not None else float('nan'):9.3f} | {r['ors_auto_time_s']:7.2f} "
              f"{r['ors_auto_status']:<10} {r['ors_auto_loss']:9.3f} | {r['ors_rows_time_s']:7.2f} | "
              f"{r['ors_pieces_time_s']:8.2f} "
              f"{r['ors_pieces_status']:<10} | {r['ors_plain_time_s']:7.2f} "
              f"{r['ors_plain_status']:<10} | {r.get('start_time_s') or float('nan'):7.2f} | {ratio_t} {ratio_l}"
              + (f"  [{r['fr_error']}]" if "fr_error" in r else ""),
              flush=True)
        if a.json_out:
            with a.json_out.open("a") as fh:
                fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
