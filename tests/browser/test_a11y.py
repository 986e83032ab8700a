"""axe-core (Deque's accessibility engine, tests/browser/vendor) on every page, once each page
has drawn what it draws: zero violations of WCAG 2.x A and AA and of axe's best practices. The
labs and /lessons in both languages; the training lab's lessons, which share its page, each in
one, the two languages taking turns. Class mode's panel is checked as a visitor, a teacher and a
student see it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gradient_lab.web.routes.training import TABS
from tests.browser.pages import open_lab

pytestmark = pytest.mark.browser

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
LANGS = ["en", "zh-CN"]
# Each page (each of the training lab's lessons), and what says it has drawn: body[data-*].
PAGES = {"/": "runs", "/descent": "races", "/lessons": None,
         **{f"/training#lesson={tab}": "runs" for tab in TABS}}
CHECKS = [(path, lang) for path in list(PAGES)[:3] for lang in LANGS] + \
    [(f"/training#lesson={tab}", LANGS[i % 2]) for i, tab in enumerate(TABS)]


def violations(page: Any) -> list[str]:
    """axe-core's violations on the page as it is now: rule, impact, and the elements."""
    page.evaluate(AXE.read_text(encoding="utf-8"))  # not a <script>: the page's CSP stays
    found = page.evaluate("""async () => {
        const result = await axe.run(document, {resultTypes: ["violations"]});
        return result.violations.map(v => `${v.id} (${v.impact}): ${v.help}\\n` +
            v.nodes.map(n => `    ${n.target.join(" ")}: ${n.failureSummary}`).join("\\n"));
    }""")
    return list(found)


def _url(server: str, path: str, query: str) -> str:
    where, _, fragment = path.partition("#")
    return f"{server}{where}?{query}" + (f"#{fragment}" if fragment else "")


def _open(page: Any, url: str, drawn: str | None) -> None:
    if drawn is None:
        page.goto(url)
    else:
        open_lab(page, url, drawn)


@pytest.mark.parametrize(("path", "lang"), CHECKS)
def test_every_page_has_no_accessibility_violations(open_page: Any, server: str, path: str,
                                                    lang: str) -> None:
    page, _ = open_page()
    _open(page, _url(server, path, f"lang={lang}"), PAGES[path])
    assert violations(page) == [], "\n".join(violations(page))


@pytest.mark.parametrize("lang", LANGS)
def test_presentation_mode_has_no_accessibility_violations(open_page: Any, server: str,
                                                           lang: str) -> None:
    page, _ = open_page()
    _open(page, f"{server}/?lang={lang}&present=1", "runs")
    found = violations(page)
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("lang", LANGS)
def test_class_mode_has_no_accessibility_violations(open_page: Any, server: str,
                                                    lang: str) -> None:
    teacher, _ = open_page()
    _open(teacher, f"{server}/?lang={lang}", "runs")
    teacher.click("#room-toggle")
    assert violations(teacher) == [], "the class panel, before a class"
    teacher.click("#room-start")
    teacher.wait_for_selector("#room-code-shown:not(:empty)")
    code = teacher.inner_text("#room-code-shown").replace("-", "")
    teacher.click("#room-asks button >> nth=0")
    teacher.wait_for_selector("#room-question-teacher:not([hidden])")
    assert violations(teacher) == [], "the teacher's panel, a question asked"
    teacher.click("#room-big")
    teacher.wait_for_selector("#room-dialog[open]")
    assert violations(teacher) == [], "the code, big, for the back of the room"
    teacher.keyboard.press("Escape")

    student, _ = open_page()
    _open(student, f"{server}/?lang={lang}&join={code}", "runs")
    student.wait_for_selector("#room-join button[type=submit]")
    student.click("#room-join button[type=submit]")
    student.wait_for_selector("#room-student:not([hidden])")
    student.wait_for_selector("#room-question-student:not([hidden])")
    assert violations(student) == [], "the student's panel, a question to answer"
    teacher.click("#room-end")
    teacher.click("#room-end")
