"""The package as a stranger installs it: a wheel, in a fresh virtual environment, started by its
own command, away from the checkout, with no network.

The fresh environment borrows the test environment's dependencies (a .pth file naming its
site-packages) rather than downloading torch again, so what is tested is the wheel: that it
carries the templates, the static files and the vendored libraries, and that `gradient-lab`
and `python -m gradient_lab` start the server from it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Run inside the fresh environment: start the server, fetch pages, report what came back.
CHECK = r'''
import json, os, socket, subprocess, sys, time, urllib.request
command, paths = json.loads(sys.argv[1]), sys.argv[2:]
with socket.socket() as s:
    s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
env = {**os.environ, "APP_PORT": str(port), "APP_RUNNER_READY": "1"}
server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
report = {"network": "closed"}
try:
    socket.create_connection(("1.1.1.1", 443), timeout=3).close()
    report["network"] = "open"
except OSError:
    pass
try:
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
            break
        except OSError:
            if server.poll() is not None:
                break
            time.sleep(0.2)
    for path in paths:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
                report[path] = [r.status, r.read().decode("utf-8", "replace")]
        except Exception as error:
            report[path] = [0, repr(error)]
finally:
    server.terminate()
    try:
        stderr = server.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:  # caught computing the lessons ahead: not this test's
        server.kill()
        stderr = server.communicate()[1]
    report["stderr"] = stderr.decode("utf-8", "replace")[:20000]
print(json.dumps(report))
'''
PAGES = ["/", "/descent", "/training", "/lessons", "/static/app.css",
         "/static/vendor/dagre/dagre.min.js", "/static/i18n/zh-CN.json", "/vendor/plotly.min.js",
         "/healthz", "/docs", "/redoc", "/openapi.json",
         "/static/vendor/swagger-ui/swagger-ui-bundle.js",
         "/static/vendor/swagger-ui/swagger-ui.css", "/static/vendor/redoc/redoc.standalone.js"]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the project's wheel installed: its bin/ folder."""
    where = tmp_path_factory.mktemp("package")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(where / "dist"), str(ROOT)], check=True, timeout=300)
    wheel = next((where / "dist").glob("gradient_lab-*.whl"))
    venv.create(where / "venv", with_pip=False)
    python = where / "venv" / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig."
                                "get_paths()['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    ours = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    (site / "_test_dependencies.pth").write_text("".join(f"{path}\n" for path in sorted(ours)))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, timeout=300)
    return python.parent


def _stranger() -> dict[str, str]:
    """The environment of someone who installed the wheel: none of the tests' settings, and
    no PYTHONPATH pointing at a checkout."""
    return {key: value for key, value in os.environ.items()
            if not key.startswith(("APP_", "PYTHON", "VIRTUAL_ENV"))}


def _serve(fresh: Path, command: list[str], paths: list[str], cwd: Path) -> dict[str, object]:
    """What the installed server answers for `paths`, started in a network namespace of its
    own (only loopback) where this user may make one, else as it is."""
    check = [str(fresh / "python"), "-c", CHECK, json.dumps(command), *paths]
    unshare = shutil.which("unshare")
    if os.geteuid() == 0 and unshare:
        check = [unshare, "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *check]
    env = _stranger()
    env["PATH"] = f"{fresh}:{env.get('PATH', '')}"
    result = subprocess.run(check, capture_output=True, text=True, timeout=600, cwd=cwd,
                            env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_the_installed_command_serves_every_page_from_the_wheel(fresh: Path,
                                                                tmp_path: Path) -> None:
    report = _serve(fresh, [str(fresh / "gradient-lab")], PAGES, tmp_path)
    if os.geteuid() == 0:
        assert report["network"] == "closed", report
    for path in PAGES:
        status, body = report[path]  # type: ignore[misc]
        assert status == 200, (path, body, report["stderr"])
    assert "Gradient Lab" in report["/"][1]  # type: ignore[index]
    assert '"status":"ok"' in report["/healthz"][1].replace(" ", "")  # type: ignore[index]
    for docs in ("/docs", "/redoc"):  # every script, style and font from the server itself
        html: str = report[docs][1]  # type: ignore[index]
        assert "/static/vendor/" in html
        assert not re.findall(r'(?:src|href)=["\']?(?:https?:)?//', html), (docs, html)
    # The first lines say what runs, behind which walls, and where to open it.
    assert "Gradient Lab " in report["stderr"] and "Walls: " in report["stderr"]
    assert "Open http://127.0.0.1:" in report["stderr"]


def test_the_installed_command_says_its_version_and_its_help(fresh: Path) -> None:
    from importlib.metadata import version

    said = subprocess.run([str(fresh / "gradient-lab"), "--version"], capture_output=True,
                          text=True, timeout=60, check=True, env=_stranger()).stdout
    assert said.strip() == f"gradient-lab {version('gradient-lab')}"
    helped = subprocess.run([str(fresh / "gradient-lab"), "--help"], capture_output=True,
                            text=True, timeout=60, check=True, env=_stranger()).stdout
    assert "serve" in helped and "check" in helped


def test_python_dash_m_runs_the_installed_package_not_the_checkout(fresh: Path,
                                                                    tmp_path: Path) -> None:
    report = _serve(fresh, [str(fresh / "python"), "-m", "gradient_lab"], ["/healthz"],
                    tmp_path)
    assert report["/healthz"][0] == 200, report  # type: ignore[index]
    where = subprocess.run([str(fresh / "python"), "-c", "import gradient_lab; "
                            "print(gradient_lab.__file__)"], capture_output=True, text=True,
                           check=True, cwd=tmp_path, env=_stranger()).stdout
    assert str(ROOT) not in where and str(fresh.parent) in where, where


NOTEBOOK = r'''
import json, torch, gradient_lab
from gradient_lab.assets import assets
from gradient_lab.notebook.bundle import BUILT
from gradient_lab.notebook.output import mimebundle, script

with gradient_lab.record() as run:
    a = torch.tensor([2.0], requires_grad=True)
    loss = (a * 3) ** 2
    loss.backward()
print(json.dumps({"static": str(assets("static")), "built": (assets("static") / BUILT).is_file(),
                  "script": script(), "plain": mimebundle(run.graph, None)["text/plain"]}))
'''


def test_the_wheel_carries_the_notebooks_script_built_from_its_modules(fresh: Path,
                                                                       tmp_path: Path) -> None:
    from gradient_lab.notebook.bundle import build

    cell = tmp_path / "cell.py"  # a file, as a notebook's cell is: record() watches its lines
    cell.write_text(NOTEBOOK, encoding="utf-8")
    result = subprocess.run([str(fresh / "python"), str(cell)], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path, env=_stranger())
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert str(fresh.parent) in report["static"] and report["built"], report["static"]
    assert report["script"] == build(ROOT / "static")  # what hatch_build.py put in the wheel
    assert "loss (PowBackward0) → Mul (MulBackward0) → a (AccumulateGrad)" in \
        report["plain"]


def test_the_wheel_carries_the_licences_its_own_and_the_vendored_libraries(fresh: Path) -> None:
    import zipfile

    wheel = next((fresh.parent.parent / "dist").glob("gradient_lab-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names), names
    metadata = next(name for name in names if name.endswith(".dist-info/METADATA"))
    assert "License-Expression: MIT" in zipfile.ZipFile(wheel).read(metadata).decode()
    for library in ("swagger-ui/LICENSE", "swagger-ui/NOTICE", "redoc/LICENSE",
                    "codemirror/LICENSE", "dagre/LICENSE", "fonts/LICENSE",
                    "fonts/LICENSE-noto-cjk", "fonts/lab-sans-sc.woff",
                    "fonts/lab-sans-sc-bold.woff", "fonts/lab-sans-sc.chars.txt"):
        assert f"gradient_lab/static/vendor/{library}" in names, library
    assert not any("axe" in name for name in names)  # the tests' own, never the app's
