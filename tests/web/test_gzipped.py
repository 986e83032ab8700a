"""A reply's gzip is made once for every screen that asks, and is the same bytes each time
(web/gzipped.py): a class's browsers all accept gzip."""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.main import create_app
from gradient_lab.web import gzipped
from gradient_lab.web.gzipped import Gzipped

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def compressions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each body gzip.compress is asked to compress, from here on."""
    sizes: list[int] = []
    compress = gzip.compress

    def counted(data: bytes, *args: object, **kwargs: object) -> bytes:
        sizes.append(len(data))
        return compress(data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gzipped.gzip, "compress", counted)
    return sizes


def test_the_same_body_is_compressed_once(compressions: list[int]) -> None:
    cache = Gzipped(1 << 20)
    body = json.dumps(list(range(2000))).encode()
    first = cache.of(body)
    again = cache.of(bytes(body))  # equal bytes in another object: a read of the store
    assert again == first and gzip.decompress(first) == body
    assert compressions == [len(body)]
    assert first[4:8] == b"\0\0\0\0"  # no time in the header: the same bytes tomorrow


def test_the_cache_stays_within_its_bytes_dropping_the_least_recently_used(
        compressions: list[int]) -> None:
    bodies = [json.dumps([n] * 3000).encode() for n in range(4)]
    one = len(bodies[0]) + len(gzip.compress(bodies[0], mtime=0))
    cache = Gzipped(3 * one)
    for body in bodies[:3]:
        cache.of(body)
    cache.of(bodies[0])  # used again: now the most recent
    cache.of(bodies[3])  # over the budget: bodies[1] goes
    assert cache.held_bytes <= 3 * one
    compressions.clear()
    cache.of(bodies[0])
    cache.of(bodies[1])
    assert compressions == [len(bodies[1])]
    huge = Gzipped(100)
    huge.of(bodies[0])
    assert huge.held_bytes == 0  # larger than the whole budget: compressed, not kept


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as client:
        yield client


def _raw(client: TestClient, body: dict[str, object], encoding: str) -> tuple[dict[str, str],
                                                                          bytes]:
    """The response's headers and its bytes as they came, undecoded."""
    with client.stream("POST", "/api/graph", json=body,
                       headers={"Accept-Encoding": encoding}) as response:
        assert response.status_code == 200
        return dict(response.headers), b"".join(response.iter_raw())


def test_identical_requests_get_one_compression_and_the_same_bytes(
        client: TestClient, compressions: list[int]) -> None:
    body = {"code": f"# {uuid.uuid4().hex}\n{EXAMPLES['S2'].program}", "device": "cpu"}
    answers = [_raw(client, body, "gzip, deflate, br") for _ in range(3)]
    assert [h["content-encoding"] for h, _ in answers] == ["gzip"] * 3
    assert [h["x-kept"] for h, _ in answers] == ["ran", "hit", "hit"]
    assert len({raw for _, raw in answers}) == 1
    assert len(compressions) == 1
    headers, plain = _raw(client, body, "identity")  # a client that takes no gzip
    assert "content-encoding" not in headers
    assert gzip.decompress(answers[0][1]) == plain and json.loads(plain)["nodes"]


def _get_raw(client: TestClient, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    with client.stream("GET", path, headers=headers) as response:
        return response.status_code, dict(response.headers), b"".join(response.iter_raw())


def test_a_static_file_is_compressed_once_and_still_revalidates(
        client: TestClient, compressions: list[int]) -> None:
    gzipped.static_file.cache_clear()
    path = "/static/vendor/codemirror/lib/codemirror.js"
    on_disk = (ROOT / "static/vendor/codemirror/lib/codemirror.js").read_bytes()
    answers = [_get_raw(client, path, **{"accept-encoding": "gzip"}) for _ in range(3)]
    assert {(status, h["content-encoding"]) for status, h, _ in answers} == {(200, "gzip")}
    assert len({raw for _, _, raw in answers}) == 1 and gzip.decompress(answers[0][2]) == on_disk
    assert compressions == [len(on_disk)]
    headers = answers[0][1]
    assert headers["cache-control"] == "public, max-age=3600" and headers["etag"]
    assert headers["content-type"].startswith("text/javascript")
    status, _, _ = _get_raw(client, path, **{"accept-encoding": "gzip",
                                             "if-none-match": headers["etag"]})
    assert status == 304  # past the hour, a revalidation costs no body
    status, plain, body = _get_raw(client, path, **{"accept-encoding": "identity"})
    assert status == 200 and "content-encoding" not in plain and body == on_disk
    # A font is compressed already: it goes as it is.
    _, font, _ = _get_raw(client, "/static/vendor/fonts/lab-sans.woff",
                          **{"accept-encoding": "gzip"})
    assert "content-encoding" not in font
