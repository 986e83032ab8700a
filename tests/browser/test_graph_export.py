"""The graph's SVG export on the Chinese page, in headless Chromium: a program that names its
tensors in Chinese exports an SVG whose embedded faces hold every CJK character its text draws,
and a second Chromium that has no CJK font at all (as a slide machine may not) draws them from
the embedded font alone (without it they are not drawn at all); a name outside the cut is
named to the learner. Screenshots in
artifacts/."""

from __future__ import annotations

import base64
import io
import os
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fontTools.ttLib import TTFont

from tests.browser.conftest import CHROMIUM_FLAGS, _chromium
from tests.browser.pages import after, open_lab

pytestmark = pytest.mark.browser

FONTS = Path(__file__).resolve().parents[2] / "static" / "vendor" / "fonts"

_NAMED = """import torch

权重 = torch.tensor([1.0, -2.0], requires_grad=True)
偏置 = torch.tensor([0.5], requires_grad=True)
输出 = (权重 * 3).sum() + 偏置
损失 = 输出 ** 2
损失.backward()
"""

_SGD = """import torch

w = torch.tensor([1.0, -2.0], requires_grad=True)
loss = (w ** 2).sum()
loss.backward()
"""

_FACE = re.compile(r"@font-face\{([^}]*)\}")


def _is_cjk(c: str) -> bool:
    return unicodedata.east_asian_width(c) in "WF"


def _run(page: Any, program: str) -> None:
    page.evaluate("code => document.querySelector('.CodeMirror').CodeMirror.setValue(code)",
                  program)
    after(page, lambda: page.locator("#run").click())


def _export(page: Any, path: Path) -> str:
    with page.expect_download() as download:
        page.locator("#export-svg").click()
    download.value.save_as(path)
    return path.read_text(encoding="utf-8")


def _drawn(svg: str) -> str:
    """The text of the SVG's <text> elements, as a viewer draws it."""
    root = ET.fromstring(svg)
    return "".join("".join(el.itertext()) for el in root.iter() if el.tag.endswith("}text"))


def _faces(svg: str) -> list[dict[str, Any]]:
    """Each embedded @font-face: its weight, its unicode-range (None: all) and its cmap."""
    faces = []
    for rule in _FACE.findall(svg):
        weight = re.search(r"font-weight:(\w+)", rule)
        spans = re.search(r"unicode-range:([^;]+)", rule)
        data = re.search(r"url\(data:[^;,]+;base64,([^)]+)\)", rule)
        assert weight and data, rule[:200]
        ranges = None
        if spans:
            parts = [p.strip().removeprefix("U+").split("-") for p in spans.group(1).split(",")]
            ranges = [(int(p[0], 16), int(p[-1], 16)) for p in parts]
        font = TTFont(io.BytesIO(base64.b64decode(data.group(1))))
        faces.append({"weight": weight.group(1), "ranges": ranges,
                      "cmap": set(font.getBestCmap())})
    return faces


@pytest.fixture(scope="module")
def bare_browser(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Chromium on a machine without a CJK font: fontconfig sees DejaVu only."""
    conf = tmp_path_factory.mktemp("fonts") / "fonts.conf"
    cache = conf.parent / "cache"
    conf.write_text(f"""<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>/usr/share/fonts/truetype/dejavu</dir><cachedir>{cache}</cachedir></fontconfig>
""")
    # A second Chromium from the same Playwright (one sync Playwright per thread).
    bare = browser.browser_type.launch(executable_path=_chromium(), args=CHROMIUM_FLAGS,
                                       env={**os.environ, "FONTCONFIG_FILE": str(conf)})
    yield bare
    bare.close()


def _shown(browser: Any, svg: str, path: Path) -> bytes:
    """The SVG drawn as a slide shows it (an <img>, at 1440×900), screenshot saved at path."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    source = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    page.set_content(f'<body style="margin:0"><img id="svg" src="{source}"></body>')
    page.wait_for_function("document.getElementById('svg').complete")
    page.wait_for_timeout(300)  # the embedded fonts decode
    shot: bytes = page.screenshot(path=path)
    page.close()
    return shot


# Two PNGs of one size, drawn on canvases: how many pixels differ plainly, and how many are ink
# (not near white) in either.
_COMPARE = """async ([a, b]) => {
  const load = async (src) => { const i = new Image(); i.src = src; await i.decode(); return i; };
  const images = await Promise.all([load(a), load(b)]);
  const [w, h] = [images[0].naturalWidth, images[0].naturalHeight];
  const [p, q] = images.map((image) => {
    const canvas = Object.assign(document.createElement("canvas"), { width: w, height: h });
    const context = canvas.getContext("2d");
    context.drawImage(image, 0, 0, w, h);
    return context.getImageData(0, 0, w, h).data;
  });
  let differ = 0, ink = 0;
  for (let k = 0; k < p.length; k += 4) {
    if (p[k] + p[k + 1] + p[k + 2] < 600 || q[k] + q[k + 1] + q[k + 2] < 600) ink++;
    const d = Math.abs(p[k] - q[k]) + Math.abs(p[k + 1] - q[k + 1]) + Math.abs(p[k + 2] - q[k + 2]);
    if (d > 96) differ++;
  }
  return { differ, ink };
}"""


def _png_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _as_slide_draws_it(browser: Any, svg: str, width: int, height: int, scale: int) -> bytes:
    """The SVG in an <img> at its own size, on a screen of `scale` pixels a CSS pixel."""
    page = browser.new_page(viewport={"width": width, "height": height},
                            device_scale_factor=scale)
    source = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    page.set_content(f'<body style="margin:0"><img id="svg" src="{source}"></body>')
    page.wait_for_function("document.getElementById('svg').complete")
    page.wait_for_timeout(300)  # the embedded fonts decode
    shot: bytes = page.screenshot()
    page.close()
    return shot


def test_the_chinese_names_a_program_gives_its_tensors_export_with_a_font_that_draws_them(
        open_page: Any, bare_browser: Any, server: str, artifacts: Path) -> None:
    page, problems = open_page(1440, 900)
    open_lab(page, server + "/?lang=zh-CN")
    _run(page, _NAMED)
    svg = _export(page, artifacts / "graph-export-zh-CN-named-1440x900.svg")
    drawn = {c for c in _drawn(svg) if _is_cjk(c)}
    assert set("权重偏置输出损失") <= drawn, drawn
    faces = _faces(svg)
    cjk_faces = [f for f in faces if f["ranges"]]
    assert sorted(f["weight"] for f in cjk_faces) == ["bold", "normal"]
    for face in cjk_faces:  # each weight: asked for every CJK character drawn, and holds it
        assert all(any(a <= ord(c) <= b for a, b in face["ranges"]) for c in drawn)
        assert {ord(c) for c in drawn} <= face["cmap"], drawn - {chr(c) for c in face["cmap"]}
    status = page.locator("#status").inner_text()
    assert not drawn & set(status), status  # no character left out to report
    # The PNG is the SVG drawn at twice its size: the same letters, in the embedded fonts.
    # Plotly's own PNG, drawn in the page's fonts, differs on a third of the ink.
    with page.expect_download() as download:
        page.locator("#export-png").click()
    assert download.value.suggested_filename == "gradient-lab-graph.png"
    download.value.save_as(artifacts / "graph-export-zh-CN-named-1440x900.download.png")
    png = (artifacts / "graph-export-zh-CN-named-1440x900.download.png").read_bytes()
    width, height = page.evaluate("[document.getElementById('graph').clientWidth, "
                                  "document.getElementById('graph').clientHeight]")
    slide = _png_url(_as_slide_draws_it(page.context.browser, svg, width, height, 2))
    apart = page.evaluate(_COMPARE, [_png_url(png), slide])
    assert apart["ink"] > 10_000 and apart["differ"] <= apart["ink"] // 100, apart
    plotlys = page.evaluate("() => { const el = document.getElementById('graph'); return "
                            "Plotly.toImage(el, {format: 'png', scale: 2, "
                            "width: el.clientWidth, height: el.clientHeight}); }")
    control = page.evaluate(_COMPARE, [plotlys, slide])
    assert control["differ"] > control["ink"] // 10, control
    # On a machine without a CJK font, the names are drawn by the embedded face, and only by it:
    # the same file with that face taken out does not draw them.
    embedded = _shown(bare_browser, svg, artifacts / "graph-export-zh-CN-named-1440x900.png")
    stripped = re.sub(r"@font-face\{[^}]*unicode-range[^}]*\}", "", svg)
    assert stripped.count("@font-face") == 2
    without = _shown(bare_browser, stripped, artifacts / "graph-export-zh-CN-no-cjk-font.png")
    assert embedded != without
    assert not problems.items, problems.items


def test_the_chinese_page_embeds_no_cjk_font_when_the_graph_draws_no_chinese(
        open_page: Any, server: str, artifacts: Path) -> None:
    page, problems = open_page(1440, 900)
    open_lab(page, server + "/?lang=zh-CN")
    _run(page, _SGD)
    svg = _export(page, artifacts / "graph-export-zh-CN-latin-1440x900.svg")
    # The page's own strings stay outside the figure: its text is the program's, in Latin.
    assert not [c for c in _drawn(svg) if _is_cjk(c)]
    assert [f["ranges"] for f in _faces(svg)] == [None, None]
    assert len(svg) < 150_000  # the 230 KB of CJK faces are not carried for nothing
    assert not problems.items, problems.items


def test_a_chinese_name_outside_the_cut_is_named_to_the_learner(
        open_page: Any, server: str, artifacts: Path) -> None:
    held = (FONTS / "lab-sans-sc.chars.txt").read_text(encoding="utf-8")
    rare = "鑫"
    assert rare not in held
    page, problems = open_page(1440, 900)
    open_lab(page, server + "/?lang=zh-CN")
    _run(page, _SGD.replace("loss", f"损失{rare}"))
    svg = _export(page, artifacts / "graph-export-zh-CN-rare-1440x900.svg")
    assert rare in _drawn(svg)
    status = page.locator("#status").inner_text()
    assert rare in status and "损" not in status, status
    page.screenshot(path=artifacts / "graph-export-zh-CN-rare-status-1440x900.png")
    assert not problems.items, problems.items
