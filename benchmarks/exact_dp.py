"""The exact DP route (STreeD, van der Linden et al. 2023) vs its peers called directly (pystreed's STreeD, DL8.5),
scikit-learn CART and HiGHS on OCT (Bertsimas & Dunn 2017), on the whole of each (binary) dataset: training errors
and time (issue 14).

    .venv/bin/python benchmarks/exact_dp.py                                   # 7 datasets x depth 2, 3; 60 s MILP
    .venv/bin/python benchmarks/exact_dp.py --time-limit 30 --json-out benchmarks/results/exact_dp_peers.jsonl
    .venv/bin/python benchmarks/exact_dp.py --datasets votes --depths 2 --time-limit 10

Per dataset and depth, on the same data:

* ours: what a user calls, ``get_formulation("oct", depth=d).solve(data, solver="streed")`` (scaling,
  binarization, the DP, the decoded tree and its certificate on the tree; no MILP is built:
  ``treeopt_dsl.exact.direct``): errors, status, wall time and, separately, the time inside the DP engine (the
  depth-1/2 count or STreeD; the benchmark wraps ``treeopt_dsl.exact.depth2.solve`` and
  ``treeopt_dsl.exact.dp._run``; no library code changes); beside it, for reference, the route through the built
  model (``maybe_solve_dp(spec.build(data), "streed")``: OCT's rows built and the DP point certified on them);
* the peers on the 0/1 matrix ``treeopt_dsl.exact.binarize(X)`` (the cuts our route uses; binarizing is not in
  their time): ``pystreed.STreeDClassifier(max_depth=d)`` and ``pydl85.DL85Classifier(max_depth=d)``;
  CART (``DecisionTreeClassifier(max_depth=d)``) on the raw ``X``;
* the MILP, ``get_formulation("oct", depth=d).solve(data, solver="highs", threads=1, time_limit=T)``, plain
  (``warm_start=None``, the paper's run) and with the library's default start ``warm_start="auto"`` (for OCT it
  returns the DP's proven optimum without running HiGHS when it can: ``result.solver``, ``start["chosen"]``).

Ratios: our wall time / the fastest exact peer's (STreeD, DL8.5; the issue's target is <= 3x), our errors against
each exact peer's (✓ or MISMATCH: all three are the optimum over the same cuts), CART / optimum and plain MILP /
optimum in errors. Errors are counted from each model's predictions on the training data. The DP route, the
exact peers and CART report the fastest of ``--repeats`` runs (default 3: their times are milliseconds, and the
machine may be shared); the MILP runs once.

Needs pystreed (``pip install treeopt-dsl[dp]``) and the data directory. DL8.5 is a benchmark peer only, not a
project dependency: ``pip install pydl8.5`` (``.venv/bin/pip install pydl8.5``); without it its columns are "-".
A warm-up (one small instance through every route, not reported) keeps import time out of the first row.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from cli_paths import refuse_unwritable

DATASETS = ("monks-1", "monks-3", "tic-tac-toe", "breast-wisconsin-original", "votes", "krkp", "mushrooms")
DL85_INSTALL = "pip install pydl8.5 (a benchmark peer, not a project dependency)"


class EngineTimer:
    """Wraps the DP engines (``treeopt_dsl.exact.dp._run``: one STreeD fit; ``treeopt_dsl.exact.depth2.solve``: the
    depth-1/2 count) while active: the time spent inside them and the number of 0/1 columns they were given."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self.columns: int | None = None

    @contextmanager
    def active(self) -> Iterator[EngineTimer]:
        import treeopt_dsl.exact.depth2 as depth2
        import treeopt_dsl.exact.dp as dp

        originals: list[tuple[Any, str, Callable[..., Any]]] = [(dp, "_run", dp._run), (depth2, "solve", depth2.solve)]
        self.seconds, self.calls, self.columns = 0.0, 0, None

        def timed(original: Callable[..., Any]) -> Callable[..., Any]:
            def call(Z: np.ndarray, *args: Any, **kwargs: Any) -> Any:
                t = time.perf_counter()
                try:
                    return original(Z, *args, **kwargs)
                finally:
                    self.seconds += time.perf_counter() - t
                    self.calls += 1
                    self.columns = int(Z.shape[1])
            return call

        for mod, name, original in originals:
            setattr(mod, name, timed(original))
        try:
            yield self
        finally:
            for mod, name, original in originals:
                setattr(mod, name, original)


def dl85_class() -> type | None:
    try:
        from pydl85 import DL85Classifier
    except ImportError:
        return None
    return DL85Classifier


def model_errors(result: Any, X: np.ndarray, y: np.ndarray) -> int | None:
    """Misclassified training samples of a solve result's decoded tree (``None`` without one)."""
    model = getattr(result, "model", None)
    if model is None:
        return None
    labels = np.asarray(model.classes)[(y > 0).astype(int)]
    return int(np.sum(np.asarray(model.predict(X)) != labels))


def best_of(repeats: int, fit: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest wall time of ``repeats`` calls of ``fit`` and the last call's value."""
    best, value = float("inf"), None
    for _ in range(max(repeats, 1)):
        t = time.perf_counter()
        value = fit()
        best = min(best, time.perf_counter() - t)
    return best, value


def run(dataset: str, depth: int, time_limit: float, repeats: int = 3) -> dict[str, Any]:
    from pystreed import STreeDClassifier
    from sklearn.tree import DecisionTreeClassifier

    from treeopt_dsl.datasets import load
    from treeopt_dsl.exact import binarize, maybe_solve_dp
    from treeopt_dsl.formulations import get_formulation

    d = load(dataset)
    X, y = d.X, np.asarray(d.y)
    y01 = (y > 0).astype(np.int32)
    row: dict[str, Any] = {"dataset": dataset, "n": d.n_samples, "p": d.n_features, "depth": depth,
                           "time_limit": time_limit, "repeats": repeats}
    # ours: what a user calls, spec.solve(data, solver="streed") (no MILP built: treeopt_dsl.exact.direct), and the
    # DP engine's calls inside (the fastest of ``repeats`` runs)
    timer = EngineTimer()
    best: tuple[float, float, Any] | None = None
    for _ in range(max(repeats, 1)):
        with timer.active():
            t = time.perf_counter()
            res = get_formulation("oct", depth=depth).solve(d, solver="streed", time_limit=time_limit)
            wall = time.perf_counter() - t
        if best is None or wall < best[0]:
            best = (wall, timer.seconds, res)
    assert best is not None
    ours_s, dp_in_s, ours = best
    row.update(cols=timer.columns, ours_err=model_errors(ours, X, y), ours_obj=ours.objective,
               ours_status=ours.status.value, ours_s=ours_s, ours_dp_s=dp_in_s, ours_dp_calls=timer.calls,
               ours_engine="count" if ours.message.startswith("exact depth") else "streed",
               ours_certificate_ok=bool(ours.certificate is not None and ours.certificate.ok),
               ours_other_s=ours_s - dp_in_s)
    # the route through the built model (build + embedding + the certificate on OCT's rows), for reference
    built_s, built_res = best_of(repeats, lambda: maybe_solve_dp(get_formulation("oct", depth=depth).build(d), "streed",
                                                                   time_limit=time_limit))
    row.update(built_route_s=built_s, built_route_obj=built_res.objective, built_route_status=built_res.status.value)
    # the peers on the same 0/1 matrix
    t = time.perf_counter()
    bz = binarize(X)
    row.update(peer_cols=bz.n_columns, binarize_s=time.perf_counter() - t)
    streed_s, st = best_of(repeats, lambda: STreeDClassifier(max_depth=depth, time_limit=time_limit).fit(bz.Z, y01))
    row.update(streed_s=streed_s, streed_optimal=bool(st.fit_result.is_optimal()),
               streed_err=int(np.sum(st.predict(bz.Z) != y01)))
    dl85 = dl85_class()
    if dl85 is None:
        row.update(dl85_err=None, dl85_s=None, dl85_optimal=None)
    else:
        dl85_s, m = best_of(repeats, lambda: dl85(max_depth=depth, time_limit=time_limit).fit(bz.Z, y01))
        row.update(dl85_s=dl85_s, dl85_optimal=not bool(m.timeout_),
                   dl85_err=int(np.sum(np.asarray(m.predict(bz.Z)) != y01)))
    cart_s, cart = best_of(repeats, lambda: DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y))
    row.update(cart_s=cart_s, cart_err=int(np.sum(cart.predict(X) != y)))
    # the MILP: plain (the paper's run) and with the library's default start
    t = time.perf_counter()
    milp = get_formulation("oct", depth=depth).solve(d, solver="highs", time_limit=time_limit, threads=1,
                                                     warm_start=None)
    row.update(milp_s=time.perf_counter() - t, milp_status=milp.status.value, milp_obj=milp.objective,
               milp_err=model_errors(milp, X, y))
    with timer.active():
        t = time.perf_counter()
        auto = get_formulation("oct", depth=depth).solve(d, solver="highs", time_limit=time_limit, threads=1,
                                                         warm_start="auto")
        auto_s = time.perf_counter() - t
    start = auto.start or {}
    row.update(auto_s=auto_s, auto_status=auto.status.value, auto_obj=auto.objective, auto_err=model_errors(auto, X, y),
               auto_solver=auto.solver, auto_chosen=start.get("chosen"), auto_proven=start.get("proven"),
               auto_start_s=start.get("time_s"), auto_streed_s=timer.seconds)
    # ratios
    peers = [s for s in (row["streed_s"], row["dl85_s"]) if s is not None]
    opt = row["ours_err"] if row["ours_status"] == "optimal" else None
    row.update(fastest_peer_s=min(peers), ours_over_fastest=ours_s / max(min(peers), 1e-9),
               eq_streed=row["ours_err"] == row["streed_err"],
               eq_dl85=None if row["dl85_err"] is None else row["ours_err"] == row["dl85_err"],
               cart_over_opt=None if opt is None else row["cart_err"] / max(opt, 1),
               milp_over_opt=None if opt is None or row["milp_err"] is None else row["milp_err"] / max(opt, 1))
    return row


def warm_up() -> None:
    """One small instance through every route (imports, first compile, solver start-up), not reported."""
    run("monks-1", 2, 1.0, repeats=1)


def _f(v: Any, fmt: str = ".3f") -> str:
    return "-" if v is None else format(v, fmt)


def _check(v: bool | None) -> str:
    return "-" if v is None else ("✓" if v else "MISMATCH")


def tables(rows: list[dict[str, Any]]) -> str:
    """Two markdown tables: the exact route vs the peers, and the MILP runs."""
    out = ["| dataset | n | cols | d | ours err | status | ours s | in DP s (engine) | built route s | STreeD err "
           "| STreeD s | DL8.5 err | DL8.5 s | CART err | CART s | ours / fastest | = STreeD | = DL8.5 | CART / opt |",
           "|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:-:|:-:|--:|"]
    for r in rows:
        out.append(f"| {r['dataset']} | {r['n']} | {r['cols']} | {r['depth']} | {r['ours_err']} | {r['ours_status']} "
                   f"| {r['ours_s']:.4f} | {r['ours_dp_s']:.4f} ({r['ours_engine']}) | {r['built_route_s']:.4f} "
                   f"| {r['streed_err']} | {r['streed_s']:.4f} "
                   f"| {_f(r['dl85_err'], 'd')} | {_f(r['dl85_s'], '.4f')} | {r['cart_err']} | {r['cart_s']:.4f} "
                   f"| {r['ours_over_fastest']:.1f}x | {_check(r['eq_streed'])} | {_check(r['eq_dl85'])} "
                   f"| {_f(r['cart_over_opt'], '.2f')} |")
    out += ["", "| dataset | d | opt | MILP err | MILP s | MILP status | MILP / opt | auto err | auto s | auto status "
            "| auto solver | start chosen |", "|---|--:|--:|--:|--:|---|--:|--:|--:|---|---|---|"]
    for r in rows:
        opt = r["ours_err"] if r["ours_status"] == "optimal" else "-"
        out.append(f"| {r['dataset']} | {r['depth']} | {opt} | {_f(r['milp_err'], 'd')} | {r['milp_s']:.1f} "
                   f"| {r['milp_status']} | {_f(r['milp_over_opt'], '.2f')} | {_f(r['auto_err'], 'd')} "
                   f"| {r['auto_s']:.2f} | {r['auto_status']} | {r['auto_solver']} | {r['auto_chosen']} |")
    return "\n".join(out)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = []
    for pkg in ("pystreed", "pydl8.5", "scikit-learn", "highspy"):
        try:
            versions.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{pkg} not installed")
    import os

    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}; "
            + ", ".join(versions))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--time-limit", type=float, default=60.0,
                    help="seconds for the MILP (and the cap of the DP route and the peers)")
    ap.add_argument("--json-out", type=Path, default=None,
                    help="write the rows as JSON lines here (e.g. benchmarks/results/exact_dp_peers.jsonl)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="the DP route, STreeD, DL8.5 and CART: the fastest of this many runs (the MILP runs once)")
    ap.add_argument("--no-warm-up", action="store_true", help="skip the (unreported) warm-up instance")
    a = ap.parse_args(argv)
    try:
        import pystreed  # noqa: F401
    except ImportError:
        raise SystemExit("the DP route and the STreeD peer need pystreed: pip install treeopt-dsl[dp]") from None
    # its directory made (as before) and checked here, not after the warm-up
    refuse_unwritable(ap, "--json-out", a.json_out, "the rows", make_parent=True)
    print(f"# machine: {machine()}", flush=True)
    if dl85_class() is None:
        print(f"# note: DL8.5 is not installed, its columns are '-' ({DL85_INSTALL})", flush=True)
    if not a.no_warm_up:
        warm_up()
    out = None
    if a.json_out is not None:
        out = a.json_out.open("w")
    rows = []
    try:
        for ds in a.datasets:
            for depth in a.depths:
                r = run(ds, depth, a.time_limit, a.repeats)
                rows.append(r)
                print(f"# {ds} d={depth}: ours {r['ours_err']} err {r['ours_s']:.3f} s ({r['ours_status']}), "
                      f"STreeD {r['streed_err']} {r['streed_s']:.3f} s, DL8.5 {_f(r['dl85_err'], 'd')} "
                      f"{_f(r['dl85_s'])} s, CART {r['cart_err']}, MILP {_f(r['milp_err'], 'd')} "
                      f"{r['milp_s']:.1f} s ({r['milp_status']}), auto {_f(r['auto_err'], 'd')} {r['auto_s']:.2f} s "
                      f"via {r['auto_solver']}/{r['auto_chosen']}", flush=True)
                if out is not None:
                    out.write(json.dumps(r) + "\n")
                    out.flush()
    finally:
        if out is not None:
            out.close()
    print()
    print(tables(rows))
    within = [r for r in rows if r["ours_over_fastest"] <= 3.0]
    bad = [r for r in rows if not r["eq_streed"] or r["eq_dl85"] is False]
    print(f"\nours within 3x of the fastest exact peer: {len(within)}/{len(rows)}; "
          f"error mismatches against STreeD / DL8.5: {len(bad)}")


if __name__ == "__main__":
    main()
