"""griffe extensions for this site (mkdocs.yml loads them):

* :class:`DoctestFences`: doctest examples (``>>>`` lines and their output) in the docstrings become fenced
  ``pycon`` code, so Markdown does not read their brackets as links; reST literal blocks (``Example::``
  followed by an indented block) become fenced ``python`` code;
* :class:`CiteKeys`: a citation key in brackets (``[bertsimas-dunn-2017]``) and the reading list's numbers
  (``seed 001``) link to their entry in ``docs/references.md``;
* :class:`SphinxRoles`: the Sphinx roles of the docstrings (``:class:`X```, ``:func:`~a.b.f```, ``:meth:``,
  ``:mod:``, ``:data:``, ``:attr:``, ...) become code that links to the object's API entry when the site renders
  it, and plain code otherwise (the numpy docstring style does not read reST roles).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import escape
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


#: a Sphinx role (``:class:`X```, ``:py:func:`~a.b```), or a code span (left alone), whichever starts first
ROLE = re.compile(r":(?:py:)?(?P<role>[a-z]+):`(?P<body>[^`]+)`|``.+?``(?!`)|`[^`]*`")


def role_title_and_target(body: str) -> tuple[str, str]:
    """The text a role shows and the object it names: ``~a.b.c`` shows ``c``, ``text <a.b>`` shows ``text``,
    ``!x`` shows ``x`` and names nothing (the empty target).

    >>> role_title_and_target("~treeopt_dsl.solve.solve"), role_title_and_target("the model <Model>")
    (('solve', 'treeopt_dsl.solve.solve'), ('the model', 'Model'))
    """
    body = body.strip()
    explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", body)
    if explicit:
        return explicit[1], explicit[2].strip().lstrip("~.")
    if body.startswith("!"):
        return body[1:], ""
    target = body.lstrip("~.")
    return (target.rsplit(".", 1)[-1] if body.startswith("~") else target), target


def rewrite_roles(text: str, resolve: Callable[[str], str | None]) -> str:
    """``text`` with every Sphinx role as inline code: a link (an optional autoref, so an object the site does not
    render stays plain code) when ``resolve(target)`` gives the object's full path, plain code when it gives
    ``None``. Code spans, code fences and doctest lines are left alone.

    >>> rewrite_roles("See :class:`~a.B` and ``:func:`x```.", {"a.B": "a.B"}.get)
    'See <code><autoref identifier="a.B" optional>B</autoref></code> and ``:func:`x```.'
    >>> rewrite_roles(":meth:`fit` of :mod:`nowhere`", lambda target: None)
    '`fit` of `nowhere`'
    >>> rewrite_roles("the :class:`~a.\\n    B` class", {"a.B": "a.B"}.get)
    'the <code><autoref identifier="a.B" optional>B</autoref></code> class'
    """

    def replace(match: re.Match[str]) -> str:
        if match["role"] is None:  # a code span
            return match[0]
        title, target = role_title_and_target(match["body"])
        path = resolve(target) if target and match["role"] not in ("ref", "doc") else None
        if path is None:
            return f"``{title}``" if "`" in title else f"`{title}`"
        return f'<code><autoref identifier="{escape(path)}" optional>{escape(title, quote=False)}</autoref></code>'

    # a role broken over two lines (``:class:`~a.b.`` then ``C``` on the next) is joined into the first
    text = re.sub(r"(:(?:py:)?[a-z]+:`[^`\n]*)\n[ \t]*([^`\n]*`)",
                  lambda m: m[1] + ("" if m[1].endswith(".") else " ") + m[2], text)
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        out.append(line if fenced or line.lstrip().startswith(">>>") else ROLE.sub(replace, line))
    return "\n".join(out)


def resolve_in_scope(obj: Any, target: str, packages: Any) -> str | None:
    """The full path of ``target`` as named from ``obj``'s docstring: a dotted path from a top-level package as
    is, else its first name looked up in ``obj``'s scope (members, imports, then the enclosing class and module),
    the rest appended. ``None`` when the name is unknown there (a Python built-in, a parameter, a typo)."""
    head, _, rest = target.partition(".")
    if head in packages:
        return target
    try:
        path = obj.resolve(head)
    except Exception:  # griffe's NameResolutionError, or an alias it cannot follow
        return None
    return f"{path}.{rest}" if rest else path


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


class DocstringRewrite(griffe.Extension):
    """Base: rewrite the docstring of every object griffe loads, the top package's included (griffe's
    ``on_object`` skips it; ``on_package`` sees it)."""

    def rewrite(self, obj: Any, text: str) -> str:
        """The new docstring of ``obj``."""
        raise NotImplementedError

    def _apply(self, obj: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = self.rewrite(obj, obj.docstring.value)

    def on_object(self, *, obj: Any, **kwargs: Any) -> None:
        self._apply(obj)

    def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
        self._apply(pkg)


class DoctestFences(DocstringRewrite):
    """Fence the doctests of every docstring griffe loads (see :func:`fence_doctests`)."""

    def rewrite(self, obj: Any, text: str) -> str:
        return fence_doctests(text)


class CiteKeys(DocstringRewrite):
    """Link citation keys and ``seed 00N`` numbers in every docstring (see :func:`link_citations`). Run it
    after :class:`DoctestFences` (code fences are left alone)."""

    def __init__(self) -> None:
        super().__init__()
        self.keys = reference_keys()

    def rewrite(self, obj: Any, text: str) -> str:
        return link_citations(text, self.keys)


class SphinxRoles(DocstringRewrite):
    """Turn the Sphinx roles of every docstring into code links (see :func:`rewrite_roles`). An object is looked up
    from the docstring's own scope; a dotted path starting with one of ``packages`` is taken as given. Run it after
    :class:`DoctestFences` (code fences are left alone)."""

    def __init__(self, packages: tuple[str, ...] = ("treeopt_dsl", "backends", "formulations")) -> None:
        super().__init__()
        self.packages = set(packages)

    def rewrite(self, obj: Any, text: str) -> str:
        return rewrite_roles(text, lambda target: resolve_in_scope(obj, target, self.packages))
