"""Every notebook of notebooks/ runs top to bottom; each asserts what matters in its own cells (the certificate,
faithfulness, accuracy against CART, ...), so an error output fails the test."""

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="install the [test] extra to run notebooks")
nbclient = pytest.importorskip("nbclient", reason="install the [test] extra to run notebooks")

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
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
