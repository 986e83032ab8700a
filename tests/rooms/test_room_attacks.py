"""Class mode against its worst student, from outside: a real server behind a stand-in for the
shipped proxy (every request comes from 127.0.0.1 and names its client in X-Forwarded-For, as
Caddy does), and students who send what a page never would."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from gradient_lab.rooms.model import Question
from gradient_lab.rooms.questions import tally
from tests.helpers import assert_error
from tests.rooms.test_room_events import Events, Server

TEACHER, STUDENT, GUESSER, NEWCOMER = "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"
ASK = {"kind": "number", "prompt": "room.q.grad", "params": {"label": "∂loss/∂a"}, "answer": 14}


class Class:
    """One server, and a client per person: each its own cookies and its own address."""

    def __init__(self, setting: str, **settings: object) -> None:
        self.server = Server(setting, **settings)
        self.people: dict[str, httpx.Client] = {}

    def __call__(self, who: str) -> httpx.Client:
        if who not in self.people:
            self.people[who] = httpx.Client(base_url=self.server.url,
                                            headers={"X-Forwarded-For": who})
        return self.people[who]

    def start(self, who: str = TEACHER) -> str:
        response = self(who).post("/api/rooms", json={})
        assert response.status_code == 201, response.text
        code: str = response.json()["code"]
        return code

    def close(self) -> None:
        for client in self.people.values():
            client.close()
        self.server.stop()


@pytest.fixture
def lab(store_setting: str) -> Iterator[Class]:
    behind_proxy = Class(store_setting, trusted_proxies="127.0.0.1")
    yield behind_proxy
    behind_proxy.close()


@pytest.fixture
def lab_untrusted(store_setting: str) -> Iterator[Class]:
    """The proxy not configured as trusted: every student shares its address."""
    shared = Class(store_setting)
    yield shared
    shared.close()


def _join(client: httpx.Client, code: str) -> str:
    response = client.post(f"/api/rooms/{code}/join", json={})
    assert response.status_code == 200, response.text
    student: str = response.json()["student"]
    return student


def _guess_thirty_times(client: httpx.Client) -> None:
    for n in range(30):
        assert_error(client.post(f"/api/rooms/ZZZZZZ{n:02d}/join", json={}), 404,
                     "room_not_found")


# --- Extreme answers ----------------------------------------------------------------------------

@pytest.mark.parametrize("value", [1e308, -1e308, "1e308", "1e16", "-inf", "NaN", "0x10"])
def test_an_answer_outside_the_questions_range_is_refused(lab: Class, value: object) -> None:
    code = lab.start()
    qid = lab(TEACHER).post(f"/api/rooms/{code}/question", json=ASK).json()["id"]
    sid = _join(lab(STUDENT), code)
    answer = lab(STUDENT).post(f"/api/rooms/{code}/answer",
                               json={"student": sid, "question": qid, "value": value})
    assert "from -1e+15 to 1e+15" in assert_error(answer, 422, "request_invalid")["message"]


def test_a_page_may_narrow_the_range_and_it_must_hold_the_true_answer(lab: Class) -> None:
    code = lab.start()
    narrow = {**ASK, "low": 0, "high": 100}
    qid = lab(TEACHER).post(f"/api/rooms/{code}/question", json=narrow).json()["id"]
    sid = _join(lab(STUDENT), code)
    sent = {"student": sid, "question": qid}
    assert lab(STUDENT).post(f"/api/rooms/{code}/answer", json={**sent, "value": 100}).is_success
    assert_error(lab(STUDENT).post(f"/api/rooms/{code}/answer", json={**sent, "value": 101}),
                 422, "request_invalid")
    for bad in ({"low": 20, "high": 100}, {"low": 5, "high": 5}, {"high": 1e300},
                {"low": -1e16}):
        assert_error(lab(TEACHER).post(f"/api/rooms/{code}/question", json={**ASK, **bad}),
                     422, "request_invalid")
    choice = {"kind": "yesno", "prompt": "room.q.nan", "params": {"steps": "5"},
              "answer": "yes", "low": 0}
    assert_error(lab(TEACHER).post(f"/api/rooms/{code}/question", json=choice), 422,
                 "request_invalid")


def test_the_widest_answers_a_question_takes_still_draw_every_screens_histogram(
        lab: Class) -> None:
    code = lab.start()
    qid = lab(TEACHER).post(f"/api/rooms/{code}/question", json=ASK).json()["id"]
    values = [-1e15, 1e15, 5e-324, -5e-324, 0, 14, 1e-300, 123456789, 7e14]
    for n, value in enumerate(values):
        who = f"10.0.1.{n}"
        sid = _join(lab(who), code)
        assert lab(who).post(f"/api/rooms/{code}/answer", json={
            "student": sid, "question": qid, "value": value}).is_success
    screen = Events(lab(TEACHER), f"/api/rooms/{code}/events")
    crowd, _ = screen.until("crowd", answered=len(values))
    screen.close()
    assert sum(bar["count"] for bar in crowd["bars"]) == len(values)
    assert crowd["bars"][0]["label"].startswith("-1e+15") and len(crowd["bars"]) == 8


def test_answers_kept_before_ranges_existed_cannot_break_the_tally() -> None:
    """A store written by an earlier version holds answers at a float's very ends."""
    question = Question("0000000a", "number", "room.q.grad", {"label": "a"}, (), "14.0", True)
    answers = ["1.7976931348623157e+308", "-1.7976931348623157e+308", "0.0", "14.0", "1.0",
               "2.0", "3.0", "4.0", "5.0"]
    bars = tally(question, answers)
    assert sum(bar.count for bar in bars) == 9 and len(bars) == 8
    assert [bar.right for bar in bars].count(True) == 1


# --- One room's error, a new stream ---------------------------------------------------------------

def test_a_room_that_cannot_be_drawn_stops_neither_its_stream_nor_any_other_room(
        lab: Class, monkeypatch: pytest.MonkeyPatch) -> None:
    from gradient_lab.rooms import views

    broken, fine = lab.start(), lab.start("10.0.0.9")
    real = views.tally

    def tally_or_fail(question: Question, answers: object) -> object:
        if question.params.get("label") == "broken":
            raise OverflowError("a bug in the tally")
        return real(question, answers)  # type: ignore[arg-type]

    monkeypatch.setattr(views, "tally", tally_or_fail)
    lab(TEACHER).post(f"/api/rooms/{broken}/question",
                      json={**ASK, "params": {"label": "broken"}})
    # A new stream on the broken room opens, with the room and no bars (no 500).
    first = Events(lab(TEACHER), f"/api/rooms/{broken}/events")
    assert first.response.status_code == 200
    assert first.until("room")[0]["question"]["params"] == {"label": "broken"}
    assert first.until("crowd")[0]["bars"] is None
    # Streams on both rooms are open; the broken one changes first, then the fine one: the
    # fine one's screens still hear of it within a second.
    other = Events(lab("10.0.0.9"), f"/api/rooms/{fine}/events")
    other.until("crowd")
    _join(lab(STUDENT), broken)
    lab("10.0.0.9").post(f"/api/rooms/{fine}/address", json={"address": "/descent"})
    assert other.until("room", address="/descent")[1] < 1.0
    first.close()
    other.close()


# --- Starting rooms -------------------------------------------------------------------------------

def test_one_client_cannot_take_every_room(store_setting: str) -> None:
    lab = Class(store_setting, trusted_proxies="127.0.0.1", room_starts_per_hour=3)
    try:
        for _ in range(3):
            lab.start(GUESSER)
        refused = lab(GUESSER).post("/api/rooms", json={})
        assert assert_error(refused, 429, "too_many_rooms")["hint_key"] == \
            "hint.room_too_many_starts"
        assert refused.headers["retry-after"]
        lab.start(TEACHER)  # another client, behind the same proxy
    finally:
        lab.close()


def test_a_full_server_takes_back_rooms_no_teacher_leads(store_setting: str) -> None:
    lab = Class(store_setting, trusted_proxies="127.0.0.1", rooms_max=3,
                room_unattended_minutes=0.01)  # 0.6 s
    try:
        led = lab.start(TEACHER)
        abandoned = [lab.start(GUESSER), lab.start(GUESSER)]
        assert_error(lab(NEWCOMER).post("/api/rooms", json={}), 409, "rooms_full")
        time.sleep(0.7)
        assert lab(TEACHER).post(f"/api/rooms/{led}/address",
                                 json={"address": "/descent"}).is_success
        newer = lab.start(NEWCOMER)  # in place of the abandoned two
        assert lab(TEACHER).post(f"/api/rooms/{led}/address",
                                 json={"address": "/"}).is_success
        for code in abandoned:
            assert_error(lab(STUDENT).post(f"/api/rooms/{code}/join", json={}), 404,
                         "room_not_found")
        assert lab(STUDENT).post(f"/api/rooms/{newer}/join", json={}).is_success
    finally:
        lab.close()


# --- The guessing brake ---------------------------------------------------------------------------

def test_behind_the_proxy_a_guesser_is_braked_alone(lab: Class) -> None:
    code = lab.start()
    _guess_thirty_times(lab(GUESSER))
    assert_error(lab(GUESSER).post(f"/api/rooms/{code}/join", json={}), 429, "too_many_attempts")
    _join(lab(NEWCOMER), code)  # the class behind the same proxy joins as ever


def test_a_braked_address_still_serves_its_teacher_and_joined_students(
        lab_untrusted: Class) -> None:
    """The proxy's address is everyone's (APP_TRUSTED_PROXIES unset): one student's typos
    brake it, and the class it already holds goes on."""
    lab = lab_untrusted
    code = lab.start()
    sid = _join(lab(STUDENT), code)
    _guess_thirty_times(lab(GUESSER))
    teacher, student = lab(TEACHER), lab(STUDENT)
    asked = teacher.post(f"/api/rooms/{code}/question", json=ASK)
    assert asked.status_code == 201, asked.text
    qid = asked.json()["id"]
    assert student.post(f"/api/rooms/{code}/answer",
                        json={"student": sid, "question": qid, "value": 14}).is_success
    assert student.post(f"/api/rooms/{code}/join", json={"student": sid}).is_success
    screen = Events(student, f"/api/rooms/{code}/events?student={sid}")
    assert screen.response.status_code == 200
    screen.close()
    teachers = Events(teacher, f"/api/rooms/{code}/events")
    assert teachers.until("crowd")[0]["nicknames"] == []  # the teacher's own view
    teachers.close()
    assert teacher.post(f"/api/rooms/{code}/reveal", json={}).is_success
    # Anyone else behind that address waits, and learns nothing of which rooms exist.
    stranger = lab(NEWCOMER)
    assert_error(stranger.post(f"/api/rooms/{code}/join", json={}), 429, "too_many_attempts")
    assert_error(stranger.get(f"/api/rooms/{code}/events"), 429, "too_many_attempts")
    assert_error(stranger.get(f"/api/rooms/{code}/events?student=AAAAAAAAAAAAAAAA"), 429,
                 "too_many_attempts")
    assert_error(stranger.post(f"/api/rooms/{code}/address", json={"address": "/"},
                               headers={"Cookie": "room_teacher=forged"}),
                 429, "too_many_attempts")
    assert_error(stranger.post(f"/api/rooms/{code}/answer", json={
        "student": "AAAAAAAAAAAAAAAA", "question": qid, "value": 1}), 429, "too_many_attempts")


def test_lookups_that_find_their_room_never_brake(lab_untrusted: Class) -> None:
    lab = lab_untrusted
    code = lab.start()
    qid = lab(TEACHER).post(f"/api/rooms/{code}/question", json=ASK).json()["id"]
    sid = _join(lab(STUDENT), code)
    for value in range(40):
        assert lab(STUDENT).post(f"/api/rooms/{code}/answer", json={
            "student": sid, "question": qid, "value": value}).is_success
    _join(lab(NEWCOMER), code)
