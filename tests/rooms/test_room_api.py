"""/api/rooms: start, join, lead, ask, answer, reveal, end; each refusal in the one envelope."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from gradient_lab.rooms.model import Room
from gradient_lab.rooms.qr import qr_svg
from tests.helpers import assert_error
from tests.rooms.conftest import strings

ClientFor = Callable[..., TestClient]
ASK = {"kind": "number", "prompt": "room.q.grad", "params": {"label": "∂loss/∂a"}, "answer": 14}


def _start(teacher: TestClient) -> str:
    response = teacher.post("/api/rooms", json={})
    assert response.status_code == 201, response.text
    code: str = response.json()["code"]
    return code


def _join(student: TestClient, code: str, nickname: str = "") -> str:
    response = student.post(f"/api/rooms/{code}/join", json={"nickname": nickname})
    assert response.status_code == 200, response.text
    sid: str = response.json()["student"]
    return sid


def _room(client: TestClient, code: str) -> Room:
    rooms = client.app.state.rooms  # type: ignore[attr-defined]
    room: Room | None = client.portal.call(rooms.store.get, code, time.time())  # type: ignore[union-attr]
    assert room is not None
    return room


def test_starting_a_room_gives_its_code_and_link_and_keeps_the_token_in_a_cookie(
        client_for: ClientFor) -> None:
    teacher = client_for()
    response = teacher.post("/api/rooms", json={})
    assert response.status_code == 201
    body = response.json()
    code = body["code"]
    assert body == {"code": code, "shown": f"{code[:4]}-{code[4:]}",
                    "link": f"http://testserver/?join={code}", "unreachable": None}
    cookie = response.headers["set-cookie"]
    token = cookie.split(";")[0].split("=", 1)[1]
    assert len(token) >= 43 and token not in response.text
    for part in ("HttpOnly", f"Path=/api/rooms/{code}", "SameSite=strict"):
        assert part in cookie


@pytest.mark.parametrize("typed", ["{code}", "{lower}", "{dashed}"])
def test_a_student_joins_with_the_code_as_they_type_it(client_for: ClientFor,
                                                       typed: str) -> None:
    teacher, student = client_for(), client_for()
    code = _start(teacher)
    text = typed.format(code=code, lower=code.lower(), dashed=f"{code[:4]}-{code[4:]}")
    response = student.post(f"/api/rooms/{text}/join", json={"nickname": "  Ada  "})
    assert response.status_code == 200, response.text
    assert response.json()["code"] == code and response.json()["nickname"] == "Ada"
    assert [s.nickname for s in _room(teacher, code).students] == ["Ada"]


def test_joining_again_with_the_same_id_is_the_same_student(client_for: ClientFor) -> None:
    teacher, student = client_for(), client_for()
    code = _start(teacher)
    first = _join(student, code, "Ada")
    again = student.post(f"/api/rooms/{code}/join", json={"nickname": "Ada L.", "student": first})
    assert again.json()["student"] == first
    assert [(s.id, s.nickname) for s in _room(teacher, code).students] == [(first, "Ada L.")]


def test_an_unknown_code_is_a_404_with_a_hint_in_the_readers_language(
        client_for: ClientFor) -> None:
    student = client_for()
    error = assert_error(student.post("/api/rooms/ZZZZZZZZ/join", json={}), 404,
                         "room_not_found")
    assert error["hint"] == strings("en")["hint.room_not_found"]
    zh = student.post("/api/rooms/ZZZZZZZZ/join", json={},
                      headers={"Accept-Language": "zh-CN"})
    assert assert_error(zh, 404, "room_not_found")["hint"] == strings("zh-CN")[
        "hint.room_not_found"]


def test_guessing_codes_is_braked_after_thirty_misses(client_for: ClientFor) -> None:
    teacher, student = client_for(), client_for()
    code = _start(teacher)
    for n in range(30):
        assert_error(student.post(f"/api/rooms/ZZZZZZ{n:02d}/join", json={}), 404,
                     "room_not_found")
    error = assert_error(student.post(f"/api/rooms/{code}/join", json={}), 429,
                         "too_many_attempts")
    assert error["hint_key"] == "hint.room_too_many_attempts"
    assert_error(student.get(f"/api/rooms/{code}/events"), 429, "too_many_attempts")


@pytest.mark.parametrize(("path", "body"), [
    ("address", {"address": "/training"}), ("question", ASK), ("reveal", {}), ("end", {})])
def test_a_student_can_never_lead_the_room(client_for: ClientFor, path: str,
                                           body: dict[str, object]) -> None:
    teacher, student, other = client_for(), client_for(), client_for()
    code = _start(teacher)
    teacher.post(f"/api/rooms/{code}/question", json=ASK)
    _join(student, code)
    before = _room(teacher, code)
    assert_error(student.post(f"/api/rooms/{code}/{path}", json=body), 403, "not_teacher")
    # Another room's teacher, with their own token sent along, cannot lead this one either.
    other_code = _start(other)
    token = other.cookies.get("room_teacher", path=f"/api/rooms/{other_code}")
    forged = student.post(f"/api/rooms/{code}/{path}", json=body,
                          headers={"Cookie": f"room_teacher={token}"})
    assert_error(forged, 403, "not_teacher")
    assert _room(teacher, code) == before


def test_the_teacher_leads_and_a_reveal_closes_the_question(client_for: ClientFor) -> None:
    teacher, student = client_for(), client_for()
    code = _start(teacher)
    assert teacher.post(f"/api/rooms/{code}/address", json={"address": "/#ex=S2&step=2"}).json() \
        == {"code": code}
    asked = teacher.post(f"/api/rooms/{code}/question", json=ASK)
    assert asked.status_code == 201 and set(asked.json()) == {"id"}
    qid = asked.json()["id"]
    sid = _join(student, code)
    answer = {"student": sid, "question": qid, "value": "14"}
    assert student.post(f"/api/rooms/{code}/answer", json=answer).status_code == 200
    assert teacher.post(f"/api/rooms/{code}/reveal", json={}).status_code == 200
    assert_error(student.post(f"/api/rooms/{code}/answer", json=answer), 409,
                 "question_closed")
    room = _room(teacher, code)
    assert room.address == "/#ex=S2&step=2" and room.answers == {sid: "14.0"}
    assert room.question is not None and room.question.revealed


def test_each_student_is_counted_once_however_often_they_answer(client_for: ClientFor) -> None:
    teacher, student = client_for(), client_for()
    code = _start(teacher)
    qid = teacher.post(f"/api/rooms/{code}/question", json={
        "kind": "yesno", "prompt": "room.q.diverge", "params": {"run": "SGD lr=1"},
        "answer": "yes"}).json()["id"]
    ids = [_join(student, code) for _ in range(20)]
    for value in ("no", "yes"):  # everyone changes their mind once
        for sid in ids:
            response = student.post(f"/api/rooms/{code}/answer",
                                    json={"student": sid, "question": qid, "value": value})
            assert response.status_code == 200, response.text
    assert _room(teacher, code).answers == dict.fromkeys(ids, "yes")


def test_answers_that_do_not_fit_the_question_are_refused(client_for: ClientFor) -> None:
    teacher, student = client_for(), client_for()
    code = _start(teacher)
    qid = teacher.post(f"/api/rooms/{code}/question", json=ASK).json()["id"]
    sid = _join(student, code)
    post = lambda body: student.post(f"/api/rooms/{code}/answer", json=body)  # noqa: E731
    assert_error(post({"student": sid, "question": qid, "value": "fourteen"}), 422,
                 "request_invalid")
    assert_error(post({"student": sid, "question": qid, "value": [14]}), 422, "request_invalid")
    assert_error(post({"student": sid, "question": "0badcafe", "value": "14"}), 409,
                 "question_closed")
    assert_error(post({"student": "x" * 16, "question": qid, "value": "14"}), 403,
                 "not_in_room")
    assert _room(teacher, code).answers == {}


def test_a_tap_off_the_plot_is_a_422_in_the_learners_language(client_for: ClientFor) -> None:
    teacher, student = client_for(), client_for()
    code = _start(teacher)
    where = {"kind": "point", "prompt": "room.q.where", "params": {"run": "Adam", "steps": "150"},
             "answer": "1,0.5", "x_range": [-2, 2], "y_range": [-1, 3], "where": "/descent"}
    qid = teacher.post(f"/api/rooms/{code}/question", json=where).json()["id"]
    sid = _join(student, code)
    post = lambda value, lang="en": student.post(  # noqa: E731
        f"/api/rooms/{code}/answer", json={"student": sid, "question": qid, "value": value},
        headers={"Accept-Language": lang})
    for value, lang in (("2.5,0", "zh-CN"), ("0,-1.5", "en"), ("0.5", "en"), (0.5, "zh-CN")):
        error = assert_error(post(value, lang), 422, "request_invalid")
        assert error["hint"] == strings(lang)["hint.room_point"], value
        assert "x from -2 to 2 and y from -1 to 3" in error["message"]
    assert post("-0.5,2").status_code == 200
    assert _room(teacher, code).answers == {sid: "-0.5,2.0"}
    assert_error(teacher.post(f"/api/rooms/{code}/question", json={**where, "y_range": None}),
                 422, "request_invalid")
    assert_error(teacher.post(f"/api/rooms/{code}/question", json={**where, "answer": "3,0"}),
                 422, "request_invalid")


def test_rooms_past_the_limit_get_a_409_with_its_hint(client_for: ClientFor) -> None:
    teacher = client_for(rooms_max=1)
    _start(teacher)
    error = assert_error(teacher.post("/api/rooms", json={},
                                      headers={"Accept-Language": "zh-CN"}), 409, "rooms_full")
    assert error["hint"] == strings("zh-CN")["hint.rooms_full"]


def test_students_past_the_limit_get_a_409_with_its_hint(client_for: ClientFor) -> None:
    teacher, student = client_for(room_students_max=2), client_for(room_students_max=2)
    code = _start(teacher)
    _join(student, code)
    _join(student, code)
    error = assert_error(student.post(f"/api/rooms/{code}/join", json={}), 409, "room_full")
    assert error["hint"] == strings("en")["hint.room_full"]


def test_an_address_or_question_past_the_message_limit_is_a_413(client_for: ClientFor) -> None:
    teacher = client_for(room_message_bytes=200)
    code = _start(teacher)
    assert teacher.post(f"/api/rooms/{code}/address", json={"address": "/#" + "a" * 190}) \
        .status_code == 200
    error = assert_error(teacher.post(f"/api/rooms/{code}/address",
                                      json={"address": "/#" + "a" * 200}), 413, "too_large")
    assert error["hint"] == strings("en")["hint.room_message_too_large"]
    assert_error(teacher.post(f"/api/rooms/{code}/question", json={
        **ASK, "params": {"label": "∂" * 79}}), 413, "too_large")


@pytest.mark.parametrize("nickname", ["x" * 25, "two\nlines", "\x1b[31mred"])
def test_a_nickname_is_short_and_one_line(client_for: ClientFor, nickname: str) -> None:
    teacher, student = client_for(), client_for()
    code = _start(teacher)
    assert_error(student.post(f"/api/rooms/{code}/join", json={"nickname": nickname}), 422,
                 "request_invalid")


def test_the_class_can_only_be_sent_to_this_servers_pages(client_for: ClientFor) -> None:
    teacher = client_for()
    code = _start(teacher)
    for address in ("https://evil.example/", "//evil.example/", "javascript:alert(1)"):
        error = assert_error(teacher.post(f"/api/rooms/{code}/address",
                                          json={"address": address}), 422, "request_invalid")
        assert error["hint_key"] == "hint.room_address"


def test_ending_the_room_forgets_it_and_the_teachers_cookie(client_for: ClientFor) -> None:
    teacher, student = client_for(), client_for()
    code = _start(teacher)
    response = teacher.post(f"/api/rooms/{code}/end", json={})
    assert response.status_code == 200
    assert 'room_teacher=""' in response.headers["set-cookie"]
    assert_error(student.post(f"/api/rooms/{code}/join", json={}), 410, "room_ended")


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_a_student_who_comes_after_the_end_is_told_the_class_ended_with_a_hint(
        client_for: ClientFor, lang: str) -> None:
    teacher, student = client_for(), client_for()
    code = _start(teacher)
    sid = _join(student, code)
    qid = teacher.post(f"/api/rooms/{code}/question", json=ASK).json()["id"]
    teacher.post(f"/api/rooms/{code}/end", json={})
    student.headers["Accept-Language"] = lang
    for response in (student.get(f"/api/rooms/{code}/events", params={"student": sid}),
                     student.post(f"/api/rooms/{code}/join", json={"student": sid}),
                     student.post(f"/api/rooms/{code}/answer",
                                  json={"student": sid, "question": qid, "value": 14})):
        error = assert_error(response, 410, "room_ended")
        assert error["hint"] == strings(lang)["hint.room_ended"]


def test_the_join_link_is_a_qr_code_drawn_here(client_for: ClientFor) -> None:
    teacher = client_for()
    code = _start(teacher)
    response = teacher.get(f"/api/rooms/{code.lower()}/qr.svg")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/svg+xml"
    assert response.text.startswith("<svg") and "<script" not in response.text
    # The link with the code as the server spells it: the same drawing as segno's for it.
    assert response.content == qr_svg(f"http://testserver/?join={code}")
    assert response.content != qr_svg(f"http://testserver/?join={code.lower()}")
    assert_error(teacher.get("/api/rooms/no-such-room/qr.svg"), 404, "room_not_found")
