"""The house keeps its layout: read from the code's own imports (module level, inside functions and under
``TYPE_CHECKING`` alike), no import circle spans two folders, the core imports no starts, engines or faces, blocks
import no backends, models or formulations, nothing outside ``cli/`` imports it, a solver's name is compared only in
the route registry's folder, the package root holds at most 12 modules, and no import of the package's own modules
sits inside a function (docs/DESIGN.md, "The house"; third-party imports may, for optional and heavy libraries)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: the three source trees and the package names they install as
TREES = {"treeopt_dsl": "treeopt_dsl", "formulations": "treeopt_dsl.formulations", "backends": "treeopt_dsl.backends"}
#: root modules that are the core (with the IR, the topology and the file formats)
CORE = {"treeopt_dsl.errors", "treeopt_dsl.defaults", "treeopt_dsl.numeric", "treeopt_dsl.data",
        "treeopt_dsl.topology", "treeopt_dsl.ir", "treeopt_dsl.io", "treeopt_dsl.result", "treeopt_dsl.progress",
        "treeopt_dsl.lazy", "treeopt_dsl.solve", "treeopt_dsl.formulation", "treeopt_dsl.roles"}
#: what the core may not import: heuristics, engines, the families above the blocks and every face
ABOVE_CORE = {"treeopt_dsl.blocks", "treeopt_dsl.models", "treeopt_dsl.starts", "treeopt_dsl.exact",
              "treeopt_dsl.formulations", "treeopt_dsl.estimator", "treeopt_dsl.cli", "treeopt_dsl.experiments",
              "treeopt_dsl.bornagain", "treeopt_dsl.contextual", "treeopt_dsl.export"}
#: the route registry's modules the core may use (the registry, the protocols, the dialects, native helpers)
REGISTRY = {"treeopt_dsl.backends", "treeopt_dsl.backends.base", "treeopt_dsl.backends.dialects",
            "treeopt_dsl.backends.engine", "treeopt_dsl.backends.native"}
SOLVER_NAMES = {"highs", "cbc", "gurobi", "scip", "ipopt", "streed"}
MAX_ROOT_MODULES = 12


def _modules() -> dict[str, Path]:
    out = {}
    for top, pkg in TREES.items():
        for path in sorted((REPO / top).rglob("*.py")):
            rel = path.relative_to(REPO / top).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([pkg, *parts])] = path
    return out


MODULES = _modules()


def _resolve(name: str, node: ast.ImportFrom | ast.Import, here: str) -> list[str]:
    """The package modules an import statement of module ``here`` names (each name of ``from x import a, b`` that
    is a module, else ``x`` itself)."""
    if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            pkg = here.split(".") if MODULES[here].name == "__init__.py" else here.split(".")[:-1]
            base = ".".join(pkg[: len(pkg) - node.level + 1] + ([node.module] if node.module else []))
        targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    out = []
    for t in targets:
        while t and t not in MODULES:
            t = t.rpartition(".")[0]
        if t.startswith("treeopt_dsl") and t != name:
            out.append(t)
    return out


def _imports_of(name: str, path: Path) -> list[tuple[str, str, bool, int, str]]:
    """The package imports of one module: ``(importer, imported, inside a function, line, the line's text)``."""
    text = path.read_text()
    lines = text.splitlines()
    rows = []

    def walk(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in _resolve(name, child, name):
                    rows.append((name, target, inside, child.lineno, lines[child.lineno - 1]))
            else:
                walk(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(ast.parse(text), False)
    return rows


def _imports() -> list[tuple[str, str, bool, int, str]]:
    """Every import of a package module by a package module."""
    return [row for name, path in MODULES.items() for row in _imports_of(name, path)]


IMPORTS = _imports()


def folder(module: str) -> str:
    """A subpackage of the package (``treeopt_dsl.starts``) or one root module (``treeopt_dsl.solve``)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_spans_two_folders() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for src, dst, *_ in IMPORTS:
        if folder(src) != folder(dst) and folder(src) != "treeopt_dsl" and folder(dst) != "treeopt_dsl":
            edges[folder(src)].add(folder(dst))
    assert _cycles(edges) == []


def test_the_root_holds_few_modules() -> None:
    root = sorted(m for m, p in MODULES.items() if m.count(".") == 1 and p.name != "__init__.py"
                  and p.parent == REPO / "treeopt_dsl")
    assert len(root) <= MAX_ROOT_MODULES, root


def test_no_own_import_inside_a_function() -> None:
    inside = [(src, line, text) for src, _, within, line, text in IMPORTS if within]
    assert inside == [], "the package's own imports sit at the top of their module (a circle is a layering fault)"


@pytest.mark.parametrize(("who", "forbidden"), [
    (CORE, ABOVE_CORE),
    ({"treeopt_dsl.blocks"}, {"treeopt_dsl.backends", "treeopt_dsl.models", "treeopt_dsl.formulations",
                              "treeopt_dsl.starts", "treeopt_dsl.exact"}),
])
def test_layers_import_downward(who: set[str], forbidden: set[str]) -> None:
    bad = [(src, dst) for src, dst, *_ in IMPORTS if folder(src) in who
           and any(dst == f or dst.startswith(f + ".") for f in forbidden)]
    assert bad == []


def test_the_core_reaches_routes_only_through_the_registry() -> None:
    bad = [(src, dst) for src, dst, *_ in IMPORTS if folder(src) in CORE
           and dst.startswith("treeopt_dsl.backends") and dst not in REGISTRY]
    assert bad == []


def test_nothing_outside_the_command_line_imports_it() -> None:
    bad = [(src, dst) for src, dst, *_ in IMPORTS if dst.startswith("treeopt_dsl.cli")
           and not src.startswith("treeopt_dsl.cli")]
    assert bad == []


def test_a_solver_name_is_compared_only_in_the_route_registry() -> None:
    """``solver == "streed"`` and the like: the registry (``backends/``, the routes and their dialects) says which
    route answers a name; nowhere else does the code switch on one."""
    bad = []
    for name, path in MODULES.items():
        if name.startswith("treeopt_dsl.backends"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            consts = [n for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in SOLVER_NAMES]
            if consts:
                bad.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert bad == []


def test_the_tests_mirror_the_package_folders() -> None:
    """Each folder of ``tests/`` is a folder of the package (``io_`` for ``io``, a standard library name on
    ``sys.path``; ``backends/conformance`` the suite every route passes)."""
    packages = {m.split(".")[1] for m in MODULES if m.count(".") >= 1 and (REPO / "treeopt_dsl" / m.split(".")[1])
                .is_dir()} | {"backends", "formulations"}
    folders = {p.name.rstrip("_") for p in (REPO / "tests").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= packages, folders - packages
