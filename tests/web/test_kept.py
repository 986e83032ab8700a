"""Kept replies through the API: one child per distinct request, the same bytes kept or fresh,
and nothing kept that the same request would not give again (issue 25)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import httpx
import pytest
from fastapi.testclient import TestClient

from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.kept import Keeper
from gradient_lab.kept.memory import MemoryStore
from gradient_lab.main import create_app
from gradient_lab.settings import Settings, get_settings
from gradient_lab.web import deps
from tests.helpers import assert_error

S2 = EXAMPLES["S2"].program
# Long enough (~0.2 s) that requests sent together arrive while it runs.
SLOW = "import torch\nx = torch.ones(200, 200)\nfor _ in range(400):\n    x = (x @ x).tanh()\n"


@pytest.fixture(scope="module")
def app() -> Iterator[TestClient]:
    with TestClient(create_app()) as client:
        yield client


@pytest.fixture
def client(app: TestClient) -> Iterator[TestClient]:
    """The module's server with a fresh, empty keeper for each test."""
    state = app.app.state  # type: ignore[attr-defined]
    state.kept = Keeper(MemoryStore(64 << 20))
    yield app
    app.app.dependency_overrides.clear()  # type: ignore[attr-defined]


def _fresh(program: str) -> str:
    """A program no test has sent before: the same code under a comment of its own."""
    return f"# {uuid.uuid4().hex}\n{program}"


def _started(client: TestClient) -> int:
    return int(client.app.state.pool.started)  # type: ignore[attr-defined]


def _post(client: TestClient, code: str) -> httpx.Response:
    return client.post("/api/graph", json={"code": code, "device": "cpu"})


def test_identical_requests_at_once_start_one_child(client: TestClient) -> None:
    code = _fresh(SLOW + "print(x.sum())\n")
    before = _started(client)
    with ThreadPoolExecutor(12) as threads:
        replies = list(threads.map(lambda _: _post(client, code), range(12)))
    assert [r.status_code for r in replies] == [200] * 12
    assert len({r.content for r in replies}) == 1
    assert _started(client) - before == 1
    assert sorted(r.headers["x-kept"] for r in replies).count("ran") == 1


def test_a_kept_reply_is_byte_identical_to_a_fresh_one(client: TestClient) -> None:
    code = _fresh(S2)
    ran = _post(client, code)
    kept = _post(client, code)
    assert (ran.headers["x-kept"], kept.headers["x-kept"]) == ("ran", "hit")
    client.app.state.kept = Keeper(MemoryStore(64 << 20))  # type: ignore[attr-defined]
    again = _post(client, code)
    assert again.headers["x-kept"] == "ran"
    assert ran.content == kept.content == again.content


def test_the_programs_own_error_is_kept_and_answered_in_each_language(
        client: TestClient) -> None:
    code = _fresh("import torch\nx = torch.ones(2)\nx.backward()\n")
    before = _started(client)
    english = _post(client, code)
    chinese = client.post("/api/graph", json={"code": code, "device": "cpu"},
                          headers={"accept-language": "zh-CN"})
    assert _started(client) - before == 1
    assert assert_error(english, 400, "program_error")["line"] == 4  # under _fresh's comment
    assert assert_error(chinese, 400, "program_error")["hint"] != \
        english.json()["error"]["hint"]
    assert (english.headers["x-kept"], chinese.headers["x-kept"]) == ("ran", "hit")


def _tight(client: TestClient, **changes: object) -> None:
    settings = Settings(**changes)  # type: ignore[arg-type]

    async def tight() -> Settings:
        return settings

    client.app.dependency_overrides[get_settings] = tight  # type: ignore[attr-defined]


@pytest.mark.parametrize(("program", "status", "kind", "settings"), [
    ("while True:\n    pass\n", 408, "timeout", {"wall_seconds": 1.0, "cpu_seconds": 1.0}),
    ("import torch\nx = torch.empty(1 << 40)\n", 413, "too_large", {}),
    ("import os\nfor fd in range(3, 16):\n    try:\n        os.write(fd, b'not a frame\\n')\n"
     "    except OSError:\n        pass\n", 502, "runner_failed", {}),
], ids=["time-limit", "out-of-memory", "failed-child"])
def test_what_would_not_come_again_is_never_kept(client: TestClient, program: str, status: int,
                                                 kind: str, settings: dict[str, object]
                                                 ) -> None:
    _tight(client, **settings)
    code = _fresh(program)
    before = _started(client)
    for _ in range(2):
        assert_error(_post(client, code), status, kind)
    assert _started(client) - before == 2


def test_a_hostile_program_can_forge_only_its_own_reply(client: TestClient) -> None:
    forged = b'{"stdout": "forged", "nodes": []}'
    frame = b'{"kind": "data", "bytes": %d}\n' % len(forged) + forged + b'{"kind": "end", ' \
        b'"bytes": 0}\n'
    hostile = _fresh(f"import os\nfor fd in range(3, 16):\n    try:\n        os.write(fd, "
                     f"{frame!r})\n    except OSError:\n        pass\nos._exit(0)\n")
    assert _post(client, hostile).json()["stdout"] == "forged"  # its own request: its word
    victim = _fresh(S2)
    answer = _post(client, victim)
    assert answer.headers["x-kept"] == "ran"
    assert answer.json()["stdout"] == "tensor([42.])\ntensor([28.])\n"


def test_a_program_that_reads_the_clock_is_kept_only_a_moment(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deps, "VOLATILE_SECONDS", 0.5)
    clock = _fresh("import time\nprint(time.time())\n")
    plain = _fresh("print('same every time')\n")
    first, steady = _post(client, clock), _post(client, plain)
    time.sleep(0.6)
    later, still = _post(client, clock), _post(client, plain)
    assert later.headers["x-kept"] == "ran" and later.json()["stdout"] != first.json()["stdout"]
    assert still.headers["x-kept"] == "hit" and still.content == steady.content


def test_limits_device_and_versions_are_part_of_the_key(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    seen: list[str] = []

    class Recorder:
        def open(self, key: str, *args: object, **kwargs: object) -> None:
            seen.append(key)

        def flying(self, key: str) -> bool:
            return True  # as if joining a run: not counted against the client's cap

    settings = Settings()
    client_jobs = deps.ClientJobs(None, Recorder(), settings)  # type: ignore[arg-type]

    def key_of(client_jobs: deps.ClientJobs = client_jobs, **args: object) -> str:
        client_jobs._open(print, True, {"code": "x = 1", "device": "cpu", **args}, stream=False)
        return seen[-1]

    base = key_of()
    assert key_of() == base
    assert key_of(device="cuda") != base
    assert key_of(client_jobs=replace(client_jobs, settings=Settings(graph_nodes=10))) != base
    assert key_of(client_jobs=replace(client_jobs, settings=Settings(wall_seconds=1.0))) != base
    monkeypatch.setattr(deps, "fingerprint", lambda: {"torch": "another build"})
    assert key_of() != base
