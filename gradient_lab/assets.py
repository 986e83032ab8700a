"""Where the pages' files are: templates/ and static/ (the i18n strings among them).

A wheel carries them inside the package (gradient_lab/static); a checkout of the repository
keeps them beside it (static/), where the tests, the linters and the pages' authors find them.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def assets(name: str) -> Path:
    """The folder `name` ("templates" or "static"), installed or in the checkout."""
    inside = _PACKAGE / name
    return inside if inside.is_dir() else _PACKAGE.parent / name
