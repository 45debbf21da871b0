"""The experiment runner's grid validation, task ids and the profile arithmetic (no solves)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treeopt_dsl.datasets import data_dir
from treeopt_dsl.errors import DataError, OptionError, TreeoptError
from treeopt_dsl.experiments.grid import GridError, parse_grid
from treeopt_dsl.experiments.report import (
    cumulative_gap,
    exact_table,
    paired_table,
    paper_table,
    performance_profile,
    read_paper,
)
from treeopt_dsl.experiments.tasks import apply_overrides, expand
from treeopt_dsl.experiments.worker import SOLVE_OVERHEAD_S, load_task, wall_timeout
from treeopt_dsl.starts.multistart import paper_grid

GOOD = """\
[experiment]
name = "tiny"
time_limit = 3.0

[data]
datasets = ["haberman", "heart"]
seeds = [0, 1]

[[method]]
formulation = "olct"
params = { depth = 1 }
grid = { C = [0.1, 1.0] }

[[method]]
name = "oct1"
formulation = "oct"
params = { depth = 1 }
"""


@pytest.mark.parametrize("text, line, key", [
    (GOOD.replace('time_limit = 3.0', 'time_limit = -3.0'), 3, "time_limit"),
    (GOOD.replace('seeds = [0, 1]', 'seeds = [0, "one"]'), 7, "seeds"),
    (GOOD.replace('name = "oct1"\nformulation = "oct"', 'name = "oct1"\nformulation = "octx"'), 16, "formulation"),
    (GOOD.replace('grid = { C = [0.1, 1.0] }', 'grdi = { C = [0.1, 1.0] }'), 12, "grdi"),
    (GOOD.replace('name = "tiny"', 'name = "tiny"\ntimelimit = 3'), 3, "timelimit"),
    (GOOD.replace('params = { depth = 1 }\ngrid', 'params = { depth = 1, C = 1.0 }\ngrid'), 12, "grid"),
    (GOOD.replace('"oct"\nparams = { depth = 1 }', '"oct"\nparams = { depth = 1, Cx = 1 }'), 17, "params"),
])
def test_grid_errors_name_the_line_and_key(text: str, line: int, key: str) -> None:
    with pytest.raises(GridError) as info:
        parse_grid(text, source="g.toml")
    msg = str(info.value)
    assert f"g.toml, line {line}:" in msg and repr(key) in msg
    assert isinstance(info.value, (TreeoptError, ValueError))


def test_grid_requires_data_and_methods() -> None:
    with pytest.raises(GridError, match=r"\[data\].*missing"):
        parse_grid('[experiment]\nname = "x"\n[[method]]\nformulation = "olct"\n')
    with pytest.raises(GridError, match=r"method.*missing"):
        parse_grid('[data]\ndatasets = ["haberman"]\n')
    with pytest.raises(GridError, match="not valid TOML"):
        parse_grid('[data\n')


def test_task_ids_are_stable_and_distinct() -> None:
    a = expand(parse_grid(GOOD))
    # the same grid written in another order gives the same ids
    reordered = GOOD.replace('params = { depth = 1 }\ngrid = { C = [0.1, 1.0] }',
                             'grid = { C = [0.1, 1.0] }\nparams = { depth = 1 }')
    b = expand(parse_grid(reordered))
    assert len(a) == 2 * 2 * (2 + 1) == 12
    assert sorted(t["id"] for t in a) == sorted(t["id"] for t in b)
    assert len({t["id"] for t in a}) == 12
    assert any(t["id"].startswith("olct-haberman-s0-") for t in a)
    # what a task computes is in its id: another limit or parameter is another task
    c = apply_overrides(a, time_limit=9.0)
    assert not {t["id"] for t in a} & {t["id"] for t in c}
    d = expand(parse_grid(GOOD.replace("C = [0.1, 1.0]", "C = [0.1, 2.0]")))
    assert len({t["id"] for t in a} & {t["id"] for t in d}) == 12 - 4


def test_a_datasets_params_reach_only_its_tasks_of_methods_that_take_them() -> None:
    """``{ name = ..., params = {...} }`` (Günlük et al. §5.7: heloc's selection keeps at least 4 groups): the
    dataset's tasks of a formulation taking the key get it (a new task id), the other datasets' and an estimator's
    keep theirs; a key no method on the dataset takes, or a bad value, is refused naming the line and key."""
    text = ('[experiment]\nname = "g"\n[data]\ndatasets = ["haberman", { name = "heart", params = { '
            'preselect_min_groups = 4 } }]\n[[method]]\nname = "odt"\nformulation = "odt_categorical"\n'
            'params = { preselect = "rpart" }\n[[method]]\nname = "cart"\nestimator = "cart"\n')
    plain = {(t["method"], t["dataset"]["name"]): t for t in expand(parse_grid(text.replace(
        ', params = { preselect_min_groups = 4 }', '')))}
    tasks = {(t["method"], t["dataset"]["name"]): t for t in expand(parse_grid(text))}
    assert tasks["odt", "heart"]["params"] == {"preselect": "rpart", "preselect_min_groups": 4}
    assert tasks["odt", "heart"]["id"] != plain["odt", "heart"]["id"]
    for key in (("odt", "haberman"), ("cart", "heart"), ("cart", "haberman")):
        assert tasks[key]["params"] == plain[key]["params"] and tasks[key]["id"] == plain[key]["id"]
    assert "params" not in tasks["odt", "heart"]["dataset"]
    with pytest.raises(GridError, match=r"line 4: .*'datasets'.*'preselect_min_grups' is not a parameter"):
        parse_grid(text.replace("preselect_min_groups", "preselect_min_grups"), source="g.toml")
    with pytest.raises(GridError, match=r"line 4: .*with method 'odt'.*preselect_min_groups must be"):
        parse_grid(text.replace("preselect_min_groups = 4", "preselect_min_groups = 0"), source="g.toml")


def test_performance_profile_by_hand() -> None:
    # 3 instances x 3 methods; inf = not solved
    costs = np.array([[1.0, 2.0, math.inf],
                      [3.0, 3.0, 6.0],
                      [4.0, 1.0, 2.0]])
    # ratios: [1, 2, inf], [1, 1, 2], [4, 1, 2]
    taus, rho = performance_profile(costs, taus=np.array([1.0, 2.0, 4.0, 10.0]))
    assert rho.tolist() == [[2 / 3, 2 / 3, 1.0, 1.0],
                            [2 / 3, 1.0, 1.0, 1.0],
                            [0.0, 2 / 3, 2 / 3, 2 / 3]]
    taus, rho = performance_profile(costs)  # default taus: every distinct ratio
    assert taus.tolist() == [1.0, 2.0, 4.0]
    # an instance every method fails counts against all
    _, rho = performance_profile(np.array([[1.0, 2.0], [math.inf, math.nan]]), taus=np.array([100.0]))
    assert rho[:, 0].tolist() == [0.5, 0.5]


def test_cumulative_gap_by_hand() -> None:
    acc = np.array([[0.80, 0.70, 0.75],
                    [0.60, 0.65, math.nan]])
    # gaps from the best: [0, .10, .05], [.05, 0, inf]
    _, rho = cumulative_gap(acc, higher_is_better=True, ts=np.array([0.0, 0.05, 0.1]))
    assert rho.tolist() == [[0.5, 1.0, 1.0], [0.5, 0.5, 1.0], [0.0, 0.5, 0.5]]
    _, rho = cumulative_gap(np.array([[3.0, 1.0]]), higher_is_better=False, ts=np.array([0.0, 2.0]))
    assert rho.tolist() == [[0.0, 1.0], [1.0, 1.0]]


def test_paper_table_prints_ours_beside_the_papers(tmp_path) -> None:
    rows = [{"method": "A", "dataset": "d", "seed": s, "ok": True, "status": "optimal" if s else "time_limit",
             "test_balanced_accuracy": 0.8 + 0.1 * s} for s in (0, 1)]
    rows += [{"method": "B", "dataset": "d", "seed": s, "ok": True, "status": "optimal",
              "test_balanced_accuracy": 0.85} for s in (0, 1)]
    paper = tmp_path / "p.csv"
    paper.write_text("# a comment\ndataset,method,metric,value,note\nd,A,test_balanced_accuracy,0.80,x\n"
                     "*,A,best_accuracy_fraction,0.5,\n*,B,proven_fraction,0.7,\n")
    md = paper_table(rows, paper)
    assert "| d | A | test_balanced_accuracy | 0.800 | 0.850 | 2 | +0.050 | no | x |" in md
    assert "| * | A | best_accuracy_fraction | 0.500 | 0.500 | 2 | +0.000 |  |" in md
    assert "| * | B | proven_fraction | 0.700 | 1.000 | 2 | +0.300 |  |" in md
    assert md.endswith("Within 1.5 points: 0 of 1 rate cells run (0 not run).")


def test_paper_table_counts_the_instances_of_an_aggregate_cell(tmp_path) -> None:
    """``n`` of ``best_accuracy_fraction`` is the number of instances compared (3 seeds), not of methods (2)."""
    rows = [{"method": m, "dataset": "d", "seed": s, "ok": True, "test_balanced_accuracy": 0.8}
            for m in ("A", "B") for s in (0, 1, 2)]
    paper = tmp_path / "p.csv"
    paper.write_text("dataset,method,metric,value\n*,A,best_accuracy_fraction,1.0\n")
    assert "| * | A | best_accuracy_fraction | 1.000 | 1.000 | 3 | +0.000 |  |" in paper_table(rows, paper)


def test_paper_table_counts_the_cells_within_one_and_a_half_points(tmp_path) -> None:
    """The count issue 33 asks of every reproduced table: |ours - paper| <= 1.5 points, over the accuracy cells
    we ran; cells without rows counted apart, other metrics (times) not counted."""
    rows = [{"method": m, "dataset": "d", "seed": s, "ok": True, "test_accuracy": v, "train_accuracy": v,
             "test_tpr": v, "runtime_s": 9.0} for m, v in (("A", 0.815), ("B", 0.83)) for s in (0, 1, 2)]
    paper = tmp_path / "p.csv"
    paper.write_text("dataset,method,metric,value\nd,A,test_accuracy,0.80\nd,A,train_accuracy,0.83\n"
                     "d,B,test_accuracy,0.8149\nd,C,test_accuracy,0.5\nd,A,runtime_s,100\nd,B,test_tpr,0.80\n")
    md = paper_table(rows, paper)
    assert "| d | A | test_accuracy | 0.800 | 0.815 | 3 | +0.015 | yes |" in md  # 1.5 points is within
    assert "| d | A | train_accuracy | 0.830 | 0.815 | 3 | -0.015 | yes |" in md
    assert "| d | B | test_accuracy | 0.815 | 0.830 | 3 | +0.015 | no |" in md  # 1.51 points is not
    assert "| d | C | test_accuracy | 0.500 | - | - | - |  |" in md
    assert "| d | A | runtime_s | 100.000 | 9.000 | 3 | -91.000 |  |" in md
    assert "| d | B | test_tpr | 0.800 | 0.830 | 3 | +0.030 | no |" in md  # a sensitivity is a rate too (Table 14)
    assert md.endswith("Within 1.5 points: 2 of 4 rate cells run (1 not run).")
    # a cell marked "not counted" (not the paper's data here) is printed beside ours, outside the count
    paper.write_text('dataset,method,metric,value,note\nd,A,test_accuracy,0.80,"not counted: other rows, here"\n'
                     "d,B,test_accuracy,0.83,\n")
    md = paper_table(rows, paper)
    assert "| d | A | test_accuracy | 0.800 | 0.815 | 3 | +0.015 | - | not counted: other rows, here |" in md
    assert md.endswith("Within 1.5 points: 1 of 1 rate cells run (0 not run).")


@pytest.mark.parametrize("bad", ["d,A,test_accuracy,0.8,not counted: other rows, here\n",  # an unquoted comma
                                 "d,A,test_accuracy,n/a,\n", "d,A,test_accuracy,nan,\n"])
def test_a_paper_table_row_without_a_number_or_with_an_extra_field_is_refused(tmp_path, bad: str) -> None:
    paper = tmp_path / "p.csv"
    paper.write_text("dataset,method,metric,value,note\n" + bad)
    with pytest.raises(DataError, match=r"row 1 .*needs a number as value and no more fields"):
        read_paper(paper)



def test_paper_table_reads_one_point_of_every_stored_path(tmp_path) -> None:
    """A ``point`` column (S-ORCT Tables 3-5) picks that point of each path row (17 points, the paper's grid, in
    path order): the mean over the paths of its measure, beside the paper's; a short path is not counted."""
    def path(seed: int) -> dict:
        return {"method": "S-ORCT-T3", "dataset": "d", "seed": seed, "ok": True, "status": "path",
                "points": [{"test_accuracy": 0.5 + 0.01 * k + 0.02 * seed, "delta_l": 5.0 * k} for k in range(17)]}
    rows = [path(0), path(1), {**path(2), "points": path(2)["points"][:3]}]
    paper = tmp_path / "p.csv"
    paper.write_text("dataset,method,point,metric,value\nd,S-ORCT-T3,0,test_accuracy,0.51\n"
                     "d,S-ORCT-T3,2^-10,test_accuracy,0.50\nd,S-ORCT-T3,2^3,delta_l,80\n")
    md = paper_table(rows, paper)
    assert "| d | S-ORCT-T3 | test_accuracy at 0 | 0.510 | 0.510 | 2 | +0.000 | yes |" in md
    assert "| d | S-ORCT-T3 | test_accuracy at 2^-10 | 0.500 | 0.540 | 2 | +0.040 | no |" in md  # index 3
    assert "| d | S-ORCT-T3 | delta_l at 2^3 | 80.000 | 80.000 | 2 | +0.000 |  |" in md  # index 16
    assert md.endswith("Within 1.5 points: 1 of 2 rate cells run (0 not run).")
    paper.write_text("dataset,method,point,metric,value\nd,S-ORCT-T3,2^-13,test_accuracy,0.5\n")
    with pytest.raises(DataError, match=r"2\^-13.*known: 0, 2\^-12"):
        paper_table(rows, paper)


def test_a_path_in_the_papers_pair_order_is_read_along_its_lambda_g_zero_column(tmp_path) -> None:
    """``lambda_g = "paper-ends"`` (Tables 3-4 in the paper's pair order): the grid accepts it, the runner's timeout
    counts its 34 points, and the report reads each label off the lambda_G = 0 column (not by position in the 34)."""
    text = PATH.replace("lambda_g = [0.0]", 'lambda_g = "paper-ends"')
    task = expand(parse_grid(text))[0]
    assert task["path"]["lambda_g"] == "paper-ends"
    n = 3 + (17 * 2 - 1) * (3 + 1)
    assert wall_timeout(task) == 1.5 * n * 10.0 + n * SOLVE_OVERHEAD_S + 120
    with pytest.raises(GridError, match='lambda_g must be "paper", "paper-ends" or a non-empty list'):
        parse_grid(text.replace('"paper-ends"', '"paper-end"'))
    lam_l, end = paper_grid("l", 4, 2), paper_grid("g", 4)[-1]
    pts = [{"lambda_l": lo, "lambda_g": g, "test_accuracy": 0.5 if g else 0.9 - 0.01 * k}
           for k, lo in enumerate(lam_l) for g in (0.0, end)]
    row = {"method": "T", "dataset": "d", "seed": 0, "ok": True, "status": "path", "n_features": 4,
           "params": {"depth": 2}, "points": pts}
    paper = tmp_path / "p.csv"
    paper.write_text("dataset,method,point,metric,value\nd,T,2^-12,test_accuracy,0.89\nd,T,2^3,test_accuracy,0.74\n")
    md = paper_table([row], paper)
    assert "| d | T | test_accuracy at 2^-12 | 0.890 | 0.890 | 1 | +0.000 | yes |" in md
    assert "| d | T | test_accuracy at 2^3 | 0.740 | 0.740 | 1 | +0.000 | yes |" in md

@pytest.mark.parametrize("kind", ["l", "g"])
def test_a_stored_path_off_the_papers_grid_is_refused_not_read_by_position(tmp_path, kind: str) -> None:
    """A point is read by its label only from a path on the paper's grid (``paper_grid`` with the row's
    ``n_features`` and depth): a 17-point path of other lambdas (here the grid of 5 features stored for 4, or
    of depth 1 for depth 2) is refused, naming the path, instead of being read by position."""
    def path(p: int, depth: int) -> dict:
        lam = paper_grid(kind, p, depth)
        pts = [{"lambda_l": v if kind == "l" else 0.0, "lambda_g": v if kind == "g" else 0.0,
                "test_accuracy": 0.9} for v in lam]
        return {"method": "T", "dataset": "d", "seed": 0, "ok": True, "status": "path", "n_features": 4,
                "params": {"depth": 2}, "points": pts}
    paper = tmp_path / "p.csv"
    paper.write_text("dataset,method,point,metric,value\nd,T,2^-3,test_accuracy,0.9\n")
    assert "| d | T | test_accuracy at 2^-3 | 0.900 | 0.900 | 1 | +0.000 | yes |" in paper_table([path(4, 2)], paper)
    for bad in ([path(5, 2)], [path(4, 1)] if kind == "l" else [{**path(4, 2), "n_features": 5}]):
        with pytest.raises(DataError, match="dataset 'd', method 'T', seed 0 is not on the paper's grid"):
            paper_table(bad, paper)


# ------------------------------------------------------------------ rows, hold-out selection, scale, paths
PROTOCOL = """\
[experiment]
name = "protocol"
time_limit = 2.0

[data]
datasets = [{ name = "a2a", rows = 2265 }, "haberman"]
seeds = [0]
test_size = 0.2
validation_size = 0.2

[[method]]
name = "OCT"
formulation = "oct"
params = { depth = 2 }
cv = { folds = 0, grid = { alpha = [0.001, 1.0] }, metric = "accuracy" }
scale = { alpha = "baseline_errors" }
"""

PATH = """\
[experiment]
solver = "ipopt"
time_limit = 10.0

[data]
datasets = [{ name = "iris", multiclass = true }]
seeds = [0, 1]
test_size = 0.25

[[method]]
name = "T4"
formulation = "sorct"
params = { depth = 2, rho = 0.1 }
path = { lambda_l = "paper", lambda_g = [0.0], n_starts = 3, fresh = 1 }
"""


def test_new_keys_parse_into_the_tasks() -> None:
    g = parse_grid(PROTOCOL)
    assert g.datasets[0].rows == 2265 and g.datasets[1].rows == 0
    m = g.methods[0]
    assert m.cv == {"folds": 0, "grid": {"alpha": [0.001, 1.0]}, "metric": "accuracy"}
    assert m.scale == {"alpha": "baseline_errors"}
    tasks = expand(g)
    assert len(tasks) == 2
    assert tasks[0]["dataset"] == {"name": "a2a", "rows": 2265} and "rows" not in tasks[1]["dataset"]
    assert tasks[0]["scale"] == {"alpha": "baseline_errors"} and tasks[0]["validation_size"] == 0.2
    p = parse_grid(PATH).methods[0].path
    assert p == {"lambda_l": "paper", "lambda_g": [0.0], "n_starts": 3, "fresh": 1}
    assert [t["path"] for t in expand(parse_grid(PATH))] == [p, p]


def test_one_hot_keys_reach_the_loader() -> None:
    """``one_hot`` / ``one_hot_drop`` of a [data] table enter its tasks and the worker loads the encoded columns
    (balance as S-ORCT reads it: 4 integer attributes one-hot, one level dropped, 16 columns; every row kept)."""
    text = PATH.replace('{ name = "iris", multiclass = true }',
                        '{ name = "balance", multiclass = true, one_hot = ["left-weight", "left-distance", '
                        '"right-weight", "right-distance"], one_hot_drop = "first" }')
    tasks = expand(parse_grid(text))
    assert tasks[0]["dataset"]["one_hot"] == ("left-weight", "left-distance", "right-weight", "right-distance")
    assert tasks[0]["dataset"]["one_hot_drop"] == "first"
    assert "one_hot" not in expand(parse_grid(PATH))[0]["dataset"]
    if data_dir() is None:
        pytest.skip("no data directory")
    d, plain = load_task(tasks[0]), load_task(expand(parse_grid(PATH.replace("iris", "balance")))[0])
    assert (d.n_samples, d.n_features, plain.n_features) == (625, 16, 4)
    assert np.array_equal(d.y, plain.y)
    bad = expand(parse_grid(text.replace('"left-weight"', '"left-weigth"')))[0]
    with pytest.raises(DataError, match="no column 'left-weigth' in dataset 'balance'"):
        load_task(bad)


def test_drop_classes_key_reaches_the_loader_and_a_bad_value_is_refused() -> None:
    """``drop_classes`` of a [data] table (the thesis' Table 4.1 balance without its "B" rows) enters its tasks and
    the worker loads the rows left; a value that is not a label or a list of labels is refused by key."""
    text = PATH.replace('{ name = "iris", multiclass = true }', '{ name = "balance", drop_classes = ["B"] }')
    task = expand(parse_grid(text))[0]
    assert task["dataset"] == {"name": "balance", "drop_classes": ("B",)}
    with pytest.raises(GridError, match="drop_classes must be a class label or a non-empty list"):
        parse_grid(text.replace('drop_classes = ["B"]', "drop_classes = []"))
    if data_dir() is None:
        pytest.skip("no data directory")
    d = load_task(task)
    assert (d.n_samples, d.classes, d.meta["dropped_classes"]) == (576, ("L", "R"), {"B": 49})


def test_file_key_reaches_the_loader_and_an_unknown_file_is_refused_up_front() -> None:
    """``file`` of a [data] table: only that file of a stacked set (Günlük's monks-1, the 432-row test file)."""
    text = PATH.replace('{ name = "iris", multiclass = true }', '{ name = "monks-1", file = "monks-1.test" }')
    task = expand(parse_grid(text))[0]
    assert task["dataset"] == {"name": "monks-1", "file": "monks-1.test"}
    if data_dir() is None:
        pytest.skip("no data directory")
    d = load_task(task)
    assert (d.n_samples, d.meta["rows_by_file"]) == (432, {"monks-1.test": 432})
    with pytest.raises(GridError, match=r"line 6: \[data\] key 'datasets': entry 1: dataset 'monks-1' has no file "
                                        r"'monks-1.tst'"):
        parse_grid(text.replace("monks-1.test", "monks-1.tst"))


def test_grids_without_the_new_keys_keep_their_task_ids() -> None:
    """The new keys enter a task only when given: the stores of earlier runs still match their grids."""
    ids = [t["id"] for t in expand(parse_grid(GOOD))]
    assert ids[:3] == ["olct-haberman-s0-318d2a1a88", "olct-haberman-s0-add2c1d24f", "oct1-haberman-s0-d78e250ff0"]
    assert not {"scale", "path"} & set(expand(parse_grid(GOOD))[0])


@pytest.mark.parametrize("text, line, key, words", [
    (PROTOCOL.replace("rows = 2265", "rows = -5"), 6, "datasets", "rows must be an integer >= 0"),
    (PROTOCOL.replace("rows = 2265", 'rows = "all"'), 6, "datasets", "rows must be an integer"),
    (PROTOCOL.replace("rows = 2265", "one_hot = []"), 6, "datasets", "one_hot must be a non-empty list of column"),
    (PROTOCOL.replace("rows = 2265", "one_hot = [1, 2]"), 6, "datasets", "one_hot must be a non-empty list of colu"),
    (PROTOCOL.replace("rows = 2265", 'one_hot_drop = "middle"'), 6, "datasets",
     'one_hot_drop must be "first" or "last"'),
    (PROTOCOL.replace("rows = 2265", "file = 3"), 6, "datasets", "file must be the name of one of a manifest"),
    (PROTOCOL.replace("validation_size = 0.2\n", ""), 14, "cv", "validation_size > 0"),
    (PROTOCOL.replace("folds = 0", "folds = 1"), 15, "cv", "folds must be an integer >= 2 (or 0"),
    (PROTOCOL.replace('scale = { alpha = "baseline_errors" }', 'scale = { beta = "baseline_errors" }'), 16, "scale",
     "'beta' is not a parameter"),
    (PROTOCOL.replace('"baseline_errors"', '"baseline"'), 16, "scale", "unknown scale 'baseline'"),
    (PROTOCOL.replace('scale = { alpha = "baseline_errors" }', 'scale = "baseline_errors"'), 16, "scale",
     "expected a table"),
    (PROTOCOL + 'path = { lambda_l = "paper" }\n', 17, "path", "oct has no lambda_l / lambda_g"),
    (PATH.replace('lambda_l = "paper"', "lambda_l = [-1.0]"), 14, "path", "lambda_l must be"),
    (PATH.replace('n_starts = 3', "n_starts = 0"), 14, "path", "n_starts must be an integer >= 1"),
    (PATH.replace('fresh = 1', "fesh = 1"), 14, "path", "unknown key 'fesh'"),
    (PATH.replace("test_size = 0.25", "test_size = 0.25\nvalidation_size = 0.2"), 15, "path",
     "does not take [data] validation_size"),
    (PATH.replace("test_size = 0.25", "test_size = 0"), 14, "path", "does not take [data] test_size = 0"),
    (PATH.replace('formulation = "sorct"\nparams = { depth = 2, rho = 0.1 }', 'estimator = "cart"'), 13, "path",
     "give formulation"),
])
def test_new_keys_are_refused_with_their_line(text: str, line: int, key: str, words: str) -> None:
    with pytest.raises(GridError) as info:
        parse_grid(text, source="g.toml")
    msg = str(info.value)
    assert f"g.toml, line {line}:" in msg and repr(key) in msg and words in msg, msg


def test_wall_timeout_counts_hold_out_fits_and_path_starts() -> None:
    t = expand(parse_grid(PROTOCOL))[0]
    assert wall_timeout(t) == 1.5 * 2 * 2.0 + 2 * SOLVE_OVERHEAD_S + 120  # two fits (one per alpha), no refit
    t = expand(parse_grid(PATH))[0]
    n = 3 + 16 * (3 + 1)  # 17 points: 3 starts, then 3 chained + 1 fresh
    assert wall_timeout(t) == 1.5 * n * 10.0 + n * SOLVE_OVERHEAD_S + 120


def test_scale_factors() -> None:
    from treeopt_dsl.data import Dataset
    from treeopt_dsl.experiments.worker import scale_factor

    d = Dataset.from_arrays(np.zeros((9, 1)), np.array([0, 0, 0, 0, 1, 1, 1, 2, 2]), multiclass=True)
    assert scale_factor("baseline_errors", d) == 5.0  # 9 rows, majority class 4
    assert scale_factor("n_train", d) == 9.0


def test_the_documented_grid_parses() -> None:
    """docs/experiments.md's annotated grid (every key in one file) is a valid grid."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "experiments.md").read_text()
    g = parse_grid(re.search(r"```toml\n(.*?)```", doc, re.S).group(1), source="docs/experiments.md")
    assert g.datasets[-2].rows == 2265 and g.datasets[-1].roll == -80 and g.methods[0].cv["folds"] == 4
    assert g.datasets[-4].file == "monks-1.test" and g.datasets[-3].one_hot_drop == "first"
    assert g.split == "stratified"


# ------------------------------------------------------------------------------------------- issue 36
@pytest.mark.parametrize("text, line, key, words", [
    (GOOD.replace('"heart"]', '"hart"]'), 6, "datasets", "entry 2: unknown dataset 'hart'"),
    (GOOD.replace('"heart"]', '"nowhere/h.csv"]'), 6, "datasets", "entry 2: no data file 'nowhere/h.csv'"),
    (GOOD.replace('"heart"]', '{ name = "heart", variant = "nope" }]'), 6, "datasets", "no variant 'nope'"),
    (GOOD.replace('time_limit = 3.0', 'time_limit = 3.0\nsolver = "hihgs"'), 4, "solver",
     "unknown solver 'hihgs' (known: auto, highs,"),
    (GOOD.replace('name = "oct1"', 'name = "oct1"\nsolver = "gurobi9"'), 16, "solver", "unknown solver 'gurobi9'"),
    (GOOD.replace('name = "oct1"', 'name = "oct1"\nbackend = "fast"'), 16, "backend", "unknown backend 'fast'"),
    (GOOD.replace('name = "oct1"', 'name = "oct1"\nwarm_start = "grredy"'), 16, "warm_start",
     "unknown warm start 'grredy' (known: auto, none, greedy,"),
    (GOOD.replace('time_limit = 3.0', 'time_limit = 3.0\nwarm_start = "cartt"'), 4, "warm_start", "'cartt'"),
    (GOOD.replace('"oct"\nparams = { depth = 1 }', '"oct"\nparams = { depth = 9 }'), 17, "params",
     "bad value 9 for parameter 'depth': expected a whole number from 1 to 6"),
    (GOOD.replace('grid = { C = [0.1, 1.0] }', 'grid = { depth = [2, 9] }').replace("params = { depth = 1 }\ngrid",
                                                                                  "grid"),
     11, "grid", "bad value 9 for parameter 'depth': expected a whole number from 1 to 6"),
    (GOOD.replace('name = "oct1"\nformulation = "oct"\nparams = { depth = 1 }',
                  'name = "tmo7"\nestimator = "tmo"\nparams = { depth = 7 }'), 17, "params",
     "tmo: depth must be an integer from 1 to 6, got 7"),
    (GOOD.replace('name = "oct1"\nformulation = "oct"\nparams = { depth = 1 }',
                  'name = "tao7"\nestimator = "tao"\ngrid = { depth = [2, 7] }'), 17, "grid",
     "tao: depth must be an integer from 1 to 6, got 7"),
    (GOOD.replace('name = "oct1"', 'name = "oct1"\nreferences = ["cart", "grdy"]'), 16, "references", "'grdy'"),
    (GOOD.replace('name = "oct1"\nformulation = "oct"\nparams = { depth = 1 }',
                  'name = "rp"\nestimator = "rpart"\nparams = { max_depth = 3, minsplit = 20 }'), 17, "params",
     "rpart takes max_depth, min_split, min_leaf, cp, categorical, n_bins; not minsplit"),
])
def test_every_name_and_depth_is_checked_before_anything_runs(text: str, line: int, key: str, words: str) -> None:
    """Issue 36: an unknown dataset, solver, backend, warm start or reference and a depth the topology does not
    take (also a later value of a grid) used to pass ``experiment tasks`` and then fail every task."""
    with pytest.raises(GridError) as info:
        parse_grid(text, source="g.toml")
    msg = str(info.value)
    assert f"g.toml, line {line}:" in msg and repr(key) in msg and words in msg, msg


def test_the_sleep_task_loads_no_dataset_so_its_names_are_not_checked() -> None:
    g = parse_grid('[data]\ndatasets = ["a", "b"]\n[[method]]\nestimator = "sleep"\n')
    assert [d.name for d in g.datasets] == ["a", "b"]
    with pytest.raises(GridError, match="entry 1: unknown dataset 'a'"):
        parse_grid('[data]\ndatasets = ["a", "b"]\n[[method]]\nestimator = "sleep"\n[[method]]\nestimator = "cart"\n')


def test_exact_table_ratio_skips_instances_whose_lowest_is_zero() -> None:
    """A tree that separates its training set has an exact log-loss near 0 (OLCT with l1 = 0): the median ratio to
    the lowest is taken over the instances whose lowest is above 0 (dividing by 1 instead printed the raw value as a
    ratio); the mean and the share of lowest count every instance; no such instance: "-"."""
    vals = {("a", 0): 0.0, ("b", 0): 0.5, ("a", 1): 2.0, ("b", 1): 1.0, ("a", 2): 3.0, ("b", 2): 1.5,
            ("a", 3): 4.0, ("b", 3): 4.0}
    rows = [{"ok": True, "method": m, "dataset": "d", "seed": s, "exact_objective": v} for (m, s), v in vals.items()]
    lines = exact_table(rows).splitlines()[2:]
    a = np.array([vals[("a", s)] for s in range(4)])
    b = np.array([vals[("b", s)] for s in range(4)])
    low = np.minimum(a, b)
    keep = low > 0
    want_a = float(np.median(a[keep] / low[keep]))  # 2, 2, 1 -> 2
    want_b = float(np.median(b[keep] / low[keep]))  # 1, 1, 1 -> 1
    assert lines[0] == f"| a | 4 | {a.mean():.3f} | {np.mean(a == low):.2f} | {want_a:.3f} |"
    assert lines[1] == f"| b | 4 | {b.mean():.3f} | {np.mean(b == low):.2f} | {want_b:.3f} |"
    zero = [r for r in rows if r["seed"] == 0]
    assert exact_table(zero).splitlines()[2].endswith("| - |")


def test_paired_table_counts_each_instance_against_the_reference() -> None:
    """``report --against``: random rows (two methods against a reference, some unproven, one failed), every
    figure recomputed here instance by instance with plain loops and scipy's sign test."""
    from scipy.stats import binomtest

    rng = np.random.default_rng(7)
    rows = []
    for seed in range(12):
        for m in ("ref", "m1", "m2"):
            proven = rng.random() < 0.6
            rows.append({"ok": not (m == "m2" and seed == 3), "method": m, "dataset": "d", "seed": seed,
                         "status": "optimal" if proven else "time_limit", "runtime_s": float(rng.uniform(1, 9)),
                         "test_balanced_accuracy": float(rng.choice([0.6, 0.7, 0.8])),
                         "exact_objective": float(rng.uniform(1, 3))})
    table = {line.split(" | ")[0].strip("| "): line for line in paired_table(rows, "ref").splitlines()[2:]}
    assert set(table) == {"m1", "m2"}
    ref = {r["seed"]: r for r in rows if r["method"] == "ref"}
    for m in ("m1", "m2"):
        mine = [r for r in rows if r["method"] == m and r["ok"]]
        d = [r["test_balanced_accuracy"] - ref[r["seed"]]["test_balanced_accuracy"] for r in mine]
        hi, lo = sum(x > 1e-12 for x in d), sum(x < -1e-12 for x in d)
        t = [r["runtime_s"] / ref[r["seed"]]["runtime_s"] for r in mine
             if r["status"] == "optimal" and ref[r["seed"]]["status"] == "optimal"]
        e = [r["exact_objective"] - ref[r["seed"]]["exact_objective"] for r in mine]
        er = [r["exact_objective"] / ref[r["seed"]]["exact_objective"] for r in mine]
        cells = [c.strip() for c in table[m].strip("|").split("|")]
        assert cells[1] == str(len(mine))
        assert cells[2] == f"{hi} / {len(mine) - hi - lo} / {lo}"
        assert cells[3] == f"{100 * np.mean(d):+.2f}"
        assert cells[4] == f"{binomtest(hi, hi + lo).pvalue:.3f}"
        assert cells[5] == f"{np.median(t):.2f} ({len(t)})"
        assert cells[6] == f"{sum(x < 0 for x in e)} / 0 / {sum(x > 0 for x in e)}"
        assert cells[7] == f"{np.median(er):.3f}"
    with pytest.raises(OptionError, match="--against 'nope'"):
        paired_table(rows, "nope")
