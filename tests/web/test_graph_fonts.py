"""The fonts the graph's SVG export embeds (static/vendor/fonts, static/graph/export.js): the Noto
Sans CJK SC cut draws every CJK character of the lab's Chinese strings (East Asian Width wide or
fullwidth), in both weights, and the export asks for it on each of them (its unicode-range); a
string added without running scripts/cut_cjk_font.py fails here."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont

STATIC = Path(__file__).resolve().parents[2] / "static"
FONTS = STATIC / "vendor" / "fonts"
WEIGHTS = ["lab-sans-sc.woff", "lab-sans-sc-bold.woff"]


def _held(file: str) -> set[str]:
    return {chr(code) for code in TTFont(FONTS / file).getBestCmap()}


def _chinese() -> set[str]:
    strings = json.loads((STATIC / "i18n" / "zh-CN.json").read_text(encoding="utf-8"))
    return {c for s in strings.values() for c in s if unicodedata.east_asian_width(c) in "WF"}


def _export_range() -> list[tuple[int, int]]:
    """The unicode-range export.js gives the CJK faces, as (first, last) code points."""
    script = (STATIC / "graph" / "export.js").read_text(encoding="utf-8")
    found = re.search(r'const CJK_RANGE = "([^"]+)"', script)
    assert found, "export.js names no CJK_RANGE"
    spans = [part.removeprefix("U+").split("-") for part in found.group(1).split(",")]
    return [(int(a, 16), int(b or a, 16)) for a, *rest in spans for b in rest or [""]]


@pytest.mark.parametrize("cjk", WEIGHTS)
def test_the_cjk_cut_draws_every_chinese_character_of_the_strings(cjk: str) -> None:
    used = _chinese()
    assert len(used) > 500  # the lab's whole Chinese vocabulary, not a handful of words
    missing = used - _held(cjk)
    assert not missing, "".join(sorted(missing)) + ": run scripts/cut_cjk_font.py"


def test_the_export_asks_the_cjk_faces_for_every_chinese_character() -> None:
    spans = _export_range()
    outside = {c for c in _chinese() if not any(a <= ord(c) <= b for a, b in spans)}
    assert not outside, "".join(sorted(outside))


@pytest.mark.parametrize("cjk", WEIGHTS)
def test_the_list_the_export_reads_is_what_the_cut_holds(cjk: str) -> None:
    listed = set((FONTS / "lab-sans-sc.chars.txt").read_text(encoding="utf-8"))
    assert listed == _held(cjk)


def test_the_cjk_cut_is_a_noto_sans_cjk_sc_cut_carrying_its_licence() -> None:
    name = TTFont(FONTS / "lab-sans-sc.woff")["name"]
    assert name.getDebugName(1) == "Noto Sans CJK SC"
    assert "SIL Open Font License" in name.getDebugName(13)
    assert "SIL OPEN FONT LICENSE Version 1.1" in (FONTS / "LICENSE-noto-cjk").read_text()
