"""Cut static/vendor/fonts/lab-sans-sc*.woff, and lab-sans-sc.chars.txt, what they hold: Noto Sans
CJK SC (Debian's fonts-noto-cjk, SIL OFL 1.1) cut to the CJK characters of the lab's Chinese
strings, for the graph's SVG export.

The graph figure itself draws no UI string: its Chinese comes from the learner's program (a
variable, module or Function named in Chinese), and learners name things with the words the
page teaches them (损失, 权重, 梯度, 叶子节点). So the subset is every CJK character of
static/i18n/zh-CN.json; tests/web/test_graph_fonts.py fails when a string adds one and this
script was not run again.

Needs fontTools with WOFF (`pip install "fonttools[woff]"`); the server never runs it.
Run from the repository root: `python scripts/cut_cjk_font.py`.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection, TTFont

ROOT = Path(__file__).resolve().parent.parent
FONTS = ROOT / "static" / "vendor" / "fonts"
NOTO = Path("/usr/share/fonts/opentype/noto")
CUTS = {
    "lab-sans-sc.woff": "NotoSansCJK-Regular.ttc",
    "lab-sans-sc-bold.woff": "NotoSansCJK-Bold.ttc",
}
FAMILY = "Noto Sans CJK SC"


def wanted() -> str:
    """The CJK characters of the Chinese strings: those of East Asian Width wide or fullwidth."""
    strings = json.loads((ROOT / "static" / "i18n" / "zh-CN.json").read_text(encoding="utf-8"))
    chars = {c for s in strings.values() for c in s if unicodedata.east_asian_width(c) in "WF"}
    return "".join(sorted(chars))


def _sc_face(collection: Path) -> TTFont:
    for font in TTCollection(collection).fonts:
        if font["name"].getDebugName(1) == FAMILY:
            return font
    raise SystemExit(f"{collection} holds no {FAMILY}")


def main() -> None:
    text = wanted()
    options = subset.Options()
    options.flavor = "woff"
    # Labels run horizontally in the face's own SC forms: no OpenType feature is needed, and
    # keeping none (and no hints) halves the file, since vert/locl pull in glyphs of their own.
    options.layout_features = []
    options.hinting = False
    options.name_IDs = ["*"]  # the OFL asks that the copyright and licence names stay
    options.notdef_outline = True
    for out, source in CUTS.items():
        font = _sc_face(NOTO / source)
        cutter = subset.Subsetter(options)
        cutter.populate(text=text)
        cutter.subset(font)
        font.flavor = "woff"
        font.recalcTimestamp = False  # the same strings cut the same bytes
        font.save(FONTS / out)
        print(f"{out}: {len(text)} characters, {(FONTS / out).stat().st_size} bytes")
    # The page's export reads this to name the characters it cannot embed.
    (FONTS / "lab-sans-sc.chars.txt").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
