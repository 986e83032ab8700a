"""One script from the graph lab's ES modules, for a notebook's output, which has no server to
fetch them from: static/notebook.js and every module it imports, in the order they run.

Each module becomes a function scope that returns its exports, and each `import { a, b as c }
from "./x.js"` a `const { a, b: c }` read from the module it names, so the modules' own names
never meet. The entry runs last, at the top level of the script. The modules are the page's
own files as they are, so a change to static/graph*.js reaches the notebook with the next build.

It understands the plain modules the pages are written in (STYLE.md: no bundler, one import
per line of `import { ... } from "./..."`, `export function` and `export const`); anything
else, a module it cannot find, or a cycle, fails the build, naming the file and line, rather
than a learner's notebook. Stdlib only: the package's build hook (hatch_build.py) loads this
file by path, in a build environment that may not have torch.

`python gradient_lab/notebook/bundle.py [--check | OUT]` builds it from the checkout's static/ (by
path: the package would import torch first).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path, PurePosixPath

ENTRY = "notebook.js"
BUILT = "notebook.bundle.js"  # where a wheel carries it, beside the modules (hatch_build.py)

_IMPORT = re.compile(r'^import\s+(?:\{([^}]*)\}\s*from\s+)?"([^"]+)";[ \t]*$', re.M)
_EXPORT = re.compile(r"^export\s+(?:(?:async\s+)?function\*?\s+([\w$]+)|const\s+([\w$]+))", re.M)
_MODULE_SYNTAX = re.compile(r"^[ \t]*(import|export)\b", re.M)


class BundleError(Exception):
    """A module the inliner cannot inline: the build stops here."""


def build(static: Path, entry: str = ENTRY) -> str:
    """The script: every module `entry` imports, each in its own scope, then `entry` itself."""
    order = _order(static, entry)
    parts = [f"// Built from static/{entry} and its imports by gradient_lab/notebook/bundle.py.",
             "const __modules = {};"]
    for name in order[:-1]:
        body, exports = _rewrite(static, name)
        parts += [f"// --- {name} ---", f"__modules[{_js(name)}] = (() => {{", body,
                  f"return {{ {', '.join(exports)} }};", "})();"]
    body, _ = _rewrite(static, order[-1])
    parts += [f"// --- {order[-1]} ---", body]
    script = "\n".join(parts) + "\n"
    # Inlined in a <script>: these would end it, or start a comment the parser treats apart.
    for ending in ("</script", "<!--"):
        if ending in script.lower():
            raise BundleError(f"the script holds {ending!r}, which would end its <script> element")
    return script


def _order(static: Path, entry: str) -> list[str]:
    """The modules in the order they run: each after what it imports (a depth-first walk)."""
    order: list[str] = []
    state: dict[str, str] = {}  # name: "open" while its imports are walked, then "done"
    stack = [(entry, iter(_imports(static, entry)))]
    state[entry] = "open"
    while stack:
        name, pending = stack[-1]
        for _, dependency in pending:
            if state.get(dependency) == "open":
                raise BundleError(f"static/{name} and static/{dependency} import each other")
            if dependency not in state:
                state[dependency] = "open"
                stack.append((dependency, iter(_imports(static, dependency))))
                break
        else:
            stack.pop()
            state[name] = "done"
            order.append(name)
    return order


def _imports(static: Path, name: str) -> list[tuple[str, str]]:
    """(names as written, the module's path under static/) for each import of module `name`."""
    source = _read(static, name)
    found = []
    for match in _IMPORT.finditer(source):
        target = PurePosixPath(name).parent / match.group(2)
        resolved = _normal(target)
        if not match.group(2).startswith((".", "/")) or resolved is None:
            raise BundleError(f"static/{name}:{_line(source, match.start())}: only relative "
                              f"imports within static/ can be inlined: {match.group(0)}")
        found.append((match.group(1) or "", resolved))
    for match in _MODULE_SYNTAX.finditer(source):
        statement = source[match.start(1):]  # an import may run over lines, as prettier wraps it
        if not (_IMPORT.match(statement) or _EXPORT.match(statement)):
            line = statement[:statement.find("\n")]
            raise BundleError(f"static/{name}:{_line(source, match.start())}: the inliner "
                              f"knows `import {{...}} from`, `export function` and `export "
                              f"const`, not: {line}")
    return found


def _rewrite(static: Path, name: str) -> tuple[str, list[str]]:
    """Module `name`'s source with its imports read from __modules and `export ` dropped."""
    source = _read(static, name)

    def imported(match: re.Match[str]) -> str:
        path = _normal(PurePosixPath(name).parent / match.group(2))
        if not match.group(1):
            return f"// (import {match.group(2)}: run above, for what it does)"
        names = [n.strip() for n in match.group(1).split(",") if n.strip()]
        bound = ", ".join(n.replace(" as ", ": ") for n in names)
        return f"const {{ {bound} }} = __modules[{_js(str(path))}];"

    exports = [a or b for a, b in _EXPORT.findall(source)]
    body = _IMPORT.sub(imported, source)
    body = re.sub(r"^export\s+", "", body, flags=re.M)
    return body, exports


def _read(static: Path, name: str) -> str:
    path = static / name
    if not path.is_file():
        raise BundleError(f"static/{name} is imported but does not exist")
    return path.read_text(encoding="utf-8")


def _normal(path: PurePosixPath) -> str | None:
    """a/../b/c.js as b/c.js; None when it climbs out of static/."""
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)


def _line(source: str, offset: int) -> int:
    return source.count("\n", 0, offset) + 1


def _js(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv: list[str]) -> int:
    static = Path(__file__).resolve().parents[2] / "static"
    try:
        script = build(static)
    except BundleError as error:
        sys.stderr.write(f"gradient_lab.notebook.bundle: {error}\n")
        return 1
    if argv and argv[0] == "--check":
        sys.stdout.write(f"static/{ENTRY} inlines: {len(script):,} characters\n")
    elif argv:
        Path(argv[0]).write_text(script, encoding="utf-8")
    else:
        sys.stdout.write(script)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
