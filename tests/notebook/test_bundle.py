"""The inliner: the page's modules as one script, each in its own scope, in the order they run;
what it cannot inline stops the build with the file and line."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from gradient_lab.notebook.bundle import ENTRY, BundleError, build

STATIC = Path(__file__).resolve().parents[2] / "static"


def _static(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def _module_order(script: str) -> list[str]:
    return re.findall(r"^// --- (\S+) ---$", script, re.M)


def test_every_module_the_notebook_reaches_is_inlined_after_what_it_imports() -> None:
    script = build(STATIC)
    order = _module_order(script)
    assert order[-1] == ENTRY and order.index("page.js") < order.index("graph/tensors.js")
    # The view the page draws with, and every module it imports, by its own imports.
    view = (STATIC / "graph" / "view.js").read_text(encoding="utf-8")
    for name in re.findall(r'from "\./([\w/]+\.js)"', view):
        assert f"graph/{name}" in order, name
    assert order.index("graph/draw.js") < order.index("graph/view.js")
    assert not re.search(r"^\s*(import|export)\b", script, re.M)  # one plain script


def test_each_module_keeps_its_own_names_and_imports_are_renamed(tmp_path: Path) -> None:
    static = _static(tmp_path, {
        "notebook.js": 'import { twice as double } from "./lib/b.js";\nconst $ = 1;\n',
        "lib/a.js": "const $ = 2;\nexport const ONE = 1;\nexport function helper() { return $; }\n",
        "lib/b.js": 'import { ONE } from "../lib/a.js";\nconst $ = 3;\n'
                    "export async function twice(x) { return 2 * x * ONE; }\n",
    })
    script = build(static)
    assert _module_order(script) == ["lib/a.js", "lib/b.js", "notebook.js"]
    assert 'return { ONE, helper };' in script and "return { twice };" in script
    assert 'const { twice: double } = __modules["lib/b.js"];' in script
    assert 'const { ONE } = __modules["lib/a.js"];' in script
    assert script.count("const $ = ") == 3  # three scopes, no clash


def test_a_change_to_a_graph_module_reaches_the_notebook_script(tmp_path: Path) -> None:
    copy = tmp_path / "static"
    shutil.copytree(STATIC, copy, ignore=shutil.ignore_patterns("vendor", "i18n"))
    chain = copy / "graph" / "chain.js"
    chain.write_text(chain.read_text(encoding="utf-8") + "export const EDITED = 28;\n",
                     encoding="utf-8")
    script = build(copy)
    assert "const EDITED = 28;" in script and "EDITED }" in script


@pytest.mark.parametrize(("files", "message"), [
    ({"notebook.js": 'import { a } from "./a.js";\n', "a.js": 'import { b } from "./notebook.js";\n'
      "export const a = 1;\n"}, "import each other"),
    ({"notebook.js": 'import { a } from "./missing.js";\n'}, "missing.js is imported but does not"),
    ({"notebook.js": "const x = 1;\nexport default x;\n"}, "notebook.js:2"),
    ({"notebook.js": 'import * as all from "./a.js";\n', "a.js": ""}, "notebook.js:1"),
    ({"notebook.js": 'import { x } from "https://cdn.example/x.js";\n'}, "only relative imports"),
    ({"notebook.js": 'import { x } from "../../x.js";\n'}, "only relative imports"),
    ({"notebook.js": 'const s = "</script>";\n'}, "would end its <script>"),
])
def test_what_cannot_be_inlined_stops_the_build_with_where(
        tmp_path: Path, files: dict[str, str], message: str) -> None:
    with pytest.raises(BundleError, match=re.escape(message)):
        build(_static(tmp_path, files))
