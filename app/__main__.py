"""`python -m app` or `gradient-lab`: serve the app with uvicorn, as APP_* variables say."""

from __future__ import annotations

import uvicorn

from app.settings import load_settings


def main() -> None:
    settings = load_settings()
    # An import string, not the app object: uvicorn needs it to start more than one worker.
    # loop="asyncio" until the sandbox pool reads a worker's reply in blocking mode: uvloop
    # leaves the pipe non-blocking, and a reply over 64 KiB then failed as a worker crash.
    uvicorn.run("app.main:app", host=settings.host, port=settings.port, workers=settings.workers,
                loop="asyncio")


if __name__ == "__main__":
    main()
