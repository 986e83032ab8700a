"""/docs and /redoc in Chromium, offline: Swagger UI and ReDoc come from the package, draw
the API's operations (/readyz among them), and ask nothing of any other origin."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.servers import local_only

pytestmark = pytest.mark.browser


@pytest.fixture
def offline(browser: Any, server: str) -> Iterator[tuple[Any, list[str]]]:
    """A page whose every request to another origin aborts, and the list of those asked for."""
    context = browser.new_context()
    context.route("**/*", local_only)
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
