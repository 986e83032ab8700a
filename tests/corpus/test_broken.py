"""Real learners' broken programs: the lab must fail as `python program.py` fails, plus a hint.

Each file in broken/ is a program that raises, copied from a public question or issue (a
forum, Stack Overflow, GitHub issues, Chinese Q&A pages) as its author wrote it. Its header
names the source, the author, every edit (data made in the program instead of loaded from a
file) and, in a `# Hint:` line, the hint the lab gives (gradient_lab/runner/child/hints.py).
Through /api/graph each must give what plain Python gives (plain.py, the oracle): the same
error type and message, at the same line of the program, after the same printed output; and
the hint, in English and in Chinese.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from gradient_lab import i18n
from tests.corpus.answers import from_plain_python, from_the_lab

# The first test runs every program, both ways; scripts/test.sh --quick leaves this tier out.
pytestmark = [pytest.mark.timeout(600), pytest.mark.corpus]
HERE = Path(__file__).resolve().parent
BROKEN = HERE / "broken"
PROGRAMS = sorted(BROKEN.glob("*.py"))
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
_HINT = re.compile(r"^# Hint: (hint\.[a-z_]+)$", re.MULTILINE)


def hint_of(path: Path) -> str:
    """The hint a program's header says the lab gives it."""
    found = _HINT.search(path.read_text(encoding="utf-8"))
    assert found, f"{path.name} names no '# Hint:'"
    return found.group(1)


def skip_where_it_runs(path: Path) -> None:
    """A program that asks for CUDA fails only where there is none; elsewhere it runs on."""
    if hint_of(path) == "hint.cuda_missing" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA, so the program does not fail where it asks for it")


@pytest.fixture(scope="module")
def oracle() -> dict[str, dict[str, object]]:
    return from_plain_python(PROGRAMS, timeout=600)


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, dict[str, object]]]:
    with from_the_lab(PROGRAMS) as answers:
        yield answers


def _same(text: object) -> str:
    return _ADDRESS.sub("0x…", str(text))


def test_the_corpus_holds_at_least_40_programs_each_with_its_source() -> None:
    assert len(PROGRAMS) >= 40, len(PROGRAMS)
    for path in PROGRAMS:
        head = path.read_text(encoding="utf-8").splitlines()[:3]
        assert head[0].startswith("# Source: http"), path.name
        assert head[2].startswith("# Edits:"), path.name
        assert i18n.text(hint_of(path), "en"), path.name


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_a_broken_program_fails_in_the_lab_as_in_plain_python_with_a_hint(
        path: Path, oracle: dict[str, dict[str, object]],
        lab: dict[str, dict[str, object]]) -> None:
    skip_where_it_runs(path)
    plain, ours = oracle[path.name], lab[path.name]
    assert plain["error"] is not None, f"plain Python ran {path.name} without an error"
    error = ours.get("error")
    assert ours["status"] == 400 and isinstance(error, dict), ours
    assert _same(error["message"]) == _same(plain["error"])  # its type and message
    assert error["line"] == plain["line"]
    partial = ours.get("partial")
    assert isinstance(partial, dict) and _same(partial["stdout"]) == _same(plain["stdout"])
    assert error["hint_key"] == hint_of(path) and error["hint"] == i18n.text(
        error["hint_key"], "en")
    assert re.search(r"[\u4e00-\u9fff]", i18n.text(error["hint_key"], "zh-CN") or "")
