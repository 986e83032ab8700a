"""The wheel's build step: the notebook's one script, inlined from the page's modules.

gradient_lab/notebook/bundle.py builds it from static/notebook.js and what it imports; the wheel
carries it as gradient_lab/static/notebook.bundle.js, beside the modules it came from, so an
installed package's show() reads one file. A checkout builds the same script in memory when a
notebook first asks for it (gradient_lab/notebook/output.py), so there is no built file in the
repository to fall behind the modules. A module the inliner cannot inline stops the build here.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).resolve().parent


def _bundle_module() -> Any:
    # By path, not `import gradient_lab`: the build environment need not have torch.
    path = ROOT / "gradient_lab" / "notebook" / "bundle.py"
    spec = importlib.util.spec_from_file_location("_bundle", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NotebookScriptHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":  # an editable install reads the checkout's modules
            return
        bundle = _bundle_module()
        self._folder = tempfile.TemporaryDirectory()
        built = Path(self._folder.name) / bundle.BUILT
        built.write_text(bundle.build(ROOT / "static"), encoding="utf-8")
        build_data["force_include"][str(built)] = f"gradient_lab/static/{bundle.BUILT}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if version != "editable":
            self._folder.cleanup()
