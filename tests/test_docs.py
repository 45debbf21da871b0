"""The documentation's promises that a build does not check: the block catalogue names every block, every
cited reference key exists, the nav's pages exist, ``py.typed`` ships and the version is defined once.
(The site itself is built, warnings as errors, by ``.ci/test``: ``mkdocs build --strict``.)"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import inspect
import re
from pathlib import Path

import pytest

import treeopt_dsl
from treeopt_dsl import blocks as B
from treeopt_dsl.formulation import Block

tomllib = pytest.importorskip("tomllib")
ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_block_catalogue_names_every_block() -> None:
    text = (DOCS / "blocks.md").read_text()
    exported = [n for n in B.__all__ if inspect.isclass(getattr(B, n)) and issubclass(getattr(B, n), Block)
                and getattr(B, n) is not Block]
    missing = [n for n in exported if f"`{n}" not in text]
    assert not missing, f"docs/blocks.md does not list {missing}"


def test_every_cited_reference_key_exists() -> None:
    keys = set(re.findall(r"^### ([a-z0-9-]+)$", (DOCS / "references.md").read_text(), flags=re.M))
    assert {"aldinucci-thesis-2024", "bertsimas-dunn-2017", "blanquero-2020-sorct"} <= keys
    sources = [*DOCS.rglob("*.md"), *(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "treeopt_dsl").rglob("*.py")]
    cited = {(p.name, k) for p in sources for k in re.findall(r"references\.md#([a-z0-9-]+)", p.read_text())}
    assert cited, "no page cites a reference"
    year_keys = r"\[([a-z]+(?:-[a-z]+)*-(?:19|20)\d\d(?:-[a-z0-9]+)*)\]"  # [author-year...] in docstrings and pages
    cited |= {(p.name, k) for p in sources for k in re.findall(year_keys, p.read_text())}
    unknown = sorted((f, k) for f, k in cited if k not in keys)
    assert not unknown, f"cited keys with no entry in docs/references.md: {unknown}"


def test_nav_pages_exist() -> None:
    nav = re.findall(r":\s*([\w/]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), flags=re.M)
    assert "index.md" in nav and "blocks.md" in nav and "references.md" in nav
    assert [p for p in nav if not (DOCS / p).is_file()] == []


def test_py_typed_ships_and_the_version_is_defined_once() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert (ROOT / "treeopt_dsl" / "py.typed").is_file()
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["treeopt_dsl"]
    assert "version" not in config["project"] and "version" in config["project"]["dynamic"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "treeopt_dsl.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", treeopt_dsl.__version__)
    try:
        installed = importlib.metadata.version("treeopt-dsl")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        pytest.skip("treeopt-dsl is not installed")
    assert installed == treeopt_dsl.__version__


def test_changelog_names_the_current_version() -> None:
    assert f"## {treeopt_dsl.__version__}" in (ROOT / "CHANGELOG.md").read_text()


def _griffe_ext():  # docs/griffe_ext.py is the site's griffe extension module, not a package module
    pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location("griffe_ext", DOCS / "griffe_ext.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SPHINX_ROLE = re.compile(r":(?:py:)?[a-z]+:`")


def test_sphinx_roles_become_code_links_or_plain_code() -> None:
    ext = _griffe_ext()
    known = {"treeopt_dsl.solve.solve": "treeopt_dsl.solve.solve", "Model": "treeopt_dsl.ir.Model"}
    text = ("Use :func:`~treeopt_dsl.solve.solve` on a :class:`Model`, not :meth:`unknown.fit`;\n"
            ":mod:`the module <treeopt_dsl.solve.solve>`, ``:data:`kept```, :attr:`!plain`.\n"
            "```python\n:class:`in_a_fence`\n```")
    out = ext.rewrite_roles(text, known.get)
    assert '<autoref identifier="treeopt_dsl.solve.solve" optional>solve</autoref>' in out
    assert '<autoref identifier="treeopt_dsl.ir.Model" optional>Model</autoref>' in out
    assert "`unknown.fit`" in out and "`plain`" in out and ">the module</autoref>" in out
    assert "``:data:`kept```" in out and ":class:`in_a_fence`" in out  # code is left alone
    outside_code = re.sub(r"``.+?``(?!`)|```python\n.*?\n```", "", out, flags=re.S)
    assert not SPHINX_ROLE.search(outside_code)


def test_the_api_docstrings_keep_no_sphinx_role() -> None:
    """What mkdocstrings renders: every docstring of the three packages after the site's extensions."""
    ext = _griffe_ext()
    griffe = pytest.importorskip("griffe")
    extensions = griffe.load_extensions(ext.DoctestFences(), ext.SphinxRoles())
    left, linked = [], {}
    for package in ("treeopt_dsl", "backends", "formulations"):
        root = griffe.load(package, search_paths=[str(ROOT)], extensions=extensions, docstring_parser="numpy",
                           resolve_aliases=False)
        stack = [root]
        while stack:
            obj = stack.pop()
            stack += [m for m in obj.members.values() if not m.is_alias]
            text = obj.docstring.value if obj.docstring is not None else ""
            text = re.sub(r"``.+?``(?!`)|^\s*```.*?^\s*```", "", text, flags=re.S | re.M)
            if SPHINX_ROLE.search(text):
                left.append(obj.path)
            linked[obj.path] = text
    assert not left, f"Sphinx roles left in {left[:10]}"
    risk = linked["treeopt_dsl.estimator.scores.RiskScoreClassifier"]
    assert '<autoref identifier="treeopt_dsl.estimator.trees.OptimalTreeClassifier" optional>' in risk


def test_every_subpackage_has_an_api_page() -> None:
    """The API reference covers each subpackage of ``treeopt_dsl`` (the command line is documented by ``treeopt
    --help``; the IR has no page yet)."""
    pages = "\n".join(p.read_text() for p in (DOCS / "api").glob("*.md"))
    nav = (ROOT / "mkdocs.yml").read_text()
    assert [p.name for p in (DOCS / "api").glob("*.md") if f"api/{p.name}" not in nav] == []
    packages = sorted(p.parent.name for p in (ROOT / "treeopt_dsl").glob("*/__init__.py")
                      if not p.parent.is_symlink() and p.parent.name not in ("cli", "ir"))
    assert {"contextual", "experiments", "estimator"} <= set(packages)
    missing = [n for n in packages if not re.search(rf"^::: treeopt_dsl\.{n}(\.|$)", pages, flags=re.M)]
    assert missing == [], f"no docs/api page renders treeopt_dsl.{missing}"


@pytest.mark.slow
def test_getting_started_python_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's Python blocks, in order, in one namespace (about 12 s: one OLCT depth-2 solve, one risk card)."""
    blocks = re.findall(r"^```python\n(.*?)^```", (DOCS / "getting_started.md").read_text(), flags=re.S | re.M)
    assert len(blocks) == 5
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "getting_started.md", "exec"), namespace)  # the page's own examples, as written
    assert namespace["res"].status.value == "optimal" and namespace["res"].certificate.ok
    card = namespace["card"]
    assert card.result_.status.value == "optimal" and card.result_.certificate.ok
    assert card.model_.multiplier == card.result_.multiplier_search["multiplier"]
    assert list(namespace["pipe"][0].get_feature_names_out()) == ["size", "color=blue", "color=green", "color=red"]
    assert (tmp_path / "olct.lp").read_text().startswith("\\ olct:")
