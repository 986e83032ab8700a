"""What a page costs on the wire: responses are gzipped, and static files are cacheable."""

from __future__ import annotations

import gzip

import pytest
from fastapi.testclient import TestClient

from gradient_lab.web.routes.home import PLOTLY_JS

GZIP = {"Accept-Encoding": "gzip"}


@pytest.mark.parametrize("path", ["/", "/descent", "/lessons", "/api/surfaces",
                                  "/static/graph.js", "/static/app.css",
                                  "/static/vendor/codemirror/lib/codemirror.js"])
def test_pages_json_scripts_and_styles_are_gzipped(client: TestClient, path: str) -> None:
    response = client.get(path, headers=GZIP)
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in response.headers["vary"].lower()


def test_api_json_is_gzipped(client: TestClient) -> None:
    response = client.post("/api/surface", headers=GZIP, json={
        "surface": "rosenbrock", "x_range": [-2, 2], "y_range": [-1, 3], "resolution": 20})
    assert response.status_code == 200, response.text
    assert response.headers["content-encoding"] == "gzip"


def test_static_files_are_cacheable_and_revalidate_with_their_etag(client: TestClient) -> None:
    first = client.get("/static/graph.js")
    assert "max-age=3600" in first.headers["cache-control"]
    again = client.get("/static/graph.js", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    assert "max-age=3600" in again.headers["cache-control"]


def test_plotly_is_cached_for_a_week_and_gzipped_once_to_the_same_bytes(
        client: TestClient) -> None:
    original = PLOTLY_JS.read_bytes()
    # stream=True keeps httpx from decoding, so the bytes are those on the wire.
    with client.stream("GET", "/vendor/plotly.min.js", headers=GZIP) as response:
        wire = b"".join(response.iter_raw())
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["cache-control"] == "public, max-age=604800"
    assert len(wire) < len(original) / 3
    assert gzip.decompress(wire) == original
    plain = client.get("/vendor/plotly.min.js", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.content == original
    assert plain.headers["cache-control"] == "public, max-age=604800"
