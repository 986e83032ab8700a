"""Class mode in headless Chromium: a teacher and three students, each in a browser context of
their own, in both languages; on one server, on two uvicorn processes sharing one SQLite file,
and on two servers sharing a Redis. Screenshots of the teacher's and a student's screen go to
artifacts/room-*.png."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gradient_lab.descent.presets import PRESETS
from tests.browser.conftest import PageProblems
from tests.browser.pages import EN, ZH, open_lab
from tests.browser.servers import ServerProcess
from tests.redis_server import RedisServer

pytestmark = pytest.mark.browser

FOLLOW_MS = 5_000  # a follower's page has moved by then (bench/room.py measures the real delay)
XSS = "<img src=x onerror=f()>"
STRINGS = {"en": EN, "zh-CN": ZH}


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


SETUPS = ["one server", "two processes, one SQLite file", "two servers, one Redis"]
# For a flow the store plays no part in (the store's contract is tests/rooms'): one setup.
ONE_SERVER = pytest.mark.parametrize("servers", ["one server"], indirect=True)


@pytest.fixture(scope="module", params=SETUPS)
def servers(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[tuple[str, str]]:
    """(the teacher's server, the students' server): the same one, or two sharing a store."""
    redis = RedisServer() if "Redis" in request.param else None
    store = redis.url if redis else str(tmp_path_factory.mktemp("rooms") / "rooms.sqlite3")
    count = 1 if request.param == "one server" else 2
    started = []
    try:
        with _environment(APP_ROOM_STORE=store, APP_RUNNER_READY="2"):
            for _ in range(count):
                started.append(ServerProcess())
                started[-1].start()
        yield started[0].url, started[-1].url
    finally:
        for server in started:
            server.stop()
        if redis:
            redis.stop()


@dataclass
class Screen:
    page: Any
    lang: str

    def t(self, key: str) -> str:
        return STRINGS[self.lang][key]


@pytest.fixture
def screens(browser: Any, servers: tuple[str, str]) -> Iterator[Any]:
    """screens(width, height, lang, base, **options) -> Screen in a fresh browser context,
    offline; options go to the context (has_touch=True: a phone's touch screen)."""
    contexts, watchers = [], []

    def open_screen(width: int, height: int, lang: str, base: str, **options: Any) -> Screen:
        context = browser.new_context(viewport={"width": width, "height": height}, locale=lang,
                                      **options)
        # A nickname's onerror=f() would call this: it must never run.
        context.add_init_script("window.f = () => { document.body.dataset.xss = 'ran'; };")
        contexts.append(context)
        page = context.new_page()
        problems = PageProblems(base)
        problems.watch(page)
        watchers.append(problems)
        return Screen(page, lang)

    yield open_screen
    for context in contexts:
        context.close()
    found = [item for w in watchers for item in w.items]
    assert found == [], "the pages had problems:\n" + "\n".join(found)


def _start(teacher: Screen) -> str:
    page = teacher.page
    page.click("#room-toggle")
    page.click("#room-start")
    page.wait_for_function("document.getElementById('room-code-shown').textContent.length === 9")
    return str(page.text_content("#room-code-shown"))


def _join(student: Screen, base: str, code: str, nickname: str, how: str) -> None:
    page = student.page
    if how == "link":  # the QR code's link: the code is filled in
        page.goto(f"{base}/?join={code.replace('-', '')}")
    else:  # typed, as a student types it (lower case, the dash or not), on another lab or step
        page.goto(f"{base}/training" if how == "typed" else f"{base}/#ex=S6")
        page.click("#room-toggle")
        page.fill("#room-code", code.lower() if how == "typed" else code.replace("-", ""))
    page.fill("#room-nickname", nickname)
    page.click("#room-join button[type=submit]")


def _hash(page: Any) -> str:
    return str(page.evaluate("location.pathname + location.hash"))


def _follows(student: Screen, address: str) -> None:
    student.page.wait_for_function("a => location.pathname + location.hash === a", arg=address,
                                   timeout=FOLLOW_MS)


def _step(teacher: Screen, presses: int) -> str:
    page = teacher.page
    for _ in range(presses):
        page.click("#next")
    page.wait_for_function("n => location.hash.includes('step=' + n)", arg=presses)
    page.wait_for_timeout(300)  # the page has written its address; room.js sends it
    return _hash(page)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("teacher_lang", ["en", "zh-CN"])
def test_a_class_follows_its_teacher_answers_and_sees_the_reveal(
        screens: Any, servers: tuple[str, str], artifacts: Path, request: pytest.FixtureRequest,
        teacher_lang: str) -> None:
    here, there = servers
    mode = request.node.callspec.params["servers"].split(",")[0].replace(" ", "-")
    if mode != "one-server" and teacher_lang != "en":
        pytest.skip("the two-server runs hold the same class once (students in both languages)")
    other = "en" if teacher_lang == "zh-CN" else "zh-CN"
    teacher = screens(1920, 1080, teacher_lang, here)
    open_lab(teacher.page, f"{here}/#ex=S2")
    code = _start(teacher)
    assert len(code) == 9 and code[4] == "-"
    # These servers listen on 127.0.0.1 only (and CI's run in a container): the panel says no
    # student's device can open the link, and gives the line that fixes it.
    warning = teacher.page.locator("#room-unreachable")
    assert warning.is_visible()
    why = "container" if Path("/.dockerenv").exists() or Path("/run/.containerenv").exists() \
        else "loopback"
    assert teacher.t(f"room.unreachable.{why}") in warning.inner_text()
    assert warning.locator("code").inner_text() == teacher.t(f"room.unreachable.{why}.fix")
    teacher.page.screenshot(path=str(artifacts / f"room-unreachable-{teacher_lang}.png"))

    # Three students: a phone by the QR code's link, two laptops typing the code; the third on
    # the teacher's server, the others on the other one.
    bases = [there, there, here]
    students = [screens(390, 844, other, there), screens(1280, 720, teacher_lang, there),
                screens(1280, 720, other, here)]
    for student, base, nickname, how in zip(students, bases, [XSS, "Ada", ""],
                                            ["link", "typed", "plain"], strict=True):
        _join(student, base, code, nickname, how)
    start = _hash(teacher.page)
    for student in students:
        _follows(student, start)
        shown = f"{student.t('room.class')} {code}"
        student.page.wait_for_function("s => document.getElementById('room-toggle-text')"
                                       ".textContent === s", arg=shown)
    teacher.page.wait_for_function("document.getElementById('room-students').textContent"
                                   ".endsWith('3')")

    # The teacher steps through backward: every screen steps with them.
    address = _step(teacher, 1)
    for student in students:
        _follows(student, address)
        student.page.wait_for_function("document.getElementById('position').textContent"
                                       ".includes('1')")

    # Predict, then reveal: the gradient the next step sends.
    question = teacher.page.evaluate("window.gradientLab.questions()[0]")
    truth, label = question["answer"], question["params"]["label"]
    assert (label, truth) == ("∂loss/∂c", 14)  # AddBackward0 at d sends 14 to c
    teacher.page.click("#room-asks button >> nth=0")
    for student in students:
        student.page.locator("#room-value").wait_for()
        assert label in student.page.text_content("#room-prompt")
    answers = ["999", str(truth), str(truth + 1), str(truth)]  # the first is changed: once
    for student, value in zip([students[2], *students], answers, strict=True):
        student.page.fill("#room-value", value)
        student.page.click(".room-number button")
        student.page.locator(".room-sent", has_text=value).wait_for()
    summary = teacher.t("room.answered").format(answered=3, students=3)
    teacher.page.wait_for_function("s => document.querySelector('#room-question-teacher')"
                                   ".textContent.includes(s)", arg=summary)
    teacher.page.wait_for_function("""() => [...document.querySelectorAll(
        '#room-question-teacher .room-count')].map((c) => c.textContent).sort().join() === '1,2'""")
    shot = f"{mode}-{teacher_lang}"
    students[0].page.screenshot(path=artifacts / f"room-student-question-{shot}-390x844.png")
    teacher.page.screenshot(path=artifacts / f"room-teacher-tally-{shot}-1920x1080.png")

    teacher.page.click("#room-reveal")
    for student, right in zip(students, [True, False, True], strict=True):
        student.page.locator(".room-you").wait_for()
        assert student.page.locator(".room-you.right").count() == int(right)
        assert student.page.locator(".room-bar.right").count() == 1
    students[1].page.screenshot(path=artifacts / f"room-student-reveal-{shot}-1280x720.png")

    # The nickname is text wherever it is shown, never markup.
    teacher.page.click("#room-students")
    names = teacher.page.locator("#room-nicknames li").all_text_contents()
    assert XSS in names and "Ada" in names
    assert teacher.page.locator("#room-nicknames img").count() == 0
    for screen in [teacher, *students]:
        assert screen.page.evaluate("document.body.dataset.xss") is None
    assert XSS in students[0].page.text_content("#room-in")

    # One student steps away; the teacher moves to another lab; the rest follow.
    away = students[2]
    away.page.click("#room-explore")
    assert away.page.locator("#room-rejoin").is_visible()
    teacher.page.click(".top nav a[href='/training']")
    teacher.page.wait_for_url("**/training*")
    teacher.page.wait_for_function("Number(document.body.dataset.runs ?? 0) > 0", timeout=90_000)
    teacher.page.wait_for_timeout(300)  # the page has written its address; room.js sends it
    training = _hash(teacher.page)
    for student in students[:2]:
        _follows(student, training)
    assert _hash(away.page) == address
    away.page.click("#room-rejoin")  # one click back to the teacher
    _follows(away, training)

    # The end of the class: every screen is told, and is in no room any more.
    teacher.page.click("#room-toggle")
    teacher.page.click("#room-end")
    teacher.page.click("#room-end")
    for student in students:
        student.page.wait_for_function("s => document.getElementById('room-status')"
                                       ".textContent === s", arg=student.t("room.ended"))
        assert student.page.text_content("#room-toggle-text") == student.t("room.class")


def test_a_student_whose_stream_opens_after_the_end_is_told_the_class_has_ended(
        screens: Any, servers: tuple[str, str]) -> None:
    here, there = servers
    teacher = screens(1280, 720, "en", here)
    open_lab(teacher.page, f"{here}/#ex=S2")
    code = _start(teacher)
    student = screens(1280, 720, "zh-CN", there)
    _join(student, there, code, "", "plain")
    student.page.wait_for_function("s => document.getElementById('room-toggle-text')"
                                   ".textContent === s", arg=f"{ZH['room.class']} {code}")

    # The student's page is between two labs (following the teacher, or reloading) when the
    # class ends: the next page's stream opens on a room that is no more.
    student.page.goto("about:blank")
    teacher.page.click("#room-end")
    teacher.page.click("#room-end")
    teacher.page.wait_for_function("s => document.getElementById('room-status').textContent "
                                   "=== s", arg=EN["room.ended"])
    student.page.goto(f"{there}/#ex=S2")
    student.page.wait_for_function("s => document.getElementById('room-status').textContent "
                                   "=== s", arg=ZH["room.ended"])
    assert student.page.text_content("#room-toggle-text") == ZH["room.class"]


@ONE_SERVER
def test_the_code_is_big_enough_for_the_back_of_the_room(screens: Any, servers: tuple[str, str],
                                                          artifacts: Path) -> None:
    here, _ = servers
    for width, height in ((1920, 1080), (390, 844)):
        teacher = screens(width, height, "en", here)
        open_lab(teacher.page, f"{here}/#ex=S2")
        code = _start(teacher)
        panel_code = teacher.page.locator("#room-code-shown").bounding_box()
        assert panel_code["height"] >= 40 and panel_code["x"] + panel_code["width"] <= width
        teacher.page.screenshot(path=artifacts / f"room-teacher-panel-{width}x{height}.png")
        teacher.page.click("#room-big")
        big = teacher.page.locator("#room-dialog-code")
        assert big.text_content() == code
        box = big.bounding_box()
        assert box["height"] >= (120 if width == 1920 else 40)
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        qr = teacher.page.locator("#room-qr")
        teacher.page.wait_for_function("document.getElementById('room-qr').naturalWidth > 0")
        assert qr.bounding_box()["width"] >= (300 if width == 1920 else 200)
        teacher.page.screenshot(path=artifacts / f"room-teacher-code-{width}x{height}.png")
        teacher.page.keyboard.press("Escape")
        teacher.page.click("#room-end")
        teacher.page.click("#room-end")


@pytest.mark.timeout(300)
@ONE_SERVER
def test_the_descent_and_training_labs_ask_their_own_questions(
        screens: Any, servers: tuple[str, str]) -> None:
    here, _ = servers
    teacher = screens(1280, 720, "en", here)
    teacher.page.goto(f"{here}/descent#preset=ravine")
    teacher.page.wait_for_function("Number(document.body.dataset.races ?? 0) > 0",
                                   timeout=90_000)
    code = _start(teacher)
    student = screens(390, 844, "zh-CN", here)
    _join(student, here, code, "", "link")
    _follows(student, _hash(teacher.page))

    # Which optimizer reaches the minimum first: a choice, drawn as bars.
    # The ravine's story: momentum gets down the valley first.
    labels = [run["label"] for run in next(p for p in PRESETS if p["id"] == "ravine")["runs"]]
    first = teacher.page.evaluate("window.gradientLab.questions()[0]")
    assert first == {"kind": "choice", "prompt": "room.q.first", "params": {},
                     "choices": labels, "answer": labels[1]}
    teacher.page.click("#room-asks button >> nth=0")
    student.page.click(f".room-choices button >> text='{labels[1]}'")
    teacher.page.wait_for_function("document.querySelectorAll('#room-question-teacher "
                                   ".room-bar').length === 2")
    teacher.page.click("#room-reveal")
    student.page.locator(".room-you.right").wait_for()

    # Does this lr diverge: yes or no, in the student's language, after the training lab's NaN
    # lesson has run on the teacher's screen.
    teacher.page.goto(f"{here}/training#lesson=nan")
    teacher.page.wait_for_function("Number(document.body.dataset.runs ?? 0) > 0",
                                   timeout=90_000)
    teacher.page.click("#room-toggle")
    teacher.page.wait_for_function("document.querySelectorAll('#room-asks button').length > 0")
    nan = teacher.page.evaluate("window.gradientLab.questions()[0]")
    assert (nan["kind"], nan["prompt"], nan["answer"]) == ("yesno", "room.q.nan", "yes")
    teacher.page.click("#room-asks button >> nth=0")
    choices = student.page.locator(".room-choices button")
    choices.first.wait_for()
    assert choices.all_text_contents() == [ZH["room.yes"], ZH["room.no"]]
    choices.first.click()
    student.page.locator(".room-sent").wait_for()
    teacher.page.click("#room-reveal")
    student.page.locator(".room-you.right").wait_for()


@pytest.mark.timeout(300)
@ONE_SERVER
def test_the_class_sees_the_race_play_in_step_with_the_teacher(
        screens: Any, servers: tuple[str, str]) -> None:
    here, _ = servers
    teacher = screens(1280, 720, "en", here)
    teacher.page.goto(f"{here}/descent#preset=ravine")  # 150 steps in 6 s: 25 a second
    teacher.page.wait_for_function("Number(document.body.dataset.races ?? 0) > 0",
                                   timeout=90_000)
    code = _start(teacher)
    students = [screens(390, 844, "zh-CN", here), screens(1280, 720, "en", here),
                screens(1280, 720, "en", here)]
    for student in students:
        _join(student, here, code, "", "link")
    for student in students:
        _follows(student, _hash(teacher.page))
        student.page.wait_for_function("Number(document.body.dataset.races ?? 0) > 0",
                                       timeout=90_000)
    frame = "Number(document.body.dataset.frame)"

    # Each screen notes the steps it shows while the race plays.
    for screen in [teacher, *students]:
        screen.page.evaluate("""() => { window.noted = new Set();
            setInterval(() => window.noted.add(Number(document.body.dataset.frame)), 20); }""")
    teacher.page.click("#play")
    teacher.page.wait_for_function("location.hash.includes('play=')")
    playing = _hash(teacher.page)
    for student in students:  # the same race, from the same step, since the same moment
        _follows(student, playing)
    # ... by the same clock: every screen's reading of the server's (one machine here).
    for screen in [teacher, *students]:
        assert abs(screen.page.evaluate("window.gradientLabClock() - Date.now()")) < 100
    last = 150
    for screen in [teacher, *students]:  # it plays to the end on every screen ...
        screen.page.wait_for_function(f"{frame} === {last}", timeout=30_000)
        shown = screen.page.evaluate("[...window.noted]")
        assert len([k for k in shown if 0 < k < last]) >= 2, shown  # ... and plays on the way

    # Scrubbing: the class follows the slider as it moves.
    teacher.page.evaluate("""() => { const scrub = document.getElementById('scrub');
        scrub.value = '40'; scrub.dispatchEvent(new Event('input')); }""")
    for student in students:
        student.page.wait_for_function(f"{frame} === 40", timeout=FOLLOW_MS)

    # Play from there and pause: every screen stops at the teacher's step.
    teacher.page.click("#play")
    teacher.page.wait_for_function(f"{frame} > 50", timeout=20_000)
    teacher.page.click("#play")
    teacher.page.wait_for_function("!location.hash.includes('play=')")
    stopped = teacher.page.evaluate(frame)
    for student in students:
        student.page.wait_for_function(f"{frame} === {stopped}", timeout=FOLLOW_MS)


@pytest.mark.timeout(300)
@ONE_SERVER
def test_the_class_sees_the_landscape_paths_play_in_step(
        screens: Any, servers: tuple[str, str]) -> None:
    here, _ = servers
    small = "landscape.points=200&landscape.steps=60&landscape.resolution=21"
    teacher = screens(1280, 720, "en", here)
    teacher.page.goto(f"{here}/training#lesson=landscape&{small}")
    teacher.page.wait_for_function("Number(document.body.dataset.runs ?? 0) > 0",
                                   timeout=90_000)
    code = _start(teacher)
    students = [screens(390, 844, "zh-CN", here), screens(1280, 720, "en", here)]
    for student in students:
        _join(student, here, code, "", "link")
    for student in students:
        _follows(student, _hash(teacher.page))
        student.page.wait_for_function("Number(document.body.dataset.runs ?? 0) > 0",
                                       timeout=90_000)
    panel = "document.getElementById('panel-landscape').dataset"
    for screen in [teacher, *students]:  # each screen notes the steps it shows as it plays
        screen.page.evaluate(f"""() => {{ window.noted = new Set();
            setInterval(() => window.noted.add(Number({panel}.step)), 20); }}""")
    teacher.page.click("#landscape-play")
    teacher.page.wait_for_function("location.hash.includes('landscape_view.play=')")
    playing = _hash(teacher.page)
    for student in students:
        _follows(student, playing)
    for screen in [teacher, *students]:  # every screen plays the paths to their end ...
        screen.page.wait_for_function(f"{panel}.playing === '0' && {panel}.step === '60'",
                                      timeout=30_000)
        shown = screen.page.evaluate("[...window.noted]")
        assert len([k for k in shown if 0 < k < 60]) >= 2, shown  # ... step by step
