"""The server's log: the app's own loggers and uvicorn's, as text or JSON lines, without probes.

`uvicorn_log_config(settings)` is what `gradient-lab serve` hands uvicorn, so every worker
logs alike; `attach(settings)` gives the app's loggers a handler when something else started
uvicorn (its default configuration leaves the `gradient_lab` loggers with none, and their INFO
lines were lost).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from gradient_lab.settings import Settings

# Asked every few seconds by a load balancer, Kubernetes or Prometheus: one access line each
# would bury the requests a teacher wants to see.
PROBES = frozenset({"/healthz", "/readyz", "/metrics"})
_TEXT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


class LeaveOutProbes(logging.Filter):
    """Drops uvicorn's access line for a probe: its arguments are (client, method, path, ...)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            return args[2].split("?", 1)[0] not in PROBES
        return True


class JsonLines(logging.Formatter):
    """One JSON object a line: time, level, logger, message, and an access line's parts."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(), "logger": record.name,
            "message": record.getMessage()}
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            line.update(zip(("client", "method", "path", "http", "status"), args, strict=True))
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class Text(logging.Formatter):
    """A line for a person; uvicorn's own lines say `uvicorn`, not `uvicorn.error`."""

    def __init__(self) -> None:
        super().__init__(_TEXT)

    def format(self, record: logging.LogRecord) -> str:
        if record.name == "uvicorn.error":
            record.name = "uvicorn"
        return super().format(record)


def _formatter(settings: Settings) -> logging.Formatter:
    return JsonLines() if settings.log_format == "json" else Text()


def uvicorn_log_config(settings: Settings) -> dict[str, Any]:
    """A logging.config.dictConfig for uvicorn.run(log_config=...): one handler on stderr."""
    formatter = {"()": JsonLines if settings.log_format == "json" else Text}
    level = settings.log_level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"probes": {"()": LeaveOutProbes}},
        "formatters": {"default": formatter},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "default",
                                "stream": "ext://sys.stderr"}},
        "loggers": {
            "gradient_lab": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["stderr"], "level": level, "propagate": False,
                               "filters": ["probes"]},
        },
    }


def attach(settings: Settings) -> None:
    """Give the app's loggers a handler, and uvicorn's access log the probe filter, where
    uvicorn_log_config was not used (a plain `uvicorn gradient_lab.main:app`)."""
    app = logging.getLogger("gradient_lab")
    if not app.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(_formatter(settings))
        app.addHandler(handler)
        app.setLevel(settings.log_level.upper())
        app.propagate = False
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, LeaveOutProbes) for f in access.filters):
        access.addFilter(LeaveOutProbes())
