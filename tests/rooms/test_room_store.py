"""The room store's contract, held against both implementations: SQLite and Redis."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gradient_lab.rooms.codes import new_student_id, token_hash
from gradient_lab.rooms.errors import (
    NotInRoom,
    NotTeacher,
    QuestionClosed,
    RoomEnded,
    RoomFull,
    RoomNotFound,
    RoomsFull,
    StoreUnavailable,
)
from gradient_lab.rooms.model import Lead, Question
from gradient_lab.rooms.redis import RedisStore
from gradient_lab.rooms.sqlite import SqliteStore
from gradient_lab.rooms.store import RoomStore
from tests.rooms.conftest import LIMITS

pytestmark = pytest.mark.anyio

TOKEN = token_hash("the teacher's token")
CODE = "K7MXQ2PD"
NOW = 1_000_000.0


def _question(id: str = "0000000a", kind: str = "number", answer: str = "14.0") -> Question:
    choices = ("yes", "no") if kind == "yesno" else ()
    return Question(id, kind, "room.q.grad", {"label": "∂loss/∂a"}, choices, answer)


async def _room_with(store: RoomStore, students: int = 0) -> list[str]:
    assert await store.create(CODE, TOKEN, NOW, LIMITS)
    ids = [new_student_id() for _ in range(students)]
    for n, student in enumerate(ids):
        await store.join(CODE, student, f"s{n}", NOW, LIMITS)
    return ids


async def test_a_new_room_shows_nothing_yet(store: RoomStore) -> None:
    await _room_with(store)
    room = await store.get(CODE, NOW)
    assert room is not None
    assert (room.code, room.address, room.question, room.students, room.answers) == \
        (CODE, "", None, (), {})
    assert await store.stamps([CODE, "NOSUCH00"], NOW) == {CODE: (room.version, room.crowd)}


async def test_a_taken_code_is_refused_and_keeps_its_teacher(store: RoomStore) -> None:
    await _room_with(store)
    assert not await store.create(CODE, token_hash("someone else"), NOW, LIMITS)
    await store.lead(CODE, TOKEN, Lead(address="/descent"), NOW, LIMITS)
    with pytest.raises(NotTeacher):
        await store.lead(CODE, token_hash("someone else"), Lead(address="/"), NOW, LIMITS)


async def test_rooms_past_the_limit_are_refused_until_one_ends(store: RoomStore) -> None:
    two = replace(LIMITS, rooms=2)
    assert await store.create("AAAAAAAA", TOKEN, NOW, two)
    assert await store.create("BBBBBBBB", TOKEN, NOW, two)
    with pytest.raises(RoomsFull):
        await store.create("CCCCCCCC", TOKEN, NOW, two)
    await store.lead("AAAAAAAA", TOKEN, Lead(end=True), NOW, two)
    assert await store.create("CCCCCCCC", TOKEN, NOW, two)


async def test_an_idle_room_expires_and_frees_its_place(store: RoomStore) -> None:
    one = replace(LIMITS, rooms=1, idle_seconds=60)
    assert await store.create(CODE, TOKEN, NOW, one)
    await store.lead(CODE, TOKEN, Lead(address="/"), NOW + 50, one)  # activity: 60 s more
    assert await store.get(CODE, NOW + 100) is not None
    assert await store.get(CODE, NOW + 111) is None
    assert await store.stamps([CODE], NOW + 111) == {}
    with pytest.raises(RoomNotFound):  # not RoomEnded: no teacher ended it
        await store.join(CODE, new_student_id(), "", NOW + 111, one)
    with pytest.raises(RoomNotFound):
        await store.question(CODE, NOW + 111)
    assert await store.create("BBBBBBBB", TOKEN, NOW + 111, one)


async def test_students_past_the_limit_are_refused_but_one_may_join_again(
        store: RoomStore) -> None:
    two = replace(LIMITS, students=2)
    first, second = await _room_with(store, students=2)
    with pytest.raises(RoomFull):
        await store.join(CODE, new_student_id(), "late", NOW, two)
    await store.join(CODE, first, "renamed", NOW, two)
    room = await store.get(CODE, NOW)
    assert room is not None
    assert [(s.id, s.nickname) for s in room.students] == [(first, "renamed"), (second, "s1")]


async def test_joining_a_room_that_does_not_exist_is_not_found(store: RoomStore) -> None:
    with pytest.raises(RoomNotFound):
        await store.join("NOSUCH00", new_student_id(), "", NOW, LIMITS)
    with pytest.raises(RoomNotFound):
        await store.lead("NOSUCH00", TOKEN, Lead(address="/"), NOW, LIMITS)


async def test_only_the_teachers_token_changes_the_room(store: RoomStore) -> None:
    await _room_with(store, students=1)
    before = await store.get(CODE, NOW)
    for lead in (Lead(address="/training"), Lead(question=_question()), Lead(end=True)):
        with pytest.raises(NotTeacher):
            await store.lead(CODE, token_hash("a student's guess"), lead, NOW, LIMITS)
    assert await store.get(CODE, NOW) == before


async def test_the_address_changes_the_version_and_joins_change_the_crowd(
        store: RoomStore) -> None:
    await _room_with(store)
    start = await store.stamps([CODE], NOW)
    await store.lead(CODE, TOKEN, Lead(address="/#ex=S2&step=3"), NOW, LIMITS)
    moved = await store.stamps([CODE], NOW)
    await store.join(CODE, new_student_id(), "", NOW, LIMITS)
    joined = await store.stamps([CODE], NOW)
    assert moved[CODE] == (start[CODE][0] + 1, start[CODE][1])
    assert joined[CODE] == (moved[CODE][0], moved[CODE][1] + 1)
    room = await store.get(CODE, NOW)
    assert room is not None and room.address == "/#ex=S2&step=3"


async def test_a_second_answer_replaces_the_first(store: RoomStore) -> None:
    first, second = await _room_with(store, students=2)
    await store.lead(CODE, TOKEN, Lead(question=_question()), NOW, LIMITS)
    await store.answer(CODE, first, "0000000a", "13.0", NOW, LIMITS)
    await store.answer(CODE, first, "0000000a", "14.0", NOW, LIMITS)
    await store.answer(CODE, second, "0000000a", "7.0", NOW, LIMITS)
    room = await store.get(CODE, NOW)
    assert room is not None and room.answers == {first: "14.0", second: "7.0"}


async def test_a_new_question_clears_the_answers_and_hides_its_answer(store: RoomStore) -> None:
    (student,) = await _room_with(store, students=1)
    await store.lead(CODE, TOKEN, Lead(question=_question()), NOW, LIMITS)
    await store.answer(CODE, student, "0000000a", "14.0", NOW, LIMITS)
    await store.lead(CODE, TOKEN, Lead(reveal=True), NOW, LIMITS)
    await store.lead(CODE, TOKEN, Lead(question=_question("0000000b", "yesno", "no")), NOW,
                     LIMITS)
    room = await store.get(CODE, NOW)
    assert room is not None and room.answers == {}
    assert room.question == _question("0000000b", "yesno", "no")  # not revealed
    assert await store.question(CODE, NOW) == room.question


async def test_a_point_question_keeps_its_plot_and_its_taps(store: RoomStore) -> None:
    first, second = await _room_with(store, students=2)
    asked = Question("0000000c", "point", "room.q.where", {"run": "Adam", "steps": "150"}, (),
                     "1.0,0.5", x_range=(-2.0, 2.0), y_range=(-1.0, 3.0))
    await store.lead(CODE, TOKEN, Lead(question=asked), NOW, LIMITS)
    await store.answer(CODE, first, "0000000c", "0.25,-0.75", NOW, LIMITS)
    await store.answer(CODE, second, "0000000c", "1.5,2.0", NOW, LIMITS)
    await store.lead(CODE, TOKEN, Lead(reveal=True), NOW, LIMITS)
    room = await store.get(CODE, NOW)
    assert room is not None and room.answers == {first: "0.25,-0.75", second: "1.5,2.0"}
    assert room.question == replace(asked, revealed=True)
    assert await store.question(CODE, NOW) == room.question


async def test_answers_to_a_revealed_or_an_earlier_question_are_refused(
        store: RoomStore) -> None:
    (student,) = await _room_with(store, students=1)
    await store.lead(CODE, TOKEN, Lead(question=_question()), NOW, LIMITS)
    await store.lead(CODE, TOKEN, Lead(reveal=True), NOW, LIMITS)
    with pytest.raises(QuestionClosed):
        await store.answer(CODE, student, "0000000a", "14.0", NOW, LIMITS)
    await store.lead(CODE, TOKEN, Lead(question=_question("0000000b")), NOW, LIMITS)
    with pytest.raises(QuestionClosed):
        await store.answer(CODE, student, "0000000a", "14.0", NOW, LIMITS)
    room = await store.get(CODE, NOW)
    assert room is not None and room.answers == {}


async def test_an_answer_from_someone_not_in_the_room_is_refused(store: RoomStore) -> None:
    await _room_with(store, students=1)
    await store.lead(CODE, TOKEN, Lead(question=_question()), NOW, LIMITS)
    with pytest.raises(NotInRoom):
        await store.answer(CODE, new_student_id(), "0000000a", "14.0", NOW, LIMITS)


async def test_a_reveal_needs_a_question_and_a_second_one_changes_nothing(
        store: RoomStore) -> None:
    await _room_with(store)
    with pytest.raises(QuestionClosed):
        await store.lead(CODE, TOKEN, Lead(reveal=True), NOW, LIMITS)
    await store.lead(CODE, TOKEN, Lead(question=_question()), NOW, LIMITS)
    await store.lead(CODE, TOKEN, Lead(reveal=True), NOW, LIMITS)
    revealed = await store.stamps([CODE], NOW)
    await store.lead(CODE, TOKEN, Lead(reveal=True), NOW, LIMITS)
    assert await store.stamps([CODE], NOW) == revealed
    question = await store.question(CODE, NOW)
    assert question is not None and question.revealed


async def test_a_student_who_leaves_takes_their_answer(store: RoomStore) -> None:
    first, second = await _room_with(store, students=2)
    await store.lead(CODE, TOKEN, Lead(question=_question()), NOW, LIMITS)
    await store.answer(CODE, first, "0000000a", "14.0", NOW, LIMITS)
    await store.leave(CODE, first, NOW, LIMITS)
    await store.leave(CODE, first, NOW, LIMITS)  # twice: nothing more
    room = await store.get(CODE, NOW)
    assert room is not None
    assert [s.id for s in room.students] == [second] and room.answers == {}


async def test_an_ended_room_says_so_for_a_while_then_is_not_found(store: RoomStore) -> None:
    (student,) = await _room_with(store, students=1)
    await store.lead(CODE, TOKEN, Lead(question=_question()), NOW, LIMITS)
    await store.lead(CODE, TOKEN, Lead(end=True), NOW, LIMITS)
    lookups = [lambda at: store.get(CODE, at), lambda at: store.question(CODE, at),
               lambda at: store.join(CODE, student, "", at, LIMITS),
               lambda at: store.answer(CODE, student, "0000000a", "14.0", at, LIMITS),
               lambda at: store.lead(CODE, TOKEN, Lead(address="/"), at, LIMITS)]
    for at in (NOW, NOW + LIMITS.ended_seconds - 1):
        assert await store.stamps([CODE], at) == {}
        for lookup in lookups:
            with pytest.raises(RoomEnded):
                await lookup(at)
    forgotten = NOW + LIMITS.ended_seconds
    assert await store.get(CODE, forgotten) is None
    for lookup in lookups[1:]:
        with pytest.raises(RoomNotFound):
            await lookup(forgotten)


async def test_the_store_keeps_as_many_ended_codes_as_rooms_the_oldest_going_first(
        store: RoomStore) -> None:
    two = replace(LIMITS, rooms=2)
    ended = ["AAAAAAAA", "BBBBBBBB", "CCCCCCCC"]
    for n, code in enumerate(ended):
        assert await store.create(code, TOKEN, NOW + n, two)
        await store.lead(code, TOKEN, Lead(end=True), NOW + n, two)
    with pytest.raises(RoomNotFound):
        await store.join(ended[0], new_student_id(), "", NOW + 3, two)
    for code in ended[1:]:
        with pytest.raises(RoomEnded):
            await store.join(code, new_student_id(), "", NOW + 3, two)


async def test_answers_sent_at_once_are_each_counted_once(store: RoomStore) -> None:
    students = await _room_with(store, students=50)
    await store.lead(CODE, TOKEN, Lead(question=_question()), NOW, LIMITS)
    start = await store.stamps([CODE], NOW)
    # Every student answers twice at once: the second replaces the first.
    await asyncio.gather(*(store.answer(CODE, s, "0000000a", f"{n}.0", NOW, LIMITS)
                           for n, s in enumerate(students)),
                         *(store.answer(CODE, s, "0000000a", f"{n}.5", NOW, LIMITS)
                           for n, s in enumerate(students)))
    room = await store.get(CODE, NOW)
    assert room is not None
    assert len(room.answers) == 50
    assert all(room.answers[s] in (f"{n}.0", f"{n}.5") for n, s in enumerate(students))
    assert room.crowd == start[CODE][1] + 100


_WRITER = """
import asyncio, sys
from gradient_lab.rooms.codes import new_student_id
from gradient_lab.rooms.sqlite import SqliteStore
from gradient_lab.rooms.model import Limits
async def main():
    store = SqliteStore(sys.argv[1])
    limits = Limits(rooms=50, students=500, idle_seconds=600.0, message_bytes=4096)
    for n in range(100):
        student = new_student_id()
        await store.join("K7MXQ2PD", student, "", 1_000_000.0, limits)
        await store.answer("K7MXQ2PD", student, "0000000a", f"{n}.0", 1_000_000.0, limits)
    await store.aclose()
asyncio.run(main())
"""


async def test_sqlite_counts_every_answer_from_several_processes_at_once(tmp_path: Path) -> None:
    path = tmp_path / "rooms.sqlite3"
    store = SqliteStore(path)
    limits = replace(LIMITS, students=500)
    assert await store.create(CODE, TOKEN, NOW, limits)
    await store.lead(CODE, TOKEN, Lead(question=_question()), NOW, limits)
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path)],
                                cwd=Path(__file__).parents[2], stderr=subprocess.PIPE)
               for _ in range(3)]
    for writer in writers:
        _, stderr = writer.communicate(timeout=60)
        assert writer.returncode == 0, stderr.decode()
    room = await store.get(CODE, NOW)
    await store.aclose()
    assert room is not None
    assert len(room.students) == len(room.answers) == 300
    assert room.crowd == 1 + 600  # the question, then a join and an answer each


async def test_a_store_that_cannot_be_reached_is_a_503_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    for store in (SqliteStore(tmp_path / "a-file" / "rooms.sqlite3"),
                  RedisStore(f"redis://127.0.0.1:{_closed_port()}/0")):
        with pytest.raises(StoreUnavailable):
            await store.get(CODE, NOW)
        with pytest.raises(StoreUnavailable):
            await store.create(CODE, TOKEN, NOW, LIMITS)
        await store.aclose()


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
