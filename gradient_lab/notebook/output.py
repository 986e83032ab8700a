"""A Graph as a notebook's output: one self-contained text/html, and a text/plain fallback.

The HTML is a sandboxed iframe whose srcdoc is the whole graph lab view: the page's CSS, its
vendored dagre, the graph and its steps as JSON, and one script inlined from the page's own
modules (bundle.py). It asks nothing of a server or the kernel, so it survives saving, nbconvert
and a notebook opened without a kernel; the sandbox (scripts, no same origin) keeps each output
apart from the notebook and from the other outputs. Inside the iframe element is the plain-text
fallback an untrusted notebook shows: its sanitizer removes the iframe and keeps that text.
"""

from __future__ import annotations

import html
import re
import sys
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from gradient_lab import i18n, wire
from gradient_lab.assets import assets
from gradient_lab.graph.model import Graph
from gradient_lab.notebook.bundle import BUILT, build


@dataclass(frozen=True, slots=True)
class Note:
    """What the output says above the stepper: a string's key in static/i18n, its values."""

    key: str
    params: dict[str, str]


HEIGHT = 760  # px: the graph, the stepper and a step's chain rule, without scrolling


def display(graph: Graph, note: Note | None, *, lang: str = "en",
            height: int | None = None) -> None:
    """Show the graph in the running notebook's cell output; outside one, print its summary."""
    bundle = mimebundle(graph, note, lang=lang, height=height)
    try:
        from IPython import get_ipython
        from IPython.display import display as ipython_display
    except ImportError:
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        ipython_display(bundle, raw=True)
    else:
        sys.stdout.write(bundle["text/plain"] + "\n")


def mimebundle(graph: Graph, note: Note | None, *, lang: str = "en",
               height: int | None = None) -> dict[str, str]:
    """{"text/html": the iframe, "text/plain": what a terminal or an untrusted notebook shows}."""
    strings = _strings(lang)
    summary = _summary(graph, note, strings)
    document = _document(graph, note, lang, strings)
    # srcdoc in single quotes: the document's JSON and scripts hold thousands of double quotes,
    # each of which would grow to &quot;, and few single ones.
    srcdoc = document.replace("&", "&amp;").replace("'", "&#39;")
    # Plain text, no tags: a sanitizer may read the iframe's content as raw text.
    fallback = html.escape(strings["notebook.untrusted"] + " " + summary.replace("\n", " · "),
                           quote=False)
    iframe = (f"<iframe class=\"gradient-lab\" sandbox=\"allow-scripts\" "
              f"title=\"{html.escape(strings['notebook.title'])}\" "
              f"style=\"width: 100%; height: {int(height or HEIGHT)}px; border: 0;\" "
              f"srcdoc='{srcdoc}'>{fallback}</iframe>")
    return {"text/html": iframe, "text/plain": summary}


def _document(graph: Graph, note: Note | None, lang: str, strings: dict[str, str]) -> str:
    static = assets("static")
    # The page's variables table is not drawn: the view needs the nodes, edges and steps.
    data = wire.dumps({"graph": replace(graph, variables={}), "note": note})
    return _templates().get_template("notebook.html").render(
        lang=lang if lang in i18n.LANGUAGES else i18n.DEFAULT_LANGUAGE, strings=strings,
        notebook=True, title=strings["notebook.title"],
        page={"lang": lang, "strings": strings},
        css=Markup(_read(static / "app.css") + _read(static / "notebook" / "notebook.css")),
        dagre=Markup(_read(static / "vendor" / "dagre" / "dagre.min.js")),
        script=Markup(script()),
        data=Markup(data.decode().replace("<", "\\u003c")))  # no </script> inside JSON strings


@cache
def script() -> str:
    """The view's one script: built into a wheel (hatch_build.py), or from a checkout's modules,
    so what the page's modules are now is what a notebook draws with."""
    built = assets("static") / BUILT
    return built.read_text(encoding="utf-8") if built.is_file() else build(assets("static"))


def _summary(graph: Graph, note: Note | None, strings: dict[str, str]) -> str:
    """The graph in a few lines of text: its size, each backward call's order, the leaves' .grad."""
    def t(key: str, **params: Any) -> str:
        return strings[key].format(**params)

    # As the page names a node (static/graph/chain.js): its variable, else its op (Mul).
    names = {n.id: n.name or re.sub(r"Backward\d*$", "", n.op or "") or n.id for n in graph.nodes}
    lines = [t("notebook.title") + " · " + t("notebook.summary", nodes=len(graph.nodes),
                                              calls=len(graph.backward))]
    if note is not None:
        lines.append(t(note.key, **note.params))
    for call in graph.backward:
        order = " → ".join(f"{names.get(s.node, s.node)} ({s.op})" for s in call.steps)
        lines.append(t("notebook.order", n=call.index + 1, line=call.line, order=order))
    grads = [f"{n.name}.grad = {n.grad}" for n in graph.nodes
             if n.kind == "leaf" and n.name and n.grad is not None]
    if grads:
        lines.append("; ".join(grads))
    return "\n".join(lines)


@cache
def _strings(lang: str) -> dict[str, str]:
    """The strings the view uses: the graph lab's and the notebook's, not every page's."""
    return {k: v for k, v in i18n.strings(lang).items() if k.startswith(("graph.", "notebook."))}


@cache
def _templates() -> Environment:
    return Environment(loader=FileSystemLoader(assets("templates")), autoescape=True)


@cache
def _read(path: Any) -> str:
    return str(path.read_text(encoding="utf-8"))
