"""Thesis Figures 4.3 and 4.5 (seed 000 §4.5): our risk scores with the tangent set V3 against LCPA, at 3, 5 and 7
rules.

Figure 4.3 sets ORS (4.5) with V3 beside LCPA (Ustun and Rudin's lattice cutting planes: the card proven optimal in
the true log-loss) on the binary sets of Table 4.1; Figure 4.5 sets OGRS with V3 beside LCPA on the sets of Table
4.2 binarized one condition per feature at its log-loss stump's cut (thesis line 1487). The thesis plots, per
number of rules, the cumulative distribution of the gap from the best test AUC over the (set, seed) problems and,
for Figure 4.3, the performance profile of the runtime, and states (lines 1421 and 1510): "both our method with V3
and LCPA are able to obtain very similar results in terms of AUC for each number of rules", "LCPA tends to be
faster than our method but it seems to scale worse when increasing the number of the rules", and OGRS
"outperforming standard approaches based to a preprocessing phase of binarization".

This script reads the rows of ``experiments/thesis_fig4_3_5_risk.toml`` (stores, JSON lines or exported CSVs; the
methods ORS-T3 / ORS-V3 / OGRS-T3 / OGRS-V3 with V3, LCPA, LCPA-stump and LCPA-stump-V), pairs ours with LCPA on
the same set, seed and number of rules, prints the comparison per figure and number of rules and draws the panels.

    treeopt experiment run experiments/thesis_fig4_3_5_risk.toml --jobs 2
    .venv/bin/python benchmarks/risk_lcpa.py thesis_fig4_3_5_risk.sqlite --figure risk_lcpa.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from treeopt_dsl.cli.common import save_figure
from treeopt_dsl.experiments.export import read_table
from treeopt_dsl.experiments.report import cumulative_gap, performance_profile

#: AUC differences at most this are "very similar" (the thesis gives no number: a hundredth of AUC)
SIMILAR = 0.01
FIGURES = {"4.3": ("ors", "LCPA"), "4.5": ("ogrs", "LCPA-stump")}


def _rows(paths: list[Path]) -> pd.DataFrame:
    """Every finished row of the files (a store, JSON lines or an exported CSV); a later file's row of the same
    task replaces an earlier one's."""
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise SystemExit(f"risk_lcpa.py: {missing[0]} does not exist")
    rows = pd.concat([read_table(p) for p in paths], ignore_index=True).drop_duplicates("id", keep="last")
    return rows[rows["ok"].astype(bool)] if "ok" in rows else rows


def pairs(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (figure, T, dataset, seed) with ours (V3) and LCPA side by side: AUC, runtime and status."""
    need = {"method", "formulation", "dataset", "seed", "params.T", "test_auc", "runtime_s", "status"}
    if not need <= set(rows.columns):
        raise SystemExit(f"risk_lcpa.py: the rows lack {sorted(need - set(rows.columns))}: not rows of "
                         "experiments/thesis_fig4_3_5_risk.toml")
    tangents = rows["params.tangents"] if "params.tangents" in rows else pd.Series("", index=rows.index)
    out = []
    for fig, (form, lcpa) in FIGURES.items():
        ours = rows[(rows["formulation"] == form) & (tangents == "V3") & ~rows["method"].str.startswith("LCPA")]
        theirs = rows[rows["method"].astype(str).str.startswith(lcpa)
                      & (rows["method"].astype(str).str.startswith("LCPA-stump") == (lcpa == "LCPA-stump"))]
        keys = ["dataset", "seed", "params.T"]
        cols = ["test_auc", "runtime_s", "status"]
        m = ours[keys + cols].merge(theirs[keys + cols], on=keys, suffixes=("_v3", "_lcpa"))
        out.append(m.assign(figure=fig).rename(columns={"params.T": "T"}))
    frame = pd.concat(out, ignore_index=True)
    if frame.empty:
        raise SystemExit("risk_lcpa.py: no (set, seed, rules) problem has both a V3 row and an LCPA row")
    frame["T"] = frame["T"].astype(int)
    return frame


def summary(p: pd.DataFrame) -> pd.DataFrame:
    """Per figure and number of rules: problems, mean AUCs, mean difference, share within :data:`SIMILAR`, share
    where V3 is at least LCPA (the left end of the cumulative-gap panels), share proven optimal and median runtime
    of each side."""
    g = p.assign(diff=p["test_auc_v3"] - p["test_auc_lcpa"], at_least=p["test_auc_v3"] >= p["test_auc_lcpa"],
                 similar=(p["test_auc_v3"] - p["test_auc_lcpa"]).abs() <= SIMILAR + 1e-12,
                 proven_v3=p["status_v3"].eq("optimal"), proven_lcpa=p["status_lcpa"].eq("optimal")
                 ).groupby(["figure", "T"])
    return pd.DataFrame({"problems": g.size(), "auc_v3": g["test_auc_v3"].mean(), "auc_lcpa": g["test_auc_lcpa"].mean(),
                         "v3_minus_lcpa": g["diff"].mean(), "similar": g["similar"].mean(),
                         "v3_at_least": g["at_least"].mean(),
                         "proven_v3": g["proven_v3"].mean(), "proven_lcpa": g["proven_lcpa"].mean(),
                         "median_s_v3": g["runtime_s_v3"].median(), "median_s_lcpa": g["runtime_s_lcpa"].median()})


def draw(p: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    Ts = sorted(p["T"].unique())
    panels = [(f, w) for f, w in (("4.3", "auc"), ("4.3", "time"), ("4.5", "auc")) if (p["figure"] == f).any()]
    fig, axes = plt.subplots(len(panels), len(Ts), figsize=(3.6 * len(Ts), 2.9 * len(panels)), squeeze=False)
    for i, (figure, what) in enumerate(panels):
        for j, T in enumerate(Ts):
            ax = axes[i][j]
            s = p[(p["figure"] == figure) & (p["T"] == T)]
            name = "ORS" if figure == "4.3" else "OGRS"
            if s.empty:
                ax.set_axis_off()
                continue
            if what == "auc":
                xs, rho = cumulative_gap(s[["test_auc_v3", "test_auc_lcpa"]].to_numpy(float), higher_is_better=True)
                label = "gap from the best test AUC"
            else:
                t = s[["runtime_s_v3", "runtime_s_lcpa"]].to_numpy(float)
                proven = s[["status_v3", "status_lcpa"]].eq("optimal").to_numpy()
                xs, rho = performance_profile(np.where(proven, np.maximum(t, 1e-3), np.inf))
                label = "runtime ratio to the best (unproven = never)"
            right = xs[-1] * 1.5 if what == "time" else xs[-1] + 0.01  # the last step drawn to a right end
            for k, who in enumerate((f"{name} V3", "LCPA")):
                ax.step(np.append(xs, right), np.append(rho[k], rho[k][-1]), where="post", label=who)
            ax.set_title(f"Fig. {figure}, {T} rules ({len(s)} problems)", fontsize=8)
            ax.set_xlabel(label, fontsize=7)
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", nargs="+", type=Path, help="stores, JSON lines or exported CSVs of the grid's rows")
    ap.add_argument("--figure", type=Path, help="draw the panels to this file (png, pdf, svg)")
    args = ap.parse_args(argv)
    p = pairs(_rows(args.rows))
    with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
        print(summary(p).to_string())
    if args.figure:
        draw(p, args.figure)
        print(f"wrote {args.figure}")


if __name__ == "__main__":
    main()
