"""What a room is: its teacher's address, its question, its students and their answers."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of class mode, as plain values (from the APP_ROOM* settings)."""

    rooms: int = 200
    students: int = 200
    idle_seconds: float = 3600.0
    message_bytes: int = 16384
    starts: int = 10  # rooms one client may start in an hour
    unattended_seconds: float = 600.0  # a full server takes back rooms unled for this long
    streams_per_client: int = 64  # event streams one client holds open in this process
    # An ended room's code says it ended (not "no such room") for this long; the store keeps
    # at most `rooms` such codes, the oldest making way.
    ended_seconds: float = 3600.0


@dataclass(frozen=True, slots=True)
class Question:
    """A question the teacher put to the class. `prompt` names a string in static/i18n/*.json
    (the params fill it in), so each student reads it in their own language."""

    id: str
    kind: str  # "number", "choice", "yesno" or "point"
    prompt: str
    params: dict[str, str]
    choices: tuple[str, ...]
    answer: str  # the true value, as its canonical text: hidden until revealed
    revealed: bool = False
    where: str = ""  # the lab it was asked on (its page's path): shown only there
    # A number question's answers lie within [low, high] (questions.py sets them).
    low: float | None = None
    high: float | None = None
    # A point question's answers lie on the plot it was asked on: x in x_range, y in y_range.
    x_range: tuple[float, float] | None = None
    y_range: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class Student:
    id: str
    nickname: str  # "" when the student gave none


@dataclass(frozen=True, slots=True)
class Room:
    """A room as the store holds it. `version` counts changes to what every screen shows (the
    address, the question); `crowd` counts joins, leaves and answers."""

    code: str
    version: int
    crowd: int
    address: str
    question: Question | None
    students: tuple[Student, ...]
    answers: dict[str, str] = field(default_factory=dict)  # student id -> value, this question


@dataclass(frozen=True, slots=True)
class Lead:
    """One thing a teacher does: move to an address, ask, reveal, or end the room. All fields
    at their defaults only proves the token and keeps the room alive."""

    address: str | None = None
    question: Question | None = None
    reveal: bool = False
    end: bool = False


Stamp = tuple[int, int]  # (version, crowd): what a poller compares to see that a room changed
