"""Each corpus program's answer both ways: from plain Python (plain.py, the oracle) and from the
lab (its /api/graph), for test_corpus.py and test_broken.py alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from gradient_lab.main import create_app
from gradient_lab.settings import load_settings

HERE = Path(__file__).resolve().parent
# Roomy limits: this compares what the programs print, on a machine that may be busy.
ROOMY = {"APP_WALL_SECONDS": "30", "APP_CPU_SECONDS": "30", "APP_RUNNER_JOBS": "2",
         "APP_QUEUE_SECONDS": "120"}


def from_plain_python(programs: list[Path], timeout: float) -> dict[str, dict[str, object]]:
    """What plain Python gives for each program, by name, from a process of its own, in the
    server's environment (as `python program.py` from the shell that started it)."""
    result = subprocess.run([sys.executable, str(HERE / "plain.py"), "--json",
                             *map(str, programs)], capture_output=True, text=True, check=True,
                            timeout=timeout, env=dict(os.environ))
    return {Path(path).name: answer for path, answer in json.loads(result.stdout).items()}


@contextmanager
def from_the_lab(programs: list[Path]) -> Iterator[dict[str, dict[str, object]]]:
    """What the lab answers for each program, by name, two at a time (one per place to run, so
    none waits in line and none is moved aside)."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in ROOMY.items():
            patch.setenv(key, value)
        load_settings.cache_clear()
        try:
            with TestClient(create_app()) as client:
                def ask(path: Path) -> dict[str, object]:
                    response = client.post("/api/graph", json={
                        "code": path.read_text(encoding="utf-8"), "device": "cpu"})
                    return {"status": response.status_code, **response.json()}

                with ThreadPoolExecutor(2) as threads:
                    yield dict(zip((p.name for p in programs), threads.map(ask, programs),
                                   strict=True))
        finally:
            load_settings.cache_clear()
