"""The pages' templates and what every page knows: its language, its strings, presentation mode."""

from __future__ import annotations

from fastapi import Request
from fastapi.templating import Jinja2Templates

from gradient_lab import __version__, i18n
from gradient_lab.assets import assets


def page_choice(request: Request, name: str, allowed: tuple[str, ...]) -> str | None:
    """A page setting from ?name=, else from the cookie main.py sets when a link chose it."""
    for value in (request.query_params.get(name), request.cookies.get(name)):
        if value in allowed:
            return value
    return None


def _page_context(request: Request) -> dict[str, object]:
    # A link may pin the language (?lang=zh-CN), and the choice is remembered in a cookie;
    # otherwise the browser's preference decides.
    lang = page_choice(request, "lang", i18n.LANGUAGES) or i18n.pick_language(
        request.headers.get("accept-language"))
    other = next(code for code in i18n.LANGUAGES if code != lang)
    present = page_choice(request, "present", ("0", "1")) == "1"
    return {"lang": lang, "strings": i18n.strings(lang), "other_lang": other, "present": present}


templates = Jinja2Templates(directory=assets("templates"), context_processors=[_page_context])
templates.env.globals["version"] = __version__  # the footer's: two builds told apart
