"""GET /lessons: the tutorial's sections in order, each a link into the lab that shows it."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from gradient_lab.graph.examples import EXAMPLES
from gradient_lab.tutorial import TUTORIAL
from gradient_lab.web.pages import templates

router = APIRouter()


@router.get("/lessons", response_class=HTMLResponse)
async def lessons(request: Request) -> HTMLResponse:
    return templates.TemplateResponse(request, "lessons.html",
                                      {"stops": TUTORIAL, "examples": EXAMPLES})
