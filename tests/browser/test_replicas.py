"""Behind a load balancer: a browser session whose requests alternate between two servers, as
replicas behind a proxy would answer them (deploy/compose.yaml), and every lab still works.

A lab's state lives in its page's address, so no request needs the server that answered the one
before. The balancer here is a small round-robin HTTP proxy on a loopback port, which passes each
request on unchanged (the Host header too, as Caddy does) to the next of two `python -m
gradient_lab`.
"""

from __future__ import annotations

import http.client
import itertools
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.browser.conftest import PageProblems
from tests.browser.pages import after, open_lab
from tests.browser.servers import ServerProcess, free_port

pytestmark = pytest.mark.browser

_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
        "proxy-connection"}


class RoundRobin(ThreadingHTTPServer):
    """Each request to the next upstream in turn; `served` records (upstream port, path).

    API requests take turns among themselves, so that each one goes to the other replica than
    the one before it, however many files a page loads in between.
    """

    daemon_threads = True

    def __init__(self, upstreams: list[int]) -> None:
        super().__init__(("127.0.0.1", free_port()), _Forward)
        self._api, self._files = itertools.cycle(upstreams), itertools.cycle(upstreams)
        self._lock = threading.Lock()
        self.served: list[tuple[int, str]] = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}"

    def pick(self, path: str) -> int:
        with self._lock:
            port = next(self._api if path.startswith("/api/") else self._files)
            self.served.append((port, path))
            return port


class _Forward(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: RoundRobin

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.pick(self.path),
                                              timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        upstream.request(self.command, self.path, body, headers)
        response = upstream.getresponse()
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in _HOP | {"content-length"}:
                self.send_header(name, value)
        if response.status in (204, 304):  # no body
            self.end_headers()
        else:  # re-chunked as it arrives, so that server-sent events stream through
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while chunk := response.read1(65536):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        upstream.close()

    do_GET = do_POST = _forward

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        pass


@pytest.fixture(scope="module")
def balancer() -> Iterator[RoundRobin]:
    replicas = [ServerProcess(), ServerProcess()]
    starts = [threading.Thread(target=r.start) for r in replicas]
    for thread in starts:
        thread.start()
    for thread in starts:
        thread.join()
    try:
        assert all(r.running for r in replicas), "a replica did not start"
        proxy = RoundRobin([r.port for r in replicas])
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        yield proxy
        proxy.shutdown()
        proxy.server_close()
    finally:
        for replica in replicas:
            replica.stop()


# Each lab at a link that makes a quick first run, the button that runs it again, and the
# counter its page keeps of the runs it has drawn.
LABS = {
    "graph": ("/#ex=S2", "#run", "runs"),
    "descent": ("/descent#preset=rosenbrock", "#race", "races"),
    "training": ("/training#lesson=flow&flow.depth=4&flow.width=16&flow.steps=5",
                 "#panel-flow button[type=submit]", "runs"),
}


@pytest.mark.parametrize("lab", LABS)
def test_a_lab_works_when_its_requests_alternate_between_two_replicas(
        browser: Any, balancer: RoundRobin, lab: str) -> None:
    path, button, counter = LABS[lab]
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    problems = PageProblems(balancer.url)
    problems.watch(page)
    first = len(balancer.served)
    try:
        open_lab(page, balancer.url + path, counter)
        after(page, lambda: page.locator(button).click(), counter)
        after(page, lambda: page.locator(button).click(), counter)
        # The address alone brings the page back, whichever replica answers.
        link = page.url
        page.goto("about:blank")
        open_lab(page, link, counter)
    finally:
        context.close()
    api = [port for port, p in balancer.served[first:] if p.startswith("/api/")]
    assert len(api) >= 4 and len(set(api)) == 2, f"API requests by replica port: {api}"
    assert problems.items == [], "the page had problems:\n" + "\n".join(problems.items)
