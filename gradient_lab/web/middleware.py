"""The server's two ASGI middlewares: the API's door, and the pages' remembered choices.

Plain ASGI rather than @app.middleware("http"), which wraps every request in extra tasks and
streams.
"""

from __future__ import annotations

import asyncio
import json
import re
from urllib.parse import urlsplit

from fastapi.responses import Response
from starlette.datastructures import Headers, MutableHeaders, QueryParams
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gradient_lab import i18n
from gradient_lab.errors import (
    AppError,
    Forbidden,
    RequestInvalid,
    Timeout,
    TooLarge,
    UnsupportedMediaType,
    envelope,
)
from gradient_lab.web.edge import host_allowed

_WRITES = frozenset(("POST", "PUT", "PATCH", "DELETE"))


class GuardApi:
    """What /api/* reads: JSON, of at most `request_bytes`, sent by a page of this server.

    A page on another site can make a student's browser post to a lab on their laptop or
    classroom network; such a request carries that site's Origin (browsers send it on every
    cross-site POST) or a body that is not JSON (a form, text/plain, which need no preflight).
    Both are refused before anything runs. `origins` lists sites allowed besides this one (a
    reverse proxy's public name, where it changes the Host).
    """

    def __init__(self, app: ASGIApp, *, request_bytes: int, origins: frozenset[str],
                 hosts: frozenset[str], body_seconds: float = 30.0) -> None:
        self.app = app
        self.request_bytes = request_bytes
        self.origins = origins
        self.hosts = hosts
        self.body_seconds = body_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/api/"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host")
        if host is not None and not host_allowed(host, self.hosts):
            # A page whose name was re-pointed at this lab (DNS rebinding): web/edge.py.
            await _answer(send, Forbidden(f"this lab does not answer to the name {host[:100]}",
                                          hint_key="hint.unknown_host"), headers)
            return
        if scope["method"] not in _WRITES:
            await self.app(scope, receive, send)
            return
        try:
            self._check(headers)
            body = await _read(receive, self.request_bytes, self.body_seconds)
            _check_text(body)
        except AppError as error:
            await _answer(send, error, headers)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # after the body: a disconnect, when the client leaves
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def _check(self, headers: Headers) -> None:
        origin = headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != headers.get("host") and \
                origin not in self.origins:
            raise Forbidden(f"this lab does not take requests from pages of {origin}",
                            hint_key="hint.cross_site")
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise UnsupportedMediaType(
                f"the request body must be application/json, not {kind or 'missing'}",
                hint_key="hint.request_invalid")
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.request_bytes:
            raise _too_large(self.request_bytes)


async def _read(receive: Receive, limit: int, seconds: float) -> bytes:
    """The whole body, refused as soon as it passes `limit` bytes (chunked ones too), or
    `seconds` pass before it is in (a client that sends it a byte at a time)."""
    try:
        async with asyncio.timeout(seconds):
            return await _read_within(receive, limit)
    except TimeoutError:
        raise Timeout(f"the request's body did not arrive within {seconds:g} s",
                      hint_key="hint.request_invalid", repeatable=False) from None


async def _read_within(receive: Receive, limit: int) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


# A \uXXXX escape of a UTF-16 surrogate: JSON readers take one alone, but it is no character,
# and every writer after them (orjson, UTF-8) refuses it.
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _check_text(body: bytes) -> None:
    """Refuse a body whose strings hold half a surrogate pair (a lone \\ud800)."""
    paired = -1  # where the low half of the last high one starts
    for escape in _SURROGATE.finditer(body):
        start = escape.start()
        if start == paired:
            continue
        before = start
        while before and body[before - 1] == 0x5C:  # the backslashes just before it
            before -= 1
        if (start - before) % 2:  # an escaped backslash, then the text "ud800"
            continue
        unit = int(escape.group()[2:], 16)
        after = _SURROGATE.match(body, escape.end())
        if unit < 0xDC00 and after is not None and int(after.group()[2:], 16) >= 0xDC00:
            paired = escape.end()
            continue
        raise RequestInvalid(
            f"the request's text holds {escape.group().decode()}, half of a UTF-16 "
            "surrogate pair, which is no character", hint_key="hint.request_invalid")


def _too_large(limit: int) -> TooLarge:
    return TooLarge(f"the request is larger than {limit:,} bytes",
                    hint_key="hint.program_too_large")


async def _answer(send: Send, error: AppError, headers: Headers) -> None:
    lang = i18n.pick_language(headers.get("accept-language"))
    body = json.dumps(envelope(error, lang)).encode()
    await send({"type": "http.response.start", "status": error.status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


_PAGE_CHOICES = {"lang": i18n.LANGUAGES, "present": ("0", "1")}
_YEAR = 365 * 24 * 3600


class RememberPageChoices:
    """A page link that picks the language or presentation mode is remembered (a cookie:
    the client keeps the state, the server stays stateless)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or not scope["query_string"]:
            await self.app(scope, receive, send)
            return
        query = QueryParams(scope["query_string"])
        cookies = Response()
        for name, allowed in _PAGE_CHOICES.items():
            value = query.get(name)
            if value in allowed:
                cookies.set_cookie(name, value, max_age=_YEAR, samesite="lax")
        if not cookies.raw_headers:
            await self.app(scope, receive, send)
            return

        async def send_with_cookies(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in cookies.raw_headers:
                    if key == b"set-cookie":
                        headers.append("set-cookie", value.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, send_with_cookies)
