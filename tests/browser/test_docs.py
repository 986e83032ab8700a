"""/docs and /redoc in Chromium, offline: Swagger UI and ReDoc come from the package, draw
the API's operations (/readyz among them), and ask nothing of any other origin."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture
def offline(browser: Any, server: str) -> Iterator[tuple[Any, list[str]]]:
    """A page whose every request to another origin fails (CHROMIUM_FLAGS), and the list of
    those asked for."""
    context = browser.new_context()
    page = context.new_page()
    elsewhere: list[str] = []

    def asked(request: Any) -> None:
        # One the page's Content-Security-Policy refused never left the browser.
        if not request.url.startswith((server, "data:", "blob:")) and \
                request.failure != "csp":  # Chromium's blockedReason
            elsewhere.append(f"{request.url} ({request.failure})")

    page.on("requestfailed", asked)
    page.on("requestfinished", asked)
    page.on("pageerror", lambda e: elsewhere.append(f"uncaught: {e}"))
    try:
        yield page, elsewhere
    finally:
        context.close()


def test_swagger_ui_draws_every_operation_offline(offline: tuple[Any, list[str]],
                                                 server: str) -> None:
    page, elsewhere = offline
    page.goto(f"{server}/docs")
    page.wait_for_selector(".opblock-summary-path", timeout=30_000)
    paths = page.eval_on_selector_all(".opblock-summary-path",
                                      "els => els.map(e => e.dataset.path || e.textContent)")
    assert {"/api/graph", "/readyz", "/healthz"} <= set(paths), paths
    assert elsewhere == []


def test_redoc_draws_the_api_offline(offline: tuple[Any, list[str]], server: str) -> None:
    page, elsewhere = offline
    page.goto(f"{server}/redoc")
    page.wait_for_selector("[data-section-id^='operation/']", timeout=60_000)
    assert page.get_by_text("/api/graph").count() >= 1
    assert elsewhere == []


def test_a_page_that_asks_another_origin_is_caught(open_page: Any, server: str) -> None:
    # The browser is offline by its own flags (conftest.CHROMIUM_FLAGS): a script from a CDN,
    # by name or by address, fails, and the page's problems name it; this machine answers.
    page, problems = open_page()
    page.goto(f"{server}/healthz")
    page.evaluate("""async () => {
        for (const url of ["https://cdn.plot.ly/plotly-3.0.1.min.js", "http://93.184.216.34/"])
            await fetch(url).catch(() => null);
    }""")
    page.wait_for_timeout(300)  # the failures' events reach this process
    failed = [item for item in problems.items if item.startswith("failed: ")]
    assert len(failed) == 2 and all("ERR_PROXY_CONNECTION_FAILED" in f for f in failed), failed
    problems.items.clear()  # seen: the fixture would fail on them
    assert page.evaluate(f"fetch('{server}/healthz').then(r => r.status)") == 200
