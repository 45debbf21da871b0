"""The executed notebooks in the site: runs notebooks/*.ipynb, stores them with their outputs, writes their pages.

Regenerate (a few minutes on a busy 2-core machine)::

    python docs/notebooks.py                   # execute every notebook, store it, write its page and pictures
    python docs/notebooks.py trees tmo         # some notebooks (names without .ipynb)
    python docs/notebooks.py --no-execute      # only the pages and pictures, from the stored notebooks

Each notebook runs top to bottom with nbclient in the kernel ``python3`` of the running interpreter (a timeout per
cell), with pictures at a modest resolution (:data:`DPI`), and is written back to ``notebooks/`` with its outputs,
so that GitHub shows the pictures; the execution metadata (timestamps) and the interpreter's version are dropped
so that a re-run diffs only where an output changed. Its page, ``docs/notebooks/NAME.md``, shows the markdown cells
as they are (links into ``docs/`` rewritten for the page's place), each code cell as a Python fence, text outputs
as fences (cut after :data:`MAX_LINES` lines) and pictures as ``docs/img/notebooks/NAME-K.png``.
``docs/notebooks/index.md`` lists the pages. Every file is written atomically.

tests/test_notebook.py checks that the pages and pictures are what :func:`render` makes of the stored notebooks
(without running them), so a notebook edited without running this script fails the tests.
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from treeopt_dsl.io import atomic_binary

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NOTEBOOKS = ROOT / "notebooks"
PAGES = HERE / "notebooks"
IMG = HERE / "img" / "notebooks"
DPI = 72  #: the pictures' resolution (a notebook may set its own with ``plt.rcParams["figure.dpi"]``)
TIMEOUT = 300  #: seconds per cell
MAX_LINES = 40  #: a text output's lines shown on its page (the stored notebook keeps them all)
MAX_LINE_CHARS = 200  #: a longer line is cut on the page

#: run before the notebook's first cell, then removed from it: the pictures' resolution
SETUP = f'import matplotlib.pyplot as _plt\n_plt.rcParams["figure.dpi"] = {DPI}\ndel _plt'
_LINK = re.compile(r"(\]\()([^)\s]+)(\))")


@dataclass
class Page:
    """A notebook's page: its markdown ``text`` and its pictures ``images`` (file name -> PNG bytes)."""

    name: str
    title: str
    text: str
    images: dict[str, bytes] = field(default_factory=dict)


def notebook_paths(names: list[str] | None = None) -> list[Path]:
    """The notebooks of ``notebooks/`` (all, sorted, or those ``names``, without ``.ipynb``)."""
    known = {p.stem: p for p in sorted(NOTEBOOKS.glob("*.ipynb"))}
    if not names:
        return list(known.values())
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"names: unknown notebooks {unknown}; known: {', '.join(known)}")
    return [known[n] for n in names]


def execute(path: Path, timeout: int = TIMEOUT) -> Any:
    """Run the notebook at ``path`` top to bottom in its own directory; returns it with its outputs, cleaned
    (:func:`clean`). An error in a cell raises ``nbclient.exceptions.CellExecutionError``."""
    import nbclient  # only to execute: rendering the stored notebooks does not need it

    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(SETUP))
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", coalesce_streams=True,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    nb.cells.pop(0)
    return clean(nb)


def clean(nb: Any) -> Any:
    """Drop what changes on every run without changing an output: cells' execution metadata (timestamps), the
    interpreter's version; number the executed cells 1, 2, ... (as if the setup cell had not run)."""
    nb.metadata["language_info"] = {"name": "python"}
    count = 0
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is not None:
            count += 1
            cell.execution_count = count
        for out in cell.get("outputs", []):
            if "execution_count" in out:
                out.execution_count = cell.execution_count
    return nb


def write_bytes(path: Path, data: bytes) -> Path:
    """``data`` to ``path`` atomically (a temporary file moved into place); creates the directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_binary(path) as fh:
        fh.write(data)
    return path


def store(nb: Any, path: Path) -> Path:
    """The notebook ``nb`` written to ``path`` (nbformat's JSON, one space indent, a final newline)."""
    nbformat.validate(nb)
    return write_bytes(path, (nbformat.writes(nb) + "\n").encode())


def _fence(text: str, lang: str = "") -> list[str]:
    """``text`` in a code fence longer than any run of backticks inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [ticks + lang, text.rstrip("\n"), ticks, ""]


def shorten(text: str, max_lines: int = MAX_LINES, max_chars: int = MAX_LINE_CHARS) -> str:
    """``text`` cut after ``max_lines`` lines and each line after ``max_chars`` characters, saying so.

    >>> shorten("a\\nb\\nc\\n", max_lines=2)
    'a\\nb\\n... (1 more line in the notebook)'
    """
    lines = text.rstrip("\n").split("\n")
    lines = [ln if len(ln) <= max_chars else ln[:max_chars] + " ..." for ln in lines]
    if len(lines) > max_lines:
        rest = len(lines) - max_lines
        lines = lines[:max_lines] + [f"... ({rest} more line{'s' if rest > 1 else ''} in the notebook)"]
    return "\n".join(lines)


def relink(markdown: str, name: str) -> str:
    """Rewrite the relative links of a notebook's markdown (written for ``notebooks/``) for its page in
    ``docs/notebooks/``: a link into ``docs/`` keeps its target; a link to another notebook goes to its page."""
    def fix(m: re.Match[str]) -> str:
        target = m.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^/", target):  # a URL, an anchor of the page, an absolute path
            return m.group(0)
        path, _, anchor = target.partition("#")
        resolved = (NOTEBOOKS / path).resolve()
        if resolved.suffix == ".ipynb" and resolved.parent == NOTEBOOKS:
            resolved = PAGES / f"{resolved.stem}.md"
        if not resolved.is_relative_to(HERE):
            raise ValueError(f"notebook {name!r}: the link {target!r} leads out of docs/, which the site cannot "
                             "show: link a page of docs/ (or a full URL)")
        new = os.path.relpath(resolved, PAGES).replace(os.sep, "/") + (f"#{anchor}" if anchor else "")
        return m.group(1) + new + m.group(3)

    return _LINK.sub(fix, markdown)


def title_of(nb: Any, name: str) -> str:
    """The first markdown heading of ``nb`` (``name`` when there is none)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#+\s+(.+?)\s*$", cell.source, flags=re.M)
            if m:
                return m.group(1)
    return name


def render(nb: Any, name: str) -> Page:
    """The page of the executed notebook ``nb`` (stored as ``notebooks/NAME.ipynb``) and its pictures.

    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Hello"),
    ...                                      nbformat.v4.new_code_cell("print(1)", outputs=[
    ...                                          nbformat.v4.new_output("stream", name="stdout", text="1\\n")])])
    >>> print(render(nb, "hello").text)  # doctest: +NORMALIZE_WHITESPACE
    <!-- generated by docs/notebooks.py from notebooks/hello.ipynb: edit the notebook, then run the script -->
    # Hello
    ```python
    print(1)
    ```
    ```text
    1
    ```
    <BLANKLINE>
    *The notebook `notebooks/hello.ipynb`, executed by `docs/notebooks.py`.*
    <BLANKLINE>
    """
    out = [f"<!-- generated by docs/notebooks.py from notebooks/{name}.ipynb: edit the notebook, then run the "
           "script -->", ""]
    images: dict[str, bytes] = {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            out += [relink(cell.source.strip("\n"), name), ""]
            continue
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        out += _fence(cell.source, "python")
        for o in cell.get("outputs", []):
            kind = o.get("output_type")
            if kind == "stream":
                out += _fence(shorten(o.get("text", "")), "text")
            elif kind == "error":
                out += _fence(shorten(f"{o.get('ename')}: {o.get('evalue')}"), "text")
            elif kind in ("execute_result", "display_data"):
                data = o.get("data", {})
                if "image/png" in data:
                    file = f"{name}-{len(images) + 1}.png"
                    images[file] = base64.b64decode(data["image/png"])
                    out += [f"![{name}, picture {len(images)}](../img/notebooks/{file})", ""]
                elif "text/plain" in data:
                    out += _fence(shorten(data["text/plain"]), "text")
    out += [f"*The notebook `notebooks/{name}.ipynb`, executed by `docs/notebooks.py`.*", ""]
    return Page(name, title_of(nb, name), "\n".join(out), images)


def index_page(pages: list[Page]) -> str:
    """docs/notebooks/index.md: a line per notebook page."""
    out = ["# Notebooks", "",
           "The notebooks of `notebooks/`, executed, with their outputs and pictures (GitHub shows the stored",
           "notebooks the same way). `python docs/notebooks.py` runs them again and rewrites these pages; more",
           "pictures, one per kind of model, in the [gallery](../gallery.md).", ""]
    out += [f"- [{p.title}]({p.name}.md) (`notebooks/{p.name}.ipynb`)" for p in pages]
    return "\n".join(out) + "\n"


def write_page(page: Page) -> list[Path]:
    """Write ``page`` and its pictures; remove the pictures an earlier version of the page had and this one has
    not. Returns the files written."""
    written = [write_bytes(IMG / file, data) for file, data in page.images.items()]
    for old in IMG.glob(f"{page.name}-*.png"):
        if re.fullmatch(rf"{re.escape(page.name)}-\d+\.png", old.name) and old.name not in page.images:
            old.unlink()
    written.append(write_bytes(PAGES / f"{page.name}.md", page.text.encode()))
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="notebooks to run, without .ipynb (default: all)")
    ap.add_argument("--no-execute", action="store_true", help="only write the pages from the stored notebooks")
    ap.add_argument("--timeout", type=int, default=TIMEOUT, help=f"seconds per cell (default {TIMEOUT})")
    args = ap.parse_args(argv)
    try:
        paths = notebook_paths(args.names)
    except ValueError as exc:
        ap.error(str(exc))
    for path in paths:
        if args.no_execute:
            nb = nbformat.read(path, as_version=4)
        else:
            print(f"running {path.name} ...", flush=True)
            nb = execute(path, timeout=args.timeout)
            store(nb, path)
        for p in write_page(render(nb, path.stem)):
            print(p.relative_to(ROOT), flush=True)
    pages = [render(nbformat.read(p, as_version=4), p.stem) for p in notebook_paths()]
    print(write_bytes(PAGES / "index.md", index_page(pages).encode()).relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
