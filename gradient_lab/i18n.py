"""UI strings and hints in English and Simplified Chinese, from static/i18n/*.json."""

from __future__ import annotations

import json
from functools import lru_cache

from gradient_lab.assets import assets

LANGUAGES = ("en", "zh-CN")
DEFAULT_LANGUAGE = "en"

_I18N_DIR = assets("static") / "i18n"


def pick_language(accept_language: str | None) -> str:
    """The language to answer in: "zh-CN" when the client ranks any zh above English, else "en".

    Ranges are ordered by q-value (ties keep the header's order); a range with q=0 is refused,
    and ranges we don't offer, such as "fr" or "*", are passed over.
    """
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate((accept_language or "").split(",")):
        tag, *params = (piece.strip() for piece in part.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if tag and q > 0:
            ranked.append((-q, index, tag.lower()))
    for _, _, tag in sorted(ranked):
        primary = tag.split("-")[0]
        if primary == "zh":
            return "zh-CN"
        if primary == "en":
            return "en"
    return DEFAULT_LANGUAGE


def text(key: str, lang: str) -> str | None:
    """The string for `key` in `lang` (English for a language we don't offer); None if unknown."""
    return strings(lang).get(key)


@lru_cache
def strings(lang: str) -> dict[str, str]:
    """Every string in `lang` (English for a language we don't offer), read from disk once."""
    if lang not in LANGUAGES:
        lang = DEFAULT_LANGUAGE
    with (_I18N_DIR / f"{lang}.json").open(encoding="utf-8") as file:
        loaded: dict[str, str] = json.load(file)
    return loaded
