"""What routes depend on: the sandbox pool and the page templates."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import Request
from fastapi.templating import Jinja2Templates

from app import i18n

if TYPE_CHECKING:
    # Only the type: the pool itself is built once, in main.py's lifespan.
    from app.sandbox.workers import WorkerPool

ROOT = Path(__file__).resolve().parent.parent


async def get_pool(request: Request) -> WorkerPool:  # async: no thread hop
    pool: WorkerPool = request.app.state.pool
    return pool


def _page_context(request: Request) -> dict[str, object]:
    # A page link may pin its language (?lang=zh-CN); otherwise the browser's preference decides.
    lang = request.query_params.get("lang")
    if lang not in i18n.LANGUAGES:
        lang = i18n.pick_language(request.headers.get("accept-language"))
    other = next(code for code in i18n.LANGUAGES if code != lang)
    return {"lang": lang, "strings": i18n.strings(lang), "other_lang": other}


templates = Jinja2Templates(directory=ROOT / "templates", context_processors=[_page_context])
