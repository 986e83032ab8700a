"""The built-in lessons are ready before anyone asks (issue 25 item 3): on a server that has
computed them at start-up, every request a lesson's page sends is answered from what is kept,
and no page of /lessons starts a child but the one whose point is memory running out."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from gradient_lab.tutorial import TUTORIAL
from tests.browser.conftest import PageProblems
from tests.browser.servers import ServerProcess

# The fixture waits for some fifty lessons computed one after another: minutes on a busy machine.
pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
# The page's counter each lab raises once it has drawn what it asked for.
COUNTER = {"graph": "runs", "descent": "races", "training": "runs"}


def _health(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/healthz", timeout=10) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def ahead() -> Iterator[str]:
    """A server that computes the built-in lessons at start-up, once they are all kept."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("APP_COMPUTE_AHEAD", "true")
        server = ServerProcess()
        server.start()
    try:
        deadline = time.monotonic() + 600
        while (progress := _health(server.url)["ahead"])["done"] < progress["total"]:
            assert time.monotonic() < deadline, progress
            time.sleep(0.5)
        yield server.url
    finally:
        server.stop()


def test_every_lesson_link_is_answered_from_what_is_kept(browser: Any, ahead: str) -> None:
    links = list(dict.fromkeys(link for stop in TUTORIAL for link in stop.links))
    started = _health(ahead)["runner"]["started"]
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    answers: list[tuple[str, str, int, str | None]] = []
    problems = PageProblems(ahead)
    try:
        for link in links:
            page = context.new_page()
            problems.watch(page)
            page.on("response", lambda r, href=link.href: answers.append(
                (href, r.url, r.status, r.headers.get("x-kept"))) if "/api/" in r.url else None)
            page.goto(ahead + link.href)
            page.wait_for_function(f"Number(document.body.dataset.{COUNTER[link.lab]} ?? 0) > 0",
                                   timeout=60_000)
            page.close()
    finally:
        context.close()
    assert problems.items == []
    labs = {link.lab for link in links}
    assert labs == {"graph", "descent", "training"} and len(answers) >= len(links)
    # Memory run out is never kept (it may not come again): S20, whose point it is, runs anew.
    missed = [answer for answer in answers if answer[3] != "hit" and answer[2] != 413]
    assert missed == [], missed
    out_of_memory = sum(answer[2] == 413 for answer in answers)
    assert 0 < out_of_memory <= 2
    assert _health(ahead)["runner"]["started"] == started + out_of_memory


def test_the_landscape_lesson_opens_from_what_is_kept(browser: Any, ahead: str) -> None:
    # Not a tutorial link: the training lab's own tab, as a learner first opens it.
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    kept: list[str | None] = []
    page.on("response", lambda r: kept.append(r.headers.get("x-kept"))
            if "/api/training/landscape" in r.url else None)
    try:
        page.goto(ahead + "/training#lesson=landscape")
        page.wait_for_function("Number(document.body.dataset.runs ?? 0) > 0", timeout=60_000)
    finally:
        page.close()
    assert kept == ["hit"]
