"""Hand-scorable risk score cards: ``ors`` proven optimal in the true logistic loss vs FasterRisk (Liu et al.,
NeurIPS 2022) on the same binarized features, in one run (issue 34, build item 4).

    .venv/bin/python benchmarks/risk_cards.py                                  # 7 data sets, T = 5 then T = 10
    .venv/bin/python benchmarks/risk_cards.py --T 5 --datasets heart compas    # a part of the grid

Features: every data set is binarized as ``ors binarize="quantile"`` does (the library's
:func:`~treeopt_dsl.exact.binarize.threshold_columns`): a binary feature is one 0/1 column, every other feature
at most ``--max-cuts`` (default 3, the library's default: the quartiles) cuts ``x >= t`` at its training
quantiles. Neither paper's binarization: RiskSLIM's and FasterRisk's data sets come binarized by their
authors, so both sides here read the same columns. adult and spambase are subsampled to ``--sample`` rows
(2000, stratified by class, seed 0), as ``risk_peers.py`` does; the other sets are used whole.

Ours: ``ors`` with ``loss="true"`` (the card proven optimal in the true logistic loss at multiplier 1, or with
``--multiplier auto`` at the multiplier chosen with the start's card, to relative gap 1e-4, by lattice cutting
planes), T points in A = -5..5, the default beam start, the solver ``auto`` picks (Gurobi) on one thread,
``--time-limit`` (120 s) for the whole call; then the scale search (``scale="search"``: the multiplier and the
intercept minimizing the true log-loss for the fixed integer points, a calibration step after the proof).
FasterRisk 0.1.10 with its defaults (``lb=-5, ub=5``, its own multiplier search), in its own environment
(``.venv-fasterrisk``, benchmarks/peer_envs.py), on the same 0/1 matrix; of the models it returns, the one with
the smallest logistic loss.

RiskSLIM (Ustun & Rudin, JMLR 2019) with ``--peers ours riskslim`` (``--peers riskslim`` alone: only it): its own
LCPA on CPLEX 22.2 Community Edition in ``.venv-exact`` (:data:`PEER_RISKSLIM`), printed on a line under ours with its
gap, bound, its card's loss and the ratios ours / RiskSLIM (``--rs-init-s``: its initialization's seconds).
``--solver-option NAME=VALUE`` hands options to our master's solver (e.g. Gurobi ``MIPFocus=1``).

Reported per (data set, T), all on the training data (the objective both minimize): the true log-loss (summed,
of the card at multiplier 1 and after the scale search, and FasterRisk's at its multiplier), AUC, expected
calibration error (10 equal-mass bins, :mod:`treeopt_dsl.models.calibration`), time to the first card (ours:
preparing and building the model and the start; FasterRisk: its whole run), time to the proof (ours; a heuristic
proves nothing), and the ratios; the CPU seconds of each side's run (``time.process_time``: all threads of the
process, HiGHS' included) and the 1-minute load average, so that a run on a shared machine says how much of the
wall time it really had. A row per (data set, T) is appended to ``--json-out`` as it ends.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from cli_paths import refuse_missing, refuse_unwritable
from peer_envs import ensure_source_peer, peer_python

from treeopt_dsl.errors import TreeoptError

DATASETS = ("breast-wisconsin-original", "heart", "spambase", "adult", "mushrooms", "compas", "fico-heloc")
#: the data sets subsampled (stratified) to ``--sample`` rows, as risk_peers.py does
SUBSAMPLED = ("spambase", "adult")

PEER = r"""
import json, sys, time
import numpy as np
from fasterrisk.fasterrisk import RiskScoreOptimizer
d = np.load(sys.argv[1])
X, y, k = d["X"], d["y"], int(d["k"])
t, c = time.perf_counter(), time.process_time()
opt = RiskScoreOptimizer(X=X, y=y, k=k, lb=-5, ub=5)
opt.optimize()
multipliers, beta0s, betas = opt.get_models()
secs, cpu = time.perf_counter() - t, time.process_time() - c
losses = [float(np.sum(np.logaddexp(0.0, -y * (X @ b + b0) / m))) for m, b0, b in zip(multipliers, beta0s, betas)]
i = int(np.argmin(losses))
print(json.dumps({"time_s": secs, "cpu_s": cpu, "loss": losses[i], "multiplier": float(multipliers[i]),
                  "intercept": float(beta0s[i]), "points": np.asarray(betas[i], dtype=float).tolist()}))
"""


#: RiskSLIM (Ustun & Rudin, JMLR 2019; github ustunb/risk-slim) on the same 0/1 matrix: its LCPA on CPLEX (the
#: Community Edition's 1,000 columns / rows hold its master: 2p + 4 columns), points in -5..5, ``max_L0_value`` = T,
#: ``c0`` = 1e-9 (it must be > 0; 5 c0 is 1e-8 of the mean loss, far below the 1e-4 tolerance), one thread, its
#: own integer intercept bounded by ``update_intercept_bounds`` (the conservative offset), its initialization
#: (CPA on the relaxation, rounding, polishing) within ``init_s`` and the LCPA within the rest of the time limit.
PEER_RISKSLIM = r"""
import json, sys, time
import numpy as np
np.float_, np.float = np.float64, float  # names RiskSLIM (2023) uses, removed in NumPy 2
import riskslim
d = np.load(sys.argv[1])
X, y, k, limit, init_s = d["X"], d["y"], int(d["k"]), float(d["time_limit"]), float(d["init_s"])
names = ["(Intercept)"] + [f"x{j}" for j in range(X.shape[1])]
data = {"X": np.hstack([np.ones((X.shape[0], 1)), X]), "Y": y.reshape(-1, 1).astype(float),
        "variable_names": names, "outcome_name": "y"}
t, c = time.perf_counter(), time.process_time()
coef_set = riskslim.CoefficientSet(variable_names=names, lb=-5, ub=5, sign=0)
coef_set.update_intercept_bounds(X=data["X"], y=data["Y"], max_offset=1000, max_L0_value=k)
settings = {"c0_value": 1e-9, "max_runtime": limit - (init_s if init_s > 0 else 0.0),
            "max_tolerance": np.finfo("float").eps, "display_cplex_progress": False, "loss_computation": "lookup",
            "round_flag": True, "polish_flag": True, "chained_updates_flag": True,
            "add_cuts_at_heuristic_solutions": True, "initialization_flag": init_s > 0, "init_max_runtime": init_s,
            "init_display_progress": False, "cplex_randomseed": 0, "cplex_n_cores": 1}
model, mip, info = riskslim.run_lattice_cpa(data, {"L0_min": 0, "L0_max": k, "coef_set": coef_set}, settings)
secs, cpu = time.perf_counter() - t, time.process_time() - c
rho = np.asarray(model["solution"], dtype=float)
n = X.shape[0]
print(json.dumps({"time_s": secs, "cpu_s": cpu, "mip_s": model["run_time"], "status": info["cplex_status"],
                  "gap": float(model["optimality_gap"]), "ub": float(info["upperbound"]) * n,
                  "lb": float(info["lowerbound"]) * n, "loss": float(model["loss_value"]) * n,
                  "intercept": float(rho[0]), "points": rho[1:].tolist(), "nodes": int(info["nodes_processed"]),
                  "cuts": int(info["n_cuts"]), "intercept_bounds": [float(coef_set.lb[0]), float(coef_set.ub[0])]}))
"""


def card_metrics(total: np.ndarray, intercept: float, multiplier: float, y: np.ndarray) -> dict[str, float]:
    """Summed true log-loss, AUC and ECE (10 equal-mass bins) of ``sigmoid((total + intercept) / multiplier)``."""
    from sklearn.metrics import roc_auc_score

    from treeopt_dsl.models.calibration import expected_calibration_error
    from treeopt_dsl.numeric import sigmoid

    z = (total + intercept) / multiplier
    p = sigmoid(z)
    return {"loss": float(np.sum(np.logaddexp(0.0, -y * z))), "auc": float(roc_auc_score(y > 0, p)),
            "ece": expected_calibration_error(y, p)}


def fasterrisk(X: np.ndarray, y: np.ndarray, T: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.npz"
        np.savez(path, X=X, y=y, k=T)
        out = subprocess.run([str(peer_python("fasterrisk")), "-c", PEER, str(path)], capture_output=True, text=True)
    if out.returncode != 0:
        return {"fr_error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    peer = json.loads(out.stdout.strip().splitlines()[-1])
    m = card_metrics(X @ np.asarray(peer["points"]), peer["intercept"], peer["multiplier"], y)
    return {"fr_time_s": peer["time_s"], "fr_cpu_s": peer["cpu_s"], "fr_loss": m["loss"], "fr_loss_own": peer["loss"],
            "fr_auc": m["auc"],
            "fr_ece": m["ece"], "fr_multiplier": peer["multiplier"],
            "fr_nonzeros": int(np.count_nonzero(peer["points"]))}


def riskslim(X: np.ndarray, y: np.ndarray, T: int, time_limit: float, init_s: float = 0.0) -> dict[str, object]:
    """RiskSLIM (:data:`PEER_RISKSLIM`) in the benchmark environment ``.venv-exact``: its gap and bound at the time
    limit, its card's loss at its own integer intercept and at the best real intercept (ours is real)."""
    from treeopt_dsl.blocks.lattice import best_intercept

    try:
        ensure_source_peer("exact")
    except (subprocess.CalledProcessError, OSError) as exc:
        return {"rs_error": f"RiskSLIM could not be installed in .venv-exact: {exc}"}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.npz"
        np.savez(path, X=X, y=y, k=T, time_limit=time_limit, init_s=init_s)
        out = subprocess.run([str(peer_python("exact")), "-c", PEER_RISKSLIM, str(path)], capture_output=True,
                             text=True)
    if out.returncode != 0:
        return {"rs_error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    peer = json.loads(out.stdout.strip().splitlines()[-1])
    total = X @ np.asarray(peer["points"])
    own = card_metrics(total, peer["intercept"], 1.0, y)
    real = card_metrics(total, best_intercept(total, y, np.ones_like(y)), 1.0, y)
    return {"rs_time_s": peer["time_s"], "rs_cpu_s": peer["cpu_s"], "rs_mip_s": peer["mip_s"],
            "rs_status": peer["status"], "rs_gap": peer["gap"], "rs_lb": peer["lb"], "rs_ub": peer["ub"],
            "rs_loss": own["loss"], "rs_loss_real_intercept": real["loss"], "rs_auc": own["auc"],
            "rs_nodes": peer["nodes"], "rs_cuts": peer["cuts"], "rs_init_s": init_s,
            "rs_intercept_bounds": peer["intercept_bounds"], "rs_nonzeros": int(np.count_nonzero(peer["points"]))}


def recorded_fasterrisk(path: Path | None, dataset: str, T: int) -> dict[str, object]:
    """FasterRisk's figures for ``(dataset, T)`` from an earlier result file of this script (``--fr-from``), for a
    machine without the peer environment; ``{}`` when there are none."""
    if path is None:
        return {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r.get("dataset") == dataset and r.get("T") == T and r.get("fr_loss") is not None:
            return {k: v for k, v in r.items() if k.startswith("fr_")} | {"fr_recorded": str(path)}
    return {}


def run(dataset: str, T: int, time_limit: float, max_cuts: int, sample: int, proof: str = "lcpa",
        solver: str = "auto", at_fr_multiplier: bool = False, fr_from: Path | None = None,
        fr: dict[str, object] | None = None, peers: tuple[str, ...] = ("fasterrisk",),
        rs: dict[str, object] | None = None, rs_init_s: float = 0.0,
        solver_options: dict[str, object] | None = None, multiplier: str = "1") -> dict[str, object]:
    from treeopt_dsl.datasets import load
    from treeopt_dsl.formulations import get_formulation

    data = load(dataset)
    if dataset in SUBSAMPLED and data.n_samples > sample:
        data = data.subsample(sample, seed=0)
    kw = dict(T=T, binarize="quantile", max_cuts=max_cuts, loss="true", proof=proof)
    cols = get_formulation("ors", compress=False, **kw).prepare(data)  # every row, the 0/1 threshold columns
    X, y = np.asarray(cols.X, dtype=float), np.asarray(cols.y, dtype=float)
    row: dict[str, object] = {"dataset": dataset, "n": data.n_samples, "p": data.n_features, "columns": X.shape[1],
                              "T": T, "max_cuts": max_cuts, "time_limit": time_limit, "proof": proof,
                              "solver": solver, "solver_options": solver_options or {}}
    if fr is None:
        fr = recorded_fasterrisk(fr_from, dataset, T) or (fasterrisk(X, y, T) if "fasterrisk" in peers else {})
    row.update(fr)
    if rs is None and "riskslim" in peers:
        rs = riskslim(X, y, T, time_limit, rs_init_s)
    row.update(rs or {})
    if "ours" not in peers:
        row.update(status="not run", gap=None)
        return row
    if at_fr_multiplier and fr.get("fr_multiplier") is not None:  # the proof at FasterRisk's own multiplier
        kw["multiplier"] = float(fr["fr_multiplier"])
    elif multiplier == "auto":  # chosen with the start's card, then proven at it
        kw["multiplier"] = "auto"
    elif float(multiplier) != 1.0:
        kw["multiplier"] = float(multiplier)
    t, c = time.perf_counter(), time.process_time()
    res = get_formulation("ors", scale="fixed" if at_fr_multiplier else "search", **kw).solve(
        data, solver=solver, time_limit=time_limit, threads=1, warm_start="auto", **(solver_options or {}))
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    row["multiplier_proven"] = (res.multiplier_search or {}).get("multiplier", kw.get("multiplier", 1.0))
    row["multiplier_search"] = res.multiplier_search
    card = res.model
    total = card.total_score(X, scaled=True)
    cal = res.scale_search or {}
    at1 = card_metrics(total, cal.get("intercept_before", card.beta), cal.get("multiplier_before", card.multiplier),
                       y)
    scaled = card_metrics(total, card.beta, card.multiplier, y)
    oa = res.outer_approximation or {}
    timing = res.timing or {}
    relax = oa.get("relaxation") or {}
    row.update(status=res.status.value, time_s=wall, cpu_s=cpu, load=os.getloadavg()[0], gap=oa.get("gap"),
               bound=res.bound, solver_used=res.solver, iterations=oa.get("iterations"),
               rows_added=oa.get("rows_added"), cuts=oa.get("cuts"), relaxation_cuts=relax.get("cuts"),
               relaxation_bound=relax.get("bound"), relaxation_s=relax.get("time_s"),
               first_card_s=timing.get("prepare_build", 0.0) + timing.get("start", 0.0),
               start=(res.start or {}).get("chosen"), start_loss=(res.start or {}).get("objective"),
               proof_s=wall if res.status.value == "optimal" else None,
               loss=at1["loss"], auc=at1["auc"], ece=at1["ece"], loss_scaled=scaled["loss"], auc_scaled=scaled["auc"],
               ece_scaled=scaled["ece"], multiplier=card.multiplier, nonzeros=int(np.count_nonzero(card.s)))
    return row


def warm_up() -> None:
    """One small solve first: the first solve of a process pays for imports (FasterRisk's time excludes them)."""
    from treeopt_dsl.datasets import load
    from treeopt_dsl.formulations import get_formulation

    get_formulation("ors", T=2, binarize="quantile").solve(load("breast-wisconsin-original").subsample(40, seed=0),
                                                           time_limit=10, threads=1)


def fmt(v: object, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def ratio(a: object, b: object) -> float | None:
    return None if a is None or not b else float(a) / float(b)


def line(r: dict[str, object]) -> str:
    fr_t, fr_l = r.get("fr_time_s"), r.get("fr_loss")
    return (f"{r['dataset']:<26} {r['T']:>2} {r['n']:>5} {r['columns']:>4} {r.get('proof', 'outer'):>5} "
            f"{r.get('solver_used', '-')!s:>6} {r.get('multiplier_proven', 1.0):5.3f} | {r['status']:<10} "
            f"{fmt(r['gap'], '.1e'):>7} "
            f"{r['loss']:10.4f} {r['loss_scaled']:10.4f} {r['auc']:.4f} {r['ece']:.4f} {r['ece_scaled']:.4f} "
            f"{r['first_card_s']:6.2f} {fmt(r['proof_s'], '7.1f'):>7} | {fmt(fr_l, '10.4f'):>10} "
            f"{fmt(r.get('fr_auc'), '.4f'):>6} {fmt(r.get('fr_ece'), '.4f'):>6} {fmt(fr_t, '6.2f'):>6} | "
            f"{fmt(ratio(r['loss'], fr_l), '.5f'):>7} {fmt(ratio(r['loss_scaled'], fr_l), '.5f'):>7} "
            f"{fmt(ratio(r['first_card_s'], fr_t), '6.2f'):>6} {fmt(ratio(r['proof_s'], fr_t), '7.1f'):>7}"
            + (f"  [{r['fr_error']}]" if "fr_error" in r else ""))


def rs_line(r: dict[str, object]) -> str:
    """RiskSLIM's figures beside ours: status, gap, bound, its card's loss (own integer intercept / best real
    intercept) and the ratios ours / RiskSLIM of the loss and of the gap."""
    if "rs_error" in r:
        return f"{'':<26} RiskSLIM not run: {r['rs_error']}"
    ours = r.get("loss") if r.get("status") != "not run" else None
    return (f"{'':<26} RiskSLIM/CPLEX {r['rs_status']:<26} gap {r['rs_gap']:.3g} LB {r['rs_lb']:.3f} "
            f"loss {r['rs_loss']:.4f} (real intercept {r['rs_loss_real_intercept']:.4f}) "
            f"{r['rs_time_s']:.1f} s, {r['rs_nodes']} nodes, {r['rs_cuts']} cuts | ours/RS: loss "
            f"{fmt(ratio(ours, r['rs_loss']), '.5f')} gap {fmt(ratio(r.get('gap'), r['rs_gap']), '.3f')}")


HEADER = (f"{'dataset':<26} {'T':>2} {'n':>5} {'cols':>4} {'proof':>5} {'solver':>6} {'m':>5} | {'status':<10} "
          f"{'gap':>7} {'loss m=1':>10} "
          f"{'loss scal':>10} {'AUC':>6} {'ECE':>6} {'ECE sc':>6} {'1st s':>6} {'proof s':>7} | {'FR loss':>10} "
          f"{'FR AUC':>6} {'FR ECE':>6} {'FR s':>6} | {'L/FR':>7} {'Lsc/FR':>7} {'1st/FR':>6} {'prf/FR':>7}")


def markdown(rows: list[dict[str, object]]) -> str:
    """The rows as the table of docs/benchmarks.md (``--table FILE.jsonl ...``)."""
    out = ["| data | T | n | columns | ours: status (gap) | ours: loss at the m proven (m) | ours: loss scaled (m) "
           "| FasterRisk: loss (m) | loss ours/FR (scaled/FR) | AUC ours / FR | ECE ours / scaled / FR "
           "| first card s: ours / FR (ratio) "
           "| proof s (/ FR) | CPU s: ours / FR (load) |", "|" + "---|" * 14]
    for r in rows:
        fr = r.get("fr_loss")
        gap = "no bound" if r["gap"] is None else f"{r['gap']:.2g}"
        out.append(
            f"| {r['dataset']} | {r['T']} | {r['n']} | {r['columns']} | {r['status']} ({gap}) | {r['loss']:.4f} "
            f"({float(r.get('multiplier_proven') or 1.0):.3f}) | "
            f"{r['loss_scaled']:.4f} ({r['multiplier']:.3f}) | {fmt(fr, '.4f')} ({fmt(r.get('fr_multiplier'), '.3f')}) "
            f"| {fmt(ratio(r['loss'], fr), '.4f')} ({fmt(ratio(r['loss_scaled'], fr), '.4f')}) | "
            f"{r['auc']:.4f} / {fmt(r.get('fr_auc'), '.4f')} | {r['ece']:.4f} / {r['ece_scaled']:.4f} / "
            f"{fmt(r.get('fr_ece'), '.4f')} | {r['first_card_s']:.2f} / {fmt(r.get('fr_time_s'), '.2f')} "
            f"({fmt(ratio(r['first_card_s'], r.get('fr_time_s')), '.2f')}) | "
            + ("-" if r["proof_s"] is None else f"{r['proof_s']:.1f} ({ratio(r['proof_s'], r.get('fr_time_s')):.1f})")
            + f" | {fmt(r.get('cpu_s'), '.1f')} / {fmt(r.get('fr_cpu_s'), '.1f')} ({fmt(r.get('load'), '.1f')}) |")
    return "\n".join(out)


def _number(text: str) -> object:
    """``"3"`` -> 3, ``"0.5"`` -> 0.5, anything else as written (a solver option's value)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--T", type=int, nargs="+", default=[5, 10])
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--max-cuts", type=int, default=3)
    ap.add_argument("--sample", type=int, default=2000, help=f"rows of {' and '.join(SUBSAMPLED)} (stratified)")
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--table", type=Path, nargs="+", help="only print these result files as a markdown table")
    ap.add_argument("--proof", nargs="+", default=["lcpa"], choices=["lcpa", "samples", "outer"],
                    help="how ors proves the true loss: lattice cutting planes and/or the outer loop")
    ap.add_argument("--solver", nargs="+", default=["auto"], help="the master's solvers (each run in turn)")
    ap.add_argument("--at-fr-multiplier", action="store_true",
                    help="prove our card at FasterRisk's multiplier (its loss and ours at the same m)")
    ap.add_argument("--multiplier", default="1",
                    help="ours: the multiplier proven at (a number, or auto: chosen with the start's card, the loss "
                         "columns then at it; the 'loss m=1' column is the card at that multiplier)")
    ap.add_argument("--peers", nargs="+", default=["ours", "fasterrisk"], choices=["ours", "fasterrisk", "riskslim"],
                    help="what runs: ours, FasterRisk, RiskSLIM (CPLEX, in .venv-exact)")
    ap.add_argument("--rs-init-s", type=float, default=0.0,
                    help="RiskSLIM's initialization procedure's time (0: off; its LCPA gets the rest of the limit)")
    ap.add_argument("--solver-option", nargs="+", default=[], metavar="NAME=VALUE",
                    help="options passed to the master's solver as it spells them (e.g. MIPFocus=3)")
    ap.add_argument("--fr-from", type=Path, help="FasterRisk's figures from this earlier result file "
                    "(a machine without the peer environment)")
    a = ap.parse_args(argv)
    refuse_missing(ap, "--table", a.table, "give --json-out files of earlier runs")
    if a.table:
        print(markdown([json.loads(t) for f in a.table for t in f.read_text().splitlines() if t.strip()]))
        return
    refuse_missing(ap, "--fr-from", a.fr_from, "give the --json-out file of an earlier run with FasterRisk")
    refuse_unwritable(ap, "--json-out", a.json_out, "the rows")  # refused before the first run, not after it
    options = {k: _number(v) for k, v in (o.split("=", 1) for o in a.solver_option)}
    warm_up()
    print(HEADER, flush=True)
    for T in a.T:
        for ds in a.datasets:
            fr, rs = None, None
            for proof in a.proof:
                for solver in a.solver if proof != "outer" else ["highs"]:
                    try:
                        r = run(ds, T, a.time_limit, a.max_cuts, a.sample, proof, solver, a.at_fr_multiplier,
                                a.fr_from, fr, tuple(a.peers), rs, a.rs_init_s, options, a.multiplier)
                    except TreeoptError as exc:  # e.g. a master too large for Gurobi's pip licence: said, not fatal
                        print(f"{ds:<26} {T:>2} {proof:>5} {solver:>6} | not run: {exc}", flush=True)
                        if a.json_out:
                            with a.json_out.open("a") as fh:
                                fh.write(json.dumps({"dataset": ds, "T": T, "proof": proof, "solver": solver,
                                                     "error": str(exc)}) + "\n")
                        continue
                    fr = {k: v for k, v in r.items() if k.startswith("fr_")}  # FasterRisk once per (data, T)
                    rs = {k: v for k, v in r.items() if k.startswith("rs_")} or None  # RiskSLIM too
                    if "ours" in a.peers:
                        print(line(r), flush=True)
                    if rs:
                        print(rs_line(r), flush=True)
                    if a.json_out:
                        with a.json_out.open("a") as fh:
                            fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
