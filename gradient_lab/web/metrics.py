"""/metrics in Prometheus' text format: requests by route and status, their latency, and the
runner, kept replies and rooms as they are at the moment of the scrape.

Each app has its own registry (tests make many apps in one process). With APP_WORKERS above
1 each worker answers for itself, as a scrape of one process should.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI
from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gradient_lab import __version__

# Up to 30 s: a long training lesson's first reply; a program's wall limit is 5 s by default.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_PREFIX = "gradient_lab"
# No `_created` series beside each counter: a scrape's time series are what the labs did.
disable_created_metrics()


class RecordRequests:
    """ASGI middleware: counts each request by method, route template and status, and times
    it until its response starts (a stream, a room's events or a training run, may then go
    on for minutes)."""

    def __init__(self, app: ASGIApp, *, registry: CollectorRegistry,
                 routes: list[BaseRoute]) -> None:
        self.app = app
        self.routes = routes  # the app's own list: mounts added after this one count too
        self.requests = Counter(f"{_PREFIX}_http_requests", "HTTP requests answered.",
                                ["method", "route", "status"], registry=registry)
        self.latency = Histogram(f"{_PREFIX}_http_request_duration_seconds",
                                 "Seconds from a request's arrival to its response's start.",
                                 ["method", "route"], buckets=_BUCKETS, registry=registry)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client gets if the app fails before it answers

        async def send_timed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                self.latency.labels(scope["method"], self._route(scope)).observe(
                    time.perf_counter() - started)
            await send(message)

        try:
            await self.app(scope, receive, send_timed)
        finally:
            self.requests.labels(scope["method"], self._route(scope), str(status)).inc()

    def _route(self, scope: Scope) -> str:
        """The route's template (`/api/rooms/{code}`), never the path itself, so that the
        labels stay few; a mount's files (which leave no route in the scope, only the
        endpoint) count as one route."""
        path = getattr(scope.get("route"), "path", None)
        if isinstance(path, str):
            return path
        endpoint = scope.get("endpoint")
        mount = next((route for route in self.routes
                      if isinstance(route, Mount) and route.app is endpoint), None)
        return "unmatched" if mount is None or endpoint is None else f"{mount.path}/{{path}}"


class _State(Collector):
    """The app's state, read at each scrape: the runner's pool, kept replies, rooms."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    def collect(self) -> Iterator[Metric]:
        state = self.app.state
        info = GaugeMetricFamily(f"{_PREFIX}_build_info", "This server's version and device.",
                                 labels=["version", "device"])
        pool = getattr(state, "pool", None)
        info.add_metric([__version__, pool.config.device if pool else ""], 1)
        yield info
        if pool is not None:
            yield from _runner(pool.health())
        kept = getattr(state, "kept", None)
        if kept is not None:
            replies = CounterMetricFamily(
                f"{_PREFIX}_kept_replies", "Replies by how they came: ran (a miss), shared "
                "(joined an identical request's run), hit (kept), failed.", labels=["outcome"])
            for outcome in ("ran", "shared", "hit", "failed"):
                replies.add_metric([outcome], kept.counts.get(outcome, 0))
            yield replies
        rooms = getattr(state, "rooms", None)
        if rooms is not None:
            counts = rooms.hub.counts()
            for name, about in (("rooms", "Class rooms this process's screens follow."),
                                ("room_screens", "Teachers' and students' screens open."),
                                ("room_students", "Students in the rooms followed.")):
                yield GaugeMetricFamily(f"{_PREFIX}_{name}", about,
                                        value=counts[name.removeprefix("room_")])


_RUNNER_GAUGES = {
    "ready": "Children forked and walled in, waiting for a program.",
    "running": "Programs running at full speed.",
    "aside": "Programs moved aside (stopped) to let others run.",
    "waiting": "Programs waiting in line for a place.",
    "memory_mb": "Memory the programs in flight hold, in MiB.",
}
_RUNNER_COUNTERS = {
    "forked": "Children the zygote has forked.",
    "started": "Programs handed to a child.",
    "ended_early": "Ready children that ended before a program reached them.",
    "restarts": "Zygotes started again after one was lost.",
}


def _runner(health: dict[str, Any]) -> Iterator[Metric]:
    for name, about in _RUNNER_GAUGES.items():
        yield GaugeMetricFamily(f"{_PREFIX}_runner_{name}", about, value=health[name])
    for name, about in _RUNNER_COUNTERS.items():
        yield CounterMetricFamily(f"{_PREFIX}_runner_{name}", about, value=health[name])


def instrument(app: FastAPI) -> None:
    """Count the app's requests, and answer for its state, in a registry of its own."""
    registry = CollectorRegistry()
    registry.register(_State(app))
    app.state.metrics = registry
    app.add_middleware(RecordRequests, registry=registry, routes=app.router.routes)


def exposition(app: FastAPI, accept: str) -> tuple[bytes, str]:
    """The app's metrics in the format the scraper accepts (Prometheus' text format, or
    OpenMetrics), and its content type."""
    encode, content_type = choose_encoder(accept)
    return encode(app.state.metrics), content_type
