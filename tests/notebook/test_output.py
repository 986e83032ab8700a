"""A notebook's output: one sandboxed iframe holding everything it draws with, under 0.5 MB for
the tutorial's examples, a text/plain summary, and what an untrusted notebook shows instead."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from nbconvert.preprocessors.sanitize import SanitizeHTML

from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.i18n import strings
from gradient_lab.notebook.output import mimebundle, script
from tests.notebook.cells import recorded

LIMIT = 500_000  # bytes an output may take (issue 31)
PROGRAMS = [e for e in EXAMPLES.values() if e.fails_at is None and not e.refused]


def srcdoc(output: str) -> str:
    """The document inside the output's iframe, as the browser reads it."""
    match = re.fullmatch(r"<iframe [^>]*srcdoc='([^']*)'>[^<]*</iframe>", output)
    assert match, output[:300]
    return html.unescape(match.group(1))


@pytest.mark.parametrize("example", PROGRAMS, ids=[e.id for e in PROGRAMS])
def test_each_tutorial_example_is_one_sandboxed_output_under_half_a_megabyte(
        example: object, tmp_path: Path) -> None:
    graph = recorded(example.program, tmp_path)  # type: ignore[attr-defined]
    output = mimebundle(graph, None)["text/html"]
    assert len(output.encode()) < LIMIT, len(output.encode())
    sandbox = re.search(r'sandbox="([^"]*)"', output)
    assert sandbox and sandbox.group(1) == "allow-scripts"  # no same origin: apart from the page
    document = srcdoc(output)
    # Nothing is fetched: no element names a source, no script imports or fetches one.
    assert not re.search(r"\b(src|href)\s*=|<link\b|@import|url\(", document)
    assert not re.search(r"\bimport\s*\(|\bfetch\s*\(|XMLHttpRequest", document)
    assert script() in document


def test_the_document_carries_the_graph_the_view_draws_with(tmp_path: Path) -> None:
    graph = recorded(EXAMPLES["S2"].program, tmp_path)
    document = srcdoc(mimebundle(graph, None, lang="zh-CN")["text/html"])
    assert '<html lang="zh-CN">' in document
    data = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', document)
    assert data and '"PowBackward0"' in data.group(1) and '"variables":{}' in data.group(1)
    assert strings("zh-CN")["graph.step.first"] in document  # the stepper, in its language


def test_the_plain_text_says_the_backward_order_and_the_gradients(tmp_path: Path) -> None:
    graph = recorded(EXAMPLES["S2"].program, tmp_path)
    text = mimebundle(graph, None)["text/plain"]
    assert ("backward #1 at line 10: loss (PowBackward0) → d (AddBackward0) → c (MulBackward0) "
            "→ a (AccumulateGrad) → b (AccumulateGrad)") in text
    assert "a.grad = [42.0]; b.grad = [28.0]" in text


def test_an_untrusted_notebook_shows_the_fallback_text_not_the_graph(tmp_path: Path) -> None:
    """A sanitizer as Jupyter's for untrusted outputs (nbconvert's, stripping what it does not
    allow, as JupyterLab's sanitize-html discards it) leaves the iframe's text."""
    graph = recorded(EXAMPLES["S2"].program, tmp_path)
    output = mimebundle(graph, None)["text/html"]
    shown = SanitizeHTML(strip=True).sanitize_html_tags(output)
    assert "<iframe" not in shown and "srcdoc" not in shown and "<script" not in shown
    assert html.unescape(shown).startswith(strings("en")["notebook.untrusted"])
    assert "loss (PowBackward0) → d (AddBackward0)" in html.unescape(shown)
