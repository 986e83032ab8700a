"""The real-world corpus: programs others wrote for learners, run through /api/graph.

Each file in programs/ is a teaching program copied from a public source (its header names the
source and every edit: data made in the program instead of downloaded, plots left out). Each
must print, through the lab, exactly what plain Python prints (plain.py, the oracle: a fresh
process, the lab's seed, one thread), or fail with the same error. Memory addresses differ
from run to run in plain Python too, and are left out of the comparison.

The programs that do not pass are listed in KNOWN with why; the pass rate must stay at 97% or
more.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradient_lab.runner.child.workers import NOTE
from tests.corpus.answers import from_plain_python, from_the_lab

# The first test runs every program, both ways; scripts/test.sh --quick leaves this tier out.
pytestmark = [pytest.mark.timeout(900), pytest.mark.corpus]
HERE = Path(__file__).resolve().parent
PROGRAMS = sorted((HERE / "programs").glob("*.py"))
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
# Programs that do not print what plain Python prints, each with why.
KNOWN: dict[str, str] = {}


@pytest.fixture(scope="module")
def oracle() -> dict[str, dict[str, object]]:
    return from_plain_python(PROGRAMS, timeout=900)


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, dict[str, object]]]:
    with from_the_lab(PROGRAMS) as answers:
        yield answers


def _same(text: str) -> str:
    # The lab's one line about DataLoader's workers is the lab's, not the program's.
    return _ADDRESS.sub("0x…", text.replace(NOTE, "", 1))


def _passes(name: str, plain: dict[str, object], ours: dict[str, object]) -> str | None:
    """None when the lab gave what plain Python gave; else what differs."""
    if plain["error"] is None:
        if ours["status"] != 200:
            return f"the lab answered {ours['status']}: {ours.get('error')}"
        if _same(str(ours["stdout"])) != _same(str(plain["stdout"])):
            return "it printed something else"
        return None
    error = ours.get("error")
    if not isinstance(error, dict):
        return f"plain Python failed ({plain['error']}), the lab did not"
    if _same(str(error["message"])) != _same(str(plain["error"])):
        return f"another error: {error['message']!r}, not {plain['error']!r}"
    return None


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_a_teaching_program_prints_what_plain_python_prints(
        path: Path, oracle: dict[str, dict[str, object]],
        lab: dict[str, dict[str, object]]) -> None:
    if path.name in KNOWN:
        pytest.xfail(KNOWN[path.name])
    problem = _passes(path.name, oracle[path.name], lab[path.name])
    assert problem is None, problem


def test_at_least_97_percent_of_the_corpus_passes(oracle: dict[str, dict[str, object]],
                                                  lab: dict[str, dict[str, object]]) -> None:
    assert len(PROGRAMS) >= 150
    passed = [p.name for p in PROGRAMS if _passes(p.name, oracle[p.name], lab[p.name]) is None]
    assert len(passed) >= 0.97 * len(PROGRAMS), sorted(set(p.name for p in PROGRAMS) - set(passed))
    assert set(KNOWN) == {p.name for p in PROGRAMS} - set(passed)  # every failure is listed


def test_every_program_names_its_source_and_its_edits() -> None:
    for path in PROGRAMS:
        head = path.read_text(encoding="utf-8").splitlines()[:3]
        assert head[0].startswith("# Source: http"), path.name
        assert head[2].startswith("# Edits:"), path.name
