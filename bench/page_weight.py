"""First-load transfer size of each page: `python bench/page_weight.py`.

Starts `python -m gradient_lab` on a free port of 127.0.0.1 and, for each page, fetches the HTML and
everything it loads on first visit (stylesheets, scripts, the favicon, and the ES modules
they import, followed transitively) with `Accept-Encoding: gzip`, as a browser with an empty
cache would. Prints each file's bytes on the wire and uncompressed, its Content-Encoding and
Cache-Control, and each page's total. Requests the page itself makes to /api/* after loading
are not counted: they depend on what the learner does.
"""

from __future__ import annotations

import re
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from server import free_port, start_server, stop  # noqa: E402

PAGES = ["/", "/descent", "/training", "/lessons"]
_HTML_REFS = re.compile(r'<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"')
_JS_IMPORTS = re.compile(r'^\s*import\b[^"\']*?["\']([^"\']+)["\']', re.M)


@dataclass(frozen=True, slots=True)
class Fetched:
    path: str
    status: int
    wire: int  # body bytes as sent
    raw: int  # body bytes once decoded
    encoding: str
    cache_control: str
    body: bytes  # decoded


def fetch(base: str, path: str) -> Fetched:
    import gzip

    request = urllib.request.Request(base + path, headers={"Accept-Encoding": "gzip"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, headers, wire = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, headers, wire = error.code, error.headers, error.read()
    encoding = headers.get("Content-Encoding", "")
    body = gzip.decompress(wire) if encoding == "gzip" else wire
    return Fetched(path, status, len(wire), len(body), encoding or "-",
                   headers.get("Cache-Control", "-"), body)


def page_assets(base: str, page: str) -> list[Fetched]:
    """The page and what it loads on first visit, in discovery order, each fetched once."""
    seen: dict[str, Fetched] = {}
    queue = [page]
    while queue:
        path = queue.pop(0)
        if path in seen:
            continue
        got = seen[path] = fetch(base, path)
        text = got.body.decode(errors="replace")
        if path == page:
            refs = _HTML_REFS.findall(text)
        elif path.endswith(".js"):
            refs = _JS_IMPORTS.findall(text)
        else:
            refs = []
        for ref in refs:
            url = urlsplit(urljoin(base + path, ref))
            if url.netloc == urlsplit(base).netloc and url.path not in seen:
                queue.append(url.path)
    return list(seen.values())


def main() -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile("w+") as log:
        server = start_server(port, log)
        try:
            totals = []
            for page in PAGES:
                files = page_assets(base, page)
                print(f"\n{page}")
                for f in files:
                    print(f"  {f.status} {f.wire / 1024:9.1f} KiB wire {f.raw / 1024:9.1f} KiB raw"
                          f"  {f.encoding:5s} {f.cache_control:28s} {f.path}")
                wire, raw = sum(f.wire for f in files), sum(f.raw for f in files)
                bad = [f.path for f in files if f.status != 200]
                totals.append((page, len(files), wire, raw, bad))
        finally:
            stop(server)
    print("\nfirst load, empty cache (HTML + scripts + styles, gzip):")
    for page, count, wire, raw, bad in totals:
        note = f"  MISSING: {', '.join(bad)}" if bad else ""
        print(f"  {page:10s} {count:3d} files {wire / 1024:8.1f} KiB on the wire "
              f"({raw / 1024:8.1f} KiB uncompressed){note}")


if __name__ == "__main__":
    main()
