from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gradient_lab.i18n import LANGUAGES, pick_language, text

I18N = Path(__file__).resolve().parents[2] / "static" / "i18n"


def _load(lang: str) -> dict[str, str]:
    strings: dict[str, str] = json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))
    return strings


def test_english_and_chinese_have_the_same_keys() -> None:
    assert set(_load("en")) == set(_load("zh-CN"))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_string_is_empty(lang: str) -> None:
    empty = [key for key, value in _load(lang).items() if not value.strip()]
    assert empty == []


def test_every_error_hint_the_app_names_exists() -> None:
    keys = set(_load("en"))
    for name in ("no_grad_fn", "backward_twice", "too_large", "walled", "busy", "request_invalid"):
        assert f"hint.{name}" in keys
    # and every "hint.x" written anywhere in the app's code
    quoted = re.compile(r"[\"'](hint\.[a-z_]+)[\"']")
    named = {match for path in (I18N.parent.parent / "gradient_lab").rglob("*.py")
             for match in quoted.findall(path.read_text(encoding="utf-8"))}
    assert len(named) > 20 and named <= keys, named - keys


# A key a script names as t("a.b") or a template as strings["a.b"]; one that ends in "." is a
# prefix the code completes (each lab's own test builds those keys from its menus).
_NAMED = re.compile(r"""\bt\(\s*["'`]([\w.-]+)["'`]|strings\[["']([\w.-]+)["']\]""")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_key_a_script_or_template_names_exists(lang: str) -> None:
    root = I18N.parent.parent
    scripts = [*(root / "static").rglob("*.js"), *(root / "templates").rglob("*.html")]
    sources = [path for path in scripts if "vendor" not in path.parts]
    named = {key: path.relative_to(root) for path in sources
             for match in _NAMED.findall(path.read_text(encoding="utf-8"))
             for key in match if key and not key.endswith(".")}
    assert len(named) > 250  # every page's scripts were read
    strings = _load(lang)
    assert {key: str(path) for key, path in named.items() if key not in strings} == {}


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        (None, "en"),
        ("", "en"),
        ("en-US,en;q=0.9", "en"),
        ("zh-CN,zh;q=0.9", "zh-CN"),
        ("zh-TW", "zh-CN"),
        ("ZH-Hans", "zh-CN"),
        ("fr, zh;q=0.5", "zh-CN"),
        ("en;q=0.5, zh;q=0.8", "zh-CN"),
        ("zh;q=0.5, en;q=0.8", "en"),
        ("en, zh", "en"),
        ("zh;q=0, en", "en"),
        ("de, *;q=0.1", "en"),
        ("zh;q=oops, en;q=0.1", "en"),
    ],
)
def test_pick_language_prefers_the_highest_ranked_language_we_offer(
    header: str | None, lang: str
) -> None:
    assert pick_language(header) == lang


def test_text_falls_back_to_english_for_a_language_we_do_not_offer() -> None:
    assert text("app.title", "fr") == "Gradient Lab"


def test_text_of_an_unknown_key_is_none() -> None:
    assert text("hint.no_such_hint", "en") is None
