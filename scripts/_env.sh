# Sourced by test.sh and serve.sh: the one place that makes the Python environment.
# Usage: setup_env '.[test]'   (what to install, editable, after torch)

setup_env() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  if [[ -z "${VIRTUAL_ENV:-}" ]]; then
    [[ -x .venv/bin/python ]] || python3 -m venv .venv
    # shellcheck disable=SC1091
    source .venv/bin/activate
  fi
  # torch first, pinned: a CPU build lies on local disk here, while plain `torch` from the
  # registry would pull the multi-GB CUDA build. TORCH_SPEC chooses another.
  pip install -q "${TORCH_SPEC:-torch==2.13.0}"
  pip install -q -e "$1"
}
