"""Günlük et al. (seed 002) Figure 5: training against testing sensitivity of the trees of Table 14.

Table 14's trees (breast cancer, +1 = malignant) maximize the training specificity subject to a training sensitivity
of at least s, §4.6 (15)-(16); Figure 5 plots, for depth 2 and depth 3, the mean training TPR of each level against
the mean testing TPR, beside the diagonal: a point below it is a guarantee that did not carry over to new rows. This
script draws ours (the rows of ``experiments/gunluk_table14.toml``: a store or its exported CSV) beside the paper's
(``experiments/papers/gunluk_table14.csv``) and prints the means per level.

    treeopt experiment run experiments/gunluk_table14.toml --jobs 2
    .venv/bin/python benchmarks/gunluk_fig5.py gunluk_table14.sqlite --figure gunluk_fig5.png
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pandas as pd

from treeopt_dsl.cli.common import save_figure
from treeopt_dsl.experiments.export import read_table

ROOT = Path(__file__).resolve().parent.parent
PAPER = ROOT / "experiments" / "papers" / "gunluk_table14.csv"
METHOD = re.compile(r"ODT-D(?P<depth>\d)-s(?P<level>[\d.]+)$")
RATES = ("train_tpr", "train_tnr", "test_tpr", "test_tnr")


def _rows(path: Path) -> pd.DataFrame:
    """One row per finished task: a store (.sqlite), JSON lines or an exported CSV (``treeopt experiment export``)."""
    frame = read_table(path)
    return frame[frame["ok"].astype(bool)] if "ok" in frame else frame


def means(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean rates per (depth, level) over the seeds run, with how many seeds (``n``) and proven optima."""
    parts = rows["method"].astype(str).str.extract(METHOD)
    rows = rows.assign(depth=parts["depth"], level=parts["level"].astype(float)).dropna(subset=["depth"])
    rows = rows.assign(proven=rows["status"].astype(str).eq("optimal"))
    g = rows.groupby(["depth", "level"])
    out = g[list(RATES)].mean().join(g.size().rename("n")).join(g["proven"].sum())
    return out.sort_index(level=["depth", "level"], ascending=[True, False])


def paper() -> pd.DataFrame:
    """The paper's Table 14 as the same frame (fractions)."""
    p = pd.read_csv(PAPER, comment="#")
    parts = p["method"].str.extract(METHOD)
    p = p.assign(depth=parts["depth"], level=parts["level"].astype(float))
    return p.pivot_table(index=["depth", "level"], columns="metric", values="value")[list(RATES)].sort_index(
        level=["depth", "level"], ascending=[True, False])


def draw(ours: pd.DataFrame, theirs: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 5.0))
    for depth, colour in (("2", "tab:blue"), ("3", "tab:orange")):
        for frame, style, who in ((theirs, "--", "paper"), (ours, "-", "ours")):
            if depth not in frame.index.get_level_values("depth"):
                continue
            f = frame.xs(depth, level="depth")
            ax.plot(100 * f["train_tpr"], 100 * f["test_tpr"], style, marker="o" if who == "ours" else "s",
                    color=colour, markerfacecolor="none" if who == "paper" else colour,
                    label=f"depth {depth} DT ({who})")
    lo = float(np.nanmin(100 * pd.concat([ours, theirs])[["train_tpr", "test_tpr"]].to_numpy())) - 0.5
    ax.plot([lo, 100.5], [lo, 100.5], ":", color="grey", label="diagonal")
    ax.set_xlabel("training sensitivity (%)")
    ax.set_ylabel("testing sensitivity (%)")
    ax.set_title("Günlük et al. Fig. 5: breast cancer, training vs testing TPR", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", type=Path, help="the Table 14 grid's store (.sqlite), JSON lines or exported CSV")
    ap.add_argument("--figure", type=Path, help="write Figure 5 here (.png or .svg)")
    args = ap.parse_args(argv)
    if not args.rows.is_file():
        ap.error(f"rows: no file {args.rows} (a store of experiments/gunluk_table14.toml or its exported CSV)")
    ours, theirs = means(_rows(args.rows)), paper()
    if ours.empty:
        ap.error(f"rows: {args.rows} holds no finished ODT-D<depth>-s<level> task of experiments/gunluk_table14.toml")
    both = (100 * ours[list(RATES)]).join(ours[["n", "proven"]]).join(100 * theirs.add_suffix("_paper"), how="outer")
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(both.round(1).to_string())
    if args.figure:
        draw(ours, theirs, args.figure)
        print(f"wrote {args.figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
