"""The real server as a subprocess, and headless Chromium driven by Playwright.

The browser tests skip only when there is no Chromium binary, and say so; everything else that
goes wrong (the server not starting, Playwright missing) fails.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.servers import ROOT, ServerProcess

ARTIFACTS = ROOT / "artifacts"
# A class's event stream that opens just after its teacher ended it (the student's page was
# between two connections, or two labs, then) is refused with 410 room_ended, and the page says
# the class has ended: the expected end of a class, not a problem.
_ENDED_STREAM = re.compile(r"/api/rooms/[0-9A-Z]{8}/events(\?student=[\w-]+)?")
# Offline by the browser itself: every request but to this machine's loopback (which Chromium
# never sends through a proxy) goes to a proxy that is not there and fails, and PageProblems
# reports it. Routing every request through Playwright instead cost a round trip to this
# process per request and turned the HTTP cache off.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--proxy-server=http://127.0.0.1:9",
]


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    process = ServerProcess()
    process.start()
    try:
        yield process.url
    finally:
        process.stop()


def _chromium() -> str | None:
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


# Module scope, not session: Playwright's sync API runs an event loop in this thread, and the
# tests that follow (asyncio.run in test_workers.py) need it gone.
# One Chromium for the session (a second per xdist worker): each test opens contexts of its
# own, as isolated as separate browsers' profiles; a launch per module cost a second each.
@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    executable = _chromium()
    if executable is None:
        pytest.skip("BROWSER TESTS NOT RUN: no Chromium binary at /usr/bin/chromium or on PATH "
                    "(apt-get install chromium; scripts/test.sh does this when it can)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


class PageProblems:
    """What went wrong in the page: failed requests, console errors, uncaught exceptions."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.items: list[str] = []

    def watch(self, page: Any) -> None:
        page.on("requestfailed", self._failed)
        page.on("pageerror", lambda e: self.items.append(f"uncaught: {e.stack or e}"))
        page.on("response", self._response)
        page.on("console", self._console)

    def _failed(self, request: Any) -> None:
        # ERR_ABORTED is the browser cancelling a request on purpose: the page navigated away (a
        # student following the teacher) or the page's own Stop button or clock aborted it; a
        # clock's timeout shows as the lab's error, which the tests' own waits then meet.
        if request.failure != "net::ERR_ABORTED":
            self.items.append(f"failed: {request.url} {request.failure}")

    def _response(self, response: Any) -> None:
        # A program that raises (400), runs too long (408) or too big (413) is answered with the
        # error envelope: a normal outcome of the lab, which the page shows next to the code.
        expected = response.url == f"{self.base}/api/graph" and response.status in (400, 408, 413)
        expected |= response.status == 410 and self._ended_stream(response.url)
        if response.status >= 400 and not expected:
            self.items.append(f"HTTP {response.status}: {response.request.method} {response.url}")

    def _ended_stream(self, url: str) -> bool:
        return url.startswith(self.base) and \
            _ENDED_STREAM.fullmatch(url.removeprefix(self.base)) is not None

    def _console(self, message: Any) -> None:
        if message.type != "error":
            return
        # Chromium logs every 4xx as "Failed to load resource"; the expected one passes, as above.
        location = message.location.get("url", "")
        if "Failed to load resource" in message.text and location == f"{self.base}/api/graph":
            return
        if "status of 410" in message.text and self._ended_stream(location):
            return
        self.items.append(f"console error: {message.text} ({location})")


@pytest.fixture
def open_page(browser: Any, server: str) -> Iterator[Any]:
    """open_page(width, height) -> (page, problems), offline (CHROMIUM_FLAGS)."""
    contexts: list[Any] = []
    watchers: list[PageProblems] = []

    def _open(width: int = 1280, height: int = 720,
              locale: str = "en-US") -> tuple[Any, PageProblems]:
        context = browser.new_context(viewport={"width": width, "height": height}, locale=locale)
        contexts.append(context)
        page = context.new_page()
        problems = PageProblems(server)
        problems.watch(page)
        watchers.append(problems)
        return page, problems

    yield _open
    for context in contexts:
        context.close()
    found = [item for w in watchers for item in w.items]
    assert found == [], "the page had problems:\n" + "\n".join(found)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
