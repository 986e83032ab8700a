"""The one interface to where rooms live; sqlite.py (one machine) and redis.py (replicas on
several) implement it, and tests/rooms/test_room_store.py holds both to the same contract.

Every method is atomic: a limit, a token or an open question is checked in the same
transaction (SQLite) or script (Redis) that writes. `now` is the caller's clock, in seconds.

A room its teacher ends leaves its code behind for `limits.ended_seconds` (at most
`limits.rooms` such codes, the oldest making way): where a lookup by that code would raise
RoomNotFound or give None, it raises RoomEnded instead, on every replica. A room that expired
leaves nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Protocol

from gradient_lab.rooms.model import Lead, Limits, Question, Room, Stamp


class RoomStore(Protocol):
    async def create(self, code: str, token_hash: str, now: float, limits: Limits) -> bool:
        """Open a room; False if the code is taken. When the rooms are full, those no teacher
        has led (an action, or their page's stream) for `limits.unattended_seconds` are taken
        back first. Raises RoomsFull."""

    async def join(self, code: str, student: str, nickname: str, now: float,
                   limits: Limits) -> None:
        """Add a student, or keep one who joins again with the same id (nickname updated).
        Raises RoomNotFound, RoomEnded, RoomFull."""

    async def leave(self, code: str, student: str, now: float, limits: Limits) -> None:
        """Remove a student and their answer; nothing if they are not there."""

    async def lead(self, code: str, token_hash: str, lead: Lead, now: float,
                   limits: Limits) -> None:
        """The teacher's action. A new question clears the answers; an end keeps the code as
        ended. Raises RoomNotFound, RoomEnded, NotTeacher, QuestionClosed (a reveal with no
        question open)."""

    async def question(self, code: str, now: float) -> Question | None:
        """The room's question. Raises RoomNotFound, RoomEnded."""

    async def answer(self, code: str, student: str, question: str, value: str, now: float,
                     limits: Limits) -> None:
        """Record a student's answer to question `question`; a second one replaces the first.
        Raises RoomNotFound, RoomEnded, NotInRoom, QuestionClosed (another question, or
        revealed)."""

    async def get(self, code: str, now: float) -> Room | None:
        """The whole room, or None if there is no live room with this code. Raises
        RoomEnded."""

    async def stamps(self, codes: Iterable[str], now: float) -> dict[str, Stamp]:
        """The stamp of each live room among `codes` (ended or expired ones are left out)."""

    async def aclose(self) -> None:
        """Let go of the connection."""


def dump_question(question: Question) -> str:
    """A question as the stores keep it: JSON, without `revealed` (kept beside it)."""
    return json.dumps({"id": question.id, "kind": question.kind, "prompt": question.prompt,
                       "params": question.params, "choices": list(question.choices),
                       "answer": question.answer, "where": question.where,
                       "low": question.low, "high": question.high,
                       "x_range": question.x_range, "y_range": question.y_range})


def load_question(text: str | None, revealed: bool) -> Question | None:
    if not text:
        return None
    plain = json.loads(text)
    x_range, y_range = (plain.get(name) for name in ("x_range", "y_range"))
    return Question(plain["id"], plain["kind"], plain["prompt"], plain["params"],
                    tuple(plain["choices"]), plain["answer"], revealed, plain.get("where", ""),
                    plain.get("low"), plain.get("high"),
                    None if x_range is None else (x_range[0], x_range[1]),
                    None if y_range is None else (y_range[0], y_range[1]))
