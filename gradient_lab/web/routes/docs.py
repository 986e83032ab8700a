"""GET /docs (Swagger UI) and /redoc (ReDoc), from the package's own files (static/vendor):
FastAPI's defaults load them from a CDN, and the pages were blank offline. FastAPI's
"Self-hosting JavaScript and CSS for docs" shows this way."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)
_TITLE = "Gradient Lab API"


def _static(request: Request, path: str) -> str:
    return str(request.url_for("static", path=path).path)


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url=request.app.openapi_url, title=_TITLE,
        swagger_js_url=_static(request, "vendor/swagger-ui/swagger-ui-bundle.js"),
        swagger_css_url=_static(request, "vendor/swagger-ui/swagger-ui.css"),
        swagger_favicon_url=_static(request, "favicon.svg"),
        oauth2_redirect_url="/docs/oauth2-redirect",
        # No badge from the online validator: it would send the schema away.
        swagger_ui_parameters={"validatorUrl": None})


@router.get("/docs/oauth2-redirect")
async def swagger_ui_redirect() -> HTMLResponse:
    return get_swagger_ui_oauth2_redirect_html()


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    return get_redoc_html(openapi_url=request.app.openapi_url, title=_TITLE,
                          redoc_js_url=_static(request, "vendor/redoc/redoc.standalone.js"),
                          redoc_favicon_url=_static(request, "favicon.svg"),
                          with_google_fonts=False)
