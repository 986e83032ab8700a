"""The HTTP edge under one client's abuse, over real sockets to uvicorn started with the lab's
own options (gradient_lab/web/edge.py): huge heads, heads sent a byte at a time, connections
that say nothing, too many connections, a body that never comes, too many event streams.
Each is refused or closed quickly, and another client is served meanwhile."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
import uvicorn

from gradient_lab.settings import Settings, load_settings
from gradient_lab.web.edge import uvicorn_options
from tests.browser.servers import free_port
from tests.rooms.conftest import rooms_app

OTHER = "127.0.0.2"  # another client: Linux answers all of 127/8 on the loopback


class Edge:
    """The rooms app (no runner) under uvicorn with uvicorn_options, in a thread."""

    def __init__(self, store: str) -> None:
        self.port = free_port()
        self.sockets: list[socket.socket] = []
        options = uvicorn_options(Settings())
        for own in ("host", "port", "workers"):
            options.pop(own)
        self.server = uvicorn.Server(uvicorn.Config(
            rooms_app(store), host="0.0.0.0", port=self.port, log_level="critical",
            **options))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)

    def connect(self, source: str = "127.0.0.1") -> socket.socket:
        connection = socket.create_connection(("127.0.0.1", self.port), timeout=5,
                                              source_address=(source, 0))
        self.sockets.append(connection)
        return connection

    def get(self, source: str = OTHER) -> tuple[int, float]:
        """A benign request's status and how long it took, from `source`."""
        start = time.monotonic()
        with httpx.Client(transport=httpx.HTTPTransport(local_address=source)) as client:
            status = client.get(f"http://127.0.0.1:{self.port}/api/clock", timeout=5).status_code
        return status, time.monotonic() - start

    def stop(self) -> None:
        for connection in self.sockets:
            connection.close()
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def make_edge(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Edge]]:
    """make_edge(**settings): an edge whose server reads those APP_* settings."""
    servers: list[Edge] = []

    def make(**settings: object) -> Edge:
        for name, value in settings.items():
            monkeypatch.setenv(f"APP_{name.upper()}", str(value))
        load_settings.cache_clear()
        servers.append(Edge(f"{tmp_path}/rooms.sqlite3"))
        return servers[-1]

    yield make
    for server in servers:
        server.stop()
    monkeypatch.undo()
    load_settings.cache_clear()


@pytest.fixture
def edge(make_edge: Callable[..., Edge]) -> Edge:
    return make_edge()


def _answer(connection: socket.socket, seconds: float = 5.0) -> bytes:
    """What the server sends until it closes the connection (or `seconds` pass)."""
    connection.settimeout(seconds)
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return received


def _closed_within(connection: socket.socket, seconds: float) -> float:
    start = time.monotonic()
    _answer(connection, seconds + 2)
    took = time.monotonic() - start
    assert took < seconds + 1, f"still open after {took:.1f} s"
    return took


@pytest.mark.parametrize("head", [
    b"GET /?" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Many: 1\r\n" * 100_000 + b"\r\n",
])
def test_a_huge_head_is_a_400_at_once_and_others_are_served(edge: Edge, head: bytes) -> None:
    connection = edge.connect()
    start = time.monotonic()
    try:
        connection.sendall(head)
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused before it was all sent
    answer = _answer(connection)
    # The 400, or a reset that overtook it: the server closed while the head still came.
    assert answer.startswith(b"HTTP/1.1 400") or answer == b"", answer[:80]
    assert time.monotonic() - start < 1.0
    status, seconds = edge.get()
    assert status == 200 and seconds < 1.0, seconds


def test_a_head_sent_a_byte_at_a_time_is_a_408_at_its_deadline(
        make_edge: Callable[..., Edge]) -> None:
    edge = make_edge(header_seconds=1)
    connection = edge.connect()
    connection.sendall(b"GET /api/clock HTTP/1.1\r\n")

    def trickle() -> None:
        for _ in range(30):
            time.sleep(0.1)
            try:
                connection.send(b"X")
            except OSError:
                return
    threading.Thread(target=trickle, daemon=True).start()
    start = time.monotonic()
    answer = _answer(connection, 4)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert time.monotonic() - start < 1.6


def test_a_connection_that_says_nothing_is_closed(make_edge: Callable[..., Edge]) -> None:
    edge = make_edge(header_seconds=1)
    _closed_within(edge.connect(), 1.0)
    kept_alive = edge.connect()  # one that asked once, then says nothing more
    kept_alive.sendall(b"GET /api/clock HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(0.2)
    _closed_within(kept_alive, 1.0)
    assert edge.get()[0] == 200


def test_one_client_holds_at_most_its_connections(make_edge: Callable[..., Edge]) -> None:
    edge = make_edge(connections_per_client=8, header_seconds=30)
    held = [edge.connect() for _ in range(8)]
    time.sleep(0.2)
    one_more = edge.connect()
    assert _closed_within(one_more, 0.5) < 0.5
    assert edge.get(OTHER)[0] == 200  # another client is served
    held.pop().close()
    time.sleep(0.2)
    assert edge.get("127.0.0.1")[0] == 200  # and this one again, once it let one go
    for connection in held:
        connection.close()


def test_past_the_servers_connections_a_request_is_a_503(make_edge: Callable[..., Edge]) -> None:
    edge = make_edge(connections_max=16, header_seconds=30)
    held = [edge.connect(f"127.0.1.{n}") for n in range(16)]
    time.sleep(0.2)
    assert edge.get(OTHER)[0] == 503
    for connection in held:
        connection.close()
    time.sleep(0.2)
    assert edge.get(OTHER)[0] == 200


def test_a_body_that_never_comes_is_a_408(make_edge: Callable[..., Edge]) -> None:
    edge = make_edge(body_seconds=1)
    connection = edge.connect()
    connection.sendall(b"POST /api/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
    start = time.monotonic()
    connection.settimeout(4)
    answer = connection.recv(65536)  # the answer, as it comes (the close waits for keep-alive)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert time.monotonic() - start < 1.6
    while b'"timeout"' not in answer:
        answer += connection.recv(65536)


def _stream(edge: Edge, code: str, who: str) -> httpx.Response:
    client = httpx.Client(headers={"X-Forwarded-For": who})
    context = client.stream("GET", f"http://127.0.0.1:{edge.port}/api/rooms/{code}/events",
                            timeout=5)
    response = context.__enter__()
    response.extensions["closer"] = lambda: (context.__exit__(None, None, None), client.close())
    return response


def _close(response: httpx.Response) -> None:
    response.extensions["closer"]()


def test_event_streams_are_capped_per_client_and_per_room(make_edge: Callable[..., Edge]) -> None:
    edge = make_edge(trusted_proxies="127.0.0.1", room_streams_per_client=2,
                           room_students_max=3)
    base = f"http://127.0.0.1:{edge.port}"
    code = httpx.post(f"{base}/api/rooms", json={}).json()["code"]
    first = [_stream(edge, code, "10.0.0.1") for _ in range(2)]
    assert all(response.status_code == 200 for response in first)
    refused = _stream(edge, code, "10.0.0.1")
    assert refused.status_code == 429 and b"too_many_streams" in refused.read()
    _close(refused)
    others = [_stream(edge, code, f"10.0.0.{n}") for n in (2, 2, 3, 3)]
    assert [response.status_code for response in others] == [200, 200, 200, 200]
    room_full = _stream(edge, code, "10.0.0.4")  # the room's 6 = twice its 3 students
    assert room_full.status_code == 429
    _close(room_full)
    _close(first[0])
    deadline = time.monotonic() + 2
    while True:  # the server lets go of a stream as soon as it sees it closed
        again = _stream(edge, code, "10.0.0.1")
        if again.status_code == 200 or time.monotonic() > deadline:
            break
        _close(again)
        time.sleep(0.1)
    assert again.status_code == 200
    for response in [*first[1:], *others, again]:
        _close(response)


def test_the_server_raises_its_descriptor_limit_and_sizes_its_connections_by_it() -> None:
    program = (
        "import resource\n"
        "from gradient_lab.settings import Settings\n"
        "from gradient_lab.web.edge import uvicorn_options\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        "options = uvicorn_options(Settings())\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0] == hard, "
        "options['limit_concurrency'])\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512))\n"
        "print(uvicorn_options(Settings())['limit_concurrency'])\n")
    shown = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                           check=True).stdout.split()
    assert shown[0] == "True" and int(shown[1]) == 4096
    assert 16 <= int(shown[2]) < 512 - 256


def test_a_trusted_proxys_connections_are_not_capped_as_one_clients(
        make_edge: Callable[..., Edge]) -> None:
    edge = make_edge(trusted_proxies="127.0.0.1", connections_per_client=4, header_seconds=30)
    held = [edge.connect() for _ in range(6)]  # the proxy, carrying six students
    time.sleep(0.2)
    for connection in held:
        connection.sendall(b"GET /api/clock HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert connection.recv(65536).startswith(b"HTTP/1.1 200")
