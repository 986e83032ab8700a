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
  pip install -q -e "$1"
}

# torch first, so that the project's plain "torch>=2.3" is met when pip reads it. TORCH_SPEC
# chooses another (TORCH_SPEC=torch: pip's default build, with CUDA on Linux).
_install_torch() {
  if [[ -n "${TORCH_SPEC:-}" ]]; then
    pip install -q "$TORCH_SPEC"
  elif _torch_is "${TORCH_PIN#torch==}"; then
    :  # installed already (a CPU or a CUDA build): nothing to fetch
  elif _reachable "$TORCH_CPU_INDEX/torch/"; then
    pip install -q --index-url "$TORCH_CPU_INDEX" "$TORCH_PIN"
  else
    # A machine without that index (as this project's development machine, whose pip finds
    # a CPU wheel on its own disk) gets torch from pip's configured index instead.
    echo "NOTE: $TORCH_CPU_INDEX cannot be reached; installing $TORCH_PIN from pip's" \
         "configured index (from PyPI on Linux, that is the CUDA build, about 3 GB)." >&2
    pip install -q "$TORCH_PIN"
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
