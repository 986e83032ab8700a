"""Class mode's API: /api/rooms/... (gradient_lab/rooms holds what they do).

The teacher's token travels only as an HttpOnly cookie scoped to its room's path, set when the
room starts: the teacher's browser sends it with every action and with its event stream, and
no script (nor a student's page) can read it. Every teacher action checks it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from gradient_lab.errors import AppError
from gradient_lab.rooms.codes import normalize
from gradient_lab.rooms.errors import room_not_found
from gradient_lab.rooms.hub import Snapshot, Watcher
from gradient_lab.rooms.model import Limits, Question
from gradient_lab.rooms.qr import qr_svg
from gradient_lab.rooms.service import Rooms
from gradient_lab.settings import Settings, get_settings
from gradient_lab.web.client import ClientDep
from gradient_lab.web.joining import join_base
from gradient_lab.web.schemas import rooms as schemas

router = APIRouter(tags=["rooms"])

TEACHER_COOKIE = "room_teacher"
PING_SECONDS = 15.0  # a comment line this often keeps proxies from closing a quiet stream
# A stream ends after this long and the browser's EventSource opens the next one at once (the
# room's whole state comes first on each): uvicorn waits for open responses before it stops,
# so this bounds a restart's wait, and a new replica gets its share of the screens.
STREAM_SECONDS = 60.0


async def get_rooms(request: Request) -> Rooms:
    rooms: Rooms = request.app.state.rooms
    return rooms


async def get_limits(settings: Annotated[Settings, Depends(get_settings)]) -> Limits:
    return Limits(rooms=settings.rooms_max, students=settings.room_students_max,
                  idle_seconds=settings.room_idle_minutes * 60,
                  message_bytes=settings.room_message_bytes,
                  starts=settings.room_starts_per_hour,
                  unattended_seconds=settings.room_unattended_minutes * 60,
                  streams_per_client=settings.room_streams_per_client)


RoomsDep = Annotated[Rooms, Depends(get_rooms)]
LimitsDep = Annotated[Limits, Depends(get_limits)]


def _token(request: Request) -> str:
    return request.cookies.get(TEACHER_COOKIE, "")


@router.post("/api/rooms", status_code=201, response_model=schemas.Started)
async def start(body: schemas.Empty, request: Request, response: Response, rooms: RoomsDep,
                limits: LimitsDep, client: ClientDep,
                settings: Annotated[Settings, Depends(get_settings)]) -> schemas.Started:
    """Start a room. The reply sets the teacher's cookie, which leads it."""
    started = await rooms.start(client, limits)
    response.set_cookie(TEACHER_COOKIE, started.token, path=f"/api/rooms/{started.code}",
                        max_age=24 * 3600, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")
    base = join_base(request, settings)
    return schemas.Started(code=started.code, shown=started.shown,
                           link=f"{base.url}?join={started.code}", unreachable=base.unreachable)


@router.post("/api/rooms/{code}/join", response_model=schemas.Joined)
async def join(code: str, body: schemas.Join, request: Request, rooms: RoomsDep,
               limits: LimitsDep, client: ClientDep) -> object:
    return await rooms.join(code, client, body.nickname, body.student, limits)


@router.post("/api/rooms/{code}/leave", response_model=schemas.Done)
async def leave(code: str, body: schemas.Leave, rooms: RoomsDep,
                limits: LimitsDep) -> schemas.Done:
    await rooms.leave(code, body.student, limits)
    return schemas.Done(code=code)


@router.post("/api/rooms/{code}/address", response_model=schemas.Done)
async def move(code: str, body: schemas.Move, request: Request, rooms: RoomsDep,
               limits: LimitsDep, client: ClientDep) -> schemas.Done:
    """The teacher's page moved: every following screen opens `address`."""
    await rooms.move(code, client, _token(request), body.address, limits)
    return schemas.Done(code=code)


@router.post("/api/rooms/{code}/question", status_code=201, response_model=schemas.Asked)
async def ask(code: str, body: schemas.Ask, request: Request, rooms: RoomsDep,
              limits: LimitsDep, client: ClientDep) -> object:
    """Put a question to the class; the previous one and its answers are gone."""
    question = Question("", body.kind, body.prompt, dict(body.params), tuple(body.choices),
                        str(body.answer), where=body.where, low=body.low, high=body.high,
                        x_range=body.x_range, y_range=body.y_range)
    return await rooms.ask(code, client, _token(request), question, limits)


@router.post("/api/rooms/{code}/reveal", response_model=schemas.Done)
async def reveal(code: str, body: schemas.Empty, request: Request, rooms: RoomsDep,
                 limits: LimitsDep, client: ClientDep) -> schemas.Done:
    await rooms.reveal(code, client, _token(request), limits)
    return schemas.Done(code=code)


@router.post("/api/rooms/{code}/end", response_model=schemas.Done)
async def end(code: str, body: schemas.Empty, request: Request, response: Response,
              rooms: RoomsDep, limits: LimitsDep, client: ClientDep) -> schemas.Done:
    await rooms.end(code, client, _token(request), limits)
    response.delete_cookie(TEACHER_COOKIE, path=f"/api/rooms/{code}")
    return schemas.Done(code=code)


@router.post("/api/rooms/{code}/answer", response_model=schemas.Done)
async def answer(code: str, body: schemas.Answer, request: Request, rooms: RoomsDep,
                 limits: LimitsDep, client: ClientDep) -> schemas.Done:
    """A student's answer; a second one to the same question replaces the first."""
    await rooms.answer(code, client, body.student, body.question, str(body.value),
                       limits)
    return schemas.Done(code=code)


@router.get("/api/rooms/{code}/events", response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}},
                             "description": "Server-sent events: `room` (address and question), "
                                            "`crowd` (students, answers, tally), `ended`."}})
async def events(code: str, request: Request, rooms: RoomsDep, limits: LimitsDep,
                 client: ClientDep, student: schemas.StudentId | None = None) -> Response:
    """`student`: a joined student's id, which gets past the guessing brake (the teacher's
    cookie does too)."""
    token = _token(request)
    teacher = await rooms.is_teacher(code, token, limits)
    watcher = await rooms.watch(code, client, teacher, student, limits)
    return _Events(watcher, _stream(rooms, watcher, token if teacher else "", limits))


class _Events(StreamingResponse):
    """A screen's stream, whose watcher is let go however the response ends: even when the
    screen leaves before its first event, when the stream's own `finally` never runs."""

    def __init__(self, watcher: Watcher, stream: AsyncIterator[bytes]) -> None:
        # no-cache and X-Accel-Buffering: no proxy holds the events back; GZipMiddleware
        # leaves text/event-stream alone.
        super().__init__(stream, media_type="text/event-stream",
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self.watcher = watcher

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.watcher.close()


@router.get("/api/clock")
async def clock() -> Response:
    """The server's clock, in ms since the epoch: every screen of a class plays a race from
    the moment the teacher pressed Play by this one clock (static/room.js)."""
    return Response(b'{"now": %d}' % round(time.time() * 1000), media_type="application/json",
                    headers={"Cache-Control": "no-store"})


@router.get("/api/rooms/{code}/qr.svg", response_class=Response,
            responses={200: {"content": {"image/svg+xml": {}}}})
async def qr(code: str, request: Request,
             settings: Annotated[Settings, Depends(get_settings)]) -> Response:
    """The join link as a QR code, for the projector."""
    valid = normalize(code)
    if valid is None:
        raise room_not_found(code)
    link = f"{join_base(request, settings).url}?join={valid}"
    return Response(qr_svg(link), media_type="image/svg+xml",
                    headers={"Cache-Control": "private, max-age=86400"})


async def _stream(rooms: Rooms, watcher: Watcher, token: str,
                  limits: Limits) -> AsyncIterator[bytes]:
    """The room's events for one screen, until the room ends, the screen leaves, or
    STREAM_SECONDS pass."""
    last, ends = None, time.monotonic() + STREAM_SECONDS
    try:
        yield b"retry: 1000\n\n"  # EventSource reconnects this soon after a stream ends
        while time.monotonic() < ends:
            snapshot: Snapshot | None = await watcher.next(
                min(PING_SECONDS, max(0.0, ends - time.monotonic())))
            if watcher.ended:
                yield b"event: ended\ndata: {}\n\n"
                return
            if snapshot is None:
                yield b": ping\n\n"
                if token:  # the teacher's page is open: the room is not idle
                    await _keep(rooms, watcher.code, token, limits)
                continue
            if last is None or snapshot.stamp[0] != last.stamp[0]:
                yield b"event: room\ndata: " + snapshot.room + b"\n\n"
            if last is None or snapshot.stamp[1] != last.stamp[1]:
                crowd = snapshot.crowd_teacher if token else snapshot.crowd
                yield b"event: crowd\ndata: " + crowd + b"\n\n"
            last = snapshot
    finally:
        watcher.close()


async def _keep(rooms: Rooms, code: str, token: str, limits: Limits) -> None:
    try:
        await rooms.is_teacher(code, token, limits)
    except AppError:  # the store is down: the stream goes on, and the hub says if the room ends
        pass
