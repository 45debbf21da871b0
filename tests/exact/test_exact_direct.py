"""The DP route answered from the blocks (treeopt_dsl.exact.direct): ``spec.solve(data, solver="streed")`` builds no
MILP, yet returns what the route through the built model returns, and the tree it returns is one the formulation's
own rows accept (the property that replaces the per-solve check on the rows); its certificate on the tree catches a
tree that is not the DP's."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

pytest.importorskip("pystreed")

from brute_force import brute_force, small_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treeopt_dsl.data import Dataset
from treeopt_dsl.defaults import MEMORY_ENV
from treeopt_dsl.errors import CapabilityError, ModelTooLarge, OptionError
from treeopt_dsl.exact import dp as dp_module
from treeopt_dsl.exact import maybe_solve_dp
from treeopt_dsl.formulation import DeferredBuilt
from treeopt_dsl.formulations import get_formulation
from treeopt_dsl.models.embed import from_decisions
from treeopt_dsl.result import Status
from treeopt_dsl.solve import certify


def _same_answer(direct, built_route) -> None:
    assert direct.status is built_route.status is Status.OPTIMAL
    assert direct.certificate.ok and built_route.certificate.ok
    assert direct.objective == pytest.approx(built_route.objective, abs=1e-9)
    np.testing.assert_array_equal(direct.model.W, built_route.model.W)
    np.testing.assert_array_equal(direct.model.b, built_route.model.b)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_data(), st.sampled_from([1, 2, 3]), st.sampled_from([0.0, 0.5, 1.5]))
def test_direct_route_equals_the_built_route_and_the_rows_accept_its_tree(data, depth: int, alpha: float) -> None:
    X, y = data
    d = Dataset.from_arrays(X, y)
    spec = get_formulation("oct", depth=depth, alpha=alpha)
    direct = spec.solve(d, solver="streed")
    assert isinstance(direct.built, DeferredBuilt) and not direct.built.is_built  # no MILP built
    assert direct.x is None and direct.size["problem_class"] == "DP:oct"
    built = spec.build(d)
    _same_answer(direct, maybe_solve_dp(built, "streed"))
    if depth <= 2:
        assert direct.objective == pytest.approx(brute_force(X, y, depth, alpha), abs=1e-9)
    # OCT's rows accept the direct route's tree: its point, completed by the blocks, violates no row and scores the
    # objective (what the route does not recheck per solve)
    x = from_decisions(built, {"w": direct.model.W, "b": direct.model.b})
    cert = certify(built, x, direct.objective, completed=x)
    assert cert.ok and cert.objective_decoded == pytest.approx(direct.objective, abs=1e-9)
    # the tree certificate recounts what the model predicts on the raw data
    pred = direct.model.predict(X)
    assert direct.certificate.terms["loss"] == float(np.sum(pred != d.labels_of(y)))


def test_multiclass_and_integer_weights_equal_the_built_route() -> None:
    rng = np.random.default_rng(5)
    X = rng.integers(0, 5, size=(80, 3)).astype(float)
    y = (X[:, 0] + X[:, 1] > 4).astype(int) + (X[:, 2] > 2).astype(int)  # classes 0, 1, 2
    w = rng.integers(1, 4, size=80).astype(float)
    for depth in (1, 2, 3):
        d = Dataset.from_arrays(X, y, multiclass=True, sample_weight=w)
        spec = get_formulation("oct", depth=depth, alpha=0.5)
        direct = spec.solve(d, solver="streed")
        built_route = maybe_solve_dp(spec.build(d), "streed")
        assert direct.status is built_route.status is Status.OPTIMAL
        assert direct.objective == pytest.approx(built_route.objective, abs=1e-9)
        np.testing.assert_array_equal(direct.model.predict(X), built_route.model.predict(X))
        errors = float(np.sum(w * (direct.model.predict(X) != y)))
        assert direct.certificate.terms["loss"] == errors


def test_a_tree_the_dp_did_not_return_fails_the_certificate(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree whose predictions are not the DP's (a split's direction flipped) is ``uncertified``, never
    ``optimal``; one that puts a training sample inside the MILP's margin band (``0 < w·x + b < eps``) with the DP's
    predictions is a tree over every distinct cut, certified on the tree."""
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = np.where(X[:, 0] + rng.integers(0, 2, 60) > 2, 1, -1)
    d = Dataset.from_arrays(X, y)
    spec = get_formulation("oct", depth=1)
    good = spec.solve(d, solver="streed")
    assert good.status is Status.OPTIMAL and good.certificate.max_violation == 0.0
    fit_tree = dp_module.fit_tree

    def flipped(*args, **kwargs):
        tree = fit_tree(*args, **kwargs)
        tree.W, tree.b = -tree.W, -tree.b  # the other side predicts +1
        return tree

    monkeypatch.setattr("treeopt_dsl.exact.direct.fit_tree", flipped)
    bad = spec.solve(d, solver="streed")
    assert bad.status is Status.UNCERTIFIED and not bad.certificate.ok
    assert bad.certificate.routing_mismatches > 0 and bad.solver_status is Status.OPTIMAL

    def in_band(data, *args, **kwargs):
        tree = fit_tree(data, *args, **kwargs)
        V = data.X @ tree.W.T + tree.b
        for t in np.flatnonzero(np.abs(tree.W).sum(1)):  # the nearest sample left of the cut moves to eps/2
            tree.b[t] += 0.5e-5 - V[V[:, t] <= 0, t].max()
        return tree

    monkeypatch.setattr("treeopt_dsl.exact.direct.fit_tree", in_band)
    banded = spec.solve(d, solver="streed")
    # every distinct cut (issue 32): a sample inside the MILP's margin band is a cut the MILP's rows cannot express,
    # not a wrong tree: the exact route certifies it on the tree and says the built model could not hold it
    assert banded.status is Status.OPTIMAL and banded.certificate.ok and banded.objective == good.objective
    assert "cannot express this tree" in banded.message


def test_the_deferred_model_is_built_on_use_and_exports(tmp_path) -> None:
    from treeopt_dsl.cli import main

    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(60, 5)).astype(float)
    y = np.where((X[:, 0] == 1) ^ (X[:, 1] == 1), 1, -1)
    d = Dataset.from_arrays(X, y)
    res = get_formulation("oct", depth=2).solve(d, solver="streed")
    assert not res.built.is_built
    assert res.built.model.n_vars > 0 and res.built.is_built  # reading it builds the MILP
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,c,e,f,y", comments="", fmt="%g")
    out = tmp_path / "m.lp"
    assert main(["solve", "oct", "--data", str(path), "--label", "y", "--depth", "2", "--solver", "streed",
                 "--output", str(out)]) == 0
    assert "minimize" in out.read_text()[:2000].lower()


def test_command_line_reports_the_dp_problem(tmp_path, capsys) -> None:
    from treeopt_dsl.cli import main

    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(50, 3)).astype(float)
    y = np.where(X[:, 0] > 0, 1, -1)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,c,y", comments="", fmt="%g")
    assert main(["solve", "oct", "--data", str(path), "--label", "y", "--depth", "2", "--solver", "streed"]) == 0
    out = capsys.readouterr().out
    assert "threshold columns" in out and "status      optimal" in out
    assert main(["solve", "oct", "--data", str(path), "--label", "y", "--depth", "2", "--solver", "streed",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["problem_class"] == "DP:oct" and doc["n_threshold_columns"] == 6 and doc["certificate"]["ok"]


def test_estimator_with_the_dp_route_pickles() -> None:
    from treeopt_dsl.estimator import OptimalTreeClassifier

    rng = np.random.default_rng(2)
    X = rng.integers(0, 3, size=(40, 2)).astype(float)
    y = (X[:, 0] > X[:, 1]).astype(int)
    est = OptimalTreeClassifier(formulation="oct", depth=2, solver="streed").fit(X, y)
    assert est.result_.status is Status.OPTIMAL and not est.result_.built.is_built
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    assert again.result_.built is None  # a lean pickle by default (issue 35): no model, no training matrix
    kept = pickle.loads(pickle.dumps(est.set_params(keep_model=True)))
    np.testing.assert_array_equal(kept.predict(X), est.predict(X))
    assert kept.result_.built.model.n_vars > 0  # the deferred build survives pickling on request


def test_options_and_refusals_match_the_built_route() -> None:
    rng = np.random.default_rng(6)
    X = rng.integers(0, 3, size=(30, 2)).astype(float)
    y = np.where(X[:, 0] > 1, 1, -1)
    d = Dataset.from_arrays(X, y)
    spec = get_formulation("oct", depth=2)
    res = spec.solve(d, solver="streed", gap=0.01, threads=1, seed=3, warm_start="auto")  # MIP options: ignored
    assert res.status is Status.OPTIMAL
    with pytest.raises(OptionError, match="unknown option"):
        spec.solve(d, solver="streed", node_limit=3)
    with pytest.raises(CapabilityError, match="cannot solve olct"):
        get_formulation("olct", depth=1).solve(d, solver="streed")
    assert spec.solve(d, solver="streed", max_thresholds=1).status is Status.FEASIBLE


def test_too_many_columns_for_streed_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path, capsys) -> None:
    """Deeper than 2 STreeD's memory grows with the square of the threshold columns (it took over 12 GB on
    breast-cancer's 15,310): a run above the memory budget is refused before it starts, saying how to go on
    (``--max-thresholds K``, a lower depth, ConTree); STreeD running out of memory anyway is said the same way, not a
    traceback."""
    from treeopt_dsl.cli import main

    rng = np.random.default_rng(11)
    X = np.round(rng.normal(size=(40, 3)), 2)
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    d = Dataset.from_arrays(X, y)
    monkeypatch.setenv(MEMORY_ENV, "1M")  # STreeD over 111 columns: ~1.8 MB; over 16 per feature: 0.34 MB
    fits = r"111 cuts needs ~1.8 MB.*what would fit: --max-thresholds 16 .*depth 2 \(every cut\)"
    with pytest.raises(ModelTooLarge, match=fits):
        get_formulation("oct", depth=3).solve(d, solver="streed")
    with pytest.raises(ModelTooLarge, match="what would fit: --max-thresholds 16"):  # the built model's route too
        get_formulation("oct", depth=3).build(d).solve(solver="streed")
    coarse = get_formulation("oct", depth=3).solve(d, solver="streed", max_thresholds=4)  # 12 columns: an approximation
    assert coarse.status is Status.FEASIBLE and coarse.certificate.ok
    assert get_formulation("oct", depth=2).solve(d, solver="streed").status is Status.OPTIMAL  # the count: no cap

    def out_of_memory(*args, **kwargs):
        raise MemoryError("std::bad_alloc")

    monkeypatch.setattr(dp_module, "_run", out_of_memory)
    with pytest.raises(ModelTooLarge, match="ran out of memory"):
        get_formulation("oct", depth=3).solve(d, solver="streed", max_thresholds=4)
    monkeypatch.undo()
    monkeypatch.setenv(MEMORY_ENV, "1M")
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,c,y", comments="", fmt="%g")
    base = ["solve", "oct", "--data", str(path), "--label", "y", "--depth", "3"]
    assert main([*base, "--max-thresholds", "4"]) == 2  # a MILP solver has no thresholds to cap
    assert "--max-thresholds applies to --solver streed" in capsys.readouterr().err
    assert main([*base, "--solver", "streed", "--max-thresholds", "4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "feasible" and doc["n_threshold_columns"] == 12
    assert main([*base, "--solver", "streed"]) == 2  # refused before it starts, one line naming what would fit
    err = capsys.readouterr().err
    assert "above the budget" in err and "--max-thresholds 16" in err and "Traceback" not in err
