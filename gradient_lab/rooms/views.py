"""What a screen is sent: the room (the same for everyone) and its crowd (the teacher's view
has the live tally, a point question's taps, and the nicknames; the class sees the tally and
the taps once the answer is revealed)."""

from __future__ import annotations

from dataclasses import asdict

from gradient_lab.rooms.codes import shown
from gradient_lab.rooms.model import Question, Room
from gradient_lab.rooms.questions import is_right, tally, taps


def current_question(room: Room) -> Question | None:
    """The room's question, while the teacher is on the lab it was asked on: a student who
    arrives on another lab is not asked about a page they never saw."""
    question = room.question
    if question is None or not question.where:
        return question
    return question if room.address.split("#")[0].split("?")[0] == question.where else None


def room_view(room: Room) -> dict[str, object]:
    question = current_question(room)
    return {
        "code": room.code, "shown": shown(room.code), "version": room.version,
        "address": room.address,
        "question": None if question is None else {
            "id": question.id, "kind": question.kind, "prompt": question.prompt,
            "params": question.params, "choices": list(question.choices),
            "revealed": question.revealed, "low": question.low, "high": question.high,
            "x_range": question.x_range, "y_range": question.y_range,
            # Never before the reveal: a student's browser would show it to anyone who looks.
            "answer": question.answer if question.revealed else None,
        },
    }


def crowd_view(room: Room, teacher: bool) -> dict[str, object]:
    question = current_question(room)
    answers = list(room.answers.values()) if question else []
    shows_tally = question is not None and (teacher or question.revealed)
    return {
        "students": len(room.students),
        "answered": len(answers) if question else 0,
        "right": sum(is_right(question, a) for a in answers)
        if question and question.revealed else None,
        "bars": [asdict(bar) for bar in tally(question, answers)]
        if question and shows_tally else None,
        "taps": asdict(taps(question, answers))
        if question and question.kind == "point" and shows_tally else None,
        "nicknames": [s.nickname for s in room.students if s.nickname] if teacher else None,
    }
