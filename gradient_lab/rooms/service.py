"""Class mode's actions, as the routes call them: each checks its input, asks the store, and
nudges this process's hub so that its own screens hear of the change at once."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import TypeVar

from gradient_lab.errors import AppError
from gradient_lab.rooms import codes
from gradient_lab.rooms.errors import (
    NotTeacher,
    RoomEnded,
    RoomNotFound,
    not_teacher,
    question_closed,
    room_not_found,
)
from gradient_lab.rooms.guard import Attempts, Starts, Streams
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
    starts: Starts = field(default_factory=Starts)
    streams: Streams = field(default_factory=Streams)
    clock: Callable[[], float] = time.time

    async def start(self, client: str, limits: Limits) -> Started:
        """A new room, and the token that leads it (given once, kept only as its hash)."""
        self.starts.check(client, limits.starts, self.clock())
        token = codes.new_token()
        while True:  # a taken code, once in 2^40 / rooms tries, draws another
            code = codes.new_code()
            if await self.store.create(code, codes.token_hash(token), self.clock(), limits):
                self.starts.add(client, limits.starts, self.clock())
                return Started(code, codes.shown(code), token)

    async def join(self, typed: str, client: str, nickname: str, student: str | None,
                   limits: Limits) -> Joined:
        code = self._code(typed)
        joined = student or codes.new_student_id()
        await self._guarded(client, code, lambda: self.store.join(
            code, joined, nickname, self.clock(), limits),
            member=lambda: self._is_student(code, student))
        self.hub.nudge()
        return Joined(code, codes.shown(code), joined, nickname)

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

    async def is_teacher(self, code: str, token: str, limits: Limits) -> bool:
        """Whether `token` leads the room; if so the room's idle clock starts again. Never
        braked: it tells no one without the token whether the room exists."""
        if not token or not codes.CODE_PATTERN.match(code):
            return False
        try:
            await self.store.lead(code, codes.token_hash(token), Lead(), self.clock(), limits)
        except (RoomNotFound, RoomEnded, NotTeacher):
            return False
        return True

    async def answer(self, code: str, client: str, student: str, question: str, value: str,
                     limits: Limits) -> None:
        async def answer() -> None:
            current = await self.store.question(code, self.clock())
            if current is None or current.id != question:
                raise question_closed("this question is closed: the teacher asked another")
            await self.store.answer(code, student, question, check_answer(current, value),
                                    self.clock(), limits)
        await self._guarded(client, code, answer)  # only a student of the room gets past
        self.hub.nudge()

    async def watch(self, code: str, client: str, teacher: bool, student: str | None,
                    limits: Limits) -> Watcher:
        """A screen's watcher: while `client` is braked, only the teacher's or a student's.
        Raises TooManyStreams past the client's streams, or twice the room's students."""
        async def member() -> bool:
            return teacher or await self._is_student(code, student)
        let_go = self.streams.open(client, code, limits.streams_per_client, 2 * limits.students)
        try:
            watcher = await self._guarded(client, code, lambda: self.hub.watch(code),
                                          member=member)
        except BaseException:
            let_go()
            raise
        watcher.on_close = let_go
        return watcher

    async def _lead(self, code: str, token: str, lead: Lead, limits: Limits,
                    client: str) -> None:
        if not token:
            raise not_teacher()
        # Only the token gets past the brake: without it every refusal reads the same.
        await self._guarded(client, code, lambda: self.store.lead(
            code, codes.token_hash(token), lead, self.clock(), limits))
        self.hub.nudge()

    async def _is_student(self, code: str, student: str | None) -> bool:
        room = await self.store.get(code, self.clock()) if student else None
        return room is not None and any(s.id == student for s in room.students)

    def _code(self, typed: str) -> str:
        return codes.normalize(typed) or typed

    async def _guarded(self, client: str, code: str, lookup: Callable[[], Awaitable[T]],
                       member: Callable[[], Awaitable[bool]] | None = None) -> T:
        """A lookup by a code someone typed. A client whose codes keep missing is braked:
        until the misses leave the window, whatever its lookup meets reads as the brake, so
        it learns nothing of which rooms exist, and only a lookup that succeeds for a room's
        own people (`member` first, if the lookup alone would not prove it) gets through."""
        braked = self.attempts.braked(client, self.clock())
        try:
            if not codes.CODE_PATTERN.match(code):
                raise room_not_found(code)
            if braked is not None and member is not None and not await member():
                raise braked
            return await lookup()
        except RoomNotFound:
            self.attempts.missed(client, self.clock())
            if braked is not None:
                raise braked from None
            raise
        except AppError as error:
            if braked is not None and error is not braked:
                raise braked from None
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
