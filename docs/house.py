"""Draw the house (docs/img/house.png): the package's folders on their layers and every import between two folders,
read from the code (module level, inside functions and under ``TYPE_CHECKING``), so the picture cannot drift from
the code. Every arrow must point down; the script fails otherwise.

    .venv/bin/python docs/house.py            # writes docs/img/house.png
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

REPO = Path(__file__).resolve().parent.parent
TREES = {"treeopt_dsl": "treeopt_dsl", "formulations": "treeopt_dsl.formulations", "backends": "treeopt_dsl.backends"}
#: the layers, top (faces) to bottom (what everything stands on), and what each holds
LAYERS = [
    ("faces", ["cli", "experiments", "estimator", "bornagain", "contextual", "export"]),
    ("formulations", ["formulations"]),
    ("starts", ["starts"]),
    ("engines", ["exact"]),
    ("models", ["models"]),
    ("blocks", ["blocks"]),
    ("composition", ["formulation", "roles"]),
    ("pipeline", ["solve", "lazy"]),
    ("routes", ["backends"]),
    ("data, IR, files", ["datasets", "data", "topology", "ir", "io", "result", "progress"]),
    ("ground", ["defaults", "numeric", "errors", "registry"]),
]
COLORS = {"faces": "#f4cccc", "formulations": "#e6d7f2", "starts": "#d9ead3", "engines": "#d9ead3",
          "models": "#fce5cd", "blocks": "#fff2cc", "composition": "#cfe2f3", "pipeline": "#cfe2f3",
          "routes": "#c9daf8", "data, IR, files": "#eeeeee", "ground": "#dddddd"}


def modules() -> dict[str, Path]:
    out = {}
    for top, pkg in TREES.items():
        for path in sorted((REPO / top).rglob("*.py")):
            rel = path.relative_to(REPO / top).with_suffix("")
            out[".".join([pkg, *[p for p in rel.parts if p != "__init__"]])] = path
    return out


def folder_edges() -> Counter[tuple[str, str]]:
    """How many imports go from one folder (a subpackage or a root module) to another."""
    mods = modules()
    edges: Counter[tuple[str, str]] = Counter()
    for name, path in mods.items():
        src = name.split(".")[1] if "." in name else None
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("treeopt_dsl."):
                dst = node.module.split(".")[1]
            elif isinstance(node, ast.Import) and node.names[0].name.startswith("treeopt_dsl."):
                dst = node.names[0].name.split(".")[1]
            else:
                continue
            if src and dst != src:
                edges[(src, dst)] += 1
    return edges


def main() -> int:
    where = {f: (i, j, len(fs)) for i, (_, fs) in enumerate(LAYERS) for j, f in enumerate(fs)}
    edges = folder_edges()
    up = [(a, b) for (a, b) in edges if a in where and b in where and where[b][0] < where[a][0]]
    unplaced = sorted({f for e in edges for f in e if f not in where})
    if up or unplaced:
        print(f"arrows that run up: {up}; folders without a layer: {unplaced}", file=sys.stderr)
        return 1
    fig, ax = plt.subplots(figsize=(13, 11))
    ax.set_xlim(0, 13)
    ax.set_ylim(-0.6, len(LAYERS))
    ax.axis("off")
    pos = {}
    for i, (layer, fs) in enumerate(LAYERS):
        y = len(LAYERS) - 1 - i
        ax.text(0.1, y + 0.35, layer, fontsize=10, color="#555555", va="center")
        width = 10.5 / len(fs)
        for j, f in enumerate(fs):
            x = 2.2 + j * width
            ax.add_patch(FancyBboxPatch((x + 0.08, y + 0.12), width - 0.16, 0.5, boxstyle="round,pad=0.02",
                                        fc=COLORS[layer], ec="#444444", lw=0.8))
            is_pkg = (REPO / "treeopt_dsl" / f).is_dir() or f in ("formulations", "backends")
            ax.text(x + width / 2, y + 0.37, f + ("/" if is_pkg else ".py"), ha="center", va="center", fontsize=10)
            pos[f] = (x + width / 2, y + 0.12, y + 0.62)
    same = 0
    for (a, b), n in edges.items():
        if a not in pos or b not in pos:
            continue
        if where[a][0] == where[b][0]:  # within a layer (the CLI runs the experiments, a dataset is a Dataset)
            same += n
            continue
        (xa, ya_bottom, _), (xb, _, yb_top) = pos[a], pos[b]
        ax.add_patch(FancyArrowPatch((xa, ya_bottom), (xb, yb_top), arrowstyle="-|>", mutation_scale=7,
                                     color="#3c78d8", alpha=0.25 + min(0.5, n / 40), lw=0.4 + min(2.0, n / 15),
                                     connectionstyle="arc3,rad=0.05"))
    ax.set_title(f"treeopt-dsl: folders by layer; the {sum(edges.values()) - same} imports between layers all point "
                 f"down ({same} within a layer)", fontsize=12)
    out = REPO / "docs" / "img" / "house.png"
    out.parent.mkdir(exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    print(f"wrote {out.relative_to(REPO)}: {sum(edges.values())} imports between {len(pos)} folders, none up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
