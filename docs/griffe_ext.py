"""griffe extensions for this site (mkdocs.yml loads them):

* :class:`DoctestFences`: doctest examples (``>>>`` lines and their output) in the docstrings become fenced
  ``pycon`` code, so Markdown does not read their brackets as links; reST literal blocks (``Example::``
  followed by an indented block) become fenced ``python`` code;
* :class:`CiteKeys`: a citation key in brackets (``[bertsimas-dunn-2017]``) and the reading list's numbers
  (``seed 001``) link to their entry in ``docs/references.md``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import griffe

REFERENCES = Path(__file__).with_name("references.md")
#: the reading list's numbers, as older docstrings cite them
SEEDS = {"000": "aldinucci-thesis-2024", "001": "blanquero-2020-sorct", "002": "gunluk-odt-categorical",
         "003": "vidal-schiffer-2020", "004": "aldinucci-memetic"}


def reference_keys() -> set[str]:
    """The keys of ``docs/references.md`` (its ``### key`` headings)."""
    return set(re.findall(r"^### ([a-z0-9-]+)$", REFERENCES.read_text(encoding="utf-8"), flags=re.M))


def link_citations(text: str, keys: set[str], page: str = "../references.md") -> str:
    """``[key]`` (a known key) and ``seed 00N`` as links to ``page#key``; code spans and fences untouched.

    >>> link_citations("OCT [bertsimas-dunn-2017], ``[x-y]``", {"bertsimas-dunn-2017"}, "refs.md")
    'OCT [[bertsimas-dunn-2017]](refs.md#bertsimas-dunn-2017), ``[x-y]``'
    >>> link_citations("S-ORCT (seed 001 line 9)", set(), "refs.md")
    'S-ORCT ([seed 001](refs.md#blanquero-2020-sorct) line 9)'
    """
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or line.lstrip().startswith(">>>"):
            out.append(line)
            continue
        parts = re.split(r"(``.*?``|`[^`]*`)", line)  # odd parts are code spans
        for i in range(0, len(parts), 2):
            parts[i] = re.sub(r"(?<!\[)\[([a-z0-9]+(?:-[a-z0-9]+)+)\](?![(\[])",
                              lambda m: f"[[{m[1]}]]({page}#{m[1]})" if m[1] in keys else m[0], parts[i])
            parts[i] = re.sub(r"\bseed (00[0-9])\b",
                              lambda m: f"[seed {m[1]}]({page}#{SEEDS[m[1]]})" if m[1] in SEEDS else m[0], parts[i])
        out.append("".join(parts))
    return "\n".join(out)


def fence_doctests(text: str) -> str:
    """``text`` with every doctest run and every ``::`` literal block wrapped in a code fence.

    >>> fence_doctests("Sum:\\n\\n>>> 1 + 1\\n2\\n\\nDone.").splitlines()
    ['Sum:', '', '```pycon', '>>> 1 + 1', '2', '```', '', 'Done.']
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith(">>>"):
            pad = line[: len(line) - len(stripped)]
            out.append(f"{pad}```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(f"{pad}```")
            continue
        if stripped.endswith("::") and not stripped.startswith(".."):
            pad = len(line) - len(stripped)
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and len(lines[j]) - len(lines[j].lstrip()) > pad:
                out.append(line[:-1] if stripped != "::" else "")  # "Example::" -> "Example:"
                block_pad = len(lines[j]) - len(lines[j].lstrip())
                body: list[str] = []
                while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) >= block_pad):
                    body.append(lines[j][block_pad:] if lines[j].strip() else "")
                    j += 1
                while body and not body[-1]:
                    body.pop()
                lang = "pycon" if body and body[0].startswith(">>>") else "python"
                out += ["", " " * pad + f"```{lang}", *(" " * pad + b if b else "" for b in body),
                        " " * pad + "```", ""]
                i = j
                continue
        out.append(line)
        i += 1
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence the doctests of every docstring griffe loads (see :func:`fence_doctests`)."""

    def on_object(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)


class CiteKeys(griffe.Extension):
    """Link citation keys and ``seed 00N`` numbers in every docstring (see :func:`link_citations`). Run it
    after :class:`DoctestFences` (code fences are left alone)."""

    def __init__(self) -> None:
        super().__init__()
        self.keys = reference_keys()

    def on_object(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = link_citations(obj.docstring.value, self.keys)
