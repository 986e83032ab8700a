"""Class mode's refusals, each an AppError with its own status, type and hint."""

from __future__ import annotations

from gradient_lab.errors import AppError


class RoomNotFound(AppError):
    """No live room has this code: mistyped, expired, or ended by its teacher long ago."""

    status = 404
    type = "room_not_found"


class RoomEnded(AppError):
    """A room its teacher ended lately (Limits.ended_seconds): the code was right, the class is
    over. A screen that reconnects, reloads or joins just after the end is told so."""

    status = 410
    type = "room_ended"


class NotTeacher(AppError):
    """A teacher's action without the room's teacher token."""

    status = 403
    type = "not_teacher"


class NotInRoom(AppError):
    """An answer from a student id the room does not know (left, or never joined)."""

    status = 403
    type = "not_in_room"


class RoomsFull(AppError):
    """The server already holds APP_ROOMS_MAX live rooms."""

    status = 409
    type = "rooms_full"


class RoomFull(AppError):
    """The room already has APP_ROOM_STUDENTS_MAX students."""

    status = 409
    type = "room_full"


class QuestionClosed(AppError):
    """An answer to a question that is no longer open, or a reveal with none open."""

    status = 409
    type = "question_closed"


class TooManyAttempts(AppError):
    """Too many codes from one address that named no room: someone may be guessing."""

    status = 429
    type = "too_many_attempts"


class TooManyRooms(AppError):
    """Too many rooms started from one address within the hour: no one takes every room."""

    status = 429
    type = "too_many_rooms"


class TooManyStreams(AppError):
    """Too many screens following from one address, or on one room."""

    status = 429
    type = "too_many_streams"


class StoreUnavailable(AppError):
    """The room store (SQLite file or Redis) did not answer."""

    status = 503
    type = "room_store_unavailable"


def room_not_found(code: str) -> RoomNotFound:
    return RoomNotFound(f"no room has the code {code}: it may have ended or expired",
                        hint_key="hint.room_not_found")


def room_ended(code: str) -> RoomEnded:
    return RoomEnded(f"the class {code} has ended: its teacher ended it",
                     hint_key="hint.room_ended")


def not_teacher() -> NotTeacher:
    return NotTeacher("only the teacher who started this room can lead it",
                      hint_key="hint.room_not_teacher")


def unavailable(error: Exception) -> StoreUnavailable:
    return StoreUnavailable(f"the room store did not answer: {error}",
                            hint_key="hint.room_store_unavailable")


def not_in_room() -> NotInRoom:
    return NotInRoom("this student is not in the room (they left, or it forgot them)",
                     hint_key="hint.room_not_in_room")


def rooms_full(limit: int) -> RoomsFull:
    return RoomsFull(f"this server already has {limit:,} rooms open, its limit",
                     hint_key="hint.rooms_full")


def room_full(limit: int) -> RoomFull:
    return RoomFull(f"this room already has {limit:,} students, its limit",
                    hint_key="hint.room_full")


def question_closed(why: str) -> QuestionClosed:
    return QuestionClosed(why, hint_key="hint.room_question_closed")
