"""docs/reproduction.md's commands start: every grid it runs exists and is accepted by ``treeopt experiment tasks``
(expanded here in-process, as that command does), every published-numbers CSV it reports against exists and
names only datasets and methods of the grid whose store it is reported on, and every benchmark script it runs
exists and takes the options the command gives it. No task is run."""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path

import pytest

from treeopt_dsl.cli.common import UsageError
from treeopt_dsl.cli.parsers import build_parser
from treeopt_dsl.experiments.grid import load_grid
from treeopt_dsl.experiments.report import NOT_COUNTED_NOTE, read_paper
from treeopt_dsl.experiments.tasks import expand

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reproduction.md"


def _commands() -> list[list[str]]:
    """Every command of the page: the lines of its code blocks and its inline code spans that start a command."""
    text = PAGE.read_text()
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M)
    lines = [ln.strip() for b in blocks for ln in b.splitlines() if ln.strip()]
    lines += [s for s in re.findall(r"`((?:treeopt|\.venv/bin/python) [^`]+)`", text)
              if re.search(r"\.(toml|py)\b", s)]  # a span naming a command without its grid is prose
    return [shlex.split(ln) for ln in lines  # `<config>`, `<store>`: the prose's placeholders, not commands
            if ln.startswith(("treeopt ", ".venv/bin/python ")) and "<" not in ln]


@functools.cache
def _grid_tasks(config: str) -> list[dict]:
    path = ROOT / config
    assert path.is_file(), f"docs/reproduction.md names {config}, which does not exist"
    tasks = expand(load_grid(path))  # what `treeopt experiment tasks` does; raises GridError on a bad grid
    assert tasks, f"{config} expands to no task"
    return tasks


def _label(dataset: object) -> str:
    return str(dataset["name"] if isinstance(dataset, dict) else dataset)


def _paper(path: str) -> list[dict[str, str]]:
    p = ROOT / path
    assert p.is_file(), f"docs/reproduction.md reports against {path}, which does not exist"
    return read_paper(p)  # raises unless every row has the columns, a number and no extra field


COMMANDS = _commands()


def test_the_page_has_a_command_for_every_kind_of_run() -> None:
    kinds = {tuple(c[:3]) for c in COMMANDS}
    assert ("treeopt", "experiment", "run") in kinds and ("treeopt", "experiment", "report") in kinds
    assert any(c[0] == ".venv/bin/python" for c in COMMANDS)
    # every experiments/*.toml of a paper's table is on the page (tiny / tree_solve / risk_scores are the
    # benchmarks' own grids, not a paper's table)
    named = {a for c in COMMANDS for a in c if a.endswith(".toml")}
    papers = {f"experiments/{p.name}" for p in (ROOT / "experiments").glob("*.toml")
              if p.stem.startswith(("thesis_", "gunluk_", "sorct_"))}
    assert papers - named == set(), f"configs of paper tables missing from docs/reproduction.md: {papers - named}"


def test_every_treeopt_command_on_the_page_parses() -> None:
    parser = build_parser()
    treeopt = [c for c in COMMANDS if c[0] == "treeopt"]
    assert len(treeopt) >= 20
    for c in treeopt:
        try:
            args = parser.parse_args(c[1:])
        except (SystemExit, UsageError):  # an unknown option or a missing argument
            pytest.fail(f"docs/reproduction.md: `{shlex.join(c)}` does not parse")
        assert args.command == "experiment", c


@pytest.mark.parametrize("config", sorted({a for c in COMMANDS if c[:3] == ["treeopt", "experiment", "run"]
                                           for a in c[3:] if a.endswith(".toml")}))
def test_every_grid_on_the_page_is_accepted_by_experiment_tasks(config: str) -> None:
    tasks = _grid_tasks(config)
    assert all(t["id"] for t in tasks)


def _store_to_config() -> dict[str, list[str]]:
    """The grids run into each store of the page: its ``--store``, else ``<experiment name>.sqlite``. A store two
    grids write is one whose second grid reuses tasks of the first (the same ids: Figure 3.7's V0 is Figure
    3.8's OLCT-V0R), which is checked here."""
    out: dict[str, list[str]] = {}
    for c in COMMANDS:
        if c[:3] == ["treeopt", "experiment", "run"]:
            config = next(a for a in c[3:] if a.endswith(".toml"))
            store = c[c.index("--store") + 1] if "--store" in c else f"{load_grid(ROOT / config).name}.sqlite"
            if config not in out.get(store, []):
                out.setdefault(store, []).append(config)
    for store, configs in out.items():
        if len(configs) > 1:
            ids = [{t["id"] for t in _grid_tasks(c)} for c in configs]
            assert set.intersection(*ids), f"{configs} write {store} but share no task: nothing is reused"
    return out


def test_every_report_reads_the_store_of_a_grid_run_on_the_page_and_its_paper_table_matches_the_grid() -> None:
    stores = _store_to_config()
    reports = [c for c in COMMANDS if c[:3] == ["treeopt", "experiment", "report"]]
    assert len(reports) >= 10
    checked = 0
    for c in reports:
        store = c[3]
        assert store in stores, f"report of {store}: no `treeopt experiment run` on the page writes it"
        if "--paper" not in c:
            continue
        rows = _paper(c[c.index("--paper") + 1])
        tasks = [t for config in stores[store] for t in _grid_tasks(config)]
        pairs = {(_label(t["dataset"]), t["method"]) for t in tasks}
        datasets = {d for d, _ in pairs}
        methods = {m for _, m in pairs}
        for r in rows:
            d, m = r["dataset"], r["method"]
            if (r.get("note") or "").startswith(NOT_COUNTED_NOTE):  # printed beside ours only, may not be run
                continue
            if d == "*" or m == "*":
                assert (d == "*" or d in datasets) and (m == "*" or m in methods), (c, r)
            else:
                assert (d, m) in pairs, f"{c[c.index('--paper') + 1]}: ({d}, {m}) is not a task of {stores[store]}"
        checked += 1
    assert checked >= 10


def test_every_benchmark_command_names_a_script_that_takes_its_options() -> None:
    scripts = [c for c in COMMANDS if c[0] == ".venv/bin/python"]
    assert len(scripts) >= 5
    for c in scripts:
        script = ROOT / c[1]
        assert script.is_file(), f"docs/reproduction.md runs {c[1]}, which does not exist"
        source = script.read_text()
        for opt in (a for a in c[2:] if a.startswith("--")):
            assert f'"{opt}"' in source, f"{c[1]} has no option {opt}"
        for arg in c[2:]:
            if arg.startswith("benchmarks/results/"):
                assert (ROOT / arg).exists(), f"{c[1]} reads {arg}, which does not exist"


SEEDS = ROOT.parent / "shared" / "seeds"


def _seed_text(prefix: str) -> str:
    """The text of the seed whose file name starts with ``prefix`` (the test is skipped without the seeds)."""
    found = sorted(SEEDS.glob(f"{prefix}*.txt")) if SEEDS.is_dir() else []
    if not found:
        pytest.skip(f"the seeds are not in {SEEDS}")
    return found[0].read_text()


#: published-numbers files read from a seed, with the seed's file prefix and the decimals its table prints
FROM_SEEDS = {"thesis_table3_2.csv": ("000_", 2), "thesis_table3_3.csv": ("000_", 2),
              **{p.name: ("002_", 1) for p in (ROOT / "experiments" / "papers").glob("gunluk_*.csv")}}


@pytest.mark.parametrize("name", sorted(FROM_SEEDS))
def test_published_numbers_are_the_seeds(name: str) -> None:
    """Every value of a published-numbers file is printed in its seed (accuracies as the table's percentages,
    times as printed; a time at the limit is the seed's "*")."""
    prefix, decimals = FROM_SEEDS[name]
    text = _seed_text(prefix)
    missing = []
    for r in _paper(f"experiments/papers/{name}"):
        v = float(r["value"])
        if r["metric"] == "runtime_s":
            if "limit" in (r.get("note") or ""):
                continue
            printed = f"{v:g}"
        elif r["metric"] == "n_leaves":  # a count, printed as the table prints it (9, 20.2)
            printed = f"{v:g}"
        else:
            printed = f"{100 * v:.{decimals}f}"
        shorter = printed.rstrip("0").rstrip(".") if "." in printed else printed  # the thesis prints 90.7 for 90.70
        if not any(re.search(rf"(?<![\d.]){re.escape(s)}(?![\d])", text) for s in {printed, shorter}):
            missing.append((r["dataset"], r["method"], r["metric"], printed))
    assert not missing, f"{name}: values not printed in the seed: {missing[:5]}"


#: seed 001's column names of Tables 3-5 -> the data directory's names (the grid's datasets)
SORCT_NAMES = {"Monks-3": "monks-3", "Monks-1": "monks-1", "Monks-2": "monks-2", "Sonar": "sonar",
               "Ionosphere": "ionosphere", "Wisconsin": "breast", "Creditapproval": "credit-approval", "Pima": "pima",
               "Germancredit": "german", "Banknote": "banknote", "Ozone": "ozone", "Spam": "spambase", "Iris": "iris",
               "Wine": "wine", "Seeds": "seeds", "Balance": "balance", "Thyroid": "thyroid", "Car": "car"}


def _seed_sorct_tables(text: str) -> dict[tuple[str, str, str, str], float]:
    """Seed 001's Tables 3-5 cell by cell: (dataset, method, point, metric) -> value, read from the text's rows
    (a header of data set names, then one row per lambda: ``0`` or ``2^{r}``, then delta and acc per set)."""
    lines = text.splitlines()
    out: dict[tuple[str, str, str, str], float] = {}
    for t in (3, 4, 5):
        at = next(i for i, ln in enumerate(lines) if ln.startswith(f"Table {t}: Results"))
        head = next(ln for ln in lines[at:] if ln.startswith(("λ^L\t", "λ^G\t")))
        names = [SORCT_NAMES[n] for n in head.split("\t")[1:] if n.strip()]
        rows = [ln for ln in lines[at:at + 25] if re.match(r"^(0|2\^\{?-?\d+\}?)\t", ln)]
        assert len(rows) == 17, f"seed 001 Table {t}: {len(rows)} rows of lambda, not 17"
        for ln in rows:
            cells = ln.split("\t")
            point = "0" if cells[0] == "0" else "2^" + cells[0][2:].strip("{}")
            vals = [float(v) for v in cells[1:] if v.strip()]
            assert len(vals) == 2 * len(names)
            for j, name in enumerate(names):
                out[(name, f"S-ORCT-T{t}", point, "delta_g" if t == 5 else "delta_l")] = vals[2 * j]
                out[(name, f"S-ORCT-T{t}", point, "test_accuracy")] = vals[2 * j + 1] / 100
    return out


def test_sorct_published_numbers_are_the_seeds_tables_cell_by_cell() -> None:
    """experiments/papers/sorct_tables3_5.csv holds exactly seed 001's Tables 3-5: every cell of the seed's
    tables (its data set's column, its lambda's row), each once, and nothing else."""
    seed = _seed_sorct_tables(_seed_text("001_"))
    rows = _paper("experiments/papers/sorct_tables3_5.csv")
    ours = {(r["dataset"], r["method"], r["point"], r["metric"]): float(r["value"]) for r in rows}
    assert len(ours) == len(rows), "a cell of the file is given twice"
    assert set(ours) == set(seed), f"cells only in the file: {sorted(set(ours) - set(seed))[:3]}, only in the " \
                                   f"seed: {sorted(set(seed) - set(ours))[:3]}"
    wrong = [(k, ours[k], v) for k, v in seed.items() if abs(ours[k] - v) > 1e-9]
    assert not wrong, f"values that are not the seed's: {wrong[:5]}"
    assert len(seed) == 2 * 17 * (12 + 6 + 6)


def _seed_contextual_tables(text: str) -> dict[tuple[str, str, str], tuple[float, float | None]]:
    """The thesis' Tables 5.3 and 5.4 (seed 000 lines 1674-1697) cell by cell: (dataset, method, metric) -> (value,
    sd), values in the data's units (Table 5.4's printed values times the row's scale); an sd printed "< 0.001"
    is None."""
    names = {"Phishing": "phishing", "Biodeg": "biodeg", "Heart": "heart", "Spam": "spambase", "A2A": "a2a",
             "California": "california", "Friedman": "friedman", "Yearpred": "yearpred", "Abalone": "abalone",
             "CPU": "cpu"}
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("Dataset\tCCT\tCART\tSupervised\tRF"))
    out: dict[tuple[str, str, str], tuple[float, float | None]] = {}
    for ln in lines[at:at + 30]:
        cells = ln.split("\t")
        if cells[0] not in names:
            continue
        t54 = cells[1].startswith("$10^")
        scale = 10.0 ** int(re.search(r"10\^(\d+)", cells[1]).group(1)) if t54 else 1.0
        plain = [re.sub(r"<[^>]+>|\$", "", c.replace("&lt;", "(lt)")).replace("(lt)", "<") for c in cells]
        vals = plain[2:] if t54 else plain[1:]
        methods = ("CRT" if t54 else "CCT", "CART", "Supervised", "RF")
        for m, v in zip(methods, vals[:4], strict=True):
            mean, _, sd = (p.strip() for p in v.partition("\\pm"))
            out[(names[cells[0]], m, "test_rmse" if t54 else "test_accuracy")] = (
                float(mean) * scale, None if not sd or sd.startswith("<") else float(sd) * scale)
        out[(names[cells[0]], methods[0], "depth")] = (float(vals[4]), None)
    return out


def test_contextual_published_numbers_are_the_seeds_tables_cell_by_cell() -> None:
    """experiments/papers/thesis_tables5_3_5_4.csv holds exactly the thesis' Tables 5.3 and 5.4, means and sds."""
    seed = _seed_contextual_tables(_seed_text("000_"))
    rows = _paper("experiments/papers/thesis_tables5_3_5_4.csv")
    ours = {(r["dataset"], r["method"], r["metric"]): (float(r["value"]), float(r["sd"]) if r["sd"] else None)
            for r in rows}
    assert len(ours) == len(rows) and set(ours) == set(seed) and len(seed) == 10 * 5
    for k, (v, sd) in seed.items():
        assert ours[k][0] == pytest.approx(v, rel=1e-12), k
        assert (ours[k][1] is None) == (sd is None) and (sd is None or ours[k][1] == pytest.approx(sd, rel=1e-12)), k


def _seed_born_again_tables(text: str) -> dict[tuple[str, str, str], float]:
    """Seed 003's Tables 2-4 cell by cell: (code, method, metric) -> value. Table 2: depth and leaves per objective
    (D, L, DL); Table 3: the forest's leaves, the born-again tree's depth and leaves, BA+P's depth and leaves (its
    rows print 5 numbers under 6 headings; the last two are BA+P's, as ``benchmarks/born_again.py`` reads them);
    Table 4: accuracy and F1 of RF, BA and BA+P."""
    lines = text.splitlines()
    codes = ("BC", "CP", "FI", "HT", "PD", "SE")
    tables = [[ln.split("\t") for ln in lines[i + 1:i + 7]] for i, ln in enumerate(lines)
              if ln.startswith("\t") and lines[i + 1].startswith("BC\t")]
    assert len(tables) == 3 and all([r[0] for r in t] == list(codes) for t in tables)
    out: dict[tuple[str, str, str], float] = {}
    for t2, t3, t4 in zip(*tables, strict=True):
        code = t2[0]
        v2, v3, v4 = ([float(v) for v in r[1:] if v.strip()] for r in (t2, t3, t4))
        for j, obj in enumerate(("D", "L", "DL")):
            out[(code, f"BA-{obj}", "depth")], out[(code, f"BA-{obj}", "n_leaves")] = v2[2 * j], v2[2 * j + 1]
        assert len(v3) == 5 and v3[1:3] == v2[0:2], code  # BA's depth and leaves: Table 2's objective D
        out[(code, "BA+P", "depth")], out[(code, "BA+P", "n_leaves")] = v3[3], v3[4]
        for j, m in enumerate(("RF", "BA", "BA+P")):
            out[(code, m, "test_accuracy")], out[(code, m, "test_f1")] = v4[2 * j], v4[2 * j + 1]
    return out


def test_born_again_published_numbers_are_the_seeds_tables_cell_by_cell() -> None:
    """experiments/papers/born_again_tables2_4.csv holds exactly seed 003's Tables 2-4 (6 data sets)."""
    seed = _seed_born_again_tables(_seed_text("003_"))
    rows = _paper("experiments/papers/born_again_tables2_4.csv")
    ours = {(r["dataset"], r["method"], r["metric"]): float(r["value"]) for r in rows}
    assert len(ours) == len(rows) and ours == seed and len(seed) == 6 * (6 + 2 + 6)


def _seed_tmo_tables(text: str) -> dict[tuple[str, str], tuple[float, float]]:
    """The thesis' Tables 3.4-3.6 (seed 000 lines 965-1031) cell by cell: (data set, method) -> (mean, sd) in %,
    the three tables in order (depths 2, 3, 4), 14 rows each; "-" (OCT on phishing at depth 4) left out."""
    lines = text.splitlines()
    heads = [i for i, ln in enumerate(lines) if ln.startswith("Dataset\tDimension\tCART\tTAO\tTMO\tOCT")]
    assert len(heads) == 3
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for depth, at in zip((2, 3, 4), heads, strict=True):
        for ln in lines[at + 1:at + 15]:
            cells = [re.sub(r"<[^>]+>|\$", "", c).replace("\\pm", "±").strip() for c in ln.split("\t")]
            for m, cell in zip(("CART", "TAO", "TMO", "OCT"), cells[2:6], strict=True):
                if cell != "-":
                    mean, sd = (float(v) for v in cell.split("±"))
                    out[(cells[0].lower(), f"{m}-D{depth}")] = (mean, sd)
    return out


def test_tmo_published_numbers_are_the_seeds_tables_cell_by_cell() -> None:
    """experiments/papers/thesis_tables3_4_6.csv holds exactly the thesis' Tables 3.4-3.6, means and sds; the four
    sets that are not the paper's data here are marked not counted."""
    seed = _seed_tmo_tables(_seed_text("000_"))
    names = {"a2a": "a2a", "a4a": "a4a", "biodeg": "biodeg", "breast": "wpbc", "diabetes": "pima", "digits": "digits",
             "heart": "heart", "ionosphere": "ionosphere", "libras": "libras", "parkinsons": "parkinsons",
             "phishing": "phishing", "spam": "spambase", "spectf": "spectf", "sonar": "sonar"}
    rows = _paper("experiments/papers/thesis_tables3_4_6.csv")
    ours = {(r["dataset"], r["method"]): (round(100 * float(r["value"]), 2), round(100 * float(r["sd"]), 2))
            for r in rows}
    assert len(ours) == len(rows) == len(seed) == 14 * 12 - 1
    assert ours == {(names[d], m): v for (d, m), v in seed.items()}
    not_counted = {r["dataset"] for r in rows if r["note"].startswith(NOT_COUNTED_NOTE)}
    assert not_counted == {"wpbc", "digits", "heart", "libras"}
