"""`python -m gradient_lab` or `gradient-lab`: serve the lab with uvicorn, as APP_* say."""

from __future__ import annotations

import uvicorn

from gradient_lab.settings import load_settings
from gradient_lab.web.edge import uvicorn_options


def main() -> None:
    settings = load_settings()
    # An import string, not the app object: uvicorn needs it to start more than one worker.
    uvicorn.run("gradient_lab.main:app", **uvicorn_options(settings))


if __name__ == "__main__":
    main()
