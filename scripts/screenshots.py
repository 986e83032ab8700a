"""Take the README's screenshot of each lab: python scripts/screenshots.py [--out docs].

Starts the app on a free loopback port, opens each page in headless Chromium (Debian's
/usr/bin/chromium through Playwright), runs its ready example, and saves a 1280x720 PNG.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# page, what to click to run it (None: the page runs on load), what to wait for
PAGES = [
    ("graph", "/#ex=S2", "#run", 4000),
    ("descent", "/descent#preset=rosenbrock", "#race", 3000),
    ("training", "/training#lesson=flow", "#panel-flow button[type=submit]", 6000),
    ("lessons", "/lessons", None, 500),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(ROOT / "docs"))
    out = Path(parser.parse_args().out)
    out.mkdir(exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "APP_PORT": str(port), "APP_HOST": "127.0.0.1"}
    server = subprocess.Popen([sys.executable, "-m", "gradient_lab"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.25)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            for name, path, run, wait_ms in PAGES:
                page.goto(base + path)
                page.wait_for_load_state("networkidle")
                if run and page.locator(run).count():
                    page.locator(run).first.click()
                page.wait_for_timeout(wait_ms)
                if name == "descent":  # scrub to the end of the race
                    page.locator("#play").click()
                    page.wait_for_timeout(6000)
                page.screenshot(path=str(out / f"{name}.png"))
                print(f"saved {out / f'{name}.png'}")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=15)


if __name__ == "__main__":
    main()
