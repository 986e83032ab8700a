"""Predict the path (issue 30) in headless Chromium: the teacher asks where a run will be after
its steps, two students (en on a laptop, zh-CN on a phone's touch screen) tap their plots, the
teacher's screen shows the taps as a heat map, and Reveal plays the race on every screen in
step. Screenshots: artifacts/predict-*.png."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser import test_rooms as rooms
from tests.browser.test_rooms import _follows, _hash, _join, _start

pytestmark = pytest.mark.browser
# test_rooms.py's fixtures: the servers, and a browser per screen.
servers = rooms.servers
screens = rooms.screens

PRESET = "rosenbrock"  # SGD crawls along the valley for 1000 steps while Adam gets to (1, 1)
FRAME = "Number(document.body.dataset.frame)"
HEAT = "document.getElementById('plot').data.find((d) => d.uid === '{}')"


def _pixel(page: Any, x: float, y: float) -> tuple[float, float]:
    """Where the point (x, y) of the plot is on the screen."""
    at: list[float] = page.evaluate("""([x, y]) => { const plot = document.getElementById('plot');
        const full = plot._fullLayout; const box = plot.getBoundingClientRect();
        return [box.left + full._size.l + full.xaxis.l2p(x),
                box.top + full._size.t + full.yaxis.l2p(y)]; }""", [x, y])
    return at[0], at[1]


def _taps_drawn(page: Any, n: int) -> None:
    page.wait_for_function(f"{HEAT.format('predict-heat')}?.x.length === {n} && "
                           f"{HEAT.format('predict-heat')}.visible === true")


# Once, teacher and students on two processes of one SQLite file: what the store carries here
# (a question, its taps, the reveal) is what the class flows of test_rooms.py carry on all three.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("servers", ["two processes, one SQLite file"], indirect=True)
def test_the_class_predicts_where_a_run_will_be_and_the_reveal_plays_it_everywhere(
        screens: Any, servers: tuple[str, str], artifacts: Path,
        request: pytest.FixtureRequest) -> None:
    here, there = servers
    mode = request.node.callspec.params["servers"].split(",")[0].replace(" ", "-")
    teacher = screens(1920, 1080, "en", here)
    # On the projector (presentation mode), a race opened by its address waits for Play: the
    # class has not seen it run.
    teacher.page.goto(f"{here}/descent?present=1#preset={PRESET}")
    teacher.page.wait_for_function("Number(document.body.dataset.races ?? 0) > 0",
                                   timeout=90_000)
    code = _start(teacher)
    laptop = screens(1280, 720, "en", there)
    phone = screens(390, 844, "zh-CN", there, has_touch=True, is_mobile=True)
    for student in (laptop, phone):
        _join(student, there, code, "", "link")
    for student in (laptop, phone):
        _follows(student, _hash(teacher.page))
        student.page.wait_for_function("Number(document.body.dataset.races ?? 0) > 0",
                                       timeout=90_000)

    # The teacher asks where SGD will be after the race's 1000 steps.
    questions = teacher.page.evaluate("window.gradientLab.questions()")
    where = [q for q in questions if q["kind"] == "point"]
    assert [q["params"] for q in where] == [{"run": "SGD lr=0.001", "steps": "1000"},
                                            {"run": "Adam lr=0.05", "steps": "1000"}]
    question = where[0]
    assert (question["x_range"], question["y_range"]) == ([-2, 2], [-1, 3])
    truth = [float(v) for v in question["answer"].split(",")]
    prompt = teacher.t("room.q.where").format(**question["params"])
    teacher.page.click(f"#room-asks button >> text='{prompt}'")

    # Every screen holds the race at its start, the paths to come hidden, and asks on the plot.
    for screen in (teacher, laptop, phone):
        note = screen.page.locator("#predict-note")
        note.wait_for()
        assert screen.t("room.q.where").format(**question["params"]) in note.inner_text()
        screen.page.wait_for_function(f"{FRAME} === 0 && document.body.classList"
                                      ".contains('predicting')")
        future = screen.page.evaluate("document.getElementById('plot').data.filter((d) => "
                                      "d.line?.dash === 'dot').map((d) => d.visible)")
        assert future and not any(future), future
        assert screen.page.locator("#play").is_disabled()
    teacher.page.wait_for_function("!location.hash.includes('play=')")
    assert phone.page.locator("#room-panel").is_hidden()  # it would cover the plot
    phone.page.wait_for_function("""() => { const box = document.getElementById('plot')
        .getBoundingClientRect(); return box.top >= 0 && box.bottom <= innerHeight; }""")

    # The phone taps (a touch) where SGD will be; the laptop clicks far from it.
    phone.page.touchscreen.tap(*_pixel(phone.page, truth[0] + 0.05, truth[1]))
    laptop.page.mouse.click(*_pixel(laptop.page, -1.5, 2.5))
    for student in (laptop, phone):
        student.page.wait_for_function(f"{HEAT.format('predict-mine')}.x.length === 1")
        mine = student.page.locator("#predict-note").inner_text()
        assert student.t("descent.predict.mine").split("(")[0] in mine
        assert _hash(student.page) == _hash(teacher.page)  # a tap does not move the start
    _taps_drawn(teacher.page, 2)
    taps = teacher.t("room.taps").split("{x}")[0].format(n=2)  # "2 taps, their median at ("
    teacher.page.locator("#room-question-teacher", has_text=taps).wait_for()
    note = teacher.page.inner_text("#predict-text")
    assert teacher.t("descent.predict.count").format(answered=2, students=2) in note
    heat = teacher.page.evaluate(HEAT.format("predict-heat") + ".type")
    assert heat == "histogram2dcontour"
    for student in (laptop, phone):  # the class sees no one's taps before the reveal
        assert student.page.evaluate(HEAT.format("predict-taps") + ".x.length") == 0
    teacher.page.click("#room-close")  # the plot whole, for the projector
    teacher.page.screenshot(path=artifacts / f"predict-teacher-taps-{mode}-1920x1080.png")
    stepper = teacher.page.locator("#scrub").bounding_box()
    assert stepper["y"] + stepper["height"] <= 1080  # the note over the plot leaves it on screen
    phone.page.screenshot(path=artifacts / f"predict-student-tap-{mode}-390x844.png")

    # Reveal: every screen plays the race from its start, in step, through the taps; at a
    # quarter of the speed (24 s), so that even the projector's plot, which this shared 2-core
    # machine draws only a few times a second (heat map or not), shows steps on the way.
    teacher.page.select_option("#speed", "0.25")
    for screen in (teacher, laptop, phone):
        screen.page.evaluate("""() => { window.noted = new Set();
            setInterval(() => window.noted.add(Number(document.body.dataset.frame)), 20); }""")
    teacher.page.click("#predict-reveal")  # on the plot; the panel's Reveal does the same
    teacher.page.wait_for_function("location.hash.includes('play=')")
    playing = _hash(teacher.page)
    for student in (laptop, phone):
        _follows(student, playing)
    for screen in (teacher, laptop, phone):
        screen.page.wait_for_function(f"{FRAME} === 1000", timeout=60_000)
        shown = screen.page.evaluate("[...window.noted]")
        assert len([k for k in shown if 0 < k < 1000]) >= 2, shown
        assert screen.page.evaluate("document.body.classList.contains('predicting')") is False
        _taps_drawn(screen.page, 2)  # everyone sees the class's taps now
    assert phone.page.get_attribute("#predict-note", "data-right") == "true"
    assert laptop.page.get_attribute("#predict-note", "data-right") == "false"
    assert phone.t("descent.predict.right").split("(")[0] in phone.page.inner_text("#predict-note")
    teacher.page.screenshot(path=artifacts / f"predict-teacher-reveal-{mode}-1920x1080.png")
    teacher.page.click("#room-toggle")  # the panel lists each tap's distance, nearest first
    far = teacher.page.locator("#room-question-teacher .room-tap-list li")
    assert far.count() == 2 and far.first.inner_text().endswith("✓")
    far.first.scroll_into_view_if_needed()
    teacher.page.screenshot(path=artifacts / f"predict-teacher-distances-{mode}-1920x1080.png")
    phone.page.screenshot(path=artifacts / f"predict-student-reveal-{mode}-390x844.png")

    # Another race: the taps were about the last one, and leave every plot.
    teacher.page.select_option("#preset", "ravine")
    teacher.page.wait_for_function("location.hash.includes('preset=ravine')")
    for screen in (teacher, laptop, phone):
        screen.page.locator("#predict-note").wait_for(state="hidden", timeout=90_000)
        screen.page.wait_for_function(f"{HEAT.format('predict-heat')}?.visible === false",
                                      timeout=30_000)
