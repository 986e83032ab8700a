"""Imports run one way, by folder: web -> jobs -> labs -> runner, tensors, errors.

Rules about folders, not a list of files: a module added to a lab's folder is checked as the
lab is. Every import counts, those inside functions and under TYPE_CHECKING too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gradient_lab"
LABS = ("gradient_lab.graph", "gradient_lab.descent", "gradient_lab.training",
        "gradient_lab.rooms")
WEB_STACK = {"fastapi", "starlette", "pydantic", "pydantic_settings", "jinja2", "uvicorn"}
# The web layer, and what joins it to the labs: the only modules that may use the web stack.
MAY_USE_THE_WEB_STACK = ("gradient_lab.web", "gradient_lab.main", "gradient_lab.cli",
                         "gradient_lab.settings", "gradient_lab.jobs")
# A notebook's output is a page too (templates/notebook.html), rendered in the learner's kernel:
# jinja2 is the one piece of the web stack it uses.
NOTEBOOK = "gradient_lab.notebook"


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _within(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _imports(module: str) -> Iterator[tuple[str, str]]:
    """(what, as written) for each import in module: the package's modules by name, others by
    package."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield (full if full in MODULES else base), f"from {base} import {alias.name}"


def _own_imports(module: str) -> set[str]:
    return {name for name, _ in _imports(module) if name in MODULES and name != module}


def test_the_rules_see_every_folder() -> None:
    for package in ("gradient_lab.graph", "gradient_lab.descent", "gradient_lab.training",
                    "gradient_lab.runner.child", "gradient_lab.runner.pool",
                    "gradient_lab.web.routes", "gradient_lab.kept"):
        assert package in MODULES, package


@pytest.mark.parametrize("module", [m for m in MODULES
                                    if not _within(m, *MAY_USE_THE_WEB_STACK)])
def test_only_the_web_layer_imports_the_web_stack(module: str) -> None:
    used = {name.split(".")[0] for name, _ in _imports(module)} & WEB_STACK
    if _within(module, NOTEBOOK):
        used -= {"jinja2"}
    assert not used, f"{module} imports {used}"


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, NOTEBOOK)])
def test_the_notebook_needs_no_server_and_no_runner_pool(module: str) -> None:
    # It runs in the learner's kernel, on their own code: the web layer, the jobs and the
    # pool of walled children are the server's.
    for name in _own_imports(module):
        assert not _within(name, "gradient_lab.web", "gradient_lab.main", "gradient_lab.jobs",
                           "gradient_lab.runner.pool"), (module, name)


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, *LABS)])
def test_a_lab_imports_no_web_no_jobs_and_no_other_lab(module: str) -> None:
    own = next(lab for lab in LABS if _within(module, lab))
    for name in _own_imports(module):
        assert not _within(name, "gradient_lab.web", "gradient_lab.main",
                           "gradient_lab.jobs"), (module, name)
        assert not _within(name, *(lab for lab in LABS if lab != own)), (module, name)


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, "gradient_lab.runner")])
def test_the_runner_stands_alone(module: str) -> None:
    # The walls must not depend on what they wall in: only the runner itself and the errors.
    outside = {name for name in _own_imports(module)
               if not _within(name, "gradient_lab.runner", "gradient_lab.errors")
               and name != "gradient_lab"}
    assert not outside, f"{module} imports {outside}"


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, "gradient_lab.kept")])
def test_kept_replies_know_nothing_of_the_labs_or_the_web(module: str) -> None:
    # The keeper keeps bytes under keys: what they mean is the web layer's business.
    outside = {name for name in _own_imports(module)
               if not _within(name, "gradient_lab.kept", "gradient_lab.errors",
                              "gradient_lab.runner.child.environment")}
    assert not outside, f"{module} imports {outside}"


@pytest.mark.parametrize("module", list(MODULES))
def test_no_module_takes_another_modules_private_names(module: str) -> None:
    for name, written in _imports(module):
        imported = written.rpartition(" import ")[2]
        private = imported.startswith("_") and not imported.endswith("__")  # __version__
        if written.startswith("from gradient_lab") and private:
            pytest.fail(f"{module}: {written}")
        assert not (name.startswith("gradient_lab") and any(
            part.startswith("_") and part != "__init__" for part in name.split("."))), written


def test_there_are_no_import_cycles_in_the_package() -> None:
    graph = {module: _own_imports(module) for module in MODULES}
    cycles = [c for c in _strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively: each group of modules that import one another."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    groups.append(group)
    return groups


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert sorted(map(sorted, _strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"},
                                                   "d": {"a"}}))) == [["a", "b", "c"], ["d"]]
