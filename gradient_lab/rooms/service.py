"""Class mode's actions, as the routes call them: each checks its input, asks the store, and
nudges this process's hub so that its own screens hear of the change at once."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import TypeVar

from gradient_lab.rooms import codes
from gradient_lab.rooms.errors import (
    NotTeacher,
    RoomNotFound,
    not_teacher,
    question_closed,
    room_not_found,
)
from gradient_lab.rooms.guard import Attempts
from gradient_lab.rooms.hub import Hub, Watcher
from gradient_lab.rooms.model import Lead, Limits, Question
from gradient_lab.rooms.questions import check_address, check_answer, check_question
from gradient_lab.rooms.store import RoomStore

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Started:
    code: str
    shown: str
    token: str


@dataclass(frozen=True, slots=True)
class Joined:
    code: str
    shown: str
    student: str
    nickname: str


@dataclass(frozen=True, slots=True)
class Rooms:
    store: RoomStore
    hub: Hub
    attempts: Attempts = field(default_factory=Attempts)
    clock: Callable[[], float] = time.time

    async def start(self, limits: Limits) -> Started:
        """A new room, and the token that leads it (given once, kept only as its hash)."""
        token = codes.new_token()
        while True:  # a taken code, once in 2^40 / rooms tries, draws another
            code = codes.new_code()
            if await self.store.create(code, codes.token_hash(token), self.clock(), limits):
                return Started(code, codes.shown(code), token)

    async def join(self, typed: str, client: str, nickname: str, student: str | None,
                   limits: Limits) -> Joined:
        code = self._code(typed)
        student = student or codes.new_student_id()
        await self._guarded(client, code, lambda: self.store.join(
            code, student, nickname, self.clock(), limits))
        self.hub.nudge()
        return Joined(code, codes.shown(code), student, nickname)

    async def leave(self, code: str, student: str, limits: Limits) -> None:
        await self.store.leave(code, student, self.clock(), limits)
        self.hub.nudge()

    async def move(self, code: str, client: str, token: str, address: str,
                   limits: Limits) -> None:
        lead = Lead(address=check_address(address, limits.message_bytes))
        await self._lead(code, token, lead, limits, client)

    async def ask(self, code: str, client: str, token: str, question: Question,
                  limits: Limits) -> Question:
        question = check_question(replace(question, id=codes.new_question_id(), revealed=False),
                                  limits.message_bytes)
        await self._lead(code, token, Lead(question=question), limits, client)
        return question

    async def reveal(self, code: str, client: str, token: str, limits: Limits) -> None:
        await self._lead(code, token, Lead(reveal=True), limits, client)

    async def end(self, code: str, client: str, token: str, limits: Limits) -> None:
        await self._lead(code, token, Lead(end=True), limits, client)

    async def is_teacher(self, code: str, client: str, token: str, limits: Limits) -> bool:
        """Whether `token` leads the room; if so the room's idle clock starts again."""
        try:
            await self._lead(code, token, Lead(), limits, client)
        except (RoomNotFound, NotTeacher):
            return False
        return True

    async def answer(self, code: str, client: str, student: str, question: str, value: str,
                     limits: Limits) -> None:
        current = await self._guarded(client, code,
                                      lambda: self.store.question(code, self.clock()))
        if current is None or current.id != question:
            raise question_closed("this question is closed: the teacher asked another")
        await self.store.answer(code, student, question, check_answer(current, value),
                                self.clock(), limits)
        self.hub.nudge()

    async def watch(self, code: str, client: str) -> Watcher:
        return await self._guarded(client, code, lambda: self.hub.watch(code))

    async def _lead(self, code: str, token: str, lead: Lead, limits: Limits,
                    client: str) -> None:
        if not token:
            raise not_teacher()
        await self._guarded(client, code, lambda: self.store.lead(
            code, codes.token_hash(token), lead, self.clock(), limits))
        self.hub.nudge()

    def _code(self, typed: str) -> str:
        return codes.normalize(typed) or typed

    async def _guarded(self, client: str, code: str, lookup: Callable[[], Awaitable[T]]) -> T:
        """A lookup by a code someone typed, braked for a client address that keeps missing."""
        self.attempts.check(client, self.clock())
        try:
            if not codes.CODE_PATTERN.match(code):
                raise room_not_found(code)
            return await lookup()
        except RoomNotFound:
            self.attempts.missed(client, self.clock())
            raise


@asynccontextmanager
async def open_rooms(setting: str) -> AsyncIterator[Rooms]:
    """The rooms of APP_ROOM_STORE: a redis:// URL, or else a SQLite file's path."""
    store: RoomStore
    if setting.startswith(("redis://", "rediss://", "unix://")):
        from gradient_lab.rooms.redis import RedisStore

        store = RedisStore(setting)
    else:
        from gradient_lab.rooms.sqlite import SqliteStore

        store = SqliteStore(setting)
    hub = Hub(store)
    try:
        yield Rooms(store, hub)
    finally:
        await hub.aclose()
        await store.aclose()
