"""Reports from a results store alone: Dolan–Moré performance profiles, cumulative gaps, markdown tables.

Performance profile (thesis lines 630-645): for instance ``p`` and method ``s`` with cost ``t[p, s]``
(lower is better; a failure is ``inf``), ``r[p, s] = t[p, s] / min_s t[p, s]`` and
``rho_s(tau) = |{p : r[p, s] <= tau}| / |P|``. Cumulative gap (lines 647-651): ``g[p, s] = |mu[p, s] -
best_s mu[p, s]|`` and ``rho_s(t) = |{p : g[p, s] <= t}| / |P|``.

Example:

    >>> import numpy as np
    >>> taus, rho = performance_profile(np.array([[1.0, 2.0], [4.0, 2.0]]), taus=np.array([1.0, 2.0]))
    >>> rho.tolist()   # method 0 is best on instance 0 only; within a factor 2 on both
    [[0.5, 1.0], [0.5, 1.0]]
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest

from treeopt_dsl.defaults import REPORT_PROFILES, WITHIN_POINTS
from treeopt_dsl.errors import DataError, OptionError
from treeopt_dsl.experiments.store import ResultStore
from treeopt_dsl.numeric import finite_real
from treeopt_dsl.starts.multistart import PAPER_GRID_LABELS, lambda_l_column, paper_grid

__all__ = ["cumulative_gap", "exact_table", "instance_matrix", "objective_family", "paired_table", "paper_table",
           "performance_profile", "profile_figure", "read_paper", "summary_table", "write_report"]



def performance_profile(costs: np.ndarray, taus: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(taus, rho)``: ``rho[s, k]`` is the fraction of instances where method ``s`` is within ``taus[k]`` x the best.

    ``costs``: ``(n_instances, n_methods)``, lower is better, ``inf`` / ``nan`` = failed. An instance every
    method fails counts against all of them. ``taus`` default: every distinct finite ratio (a step function).
    """
    c = np.asarray(costs, dtype=float)
    c = np.where(np.isnan(c), np.inf, c)
    best = c.min(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(np.isfinite(c) & np.isfinite(best), c / np.where(best > 0, best, 1.0), np.inf)
    r = np.where(np.isfinite(c) & (best <= 0), np.where(c <= best, 1.0, np.inf), r)  # zero-cost ties
    if taus is None:
        finite = r[np.isfinite(r)]
        taus = np.unique(np.concatenate([[1.0], finite])) if finite.size else np.array([1.0])
    rho = (r.T[:, :, None] <= taus[None, None, :]).mean(axis=1)
    return np.asarray(taus, dtype=float), rho


def cumulative_gap(values: np.ndarray, *, higher_is_better: bool,
                   ts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(ts, rho)`` with ``rho[s, k]`` the fraction of instances where method ``s`` is within ``ts[k]`` of the best.

    Example:

        >>> ts, rho = cumulative_gap(np.array([[0.9, 0.8], [0.7, 0.75]]), higher_is_better=True,
        ...                          ts=np.array([0.0, 0.05, 0.1]))
        >>> rho.tolist()
        [[0.5, 1.0, 1.0], [0.5, 0.5, 1.0]]
    """
    v = np.asarray(values, dtype=float)
    bad = ~np.isfinite(v)
    filled = np.where(bad, -np.inf if higher_is_better else np.inf, v)
    best = filled.max(axis=1, keepdims=True) if higher_is_better else filled.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):  # inf - inf on an instance no method finished: its gap is inf below
        gap = np.where(bad | ~np.isfinite(best), np.inf, np.abs(v - best))
    gap = np.round(gap, 12)
    if ts is None:
        finite = gap[np.isfinite(gap)]
        ts = np.unique(np.concatenate([[0.0], finite])) if finite.size else np.array([0.0])
    rho = (gap.T[:, :, None] <= ts[None, None, :]).mean(axis=1)
    return np.asarray(ts, dtype=float), rho


def _value(row: dict[str, Any], what: str) -> float:
    if not row.get("ok"):
        return math.inf if what in ("time", "sparsity", "objective", "exact") else math.nan
    if what == "time":
        proven = row.get("status") in ("optimal", "fitted", "done")
        return float(row.get("runtime_s") or 0.0) if proven else math.inf
    if what == "sparsity":
        v = row.get("features_per_node")
        return math.inf if v is None else float(v) + 1.0  # shifted by 1: a constant split (0 features) has a ratio
    if what in ("objective", "exact"):
        v = row.get("objective" if what == "objective" else "exact_objective")
        return math.inf if v is None else float(v)
    v = row.get("test_balanced_accuracy")
    return math.nan if v is None else float(v)


def instance_matrix(rows: list[dict[str, Any]], what: str,
                    by: str = "method") -> tuple[list[Any], list[str], np.ndarray]:
    """Instances (dataset, seed, fold) x values of ``by``: the matrix of ``what`` (time / accuracy / ...)."""
    methods = sorted({str(r.get(by)) for r in rows})
    insts = sorted({(r.get("dataset"), r.get("seed"), r.get("fold") if r.get("fold") is not None else -1)
                    for r in rows}, key=str)
    index = {k: i for i, k in enumerate(insts)}
    col = {m: j for j, m in enumerate(methods)}
    missing = math.nan if what == "accuracy" else math.inf
    mat = np.full((len(insts), len(methods)), missing)
    for r in rows:
        k = (r.get("dataset"), r.get("seed"), r.get("fold") if r.get("fold") is not None else -1)
        mat[index[k], col[str(r.get(by))]] = _value(r, what)
    return insts, methods, mat


def _geo_mean(x: list[float]) -> float:
    a = np.maximum(np.asarray(x, dtype=float), 1e-3)
    return float(np.exp(np.mean(np.log(a)))) if a.size else math.nan


def _fmt(v: Any, nd: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.{nd}f}" if isinstance(v, float) else str(v)


def summary_table(rows: list[dict[str, Any]], by: str = "method") -> str:
    """One markdown row per ``by`` value: tasks, proven optimal, accuracy, sparsity, time, gap, share of best."""
    _, methods, acc = instance_matrix(rows, "accuracy", by)
    _, best = cumulative_gap(acc, higher_is_better=True, ts=np.array([0.0]))
    out = [f"| {by} | tasks | ok | proven optimal | test bal. acc. (mean ± sd) | best test bal. acc. (share) "
           "| features / split | time (s, geo-mean) | final gap (mean) |", "|---|---|---|---|---|---|---|---|---|"]
    for j, m in enumerate(methods):
        rs = [r for r in rows if str(r.get(by)) == m]
        ok = [r for r in rs if r.get("ok")]
        accs = [r["test_balanced_accuracy"] for r in ok if r.get("test_balanced_accuracy") is not None]
        fpn = [r["features_per_node"] for r in ok if r.get("features_per_node") is not None]
        gaps = [r["gap"] for r in ok if r.get("gap") is not None]
        times = [r["runtime_s"] for r in ok if r.get("runtime_s") is not None]
        n_opt = sum(r.get("status") == "optimal" for r in rs)
        acc_s = f"{np.mean(accs):.3f} ± {np.std(accs):.3f}" if accs else "-"
        out.append(f"| {m} | {len(rs)} | {len(ok)} | {n_opt} ({n_opt / max(1, len(rs)):.0%}) | {acc_s} | "
                   f"{best[j, 0]:.2f} | {_fmt(float(np.mean(fpn)) if fpn else None, 2)} | "
                   f"{_fmt(_geo_mean(times) if times else None, 2)} | {_fmt(float(np.mean(gaps)) if gaps else None)} |")
    return "\n".join(out)


def exact_table(rows: list[dict[str, Any]], by: str = "method") -> str:
    """One markdown row per ``by`` value over the instances where every value recorded an exact objective (a logistic
    tree's true log-loss objective, thesis Figs. 3.7c and 3.8b): its mean, the share of instances where it is the
    lowest, and the median ratio to the lowest (over the instances whose lowest is above 0; "-" when none is);
    ``""`` when no row records one.

        >>> rows = [{"ok": True, "method": m, "dataset": "d", "seed": s, "exact_objective": v}
        ...         for m, s, v in (("a", 0, 2.0), ("b", 0, 1.0), ("a", 1, 3.0), ("b", 1, 3.0))]
        >>> print(exact_table(rows).splitlines()[2])
        | a | 2 | 2.500 | 0.50 | 1.500 |
    """
    rows = [r for r in rows if r.get("ok") and r.get("exact_objective") is not None]
    if not rows:
        return ""
    _, methods, mat = instance_matrix(rows, "exact", by)
    mat = mat[np.all(np.isfinite(mat), axis=1)]  # the instances every value has
    out = [f"| {by} | instances | exact objective (mean) | lowest (share) | ratio to the lowest (median) |",
           "|---|---|---|---|---|"]
    if not len(mat):
        return "\n".join(out)
    low = mat.min(axis=1, keepdims=True)
    best = np.isclose(mat, low, rtol=1e-9, atol=0.0)
    pos = low[:, 0] > 0  # a ratio to a lowest of 0 is undefined: those instances count in the mean and the share only
    ratio = np.median(mat[pos] / low[pos], axis=0) if pos.any() else np.full(len(methods), np.nan)
    for j, m in enumerate(methods):
        r = "-" if np.isnan(ratio[j]) else f"{ratio[j]:.3f}"
        out.append(f"| {m} | {len(mat)} | {mat[:, j].mean():.3f} | {best[:, j].mean():.2f} | {r} |")
    return "\n".join(out)


def paired_table(rows: list[dict[str, Any]], against: str, by: str = "method") -> str:
    """Every other ``by`` value against ``against`` on the instances both ran (dataset, seed, fold): how often its
    test balanced accuracy is higher / lower, the mean difference in points and the two-sided sign test's p (ties
    left out); the median ratio of the runtimes on the instances both proved; how often its exact objective (a
    logistic tree's true log-loss) is lower / higher and the median ratio to ``against``'s (where that is above 0).
    The papers' statements ("V1 does not significantly improve the accuracy", "a much higher training cost") are
    paired claims: this is the table that checks them.

        >>> rows = [{"ok": True, "status": "optimal", "method": m, "dataset": "d", "seed": s, "runtime_s": t,
        ...          "test_balanced_accuracy": a} for m, s, t, a in
        ...         (("a", 0, 1.0, 0.7), ("b", 0, 2.0, 0.8), ("a", 1, 1.0, 0.7), ("b", 1, 4.0, 0.6))]
        >>> print(paired_table(rows, "a").splitlines()[2])
        | b | 2 | 1 / 0 / 1 | +0.00 | 1.000 | 3.00 (2) | - | - |
    """
    _, methods, acc = instance_matrix(rows, "accuracy", by)
    if against not in methods:
        raise OptionError(f"--against {against!r}: no row with {by} = {against!r} (values: {', '.join(methods)})")
    _, _, time = instance_matrix(rows, "time", by)
    exact_rows = [r for r in rows if r.get("ok") and r.get("exact_objective") is not None]
    _, _, exact = instance_matrix(rows, "exact", by) if exact_rows else (None, None, None)
    a = methods.index(against)
    out = [f"| {by} | instances | test bal. acc. higher / equal / lower | mean difference (points) | sign test p | "
           f"time ratio, both proven (median, n) | exact objective lower / equal / higher | exact ratio (median) |",
           "|---|---|---|---|---|---|---|---|"]
    for j, m in enumerate(methods):
        if j == a:
            continue
        both = ~np.isnan(acc[:, j]) & ~np.isnan(acc[:, a])
        d = acc[both, j] - acc[both, a]
        hi, lo = int(np.sum(d > 1e-12)), int(np.sum(d < -1e-12))
        p = binomtest(hi, hi + lo).pvalue if hi + lo else math.nan
        proven = np.isfinite(time[:, j]) & np.isfinite(time[:, a])
        t_ratio = np.maximum(time[proven, j], 1e-3) / np.maximum(time[proven, a], 1e-3)
        t_txt = f"{np.median(t_ratio):.2f} ({int(proven.sum())})" if proven.any() else "-"
        e_cnt = e_ratio = "-"
        if exact is not None:
            ok = np.isfinite(exact[:, j]) & np.isfinite(exact[:, a])
            if ok.any():
                e = exact[ok, j] - exact[ok, a]
                tol = 1e-9 * np.maximum(1.0, np.abs(exact[ok, a]))
                e_cnt = f"{int(np.sum(e < -tol))} / {int(np.sum(np.abs(e) <= tol))} / {int(np.sum(e > tol))}"
                pos = ok & (exact[:, a] > 0)
                e_ratio = f"{np.median(exact[pos, j] / exact[pos, a]):.3f}" if pos.any() else "-"
        mean = f"{100 * d.mean():+.2f}" if d.size else "-"
        out.append(f"| {m} | {int(both.sum())} | {hi} / {int(both.sum()) - hi - lo} / {lo} | {mean} | "
                   f"{_fmt(float(p))} | {t_txt} | {e_cnt} | {e_ratio} |")
    return "\n".join(out)


def dataset_table(rows: list[dict[str, Any]], by: str = "method") -> str:
    """Mean test balanced accuracy (%) per dataset (rows) and ``by`` value (columns), as the papers print it."""
    methods = sorted({str(r.get(by)) for r in rows})
    datasets = sorted({str(r.get("dataset")) for r in rows})
    out = ["| dataset | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for d in datasets:
        cells = []
        for m in methods:
            v = [r["test_balanced_accuracy"] for r in rows if str(r.get("dataset")) == d and str(r.get(by)) == m
                 and r.get("ok") and r.get("test_balanced_accuracy") is not None]
            cells.append(f"{100 * np.mean(v):.2f}" if v else "-")
        out.append(f"| {d} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _path_points(rows: list[dict[str, Any]], point: str) -> list[dict[str, Any]]:
    """The point labelled ``point`` (:data:`~treeopt_dsl.starts.multistart.PAPER_GRID_LABELS`: ``"0"``,
    ``"2^-12"`` ... ``"2^3"``) of every regularization-path row (its ``points`` in path order), as a row of its own
    (``ok``, the path's ``dataset`` / ``method`` / ``seed``, the point's measures)."""
    if point not in PAPER_GRID_LABELS:
        raise DataError(f"point {point!r} is not a point of the paper's grid (known: {', '.join(PAPER_GRID_LABELS)})")
    i = PAPER_GRID_LABELS.index(point)
    paths = [{**r, "points": lambda_l_column(r["points"])} for r in rows if r.get("points")]
    paths = [r for r in paths if len(r["points"]) == len(PAPER_GRID_LABELS)]
    for r in paths:
        _check_paper_grid(r)
    return [{**{k: v for k, v in r.items() if k != "points"}, **r["points"][i], "ok": r.get("ok")} for r in paths]


def _check_paper_grid(row: dict[str, Any]) -> None:
    """Refuse a stored path whose 17 points are not the paper's grid (:func:`~treeopt_dsl.starts.multistart.paper_grid`:
    one lambda 0 throughout, the other 0 then ``2^r / (p |tau_B|)`` or ``2^r / p``, r = -12..3, with the row's
    ``n_features`` and its ``params`` depth), so that a point is never read off a path of other lambdas by its
    position. A row that records no lambdas (made by hand) is taken as it is."""
    pts = row["points"]
    if not all("lambda_l" in q and "lambda_g" in q for q in pts):
        return
    lam = {k: np.array([float(q[k]) for q in pts]) for k in ("lambda_l", "lambda_g")}
    depth = int((row.get("params") or {}).get("depth", 1))
    p = row.get("n_features")
    kind = "g" if np.all(lam["lambda_l"] == 0) and np.any(lam["lambda_g"] > 0) else "l"
    other = lam["lambda_l" if kind == "g" else "lambda_g"]
    ok = p is not None and np.all(other == 0) and np.allclose(lam[f"lambda_{kind}"],
                                                                 paper_grid(kind, int(p), depth), rtol=1e-9, atol=0)
    if not ok:
        raise DataError(f"the stored path of dataset {row.get('dataset')!r}, method {row.get('method')!r}, seed "
                        f"{row.get('seed')!r} is not on the paper's grid (n_features={p}, depth={depth}; lambda_l "
                        f"{lam['lambda_l'][:3].tolist()}..., lambda_g {lam['lambda_g'][:3].tolist()}...): its points "
                        "cannot be read by the paper's labels")


def _ours(rows: list[dict[str, Any]], dataset: str, method: str, metric: str, by: str,
          point: str | None = None) -> tuple[float | None, int]:
    """Our value of one paper cell and how many rows (seeds, folds) it is drawn from; with ``point``, the mean
    of that point of the paths (:func:`_path_points`)."""
    rs = [r for r in rows if (dataset == "*" or str(r.get("dataset")) == dataset)]
    if point:
        rs = _path_points(rs, point)
    if metric == "best_accuracy_fraction":
        _, methods, acc = instance_matrix(rs, "accuracy", by)
        if method not in methods:
            return None, 0
        _, rho = cumulative_gap(acc, higher_is_better=True, ts=np.array([0.0]))
        return float(rho[methods.index(method), 0]), acc.shape[0]  # instances x methods
    rs = [r for r in rs if method == "*" or str(r.get(by)) == method]
    if not rs:
        return None, 0
    if metric == "proven_fraction":
        return float(np.mean([r.get("status") == "optimal" for r in rs])), len(rs)
    if metric == "max_proven_fraction":  # the best method's share of proven optima
        ms = sorted({str(r.get(by)) for r in rs})
        return max(float(np.mean([r.get("status") == "optimal" for r in rs if str(r.get(by)) == m]))
                   for m in ms), len(rs)
    vals = [float(r[metric]) for r in rs if r.get("ok") and r.get(metric) is not None]
    return (float(np.mean(vals)) if vals else None), len(vals)


#: the note that marks a paper cell printed beside ours but left out of the count (our data is not the paper's)
NOT_COUNTED_NOTE = "not counted"


def _is_rate(metric: str) -> bool:
    """The metrics counted against :data:`~treeopt_dsl.defaults.WITHIN_POINTS` (fractions: 1.5 points = 0.015):
    accuracies and the sensitivity / specificity rates (``*_tpr``, ``*_tnr``)."""
    return metric.endswith(("accuracy", "_tpr", "_tnr"))


def read_paper(paper: str | Path) -> list[dict[str, str]]:
    """The rows of a published-numbers file (``experiments/papers/*.csv``: ``dataset,method,metric,value`` and
    optionally ``note``, ``sd``, ``point``; lines starting with ``#`` are comments), each value a number.

        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "paper.csv"
        >>> _ = f.write_text("# Table 1\\ndataset,method,metric,value\\nd,A,test_accuracy,0.80\\n")
        >>> read_paper(f)
        [{'dataset': 'd', 'method': 'A', 'metric': 'test_accuracy', 'value': '0.80'}]
    """
    path = Path(paper)
    try:
        with path.open(newline="") as fh:
            entries = list(csv.DictReader(line for line in fh if not line.lstrip().startswith("#")))
    except OSError as exc:
        raise DataError(f"cannot read the paper table {path}: {exc.strerror or exc}") from None
    need = {"dataset", "method", "metric", "value"}
    if not entries or not need <= set(entries[0]):
        raise DataError(f"{path}: a paper table needs the columns {', '.join(sorted(need))}")
    for i, e in enumerate(entries, 1):
        if None in e or not finite_real(_number(e["value"])):
            raise DataError(f"{path}: row {i} ({e.get('dataset')}, {e.get('method')}, {e.get('metric')}): needs a "
                            f"number as value and no more fields than the header (quote a note with a comma)")
    return entries


def _number(text: str | None) -> float | None:
    try:
        return float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def paper_table(rows: list[dict[str, Any]], paper: str | Path, by: str = "method") -> str:
    """A paper's values (CSV ``dataset,method,metric,value[,note]``) beside ours, with the differences, the number
    of rows each of ours is the mean of (``n``: seeds x folds; a cell of fewer seeds than the paper's is noisier)
    and, for the rates (accuracies, TPR, TNR), whether ours is within :data:`~treeopt_dsl.defaults.WITHIN_POINTS`
    percentage points, counted at the end (issue 33's measure of a reproduced table).

    ``dataset`` / ``method`` ``*`` aggregate over all; metrics: any numeric row field (mean over seeds, e.g.
    ``test_balanced_accuracy``), ``best_accuracy_fraction``, ``proven_fraction``, ``max_proven_fraction``. An
    optional column ``point`` names one point of a regularization path (``"0"``, ``"2^-12"`` ... ``"2^3"``: the
    paper's grid, S-ORCT Tables 3-5): the cell is then the mean of that point's measure over the stored paths.
    A cell whose note starts with ``not counted`` (:data:`NOT_COUNTED_NOTE`: not the paper's data here) is printed
    but left out of the count.

        >>> import tempfile, pathlib
        >>> csv_file = pathlib.Path(tempfile.mkdtemp()) / "paper.csv"
        >>> _ = csv_file.write_text("dataset,method,metric,value\\nd,A,test_accuracy,0.80\\nd,B,test_accuracy,0.70\\n")
        >>> rows = [{"dataset": "d", "method": "A", "ok": True, "test_accuracy": v} for v in (0.80, 0.81)]
        >>> print(paper_table(rows, csv_file).splitlines()[-1])
        Within 1.5 points: 1 of 1 rate cells run (1 not run).
    """
    entries = read_paper(paper)
    tol = WITHIN_POINTS / 100.0
    out = [f"| dataset | {by} | metric | paper | ours | n | ours - paper | within {WITHIN_POINTS:g} | note |",
           "|---|---|---|---|---|---|---|---|---|"]
    within = run = not_run = 0
    for e in entries:
        p = float(e["value"])
        o, n = _ours(rows, e["dataset"], e["method"], e["metric"], by, e.get("point"))
        diff = "-" if o is None else f"{o - p:+.3f}"
        mark = ""
        if (e.get("note") or "").startswith(NOT_COUNTED_NOTE):  # printed beside ours, left out of the count
            mark = "-"
        elif _is_rate(e["metric"]):
            if o is None:
                not_run += 1
            else:
                run += 1
                ok = abs(o - p) <= tol + 1e-12
                within += ok
                mark = "yes" if ok else "no"
        what = f"{e['metric']} at {e['point']}" if e.get("point") else e["metric"]
        out.append(f"| {e['dataset']} | {e['method']} | {what} | {p:.3f} | {_fmt(o)} | {n or '-'} | {diff} | "
                   f"{mark} | {e.get('note') or ''} |")
    if run or not_run:
        out += ["", f"Within {WITHIN_POINTS:g} points: {within} of {run} rate cells run ({not_run} not run)."]
    return "\n".join(out)


#: one marker and line style per method, so coincident lines stay visible
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
_STYLES = ("-", "--", "-.", ":")


def _draw(ax: Any, kind: str, xs: np.ndarray, rho: np.ndarray, methods: list[str]) -> None:
    """One panel: a step line per method, each with its own marker and dash (hollow markers, staggered)."""
    for j, m in enumerate(methods):
        x = np.concatenate([xs, [xs[-1] * (1.5 if kind == "profile" else 1.0) + (0 if kind == "profile" else 0.05)]])
        y = np.concatenate([rho[j], [rho[j, -1]]])
        step = max(1, x.size // 10)
        ax.step(x, y, where="post", label=m, lw=1.4, ls=_STYLES[j % len(_STYLES)], marker=_MARKERS[j % len(_MARKERS)],
                markevery=(j % step, step), markersize=5, markerfacecolor="none", alpha=0.9)
    if kind == "profile":
        ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")


def _plot(kind: str, panels: list[tuple[str, np.ndarray, np.ndarray, list[str]]], title: str, xlabel: str,
          dpi: float = 100.0) -> Any:
    """``panels`` (subtitle, x, rho, methods) side by side on a :class:`matplotlib.figure.Figure` of its own (no
    pyplot): matplotlib's backend and its open figures are left as they were (a notebook's inline display keeps
    working)."""
    from matplotlib.figure import Figure

    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig = Figure(figsize=(5.5 if cols == 1 else 4.2 * cols, 3.8 if rows == 1 else 3.3 * rows), dpi=dpi)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, (sub, xs, rho, methods) in zip(axes, panels, strict=False):
        _draw(ax, kind, xs, rho, methods)
        if sub:
            ax.set_title(sub, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
    for ax in axes[len(panels):]:
        ax.set_axis_off()
    axes[0].set_ylabel("fraction of instances")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def profile_figure(rows: list[dict[str, Any]], what: str, by: str = "method") -> Any:
    """The figure of one profile of :func:`write_report` from a store's rows (``ResultStore(path).rows()``):
    ``what`` = ``time`` / ``sparsity`` (performance profiles) or ``accuracy`` / ``objective`` / ``exact`` (cumulative
    gaps; the objective's in one panel per formulation, :func:`objective_family`; ``exact``: a logistic tree's exact
    objective, on the rows that record it). Returns a
    :class:`matplotlib.figure.Figure` (drawn without pyplot: the backend is left as it was).

    Example::

        >>> with ResultStore("results.sqlite") as store:                  # doctest: +SKIP
        ...     profile_figure(store.rows(), "time").savefig("time.png")
    """
    if what not in REPORT_PROFILES:
        raise OptionError(f"what must be one of {', '.join(REPORT_PROFILES)}, got {what!r}")
    if what == "exact":  # only the rows of logistic trees record their exact objective
        rows = [r for r in rows if r.get("exact_objective") is not None]
        if not rows:
            raise OptionError("--profile exact: no row records an exact objective (logistic trees' rows do: olct, "
                              "olct_univariate)")
    insts, methods, mat = instance_matrix(rows, what, by)
    if what in ("time", "sparsity"):
        xs, rho = performance_profile(mat)
        label = "runtime ratio to the best (unproven = never)" if what == "time" else \
            "(features per split + 1) ratio to the best"
        return _plot("profile", [("", xs, rho, methods)], f"Performance profile: {what} ({len(insts)} instances)",
                     label)
    if what == "accuracy":
        xs, rho = cumulative_gap(mat, higher_is_better=True)
        return _plot("gap", [("", xs, rho, methods)], f"Cumulative gap: accuracy ({len(insts)} instances)",
                     "gap from the best test balanced accuracy")
    panels = []  # one panel per formulation: different formulations minimize different objectives
    for fam in sorted({objective_family(r) for r in rows}):
        fam_insts, fam_methods, fam_mat = instance_matrix([r for r in rows if objective_family(r) == fam], what, by)
        xs, rho = cumulative_gap(fam_mat, higher_is_better=False)
        panels.append((f"{fam} ({len(fam_insts)} instances)", xs, rho, fam_methods))
    name = "exact objective (true log-loss)" if what == "exact" else "objective"
    title = (f"Cumulative gap: {name}, one panel per formulation (objectives of different formulations are not "
             "compared)" if len(panels) > 1 else f"Cumulative gap: {name} of {panels[0][0]}")
    return _plot("gap", panels, title, f"gap from the best {name}")


def objective_family(row: dict[str, Any]) -> str:
    """What a row's objective measures: its formulation (or estimator, else its method). Objectives of different
    families are different functions and are never compared with each other."""
    return str(row.get("formulation") or row.get("estimator") or row.get("method"))


def write_report(store: str | Path, *, by: str = "method", profiles: list[str] | None = None,
                 out: str | Path | None = None, fmt: str = "png", paper: str | Path | None = None,
                 experiment: str | None = None, methods: list[str] | None = None,
                 against: str | None = None) -> dict[str, Any]:
    """Plots and ``report.md`` from the store's rows alone; returns ``{"markdown", "files"}``.

    ``experiment`` / ``methods``: only that experiment's rows / these methods' (a store several grids ran into:
    ``thesis_fig3_7_tangents.toml`` reuses Figure 3.8's OLCT-V0R tasks and is reported with ``methods``).
    ``against``: a ``by`` value the others are paired with, instance by instance (:func:`paired_table`).

    The plots are performance profiles (time, sparsity) and cumulative gaps (accuracy, objective), one step line
    per value of ``by`` with its own marker and dash. The objective's gap is drawn in one panel per formulation
    (:func:`objective_family`): two formulations' objectives are different functions. The figures are drawn
    without pyplot, so matplotlib's backend (a notebook's inline display) is left as it was.
    """
    if not Path(store).exists():
        raise DataError(f"no results store at {store}")
    with ResultStore(store) as s:
        rows = s.rows(experiment)
    if not rows:
        raise DataError(f"{store} holds no finished task" + (f" of experiment {experiment!r}" if experiment else ""))
    if methods:
        known = sorted({str(r.get("method")) for r in rows})
        unknown = [m for m in methods if m not in known]
        if unknown:
            raise OptionError(f"--method {unknown[0]!r}: no row of that method in {store} "
                              f"(methods: {', '.join(known)})")
        rows = [r for r in rows if r.get("method") in methods]
    if by not in rows[0] and by != "method":
        raise OptionError(f"--by {by!r}: not a column of the results (e.g. method, formulation, solver, dataset)")
    has_exact = any(r.get("exact_objective") is not None for r in rows)
    profiles = list(profiles or [p for p in REPORT_PROFILES if p != "exact" or has_exact])
    outdir = Path(out) if out else Path(str(store).rsplit(".", 1)[0] + "_report")
    outdir.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    n_inst = len(instance_matrix(rows, "accuracy", by)[0])
    for what in profiles:
        path = outdir / f"{'profile' if what in ('time', 'sparsity') else 'gap'}_{what}.{fmt}"
        profile_figure(rows, what, by).savefig(path)
        files.append(path)
    md = [f"# Report: {store}", "", f"{len(rows)} finished task(s), {n_inst} instance(s), compared by {by}.", "",
          summary_table(rows, by), "", "Test balanced accuracy (%), mean over seeds:", "", dataset_table(rows, by)]
    exact = exact_table(rows, by)
    if exact:
        md += ["", "Exact objective (the true log-loss objective of logistic trees) on the training part:", "", exact]
    if against is not None:
        md += ["", f"Paired against {against}, instance by instance:", "", paired_table(rows, against, by)]
    if paper:
        md += ["", f"Beside the paper ({paper}):", "", paper_table(rows, paper, by)]
    md += [""] + [f"![{p.stem}]({p.name})" for p in files]
    text = "\n".join(md) + "\n"
    (outdir / "report.md").write_text(text)
    files.append(outdir / "report.md")
    return {"markdown": text, "files": files}
