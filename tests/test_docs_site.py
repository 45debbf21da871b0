"""The built API site as a reader sees it (issue 35): ``mkdocs build --strict`` succeeds, no Sphinx role is printed
literally, and every class and function with parameters shows them as a table, not as a run-on paragraph.

Builds the site once (about 15 s) into a temporary directory and reads the HTML.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|obj|exc|ref):`")
#: a numpy section rendered as prose (the symptom: "Parameters: depth: the tree depth. max_iter: ..." in one <p>),
#: or a numpy underline that no parser read
RUN_ON = re.compile(r"<p>\s*(?:Parameters|Returns|Attributes|Raises)\b[^<]{0,80}:\s*\w+\s*:|-{10,}\s*\n?\s*\w+ : ")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocstrings")
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    r = subprocess.run([mkdocs, "build", "--strict", "-q", "-d", str(out)], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return out


def _text(page: Path) -> str:
    """The page's visible text and code, without tags (``<code>`` kept apart: a role inside code is fine)."""
    raw = page.read_text(encoding="utf-8")
    raw = re.sub(r"<(script|style)\b.*?</\1>", "", raw, flags=re.S)
    raw = re.sub(r"<code\b[^>]*>.*?</code>|<pre\b.*?</pre>", " ", raw, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", raw))


def test_no_page_prints_a_sphinx_role(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20
    left = {str(p.relative_to(site)): ROLE.findall(_text(p))[:3] for p in pages if ROLE.search(_text(p))}
    assert left == {}


def test_parameter_sections_are_tables_not_run_on_paragraphs(site: Path) -> None:
    api = sorted((site / "api").rglob("*.html"))
    assert api
    run_on = {}
    for p in api:
        raw = p.read_text(encoding="utf-8")
        hits = RUN_ON.findall(raw)
        if hits:
            run_on[str(p.relative_to(site))] = [re.sub(r"\s+", " ", h)[:80] for h in hits[:2]]
    assert run_on == {}
    # every estimator class of the reference shows its parameters as a table with the defaults
    estimators = {
        "api/estimator/index.html": ["OptimalTreeClassifier", "RiskScoreClassifier", "CategoricalTreeClassifier",
                                     "RandomizedTreeClassifier", "TAOClassifier", "TMOClassifier"],
        "api/contextual/index.html": ["ContextualTreeClassifier"],  # the regressor: "same parameters", a link
        "api/bornagain/index.html": ["BornAgainClassifier"]}
    for page, names in estimators.items():
        raw = (site / page).read_text(encoding="utf-8")
        for name in names:
            start = re.search(rf'id="[\w.]*\.{name}"', raw)
            assert start, f"{name} has no entry on {page}"
            nxt = re.search(r'<div class="doc doc-object doc-class">', raw[start.end():])
            body = raw[start.end(): start.end() + (nxt.start() if nxt else len(raw))]
            table = re.search(r'doc-section-title">Parameters:</span></p>\s*<table>(.*?)</table>', body, re.S)
            assert table, f"{name}: no parameter table on {page}"
            assert table.group(1).count('<tr class="doc-section-item">') >= 2 and "<th>Default</th>" in body
