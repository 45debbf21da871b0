"""Every notebook of notebooks/ runs top to bottom; each asserts what matters in its own cells (the certificate,
faithfulness, accuracy against CART, ...), so an error output fails the test.

The notebooks are stored executed, and their pages in the site (docs/notebooks/) are what docs/notebooks.py makes
of the stored notebooks: the fast tests below render them again without running anything and compare, so a
notebook edited without running ``python docs/notebooks.py`` fails here."""

import base64
import doctest
import importlib.util
import re
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="install the [test] extra to run notebooks")
nbclient = pytest.importorskip("nbclient", reason="install the [test] extra to run notebooks")

REPO = Path(__file__).parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def _docs_notebooks():
    path = REPO / "docs" / "notebooks.py"
    spec = importlib.util.spec_from_file_location("docs_notebooks", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


DOCNB = _docs_notebooks()


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_executes(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "train accuracy" in text
    if path.name == "olct_from_blocks.ipynb":
        assert "certificate ok" in text


def test_there_is_a_notebook() -> None:
    assert NOTEBOOKS, "notebooks/ should hold the OLCT-from-blocks notebook"


# ------------------------------------------------------------------------------ the stored, executed notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_stored_notebook_is_executed_and_clean(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), \
        f"{path.name} is stored unexecuted or partly executed: run `python docs/notebooks.py {path.stem}`"
    outputs = [o for c in code for o in c.outputs]
    assert outputs and not [o for o in outputs if o.output_type == "error"]
    assert "train accuracy" in "".join(o.get("text", "") for o in outputs)
    assert not [c for c in nb.cells if "execution" in c.metadata], "timestamps left in the cells' metadata"
    assert nb.metadata.get("language_info") == {"name": "python"}  # no interpreter version to diff


def test_stored_notebooks_hold_pictures() -> None:
    """Every notebook that draws (a ``.plot(`` in its code) stores its picture."""
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        draws = any(".plot(" in c.source for c in nb.cells if c.cell_type == "code")
        pngs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
        assert bool(pngs) == draws, path.name


# ------------------------------------------------------------------------------ the pages of the site
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_page_is_what_docs_notebooks_py_writes(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    page = DOCNB.render(nb, path.stem)
    stale = f"docs/notebooks/{path.stem}.md is stale: run `python docs/notebooks.py {path.stem}`"
    assert (DOCNB.PAGES / f"{path.stem}.md").read_text() == page.text, stale
    on_disk = {p.name for p in DOCNB.IMG.glob(f"{path.stem}-*.png")}
    assert on_disk == set(page.images), stale
    for name, data in page.images.items():
        assert (DOCNB.IMG / name).read_bytes() == data, stale
    # an independent count: one picture per PNG output, the same bytes as stored base64 in the notebook
    stored = [base64.b64decode(o.data["image/png"]) for c in nb.cells if c.cell_type == "code"
              for o in c.outputs if "image/png" in o.get("data", {})]
    assert list(page.images.values()) == stored


def test_pages_link_only_images_that_exist() -> None:
    pages = sorted(DOCNB.PAGES.glob("*.md"))
    assert {p.stem for p in pages} == {p.stem for p in NOTEBOOKS} | {"index"}
    linked = 0
    for page in pages:
        for target in _IMAGE.findall(page.read_text()):
            assert (page.parent / target).resolve().is_file(), f"{page.name} links a missing image {target}"
            linked += 1
    assert linked == len(list(DOCNB.IMG.glob("*.png")))  # and every image is linked


def test_index_page_and_site_nav_list_every_notebook() -> None:
    yaml = pytest.importorskip("yaml")
    pages = [DOCNB.render(nbformat.read(p, as_version=4), p.stem) for p in NOTEBOOKS]
    assert (DOCNB.PAGES / "index.md").read_text() == DOCNB.index_page(pages), \
        "docs/notebooks/index.md is stale: run `python docs/notebooks.py --no-execute`"
    config = (REPO / "mkdocs.yml").read_text()
    nav = yaml.safe_load(config)["nav"]
    section = next(item["Notebooks"] for item in nav if isinstance(item, dict) and "Notebooks" in item)
    listed = {next(iter(e.values())) for e in section}
    assert listed == {f"notebooks/{p.stem}.md" for p in NOTEBOOKS} | {"notebooks/index.md"}
    assert "notebooks.py" in yaml.safe_load(config)["exclude_docs"].split()
    assert "(notebooks/index.md)" in (REPO / "docs" / "gallery.md").read_text()


# ------------------------------------------------------------------------------ docs/notebooks.py's pieces
def test_docs_notebooks_doctests() -> None:
    result = doctest.testmod(DOCNB, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 2 and result.failed == 0


def test_relink_keeps_targets_in_docs_and_refuses_others() -> None:
    md = "see [a](../docs/references.md#x), [b](https://e.org/a.md), [c](#here), [d](trees.ipynb)"
    assert DOCNB.relink(md, "t") == ("see [a](../references.md#x), [b](https://e.org/a.md), [c](#here), "
                                     "[d](trees.md)")
    with pytest.raises(ValueError, match="leads out of docs"):
        DOCNB.relink("[e](../pyproject.toml)", "t")


def test_shorten_and_fences() -> None:
    text = "\n".join(f"line {i}" for i in range(100))
    short = DOCNB.shorten(text, max_lines=5, max_chars=4)
    assert short.split("\n") == ["line ...", "line ...", "line ...", "line ...", "line ...",
                                 "... (95 more lines in the notebook)"]
    assert DOCNB.shorten("a\nb\n") == "a\nb"
    fence = DOCNB._fence("print('```')", "python")
    assert fence[0] == "````python" and fence[2] == "````"


def test_render_of_a_small_notebook(tmp_path: Path) -> None:
    png = base64.b64encode(b"\x89PNG fake").decode()
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title\n\ntext"),
        nbformat.v4.new_code_cell("x = 1\nx", execution_count=1, outputs=[
            nbformat.v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=1)]),
        nbformat.v4.new_code_cell("draw()", execution_count=2, outputs=[
            nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"}),
            nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})]),
        nbformat.v4.new_code_cell("   "),
    ])
    page = DOCNB.render(nb, "small")
    assert page.title == "Title"
    assert list(page.images) == ["small-1.png", "small-2.png"]
    assert page.images["small-1.png"] == b"\x89PNG fake"
    assert "```python\nx = 1\nx\n```\n\n```text\n1\n```" in page.text
    assert "<Figure>" not in page.text  # the picture, not its repr
    assert _IMAGE.findall(page.text) == ["../img/notebooks/small-1.png", "../img/notebooks/small-2.png"]
    assert page.text.count("```python") == 2  # the blank cell is left out


def test_clean_numbers_cells_and_drops_timestamps() -> None:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("1", execution_count=2, metadata={"execution": {"t": "2026"}}, outputs=[
            nbformat.v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=2)]),
        nbformat.v4.new_code_cell("2", execution_count=3)])
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.7"}
    DOCNB.clean(nb)
    assert [c.execution_count for c in nb.cells] == [1, 2]
    assert nb.cells[0].outputs[0].execution_count == 1
    assert "execution" not in nb.cells[0].metadata and nb.metadata["language_info"] == {"name": "python"}


def test_unknown_notebook_names_are_refused() -> None:
    with pytest.raises(ValueError, match="names: unknown notebooks"):
        DOCNB.notebook_paths(["no-such-notebook"])
