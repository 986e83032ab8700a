"""`python -m app` or `gradient-lab`: serve the app with uvicorn, as APP_* variables say."""

from __future__ import annotations

import uvicorn

from app.settings import load_settings


def main() -> None:
    settings = load_settings()
    # An import string, not the app object: uvicorn needs it to start more than one worker.
    uvicorn.run("app.main:app", host=settings.host, port=settings.port, workers=settings.workers)


if __name__ == "__main__":
    main()
