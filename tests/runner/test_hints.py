"""The hints registry (gradient_lab/runner/child/hints.py) against real learners' programs.

Each program in tests/corpus/broken/ comes from a public question or issue and names, in its
header, the hint it should get; tests/corpus/test_broken.py checks the same programs through
the server against plain Python. Here they run in this process, so a new hint is quick to try.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from gradient_lab import i18n
from gradient_lab.runner.child.hints import HINTS
from gradient_lab.runner.child.program import run_program
from tests.corpus.test_broken import PROGRAMS, hint_of, skip_where_it_runs

# Hints that no learner's program in the corpus meets, each with why and where it is tested.
UNMET: dict[str, str] = {
    "hint.anomaly_nan": "the tutorial's detect_anomaly() example (tests/web/test_graph_api.py)",
    "hint.vmap_control_flow": "a descent surface's formula (tests/descent/test_surfaces.py)",
    "hint.cuda_error": "only a GPU raises it (tests/web/test_graph_api.py, cuda marker)",
    "hint.walled": "the walls' refusals (tests/runner/test_hostile.py)",
    "hint.compile": "torch.compile's default backend in the walls (tests/runner/test_script.py)",
}


@pytest.fixture
def one_thread() -> Iterator[None]:
    """One thread, as the lab's children have: a long program (3,000 steps) runs as there."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_a_learners_broken_program_gets_the_hint_for_its_mistake(path: Path,
                                                                 one_thread: None) -> None:
    skip_where_it_runs(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # old programs' deprecation warnings stay warnings
        error = run_program(path.read_text(encoding="utf-8"), program_bytes=10**6,
                            stdout_bytes=10**6).error
    assert error is not None, f"{path.name} ran without an error"
    assert error.hint_key == hint_of(path), error.message


@pytest.mark.parametrize("model", ["torch.nn.Linear(3, 1)",
                                   "torch.nn.Sequential(torch.nn.Linear(3, 1))"])
def test_clipping_a_module_rather_than_its_parameters_gets_the_hint(model: str) -> None:
    # A Linear is not iterable (TypeError); a Sequential iterates its layers, which have no
    # .grad (AttributeError): either way the learner meant model.parameters().
    code = (f"import torch\nmodel = {model}\nmodel(torch.ones(2, 3)).sum().backward()\n"
            "torch.nn.utils.clip_grad_norm_(model, 1.0)\n")
    error = run_program(code, program_bytes=10**6, stdout_bytes=10**6).error
    assert error is not None and error.line == 4
    assert error.hint_key == "hint.module_not_parameters", error.message


@pytest.mark.parametrize("key", sorted(set(HINTS) - set(UNMET)))
def test_every_hint_is_met_by_a_real_learners_program(key: str) -> None:
    assert key in {hint_of(path) for path in PROGRAMS}, f"no program in the corpus gets {key}"


@pytest.mark.parametrize("key", sorted(HINTS))
def test_every_hint_says_in_one_line_in_english_and_chinese_what_was_meant(key: str) -> None:
    english, chinese = i18n.text(key, "en"), i18n.text(key, "zh-CN")
    assert english and "\n" not in english
    assert chinese and "\n" not in chinese and re.search(r"[\u4e00-\u9fff]", chinese)
