"""The join link as a QR code for the projector: an SVG drawn here, by segno (pure Python, no
network), so that a phone's camera opens the room."""

from __future__ import annotations

import io
from functools import lru_cache

import segno


@lru_cache(maxsize=256)
def qr_svg(link: str) -> bytes:
    """`link` as a QR code: SVG, black on white with the standard 4-module margin, no fixed
    size (the page sizes it)."""
    code = segno.make(link, error="m")
    out = io.BytesIO()
    code.save(out, kind="svg", border=4, dark="#000", light="#fff", xmldecl=False,
              omitsize=True, svgclass="qr")
    return out.getvalue()
