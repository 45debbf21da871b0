"""S-ORCT along the paper's regularization paths (seed 001 §4.3-4.4, Tables 3-5), beside the paper's numbers.

    .venv/bin/python benchmarks/sorct_path.py --tables 3 --datasets sonar            # one dataset, one split
    .venv/bin/python benchmarks/sorct_path.py --tables 3,4,5 --splits 3 --n-starts 5 --fresh 5 --time-limit 30 \\
        --jobs 2 --figures benchmarks/results/sorct_figures                          # the run in docs/sorct.md
    .venv/bin/python benchmarks/sorct_path.py --summary benchmarks/results/sorct_protocol.jsonl --tables 3,4,5
    .venv/bin/python benchmarks/sorct_path.py --summary STORE.sqlite --export benchmarks/results/NAME.jsonl
    .venv/bin/python benchmarks/sorct_path.py --tables 3,4,5 --splits 10 --n-starts 20 --fresh 0 \\
        --write-grid experiments/sorct_tables3_5.toml                                # Table 4 in the pair order
    .venv/bin/python benchmarks/sorct_path.py --tables 4 --pair-order column ...     # each point from the one before
    .venv/bin/python benchmarks/sorct_path.py --grid-figure STORE_OR_JSONL fig5.png  # Figure 5's heat maps
    .venv/bin/python benchmarks/sorct_path.py --tables 4 --summary STORE.sqlite --export-grid GRID.jsonl
    treeopt experiment run experiments/sorct_tables3_5.toml --jobs 2       # the same grid on the runner, then
    treeopt experiment report sorct_tables3_5.sqlite --paper experiments/papers/sorct_tables3_5.csv

The protocol of seed 001 (lines 369-406): 75/25 stratified split (seed = split index; the paper repeats ten),
features scaled to [0, 1] on the training part, gamma = 512, W = 0.5, rho_k = 0.1 (constraints (8) on every
data set, line 396); Table 3: depth 1, lambda_G = 0, lambda_L in {0} + {2^r / (p |tau_B|), r = -12..3};
Table 4: the same at depth 2 on the multiclass sets; Table 5: depth 2, lambda_L = 0, lambda_G in
{0} + {2^r / p}. The first point from ``--n-starts`` random points, every later point from the previous
point's best ``--n-starts`` solutions (Ipopt warm-started) plus ``--fresh`` new random points (default
``--n-starts``; 0 is the paper's chain alone): :func:`treeopt_dsl.formulations.sorct.run_path`, the code path of
``treeopt path``. Ipopt through CasADi (MUMPS); ``--time-limit`` seconds per start (default 600: in practice
none, the slowest starts take seconds).

The grid runs on the experiment runner (``treeopt_dsl.experiments``, :func:`grid_text`; ``--tables 3,4,5
--splits 10 --n-starts 20 --fresh 0`` is ``experiments/sorct_tables3_5.toml``, the paper's protocol): one method per
table (``S-ORCT-T3`` ...) whose task is one (table, dataset, split) path (``path = { lambda_l = "paper", ... }``),
each path in its own process, each finished path a row of the SQLite store (``--out``) at once, so an interrupted
run resumes (``--jobs N`` runs N paths at a time). The row's ``points`` hold, per lambda point, delta_L and delta_G (%
of coefficients at 0, |a| <= 1e-6; also at |a| <= 1e-3, printed beside them), train and test accuracy, which
start won, seconds per start and the point's wall time. The summary prints our mean over the splits run beside
the paper's mean over ten, with the difference per cell; ``--summary FILE`` prints it from a store or from the
JSON-lines rows of the runs before the runner (``benchmarks/results/sorct_protocol.jsonl``). ``--plot DIR``
draws each path's curves (one figure per dataset and split), ``--figures DIR`` one ours-vs-paper figure per
table (Figures 2-4).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
from cli_paths import refuse_missing, refuse_unwritable, refuse_wrong_kind

from treeopt_dsl.experiments.report import read_paper
from treeopt_dsl.starts.multistart import PAPER_EXPONENTS, PAPER_GRID_LABELS, lambda_l_column

#: the paper's numbers, one home: seed 001 Tables 3-5 as data (``dataset,method,point,metric,value,note``; each row
#: checked against the seed's text by ``tests/test_reproduction.py``), read by ``treeopt experiment report``
PAPER_CSV = Path(__file__).resolve().parent.parent / "experiments" / "papers" / "sorct_tables3_5.csv"


def paper_tables(path: Path = PAPER_CSV) -> dict[int, dict[str, list[tuple[float, float]]]]:
    """Per table (3, 4, 5) and data set: (delta %, test accuracy %) at lambda = 0 then r = -12..3, from ``path``."""
    out: dict[int, dict[str, dict[str, dict[str, float]]]] = {}
    for e in read_paper(path):
        cell = out.setdefault(int(e["method"].removeprefix("S-ORCT-T")), {}).setdefault(e["dataset"], {})
        cell.setdefault(e["point"], {})["acc" if e["metric"] == "test_accuracy" else "delta"] = float(e["value"])
    return {t: {name: [(pts[lab]["delta"], round(100 * pts[lab]["acc"], 1)) for lab in PAPER_GRID_LABELS]
                for name, pts in sets.items()} for t, sets in out.items()}


_PAPER = paper_tables()
TABLE3, TABLE4, TABLE5 = _PAPER[3], _PAPER[4], _PAPER[5]
TABLES = {3: (TABLE3, 1, "l"), 4: (TABLE4, 2, "l"), 5: (TABLE5, 2, "g")}

#: the data sets the paper read from their UCI training file alone (seed 001 Table 2, lines 384-386 and the
#: Thyroid line: N = 122, 124, 169 and 3772 with the training files' class shares): the data directory stacks
#: the training file before the test file, so ``rows = N`` is that file
PAPER_ROWS = {"monks-3": 122, "monks-1": 124, "monks-2": 169, "thyroid": 3772}
#: the data sets whose columns the paper encodes otherwise than the loader's default (seed 001 Table 2): balance's
#: four integer attributes (1-5) one-hot with one level dropped, p = 16 = 4 x 4 (ours 4 ordinal columns otherwise);
#: car's six categorical attributes with one level dropped, p = 15 (ours 21 otherwise; which level the paper drops
#: is not stated: here the first in text order); german's original file (the manifest's variant ``categorical``: 13
#: nominal attributes one-hot, 7 numeric), one level dropped, p = 48 (the default copy: 24 numeric columns); the
#: Monks sets' six attributes (3, 3, 2, 3, 4, 2 levels) with one level dropped, p = 11 (ours 17 otherwise): the
#: last one (2026-12-07), since the paper's sparsest monks-1 trees (Table 3, r = 2, 3: 84-91 % of the 11 columns
#: at 0, 72.6 and 72.2 %) are the column a5 = 1 (73.4 % on the training file), which dropping the first level
#: removes (no column left scores above 62.1 %; docs/reproduction.md, "Which level the paper drops")
PAPER_ENCODING: dict[str, dict[str, Any]] = {
    "monks-1": {"one_hot_drop": "last"},
    "monks-2": {"one_hot_drop": "last"},
    "monks-3": {"one_hot_drop": "last"},
    "balance": {"one_hot": ["left-weight", "left-distance", "right-weight", "right-distance"],
                "one_hot_drop": "first"},
    "car": {"one_hot_drop": "first"},
    "german": {"variant": "categorical", "one_hot_drop": "first"},
}
R = [None, *PAPER_EXPONENTS]


#: table -> its method's name in the grid
METHODS = {t: f"S-ORCT-T{t}" for t in TABLES}


def _data_entry(name: str) -> dict[str, Any]:
    """The grid's ``[data]`` entry of one data set: every class kept, the paper's rows (:data:`PAPER_ROWS`) and
    columns (:data:`PAPER_ENCODING`)."""
    return {"name": name, "multiclass": True, **({"rows": PAPER_ROWS[name]} if name in PAPER_ROWS else {}),
            **PAPER_ENCODING.get(name, {})}


#: how a lambda_L path (Tables 3 and 4) reaches each point: ``column`` from the lambda_L point before it (lambda_G =
#: 0 throughout); ``row-ends`` the paper's pair order (lines 404-406: every lambda_L row walks the lambda_G grid, and
#: the next row starts from its end), each row cut to its two ends (``lambda_g = "paper-ends"``); ``rows`` the same
#: with every row whole (``"paper"``: the 17 x 17 grid, 8.5 times the points of ``row-ends``; about 4-5 times the
#: time on balance, where most points inside a row are quick)
PAIR_ORDERS = {"column": [0.0], "row-ends": "paper-ends", "rows": "paper"}
#: the reading of each lambda_L table (docs/reproduction.md, "the paper's pair order"): Table 4 (depth 2) is the
#: lambda_G = 0 column of the 17 x 17 grid, so its points start from the end of the row before; Table 3 (depth 1),
#: where local and global sparsity are one measure (line 137), is a lambda_L path of its own (walked in the pair
#: order, monks-1's paths stay at the empty tree from r = -4 on where the paper's test at 81 %)
PAPER_PAIR_ORDER = {3: "column", 4: "row-ends"}


def grid_text(tables: list[int], datasets: list[str] | None, splits: int, n_starts: int, fresh: int | None,
              time_limit: float, pair_order: str = "paper") -> str:
    """The benchmark's grid as an experiment TOML (``--tables 3,4,5 --splits 10 --n-starts 20 --fresh 0``:
    ``experiments/sorct_tables3_5.toml``): one method per table, its paths on the table's data sets (those of
    ``datasets``, default all); Tables 3 and 4 in ``pair_order`` (:data:`PAIR_ORDERS`; ``"paper"``: each in its
    reading, :data:`PAPER_PAIR_ORDER`)."""
    from treeopt_dsl.experiments import toml_value

    names: dict[int, list[str]] = {t: [n for n in TABLES[t][0] if datasets is None or n in datasets] for t in tables}
    every = list(dict.fromkeys(n for t in tables for n in names[t]))
    paper_note = [
        "#   benchmarks/sorct_path.py --tables 3,4,5 --splits 10 --n-starts 20 --fresh 0 (the paper's protocol;",
        "#   Table 4 in its pair order, each lambda_L point from the end of the lambda_G row before, the rows",
        '#   cut to their two ends: lambda_g = "paper-ends")']
    order_note = paper_note if pair_order == "paper" else [
        f"#   --pair-order {pair_order}: Tables 3-4 with lambda_g = {toml_value(PAIR_ORDERS[pair_order])}"]
    lines = ["# benchmarks/sorct_path.py's grid: S-ORCT Tables 3-5, the paper's regularization paths",
             "# (written by grid_text: edit the script, not this file); one task = one (table, dataset, split) path",
             *order_note,
             "[experiment]", 'name = "sorct_tables3_5"', 'solver = "ipopt"',
             f"time_limit = {float(time_limit)!r}  # seconds per start", "threads = 1",
             'metrics = ["accuracy", "balanced_accuracy"]', "", "[data]",
             f"datasets = {toml_value([_data_entry(n) for n in every], indent=12)}",
             f"seeds = {toml_value(list(range(splits)))}", "test_size = 0.25"]
    for t in tables:
        _, depth, kind = TABLES[t]
        path = {"lambda_l": "paper" if kind == "l" else [0.0],
                "lambda_g": "paper" if kind == "g" else PAIR_ORDERS[PAPER_PAIR_ORDER[t] if pair_order == "paper"
                                                                    else pair_order],
                "n_starts": n_starts, **({"fresh": fresh} if fresh is not None else {})}
        lines += ["", "[[method]]", f'name = "{METHODS[t]}"', 'formulation = "sorct"',
                  f"params = {toml_value({'depth': depth, 'rho': 0.1})}  # gamma = 512, W = 0.5: the defaults",
                  f"path = {toml_value(path)}", f"datasets = {toml_value(names[t], indent=12)}"]
    return "\n".join(lines) + "\n"


def point_rows(store_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The store's path rows as one row per point, in the summary's shape (the JSON-lines rows of the runs before
    the runner): ``table``, ``dataset``, ``depth``, ``split``, ``r``, the level the loader dropped
    (``one_hot_drop``, where one was), the point's measures, the paper's."""
    table_of = {m: t for t, m in METHODS.items()}
    out = []
    for row in store_rows:
        t = table_of.get(row.get("method"))
        if t is None or not row.get("points"):
            continue
        paper, depth, _ = TABLES[t]
        drop = (row.get("task_dataset") or {}).get("one_hot_drop")
        encoding = {"one_hot_drop": drop} if drop else {}  # rows exported before 2026-12-07 do not record it
        for i, pt in enumerate(lambda_l_column(row["points"])[:len(R)]):
            ref = paper[row["dataset"]][i]
            out.append({"table": t, "dataset": row["dataset"], "depth": depth, "split": row["seed"], "r": R[i],
                        "n_train": row.get("n_train"), "n_test": row.get("n_test"), **encoding, **pt,
                        "paper_delta": ref[0], "paper_test_accuracy": ref[1] / 100})
    return out


def export_points(rows: list[dict[str, Any]], path: Path) -> None:
    """Rows as JSON lines (the point rows: the shape of ``benchmarks/results/sorct_protocol.jsonl``), written
    atomically."""
    import json

    from treeopt_dsl.io import atomic_binary

    with atomic_binary(path) as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows).encode())


class _Stored:
    """A stored point as :func:`~treeopt_dsl.starts.multistart.plot_path` reads a path point (its ``to_dict()``)."""

    def __init__(self, point: dict[str, Any]) -> None:
        self.point = point

    def to_dict(self) -> dict[str, Any]:
        return self.point


def plot_paths(rows: list[dict[str, Any]], directory: Path) -> None:
    """One figure per (table, dataset, split) path of the point ``rows``: sparsity and accuracy against lambda."""
    import matplotlib.pyplot as plt

    from treeopt_dsl.starts.multistart import plot_path

    directory.mkdir(parents=True, exist_ok=True)
    paths: dict[tuple[int, str, int], list[dict[str, Any]]] = {}
    for r in rows:
        paths.setdefault((r["table"], r["dataset"], r["split"]), []).append(r)
    for (t, name, split), points in paths.items():
        fig = plot_path([_Stored(p) for p in points], over="lambda_l" if TABLES[t][2] == "l" else "lambda_g")
        fig.savefig(directory / f"sorct_T{t}_{name}_split{split}.png", dpi=110)
        plt.close(fig)


def summary(rows: list[dict]) -> None:
    """Our mean over the splits beside the paper's mean over ten runs, per table, data set and r."""
    for table in sorted({r["table"] for r in rows}):
        key = "delta_l" if TABLES[table][2] == "l" else "delta_g"
        print(f"\nTable {table} ({key}, test accuracy %): ours (splits run) | paper (10 runs) | difference")
        names = [n for n in TABLES[table][0] if any(r["dataset"] == n and r["table"] == table for r in rows)]
        diffs_d, diffs_a = [], []
        for name in names:
            mine = [r for r in rows if r["table"] == table and r["dataset"] == name]
            print(f"  {name} ({len({r['split'] for r in mine})} split(s))")
            for k, r_ in enumerate(R):
                at = [r for r in mine if r["r"] == r_]
                if not at:
                    continue
                d, a = float(np.mean([r[key] for r in at])), 100 * float(np.mean([r["test_accuracy"] for r in at]))
                pd_, pa = TABLES[table][0][name][k]
                diffs_d.append(abs(d - pd_))
                diffs_a.append(abs(a - pa))
                coarse = [r[f"{key}_1e3"] for r in at if f"{key}_1e3" in r]  # rows since 2026-11-28
                at_1e3 = f"  (at 1e-3 {np.mean(coarse):5.1f})" if len(coarse) == len(at) else ""
                print(f"    r={'-' if r_ is None else r_:>4}  {key} {d:5.1f} | {pd_:5.1f} | {d - pd_:+6.1f}    "
                      f"acc {a:5.1f} | {pa:5.1f} | {a - pa:+6.1f}{at_1e3}")
        if diffs_d:
            print(f"  mean |difference|: {key} {np.mean(diffs_d):.1f} points, accuracy {np.mean(diffs_a):.1f} points; "
                  f"accuracy within 1.5 points on {np.mean(np.array(diffs_a) <= 1.5):.0%} of {len(diffs_a)} cells")


def grid_points(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The points of whole-grid paths (``experiments/sorct_fig5.toml``: 17 x 17 pairs a path), one dict each with
    its ``dataset`` and ``split``, from a store's rows or from JSON-lines point rows (kept as they are)."""
    out = []
    for row in stored:
        if "points" in row:
            out += [{"dataset": row["dataset"], "split": row["seed"], **q} for q in row["points"] or []]
        elif "lambda_l" in row and "lambda_g" in row:
            out.append(row)
    return out


#: what :func:`export_grid` keeps of a grid point: what Figure 5 draws, the objective and status
GRID_KEYS = ("dataset", "split", "lambda_l", "lambda_g", "status", "objective", "train_accuracy", "test_accuracy",
             "delta_l", "delta_g")


def export_grid(stored: list[dict[str, Any]], path: Path) -> int:
    """Every pair of the whole-grid paths in ``stored`` (:func:`grid_points`), :data:`GRID_KEYS` only, the lambdas
    exact and the measures to 6 significant digits, as JSON lines written atomically (what ``--grid-figure``
    reads, through :func:`export_points`); the number of points."""
    rows = [{k: float(f"{p[k]:.6g}") if isinstance(p[k], float) and not k.startswith("lambda") else p[k]
             for k in GRID_KEYS if k in p} for p in grid_points(stored)]
    export_points(rows, path)
    return len(rows)


def grid_means(points: list[dict[str, Any]], name: str) -> dict[str, np.ndarray]:
    """Per measure (test accuracy, delta_L, delta_G), the mean over the splits at each (lambda_L, lambda_G) pair of
    data set ``name``: rows lambda_L from 0 up, columns lambda_G from 0 up (NaN where no split has the pair)."""
    pts = [p for p in points if p["dataset"] == name]
    lam_l, lam_g = np.array([p["lambda_l"] for p in pts]), np.array([p["lambda_g"] for p in pts])
    ls, gs = np.unique(lam_l), np.unique(lam_g)
    cell = (np.searchsorted(ls, lam_l), np.searchsorted(gs, lam_g))
    out = {}
    for key in ("test_accuracy", "delta_l", "delta_g"):
        v = np.array([np.nan if p.get(key) is None else p[key] for p in pts], dtype=float)
        total, count = np.zeros((len(ls), len(gs))), np.zeros((len(ls), len(gs)))
        np.add.at(total, cell, np.nan_to_num(v))
        np.add.at(count, cell, ~np.isnan(v))
        with np.errstate(invalid="ignore"):
            out[key] = (100 if key == "test_accuracy" else 1) * total / count
    return out


def grid_statements(points: list[dict[str, Any]]) -> list[str]:
    """The paper's three statements on Figure 5 (seed 001 lines 502-506), measured per data set on the mean grid
    (:func:`grid_means`): the pairs whose accuracy is at least that of (0, 0) and the best; the share of steps
    along lambda_L (lambda_G) where delta_L (delta_G) does not decrease; delta_L at the first lambda_L beside
    delta_G at lambda_G = 2^r / p, r = -12, -4, 0."""
    out = []
    for name in dict.fromkeys(p["dataset"] for p in points):
        m = grid_means(points, name)
        acc, dl, dg = m["test_accuracy"], m["delta_l"], m["delta_g"]
        if acc.shape != (len(R), len(R)):
            out.append(f"{name}: {acc.shape[0]} x {acc.shape[1]} pairs, not the paper's 17 x 17 grid: no statements")
            continue
        at = {r: R.index(r) for r in (-12, -4, 0)}
        out.append(f"{name}: accuracy at (0, 0) {acc[0, 0]:.1f}, best {np.nanmax(acc):.1f}; pairs at or above (0, 0): "
                   f"{int(np.sum(acc >= acc[0, 0] - 1e-9))} of {acc.size}; delta_L not decreasing along lambda_L "
                   f"{100 * np.mean(np.diff(dl, axis=0) >= -1e-9):.0f} % of steps, delta_G along lambda_G "
                   f"{100 * np.mean(np.diff(dg, axis=1) >= -1e-9):.0f} %; delta_L at the first lambda_L "
                   f"{dl[1, 0]:.1f}, delta_G at lambda_G 2^-12, 2^-4, 2^0 / p: "
                   + ", ".join(f"{dg[0, i]:.1f}" for i in at.values()))
    return out


def grid_figure(points: list[dict[str, Any]], path: str) -> None:
    """The paper's Figure 5: per data set, heat maps of test accuracy, delta_L and delta_G (%) over the
    (lambda_L, lambda_G) grid, the mean over the splits run (rows: lambda_L from 0 up, columns: lambda_G)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(p["dataset"] for p in points))
    fig, axes = plt.subplots(len(names), 3, figsize=(10, 3.2 * len(names)), squeeze=False)
    labels = ["0" if r is None else f"{r}" for r in R]
    for row_axes, name in zip(axes, names, strict=True):
        means = grid_means(points, name)
        splits = len({p["split"] for p in points if p["dataset"] == name})
        for ax, key, title in zip(row_axes, ("test_accuracy", "delta_l", "delta_g"), ("acc", "delta_L", "delta_G"),
                                  strict=True):
            m = means[key]
            im = ax.imshow(m, origin="lower", cmap="viridis", vmin=0, vmax=100, aspect="auto")
            ax.set_title(f"{name}: {title} (%, {splits} split(s))", fontsize=8)
            if m.shape == (len(R), len(R)):
                ax.set_xticks(range(0, len(R), 4), labels[::4], fontsize=6)
                ax.set_yticks(range(0, len(R), 4), labels[::4], fontsize=6)
            ax.set_xlabel("lambda_G: r of 2^r / p", fontsize=7)
            ax.set_ylabel("lambda_L: r of 2^r / (p |tau_B|)", fontsize=7)
            fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle("S-ORCT Figure 5 (depth 2): the whole lambda grid, each pair chained from the one before", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figure(rows: list[dict], table: int, path: str) -> None:
    """The paper's Figures 2-4 beside ours: per data set, delta (blue) and test accuracy (red) against r,
    ours solid (mean over the splits run), the paper's dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paper, _, kind = TABLES[table]
    key = "delta_l" if kind == "l" else "delta_g"
    names = [n for n in paper if any(r["table"] == table and r["dataset"] == n for r in rows)]
    if not names:
        return
    cols = min(4, len(names))
    fig, axes = plt.subplots((len(names) + cols - 1) // cols, cols, figsize=(3.2 * cols, 2.6 * ((len(names) + cols - 1)
                                                                                               // cols)), squeeze=False)
    xs = np.arange(len(R))
    for ax, name in zip(axes.flat, names, strict=False):
        mine = [r for r in rows if r["table"] == table and r["dataset"] == name]
        d = [np.mean([r[key] for r in mine if r["r"] == r_] or [np.nan]) for r_ in R]
        a = [100 * np.mean([r["test_accuracy"] for r in mine if r["r"] == r_] or [np.nan]) for r_ in R]
        ax.plot(xs, d, "b-", label=f"{key} ours")
        ax.plot(xs, [p[0] for p in paper[name]], "b--", alpha=0.6, label=f"{key} paper")
        ax.plot(xs, a, "r-", label="accuracy ours")
        ax.plot(xs, [p[1] for p in paper[name]], "r--", alpha=0.6, label="accuracy paper")
        ax.set_title(name, fontsize=9)
        ax.set_xticks(xs[::4], ["0" if r is None else f"2^{r}" for r in R][::4], fontsize=7)
        ax.set_ylim(-3, 103)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    fig.suptitle(f"S-ORCT Table {table}: ours (solid) vs the paper (dashed), % against lambda / grid unit",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    from treeopt_dsl.experiments import load_rows, run_grid_text

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", default="3", help="comma-separated among 3, 4, 5")
    ap.add_argument("--datasets", default="all", help="comma-separated data sets of those tables (default: all)")
    ap.add_argument("--splits", type=int, default=1, help="train/test splits (the paper: 10)")
    ap.add_argument("--n-starts", type=int, default=20, help="random initial points (the paper: 20)")
    ap.add_argument("--fresh", type=int, default=None, help="new random points per later point (default n-starts)")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds per start (default 600)")
    ap.add_argument("--pair-order", choices=("paper", *PAIR_ORDERS), default="paper",
                    help="how Tables 3-4 reach each lambda_L point: from the point before (column), or in the "
                         "paper's pair order, from the end of the lambda_G row before (row-ends: rows cut to their "
                         "two ends; rows: whole rows, about 4-5 x the time); default paper: Table 3 column, "
                         "Table 4 row-ends")
    ap.add_argument("--jobs", type=int, default=1, help="paths in parallel (processes)")
    ap.add_argument("--executor", choices=("local", "dask"), default="local")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/sorct_path.sqlite"), help="results store")
    ap.add_argument("--write-grid", type=Path, help="only write the grid TOML here")
    ap.add_argument("--summary", type=Path, metavar="FILE",
                    help="only print the summary from FILE: a store (.sqlite) or the old rows (.jsonl)")
    ap.add_argument("--export", type=Path, metavar="JSONL",
                    help="also write the point rows (the summary's rows) as JSON lines, atomically")
    ap.add_argument("--export-grid", type=Path, metavar="JSONL",
                    help="also write every pair of the run's (or --summary STORE's) whole-grid paths (lambda_g = "
                         "\"paper\": Figure 5, Table 4 in whole rows) as JSON lines, atomically")
    ap.add_argument("--plot", type=Path, help="directory for the path figures (one per dataset and split)")
    ap.add_argument("--figures", type=Path, help="directory for one ours-vs-paper figure per table (Figures 2-4)")
    ap.add_argument("--grid-figure", nargs=2, type=Path, metavar=("FILE", "PNG"),
                    help="only draw Figure 5 (heat maps over the whole lambda grid) from FILE, a store of "
                         "experiments/sorct_fig5.toml or JSON-lines grid points, into PNG")
    args = ap.parse_args(argv)
    inputs = [("--grid-figure", args.grid_figure and args.grid_figure[0]), ("--summary", args.summary)]
    for option, path in inputs:  # what is read, and below what is written: refused by name before any work
        refuse_missing(ap, option, path, "give a store (.sqlite) or JSON-lines rows")
    outputs = [("--grid-figure", args.grid_figure and args.grid_figure[1], "the figure"),
               ("--export", args.export, "the point rows"), ("--export-grid", args.export_grid, "the grid points")]
    if not args.grid_figure and not args.summary:
        outputs.append(("--write-grid", args.write_grid, "the grid") if args.write_grid else
                       ("--out", args.out, "the results store"))
    for option, path, what in outputs:
        refuse_unwritable(ap, option, path, what)
    for option, path in (("--plot", args.plot), ("--figures", args.figures)):  # directories made if missing
        refuse_wrong_kind(ap, option, path, "give a directory for the figures", kind="directory")
    if args.grid_figure:
        points = grid_points(load_rows(args.grid_figure[0]))
        grid_figure(points, str(args.grid_figure[1]))
        print(f"wrote {args.grid_figure[1]}", *grid_statements(points), sep="\n")
        return 0
    tables = [int(t) for t in args.tables.split(",")]
    if any(t not in TABLES for t in tables):
        ap.error("unknown table; choose among 3, 4, 5")
    if args.summary:
        stored = load_rows(args.summary)
        rows = stored if args.summary.suffix == ".jsonl" else point_rows(stored)
        interrupted = False
    else:
        datasets = None if args.datasets == "all" else args.datasets.split(",")
        text = grid_text(tables, datasets, args.splits, args.n_starts, args.fresh, args.time_limit, args.pair_order)
        if args.write_grid:
            args.write_grid.write_text(text)
            return 0
        run, stored = run_grid_text(text, args.out, "sorct_path", executor=args.executor, jobs=args.jobs)
        print(run.line())
        rows, interrupted = point_rows(stored), run.interrupted
    rows = [r for r in rows if r["table"] in tables]
    if args.export:
        export_points(rows, args.export)
    if args.export_grid:
        print(f"wrote {export_grid(stored, args.export_grid)} grid points to {args.export_grid}")
    summary(rows)
    if args.plot:
        plot_paths(rows, args.plot)
    if args.figures:
        args.figures.mkdir(parents=True, exist_ok=True)
        for table in tables:
            figure(rows, table, str(args.figures / f"sorct_table{table}.png"))
    return 130 if interrupted else 0


if __name__ == "__main__":
    raise SystemExit(main())
