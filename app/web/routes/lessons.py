"""GET /lessons: the tutorial's sections in order, each a link into the lab that shows it."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.graph.examples import EXAMPLES
from app.tutorial import TUTORIAL
from app.web.pages import templates

router = APIRouter()


@router.get("/lessons", response_class=HTMLResponse)
async def lessons(request: Request) -> HTMLResponse:
    return templates.TemplateResponse(request, "lessons.html",
                                      {"stops": TUTORIAL, "examples": EXAMPLES})
