"""benchmarks/risk_lcpa.py (thesis Figures 4.3 and 4.5): ours with V3 paired with LCPA on the same set, seed and
number of rules, other tangent sets and the other figure's LCPA left out, the summary against numpy's, the
figure and the printed table from a CSV of the grid's rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bench_scripts import load_script

LCPA = load_script("risk_lcpa")


def _fake_rows(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for _fig, form, ours, lcpa, sets in (("4.3", "ors", "ORS-V3", "LCPA", ("mammo", "balance")),
                                        ("4.5", "ogrs", "OGRS-V3", "LCPA-stump-V", ("pima", "heart"))):
        for d in sets:
            for seed in range(3):
                for T in (3, 5):
                    for method, f, tan in ((ours, form, "V3"), (ours, form, "V0"), (lcpa, "ors", None)):
                        rows.append({"id": f"{method}-{d}-{seed}-{T}-{tan}", "method": method, "formulation": f,
                                     "dataset": d, "seed": seed, "params.T": T, "params.tangents": tan, "ok": True,
                                     "test_auc": float(rng.uniform(0.7, 0.9)),
                                     "runtime_s": float(rng.uniform(1, 60)),
                                     "status": "optimal" if rng.random() < 0.7 else "time_limit"})
    return pd.DataFrame(rows)


def test_pairs_are_v3_beside_the_figures_own_lcpa() -> None:
    rows = _fake_rows(np.random.default_rng(0))
    p = LCPA.pairs(rows)
    assert len(p) == 2 * 2 * 3 * 2  # figures x sets x seeds x rules: V0 rows and the other figure's LCPA left out
    for _, r in p.iterrows():
        ours = rows[(rows["dataset"] == r["dataset"]) & (rows["seed"] == r["seed"]) & (rows["params.T"] == r["T"])
                    & (rows["params.tangents"] == "V3")]
        theirs = rows[(rows["dataset"] == r["dataset"]) & (rows["seed"] == r["seed"])
                      & (rows["params.T"] == r["T"]) & rows["method"].str.startswith("LCPA")]
        assert (r["test_auc_v3"], r["test_auc_lcpa"]) == (ours["test_auc"].item(), theirs["test_auc"].item())
    s = LCPA.summary(p)
    for (fig, T), r in s.iterrows():
        mine = p[(p["figure"] == fig) & (p["T"] == T)]
        d = mine["test_auc_v3"].to_numpy() - mine["test_auc_lcpa"].to_numpy()
        assert r["v3_minus_lcpa"] == pytest.approx(d.mean())
        assert r["similar"] == pytest.approx(np.mean(np.abs(d) <= LCPA.SIMILAR))
        assert r["v3_at_least"] == pytest.approx(np.mean(d >= 0))
        assert r["median_s_lcpa"] == pytest.approx(np.median(mine["runtime_s_lcpa"]))
        assert r["proven_v3"] == pytest.approx(np.mean(mine["status_v3"] == "optimal"))


def test_main_prints_the_table_and_draws_the_figure(tmp_path, capsys) -> None:
    rows = tmp_path / "rows.csv"
    _fake_rows(np.random.default_rng(1)).to_csv(rows, index=False)
    LCPA.main([str(rows), "--figure", str(tmp_path / "fig.png")])
    out = capsys.readouterr().out
    assert "v3_minus_lcpa" in out and (tmp_path / "fig.png").stat().st_size > 10_000
    with pytest.raises(SystemExit, match="does not exist"):
        LCPA.main([str(tmp_path / "missing.csv")])
    only_lcpa = tmp_path / "lcpa.csv"
    _fake_rows(np.random.default_rng(1)).query("method.str.startswith('LCPA')", engine="python").to_csv(only_lcpa)
    with pytest.raises(SystemExit, match="both a V3 row and an LCPA row"):
        LCPA.main([str(only_lcpa)])
