"""The `treeopt` command: listings, compile/solve/fit with --json, every error path as one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import highspy
import numpy as np
import pytest

from treeopt_dsl.cli import main
from treeopt_dsl.datasets import load
from treeopt_dsl.exact.binarize import stump_columns
from treeopt_dsl.formulations import REGISTRY, get_formulation
from treeopt_dsl.models.metrics import metrics


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_listings_name_everything(capsys):
    code, out, _ = run(capsys, "formulations")
    assert code == 0
    for name in REGISTRY:
        assert f"{name}:" in out
    rows = run_json(capsys, "formulations")["formulations"]
    assert {r["name"] for r in rows} == set(REGISTRY)
    assert any(p["name"] == "depth" for p in rows[0]["params"])
    # each parameter's range beside its help, in both listings (the ranges: tests/formulations/test_param_ranges.py)
    assert re.search(r"^\s+lambda_l\s+default 0\.0\s+.*\[>= 0\]$", out, flags=re.M)
    assert {p["name"]: p["range"] for p in next(r for r in rows if r["name"] == "sorct")["params"]}["gamma"] == "> 0"
    solvers = run_json(capsys, "solvers")["solvers"]
    highs = [r for r in solvers if r["solver"] == "highs" and r["backend"] == "direct"]
    assert highs and highs[0]["installed"] and "MILP" in highs[0]["problem_classes"]
    data = run_json(capsys, "datasets")["datasets"]
    assert data[0]["name"] == "breast-cancer"


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_compile_writes_a_file_highs_reads(capsys, tmp_path, suffix):
    out = run_json(capsys, "compile", "olct", "--data", "breast-cancer", "--depth", "1", "--sample", "40",
                   "--output", str(tmp_path / f"m{suffix}"))
    h = highspy.Highs()
    h.silent()
    assert h.readModel(out["output"]) == highspy.HighsStatus.kOk
    assert h.getNumCol() == out["n_variables"]
    if suffix == ".mps":  # the LP writer splits ranged rows in two; OLCT has none, so both match
        assert h.getNumRow() == out["n_constraints"]
    assert out["n_nonzeros"] == h.getNumNz()


def test_solve_json_equals_a_python_solve(capsys):
    out = run_json(capsys, "solve", "olct", "--data", "breast-cancer", "--sample", "60", "--seed", "3",
                   "--depth", "1", "--time-limit", "60", "--quiet")
    assert out["status"] == "optimal"
    assert out["certificate"]["ok"] is True
    assert out["data"]["n_samples"] == 60
    data = load("breast-cancer").subsample(60, seed=3)
    ref = get_formulation("olct", depth=1).solve(data, time_limit=60)
    assert out["objective"] == pytest.approx(ref.objective, rel=1e-6)
    for key in ("bound", "gap", "runtime_s", "compile_s", "n_variables", "n_constraints", "n_nonzeros"):
        assert key in out


def test_fit_json_metrics_match_python(capsys):
    out = run_json(capsys, "fit", "olct", "--data", "breast-cancer", "--sample", "80", "--seed", "1",
                   "--depth", "1", "--test-size", "0.25", "--time-limit", "60", "--quiet")
    data = load("breast-cancer").subsample(80, seed=1)
    train, test = data.split(0.25, seed=1)
    assert (out["n_train"], out["n_test"]) == (train.n_samples, test.n_samples)
    res = get_formulation("olct", depth=1).solve(train, time_limit=60)
    assert out["objective"] == pytest.approx(res.objective, rel=1e-6)
    for part, d in (("train", train), ("test", test)):
        ref = metrics(res.model, d)
        for k, v in out["metrics"][part].items():
            assert 0.0 <= v <= 1.0
            assert v == pytest.approx(ref[k], abs=1e-12)


def test_fit_prints_the_tree_and_metrics(capsys):
    code, out, _ = run(capsys, "fit", "olct", "--data", "breast-cancer", "--sample", "50", "--depth", "1",
                       "--time-limit", "30")
    assert code == 0
    assert "node 0" in out and "certificate ok" in out
    assert "test" in out and "balanced" in out
    code, quiet, _ = run(capsys, "fit", "olct", "--data", "breast-cancer", "--sample", "50", "--depth", "1",
                         "--time-limit", "30", "--quiet")  # the summary and metrics alone, as solve -q
    assert code == 0 and "node 0" not in quiet and "certificate ok" in quiet and "balanced" in quiet


def test_fit_prints_the_rates_a_sensitivity_guarantee_is_about(capsys):
    """Günlük et al. §4.6: a tree fitted under ``min_sensitivity`` is judged by its TPR and TNR; the table prints
    them beside accuracy, and they agree with the JSON's metrics (the guarantee holds on the training rows)."""
    argv = ("fit", "odt_categorical", "--data", "breast-wisconsin-original", "--sample", "80", "--param", "shape=1",
            "--param", "min_sensitivity=1.0", "--time-limit", "60", "--quiet")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    header = next(line for line in out.splitlines() if "accuracy" in line and "balanced" in line).split()
    assert header[:5] == ["accuracy", "balanced", "AUC", "TPR", "TNR"]
    got = run_json(capsys, *argv)["metrics"]
    for part in ("train", "test"):
        cells = next(line for line in out.splitlines() if line.startswith(part)).split()
        assert float(cells[4]) == pytest.approx(got[part]["tpr"], abs=5e-5)
        assert float(cells[5]) == pytest.approx(got[part]["tnr"], abs=5e-5)
    assert got["train"]["tpr"] == 1.0


def test_csv_data_with_label(capsys, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    lines = ["a,b,outcome"] + [f"{x[0]},{x[1]},{'yes' if x[0] > 0 else 'no'}" for x in X]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    out = run_json(capsys, "solve", "oct", "--data", str(tmp_path / "d.csv"), "--label", "outcome",
                   "--depth", "1", "--time-limit", "30", "--quiet")
    assert out["status"] == "optimal"
    assert out["data"]["classes"] == ["no", "yes"]
    assert out["objective"] == pytest.approx(0.0, abs=1e-9)  # separable on feature a: OCT makes no error


def test_params_are_parsed_by_the_formulation(capsys):
    out = run_json(capsys, "compile", "olct", "--data", "breast-cancer", "--sample", "20",
                   "--param", "depth=2", "--param", "C=0.5,2", "--param", "tangents=V2")
    assert out["params"]["depth"] == 2 and out["params"]["tangents"] == "V2"
    assert list(out["params"]["C"]) == [0.5, 2.0]


@pytest.mark.parametrize("argv,match", [
    (["fit", "nope", "--data", "breast-cancer"], "unknown formulation 'nope'"),
    (["fit", "olct", "--data", "no-such-data"], "unknown dataset"),
    (["fit", "olct", "--data", "breast-cancer", "--param", "foo=1"], "has no parameter 'foo'"),
    (["fit", "olct", "--data", "breast-cancer", "--param", "C=abc"], "bad value for --param C"),
    (["fit", "olct", "--data", "breast-cancer", "--param", "C"], "KEY=VALUE"),
    (["solve", "olct", "--data", "breast-cancer", "--solver", "cplex"], "unknown solver|cplex"),
    (["solve", "margot", "--data", "breast-cancer", "--sample", "20", "--depth", "1", "--solver", "highs",
      "--backend", "direct"], "MIQP"),
    (["compile", "olct", "--data", "breast-cancer", "--output", "m.txt"], r"\.lp, \.mps"),
    (["fit", "olct", "--data", "breast-cancer", "--test-size", "2"], "test-size"),
    (["fit", "olct"], "required"),
    (["fit", "olct", "--data", "x.csv"], "does not exist"),
    (["frobnicate"], "invalid choice"),
])
def test_errors_exit_2_with_one_line(capsys, argv, match):
    import re

    code, _, err = run(capsys, *argv)
    assert code == 2
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1, err
    assert lines[0].startswith("treeopt: error:")
    assert re.search(match, lines[0]), lines[0]
    assert "Traceback" not in err


def test_time_limit_without_solution_exits_1(capsys):
    code, _, err = run(capsys, "solve", "olct", "--data", "breast-cancer", "--depth", "3", "--time-limit", "0",
                         "--quiet")
    assert code in (0, 1)  # HiGHS may or may not have found an incumbent before noticing the limit
    if code == 1:
        assert "time limit" in err


def test_log_file_gets_the_solver_log(capsys, tmp_path):
    log = tmp_path / "solver.log"
    code, _, _ = run(capsys, "solve", "olct", "--data", "breast-cancer", "--sample", "30", "--depth", "1",
                     "--log", str(log), "--quiet")
    assert code == 0
    assert "rows" in log.read_text()


def test_installed_entry_point():
    exe = Path(sys.executable).with_name("treeopt")
    proc = subprocess.run([str(exe), "formulations"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "olct:" in proc.stdout
    proc = subprocess.run([str(exe), "fit", "nope", "--data", "breast-cancer"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_routings_from_the_command_line(capsys, tmp_path):
    """`--param routing=flow|benders` solves (breast-cancer's cut columns, depth 1: the DP optimum, proven by the
    MILP itself with --warm-start none); writing a Benders master is refused before any work."""
    dp = run_json(capsys, "solve", "oct", "--data", "breast-cancer", "--depth", "1", "--sample", "40", "--seed", "0",
                  "--solver", "streed", "--param", "cuts=all")
    for routing in ("flow", "benders"):
        res = run_json(capsys, "solve", "oct", "--data", "breast-cancer", "--depth", "1", "--sample", "40", "--seed",
                       "0", "--param", f"routing={routing}", "--warm-start", "none", "--time-limit", "60")
        assert res["status"] == "optimal" and res["objective"] == pytest.approx(dp["objective"])
    code, _, err = run(capsys, "compile", "oct", "--data", "breast-cancer", "--param", "routing=benders",
                       "--output", str(tmp_path / "m.lp"))
    assert code == 2 and "lazily" in err and not (tmp_path / "m.lp").exists()
    # a risk card proven by lattice cuts (lazy rows) is refused too, naming its explicit model (loss=tangent)
    code, _, err = run(capsys, "compile", "ors", "--data", "breast-cancer", "--param", "T=2", "--sample", "40",
                       "--output", str(tmp_path / "r.lp"))
    assert code != 0 and "loss=tangent" in err and not (tmp_path / "r.lp").exists()
    code, _, err = run(capsys, "compile", "ors", "--data", "breast-cancer", "--param", "T=2", "--sample", "40",
                       "--param", "loss=tangent", "--output", str(tmp_path / "r.lp"))
    assert code == 0 and (tmp_path / "r.lp").exists()


def test_the_time_line_says_proof_only_for_a_proven_answer():
    """After the final incumbent, an optimal run spent its time on the proof; a run stopped by its limit did not."""
    from treeopt_dsl.cli.common import summary as _summary
    from treeopt_dsl.result import SolveResult, Status

    def line(status):
        res = SolveResult(status=status, objective=1.0, bound=0.5, gap=0.5, runtime_s=10.0, solver="highs",
                          backend="direct", incumbent_time_s=2.0)
        return next(s for s in _summary(res) if s.startswith("time"))

    assert line(Status.OPTIMAL).endswith("final incumbent at 2.00 s, proof 8.00 s")
    assert line(Status.TIME_LIMIT).endswith("final incumbent at 2.00 s, no better one in the next 8.00 s")


def test_fit_ors_prints_and_writes_a_card_in_the_data_units(capsys, tmp_path):
    rng = np.random.default_rng(0)
    age = rng.integers(30, 85, 40)
    lines = ["age,smoker,sick"] + [f"{a},{int(s)},{'yes' if a + 15 * s + rng.normal(0, 8) > 65 else 'no'}"
                                   for a, s in zip(age, rng.random(40) < 0.4, strict=True)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    argv = ["fit", "ors", "--data", str(tmp_path / "d.csv"), "--label", "sick", "--param", "T=2",
            "--binarize", "quantile", "--max-cuts", "2", "--time-limit", "30"]  # the card is printed: no -q
    code, out, err = run(capsys, *argv, "--card-out", str(tmp_path / "card.json"))
    assert code == 0, err
    card = json.loads((tmp_path / "card.json").read_text())
    assert card["conditions"] and all(c["feature"] in ("age", "smoker") and c["operator"] == ">="
                                      for c in card["conditions"])
    for c in card["conditions"]:  # every written condition is printed as "feature >= t   points"
        row = rf"^  {re.escape(c['condition'])}\s+{re.escape(format(c['points'], '+d'))}$"
        assert re.search(row, out, flags=re.M), out
    assert "total score" in out and f"wrote the score card to {tmp_path / 'card.json'}" in out
    doc = run_json(capsys, *argv)
    assert doc["params"]["binarize"] == "quantile" and doc["params"]["max_cuts"] == 2
    assert doc["card"]["conditions"] == card["conditions"]


def test_fit_ors_binarize_stump_puts_one_condition_per_feature_at_its_stump(capsys, tmp_path):
    """``--binarize stump`` (the thesis' binarization before LCPA): the card's conditions are the stump cuts of the
    training rows, one per feature."""
    rng = np.random.default_rng(1)
    age = rng.integers(30, 85, 40)
    lines = ["age,smoker,sick"] + [f"{a},{int(s)},{'yes' if a + 15 * s + rng.normal(0, 8) > 65 else 'no'}"
                                   for a, s in zip(age, rng.random(40) < 0.4, strict=True)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    doc = run_json(capsys, "fit", "ors", "--data", str(tmp_path / "d.csv"), "--label", "sick", "--param", "T=2",
                   "--binarize", "stump", "--time-limit", "30")
    assert doc["params"]["binarize"] == "stump"
    train = load(str(tmp_path / "d.csv"), label="sick").split(0.2, seed=0)[0]  # fit's split: --test-size, --seed
    cuts = stump_columns(train.X, train.y, train.feature_names)
    expected = dict(zip(cuts.names, cuts.threshold, strict=True))
    got = {c["condition"]: c["threshold"] for c in doc["card"]["conditions"]}
    assert got and all(expected[k] == t for k, t in got.items())  # each condition one feature's stump cut


@pytest.mark.parametrize("argv,match", [
    (["fit", "oct", "--data", "breast-cancer", "--binarize", "quantile"], "--binarize applies to ors"),
    (["fit", "ors", "--data", "breast-cancer", "--max-cuts", "2"], "--max-cuts needs --binarize quantile"),
    (["fit", "ors", "--data", "breast-cancer", "--binarize", "quantile", "--max-cuts", "0"], "integer >= 1"),
    (["fit", "ors", "--data", "breast-cancer", "--card-out", "card.txt"], r"--card-out: .*\.json or \.csv"),
    (["fit", "ors", "--data", "breast-cancer", "--card-out", "no/such/dir/card.csv"], "does not exist"),
    (["fit", "oct", "--data", "breast-cancer", "--card-out", "card.json"], "risk score's card"),
])
def test_card_options_are_refused_before_any_work(capsys, argv, match):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert re.search(match, err.strip()), err


def test_an_answer_that_is_not_a_proof_says_why_on_a_note_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A ``time_limit`` answer prints the result's message (why it is not proven) on a ``note`` line; an optimal
    one does not."""
    main(["fit", "oct", "--data", "breast-cancer", "--depth", "3", "--sample", "120", "--solver", "highs",
          "--warm-start", "cart", "--time-limit", "0"])
    out = capsys.readouterr().out
    status = re.search(r"^status\s+(\S+)", out, re.M)
    assert status is not None and status.group(1) == "time_limit"
    assert re.search(r"^note\s+\S", out, re.M)
    main(["fit", "oct", "--data", "breast-cancer", "--depth", "1", "--sample", "60", "--solver", "highs"])
    out = capsys.readouterr().out
    assert re.search(r"^status\s+optimal", out, re.M) and not re.search(r"^note\s", out, re.M)
