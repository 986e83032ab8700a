"""When the network fails, each lab says so in the page's language, offers Retry, stops spinning,
and marks what it still shows as out of date; Retry recovers once the server answers again.

This module runs a server of its own, so that stopping it leaves the other tests theirs. Busy
(503) and no answer at all are simulated with Playwright routes; the timeouts are reached with
Playwright's clock instead of waiting them out. Screenshots go to /tmp/net-shots/.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from tests.browser.pages import EN, ZH
from tests.browser.servers import ServerProcess

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/net-shots")
SIZES = ((390, 844), (1920, 1080))
SOON = 5_000  # ms: "within a few seconds"
SLOW = 90_000  # ms: a lab's first run on a busy machine


@dataclass(frozen=True)
class Lab:
    """One page, and where on it the run, its failure notice and its result are."""

    name: str
    path: str  # with the hash that makes its first run a quick one
    api: str  # the request the run button sends
    counter: str  # body[data-<counter>] grows by one for each run drawn
    button: str
    notice: str
    result: str

    def waiting(self, page: Any) -> bool:
        """Whether anything on the page still says it is waiting for an answer."""
        spinning = {
            "graph": "document.getElementById('status').textContent === s['graph.running'] "
                     "|| document.getElementById('run').disabled",
            "descent": "document.getElementById('race').textContent === s['descent.racing'] "
                       "|| document.getElementById('race').disabled",
            "training": "document.querySelector('.lesson.busy') !== null "
                        "|| document.getElementById('progress-text').textContent "
                        "=== s['training.progress.start']",
        }[self.name]
        strings = page.evaluate("JSON.parse(document.getElementById('page-data').textContent)"
                                ".strings")
        return bool(page.evaluate(f"s => {spinning}", strings))


GRAPH = Lab("graph", "/#ex=S2", "/api/graph", "runs", "#run", "#error", "#result")
DESCENT = Lab("descent", "/descent#preset=rosenbrock", "/api/descent", "races",
              "#race", "#error", "#result")
TRAINING = Lab("training", "/training#lesson=flow&flow.depth=4&flow.width=16&flow.steps=5",
               "/api/training/flow", "runs", "#panel-flow button[type=submit]",
               "#panel-flow .error", "#panel-flow .results")
LABS = (GRAPH, DESCENT, TRAINING)
HEAVY_RUN = (("steps", "2000"), ("width", "256"), ("depth", "8"), ("points", "4000"),
             ("batch_size", "1024"))
LIGHT_RUN = (("steps", "30"), ("width", "16"), ("depth", "2"), ("points", "200"),
             ("batch_size", "50"))


@pytest.fixture(scope="module")
def lab_server() -> Iterator[ServerProcess]:
    server = ServerProcess()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def server_up(lab_server: ServerProcess) -> ServerProcess:
    """This module's server, running at the start of each test (a test that failed midway may
    have left it stopped)."""
    if not lab_server.running:
        lab_server.start()
    return lab_server


@pytest.fixture
def open_tab(browser: Any, server_up: ServerProcess) -> Iterator[Callable[..., Any]]:
    """open_tab(lab, lang, width, height, clock=False) -> page, its first run drawn. Asserts at
    the end that no page threw an uncaught error (as "Failed to fetch" used to be)."""
    contexts: list[Any] = []
    uncaught: list[str] = []

    def _open(lab: Lab, lang: str, width: int, height: int, clock: bool = False) -> Any:
        context = browser.new_context(viewport={"width": width, "height": height},
                                      locale="zh-CN" if lang == "zh-CN" else "en-US")
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda e: uncaught.append(f"{lab.name}: {e}"))
        if clock:
            page.clock.install()  # time flows as usual until a test fast-forwards it
        path, _, fragment = lab.path.partition("#")
        page.goto(f"{server_up.url}{path}?lang={lang}#{fragment}")
        page.wait_for_function(f"Number(document.body.dataset.{lab.counter} ?? 0) > 0",
                               timeout=SLOW)
        return page

    yield _open
    for context in contexts:
        context.close()
    assert uncaught == [], "uncaught errors:\n" + "\n".join(uncaught)


def _strings(lang: str) -> dict[str, str]:
    return ZH if lang == "zh-CN" else EN


def _count(page: Any, lab: Lab) -> int:
    return int(page.evaluate(f"Number(document.body.dataset.{lab.counter} ?? 0)"))


def _press(page: Any, selector: str) -> None:
    page.locator(selector).click()


def _expect_notice(page: Any, lab: Lab, lang: str, kind: str, notice: str | None = None,
                   timeout: int = SOON) -> None:
    """The failure notice of `kind` shows in the page's language with its Retry, and nothing
    still says it is waiting."""
    s = _strings(lang)
    box = page.locator(notice or lab.notice)
    retry = box.locator("button.retry")
    retry.wait_for(state="visible", timeout=timeout)
    text = box.inner_text()
    assert s[f"net.{kind}.title"] in text, text
    assert retry.inner_text() == s["net.retry"]
    assert box.get_attribute("role") == "alert"
    assert not lab.waiting(page), f"{lab.name} still says it is waiting after the failure"


def _expect_stale(page: Any, lab: Lab, lang: str, text: str | None = None) -> None:
    """The result still on screen is dimmed and labelled as out of date."""
    result = page.locator(lab.result)
    note = result.locator(":scope > .stale-note")
    assert note.is_visible()
    assert note.inner_text() == (text or _strings(lang)["net.stale"])
    dimmed = result.evaluate("el => [...el.children].filter(c => !c.matches('.stale-note'))"
                             ".map(c => Number(getComputedStyle(c).opacity))")
    assert dimmed and max(dimmed) < 0.5, dimmed


def _expect_recovered(page: Any, lab: Lab, before: int, notice: str | None = None) -> None:
    page.wait_for_function(f"Number(document.body.dataset.{lab.counter} ?? 0) > {before}",
                           timeout=SLOW)
    assert page.locator(notice or lab.notice).is_hidden()
    assert page.locator(f"{lab.result} .stale-note").count() == 0
    assert "stale" not in (page.locator(lab.result).get_attribute("class") or "")
    assert not lab.waiting(page)


def _shoot(page: Any, name: str, notice: str) -> None:
    """The page at a phone's and a wide screen's size, the notice scrolled into view."""
    SHOTS.mkdir(exist_ok=True)
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(400)  # the graph lab lays out again 200 ms after a resize
        page.locator(notice).scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"{name}-{width}x{height}.png"))


# --- The server stops mid-session ---------------------------------------------------------------

@pytest.mark.parametrize("lab", LABS, ids=[lab.name for lab in LABS])
def test_a_lab_says_the_server_cannot_be_reached_and_retry_recovers(
        open_tab: Callable[..., Any], server_up: ServerProcess, lab: Lab) -> None:
    pages = {"en": open_tab(lab, "en", 1920, 1080), "zh-CN": open_tab(lab, "zh-CN", 390, 844)}
    server_up.stop()
    for lang, page in pages.items():
        _press(page, lab.button)
        _expect_notice(page, lab, lang, "unreachable")
        _expect_stale(page, lab, lang)
        _shoot(page, f"{lab.name}-unreachable-{lang}", lab.notice)
    server_up.start()  # on the same port
    for page in pages.values():
        before = _count(page, lab)
        page.locator(f"{lab.notice} button.retry").click()
        _expect_recovered(page, lab, before)


def test_a_training_run_cut_off_by_a_crash_is_marked_incomplete(
        open_tab: Callable[..., Any], server_up: ServerProcess) -> None:
    page = open_tab(TRAINING, "zh-CN", 1920, 1080)
    page.locator("#tab-train").click()
    for name, value in HEAVY_RUN:
        page.locator(f'[name="train.{name}"]').fill(value)
    page.locator("#panel-train button[type=submit]").click()
    page.wait_for_function("document.getElementById('progress').value > 0", timeout=SLOW)
    server_up.stop(crash=True)

    notice = "#panel-train .error"
    _expect_notice(page, TRAINING, "zh-CN", "interrupted", notice)
    steps = int(page.evaluate("document.body.dataset.trained"))
    assert 0 < steps < 2000
    incomplete = ZH["training.partial"].format(step=steps, total=2000)
    _expect_stale(page, replace(TRAINING, result="#panel-train .results"), "zh-CN", incomplete)
    assert page.locator("#progress-text").inner_text() == \
        ZH["training.progress.broke_off"].format(step=steps, total=2000)
    assert page.locator("#stop").is_disabled()
    _shoot(page, "training-interrupted-zh-CN", notice)

    server_up.start()
    for name, value in LIGHT_RUN:
        page.locator(f'[name="train.{name}"]').fill(value)
    page.locator(f"{notice} button.retry").click()
    page.wait_for_function("document.body.dataset.trained === '30'", timeout=SLOW)
    assert page.locator(notice).is_hidden()
    assert page.locator("#panel-train .stale-note").count() == 0


# --- No answer, and a busy server (simulated) ---------------------------------------------------

def _never_answer(route: Any) -> None:
    """Hold the request: the server neither answers nor refuses."""


@pytest.mark.parametrize(("lab", "lang"), [(GRAPH, "en"), (DESCENT, "zh-CN"), (TRAINING, "en")],
                         ids=[lab.name for lab in LABS])
def test_a_request_that_gets_no_answer_times_out_with_a_retry(
        open_tab: Callable[..., Any], lab: Lab, lang: str) -> None:
    page = open_tab(lab, lang, 1920, 1080, clock=True)
    page.route(f"**{lab.api}", _never_answer)
    with page.expect_request(f"**{lab.api}"):
        _press(page, lab.button)
    page.wait_for_timeout(500)
    assert lab.waiting(page), "the page should say it is waiting for its answer"
    page.clock.fast_forward("00:21")  # past the 20 s every /api request is given
    _expect_notice(page, lab, lang, "timed_out")
    waited = _strings(lang)["net.timed_out"].format(seconds=20)
    assert waited in page.locator(lab.notice).inner_text()
    _expect_stale(page, lab, lang)
    page.unroute(f"**{lab.api}")
    before = _count(page, lab)
    page.locator(f"{lab.notice} button.retry").click()
    _expect_recovered(page, lab, before)


def test_a_training_stream_that_never_starts_times_out(open_tab: Callable[..., Any]) -> None:
    page = open_tab(TRAINING, "en", 390, 844, clock=True)
    page.locator("#tab-train").click()
    page.route("**/api/training/run", _never_answer)
    with page.expect_request("**/api/training/run"):
        page.locator("#panel-train button[type=submit]").click()
    page.clock.fast_forward("00:21")
    notice = "#panel-train .error"
    _expect_notice(page, TRAINING, "en", "timed_out", notice)
    assert page.locator("#progress-text").inner_text() == EN["training.progress.not_started"]


def test_a_training_stream_that_stalls_midway_times_out(
        open_tab: Callable[..., Any], server_up: ServerProcess) -> None:
    page = open_tab(TRAINING, "en", 1920, 1080, clock=True)
    page.locator("#tab-train").click()
    for name, value in HEAVY_RUN:
        page.locator(f'[name="train.{name}"]').fill(value)
    page.locator("#panel-train button[type=submit]").click()
    page.wait_for_function("document.getElementById('progress').value > 0", timeout=SLOW)
    notice = "#panel-train .error"
    server_up.freeze()  # the connection stays open; nothing more comes down it
    try:
        page.wait_for_timeout(500)
        page.clock.fast_forward("00:16")  # past the 15 s allowed between two chunks
        _expect_notice(page, TRAINING, "en", "timed_out", notice)
        assert EN["net.timed_out"].format(seconds=15) in page.locator(notice).inner_text()
        steps = int(page.evaluate("document.body.dataset.trained"))
        assert 0 < steps < 2000
        note = page.locator("#panel-train .results > .stale-note")
        assert note.inner_text() == EN["training.partial"].format(step=steps, total=2000)
        _shoot(page, "training-stalled-en", notice)
    finally:
        server_up.freeze(False)
    for name, value in LIGHT_RUN:
        page.locator(f'[name="train.{name}"]').fill(value)
    page.locator(f"{notice} button.retry").click()
    page.wait_for_function("document.body.dataset.trained === '30'", timeout=SLOW)
    assert page.locator(notice).is_hidden()


BUSY = {"error": {"type": "busy", "message": "the server is busy: try again in a moment",
                  "line": None, "hint": None}}


@pytest.mark.parametrize(("lab", "lang"), [(GRAPH, "zh-CN"), (DESCENT, "en"), (TRAINING, "zh-CN")],
                         ids=[lab.name for lab in LABS])
def test_a_busy_server_is_named_and_retry_recovers(
        open_tab: Callable[..., Any], lab: Lab, lang: str) -> None:
    page = open_tab(lab, lang, 390, 844)
    page.route(f"**{lab.api}", lambda route: route.fulfill(
        status=503, content_type="application/json", body=json.dumps(BUSY)))
    _press(page, lab.button)
    _expect_notice(page, lab, lang, "busy")
    assert _strings(lang)["net.busy"] in page.locator(lab.notice).inner_text()
    _expect_stale(page, lab, lang)
    _shoot(page, f"{lab.name}-busy-{lang}", lab.notice)
    # Still busy: a keyboard user's Retry fails again, and focus waits on the new Retry.
    retry = page.locator(f"{lab.notice} button.retry")
    retry.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"document.activeElement.matches('{lab.notice} button.retry')"
                           " && !document.activeElement.disabled", timeout=SOON)
    _expect_notice(page, lab, lang, "busy")
    page.unroute(f"**{lab.api}")
    before = _count(page, lab)
    page.locator(f"{lab.notice} button.retry").click()
    _expect_recovered(page, lab, before)


def test_a_basins_map_that_gets_no_answer_can_be_retried(open_tab: Callable[..., Any]) -> None:
    page = open_tab(DESCENT, "en", 1920, 1080, clock=True)
    traces = "document.getElementById('plot').data.length"
    before = page.evaluate(traces)
    page.route("**/api/basins", _never_answer)
    with page.expect_request("**/api/basins"):
        page.locator("#basins").click()
    page.clock.fast_forward("00:21")
    _expect_notice(page, DESCENT, "en", "timed_out")
    assert page.evaluate(traces) == before  # the race is still drawn, without a map
    page.unroute("**/api/basins")
    page.locator("#error button.retry").click()
    page.wait_for_function(f"{traces} === {before + 1}", timeout=SLOW)  # the map's one trace
    assert page.locator("#error").is_hidden()


@pytest.mark.parametrize(("lab", "lang"), [(GRAPH, "en"), (TRAINING, "zh-CN")],
                         ids=["graph", "training"])
def test_a_busy_server_that_names_a_wait_is_asked_once_more_and_the_page_says_so(
        open_tab: Callable[..., Any], lab: Lab, lang: str) -> None:
    s = _strings(lang)
    page = open_tab(lab, lang, 390, 844)
    asked: list[str] = []

    def busy_once(route: Any) -> None:
        asked.append(route.request.url)
        if len(asked) == 1:
            route.fulfill(status=503, content_type="application/json", body=json.dumps(BUSY),
                          headers={"Retry-After": "1"})
        else:
            route.continue_()

    page.route(f"**{lab.api}", busy_once)
    before = _count(page, lab)
    _press(page, lab.button)
    note = page.locator("#net-notice")
    note.wait_for(state="visible", timeout=SOON)
    assert note.inner_text() == s["net.busy.waiting"].replace("{seconds}", "1")
    assert note.get_attribute("role") == "status"
    _expect_recovered(page, lab, before)
    assert len(asked) == 2
    assert note.inner_text() == s["net.busy.answered"]
    _shoot(page, f"{lab.name}-busy-retried-{lang}", "#net-notice")


def test_a_server_still_busy_after_the_one_retry_gets_the_busy_notice(
        open_tab: Callable[..., Any]) -> None:
    page = open_tab(GRAPH, "en", 1920, 1080)
    asked: list[str] = []

    def busy(route: Any) -> None:
        asked.append(route.request.url)
        route.fulfill(status=503, content_type="application/json", body=json.dumps(BUSY),
                      headers={"Retry-After": "1"})

    page.route(f"**{GRAPH.api}", busy)
    _press(page, GRAPH.button)
    _expect_notice(page, GRAPH, "en", "busy", timeout=SOON + 2_000)
    assert len(asked) == 2  # once, then once more after the wait it named: no more
    assert page.locator("#net-notice").inner_text() == EN["net.busy.again"]
