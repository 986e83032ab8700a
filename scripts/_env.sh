# Sourced by test.sh and serve.sh: the one place that makes the Python environment.
# Usage: setup_env '.[test]'   (what to install, editable, after torch)

TORCH_PIN=torch==2.13.0
# PyTorch's own index of CPU builds. On Linux, PyPI's torch is the CUDA build: with the nvidia-*
# packages it pulls, about 3 GB to download and 5 GB on disk, against some 200 MB here.
TORCH_CPU_INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}

setup_env() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  if [[ -z "${VIRTUAL_ENV:-}" ]]; then
    [[ -x .venv/bin/python ]] || python3 -m venv .venv
    # shellcheck disable=SC1091
    source .venv/bin/activate
  fi
  _install_torch
  _install_project "$1"
}

# `pip install -e` again only when pyproject.toml (the dependencies, the console script) or the
# build hook has changed, or the environment's gradient_lab is not this checkout's: 28 s of pip
# on each start against 9 s for the server alone. The stamp lives in the environment it names.
_install_project() {
  local stamp wanted
  stamp="$(python -c 'import sys; print(sys.prefix)')/.gradient-lab-installed${1//[^a-z]/_}"
  wanted="$(cat pyproject.toml hatch_build.py | sha256sum | cut -d' ' -f1) $PWD"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]] && _is_this_checkout; then
    return
  fi
  pip install -q -e "$1"
  echo "$wanted" > "$stamp"
}

_is_this_checkout() {  # whether `import gradient_lab` finds this folder's package
  python - "$PWD" <<'EOF' 2>/dev/null
import os, sys
from importlib.util import find_spec
spec = find_spec("gradient_lab")
sys.exit(spec is None or not (spec.origin or "").startswith(os.path.join(sys.argv[1], "")))
EOF
}

# torch first, so that the project's plain "torch>=2.3" is met when pip reads it. TORCH_SPEC
# chooses another (TORCH_SPEC=torch: pip's default build, with CUDA on Linux). Not quiet: the
# download is the long part of a first setup, and its progress is worth watching.
_install_torch() {
  if [[ -n "${TORCH_SPEC:-}" ]]; then
    echo "Installing $TORCH_SPEC (TORCH_SPEC) ..." >&2
    pip install "$TORCH_SPEC"
  elif _torch_is "${TORCH_PIN#torch==}"; then
    :  # installed already (a CPU or a CUDA build): nothing to fetch
  elif _reachable "$TORCH_CPU_INDEX/torch/"; then
    echo "Installing $TORCH_PIN, the CPU build (about 200 MB), from $TORCH_CPU_INDEX ..." >&2
    pip install --index-url "$TORCH_CPU_INDEX" "$TORCH_PIN"
  elif echo "Looking for $TORCH_PIN+cpu in pip's configured index ..." >&2 &&
       pip install "$TORCH_PIN+cpu" 2>/dev/null; then
    :  # a mirror, or wheels on this machine's own disk, with the CPU build
  else
    echo "NOTE: $TORCH_CPU_INDEX cannot be reached and pip's index has no CPU build of" \
         "$TORCH_PIN, so pip installs its default build. From PyPI on Linux that is the CUDA" \
         "build: about 3 GB to download and 5 GB on disk with its nvidia-* packages (some 40" \
         "minutes on a 10 Mbit/s line) where the CPU build is 200 MB, and it runs on the CPU" \
         "all the same on a machine without a GPU. To avoid it, stop now (Ctrl-C) and set" \
         "TORCH_CPU_INDEX to a copy of that index you can reach." >&2
    pip install "$TORCH_PIN"
  fi
}

_torch_is() {  # whether the installed torch is release $1 (any local build: +cpu, +cu128)
  python - "$1" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(version("torch").split("+")[0] != sys.argv[1])
EOF
}

_reachable() {  # whether $1 answers at all (any HTTP status), within 15 s (20 with its DNS)
  timeout 20 python - "$1" <<'EOF' 2>/dev/null
import sys, urllib.error, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=15).close()
except urllib.error.HTTPError:
    pass
EOF
}
