#!/usr/bin/env bash
# The GPU checks, for a machine with CUDA and torch but no registry (the device machine):
#
#   bash scripts/gpu-check.sh wheels   # here, with PyPI: fetch the rest of the app's
#                                      # dependencies as Python 3.12 wheels into .whl/
#   bash scripts/gpu-check.sh run      # there, with .whl/ carried along: the cuda tests, then
#                                      # the whole suite but the browser and schema fuzz tests
#
# .whl/ is for this only: add it to .git/info/exclude. Results go to $OUT (or /tmp/gpu-check).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# What the app and its tests need beyond what a CUDA image with torch, pytest, hypothesis, httpx
# and jinja2 has. Pinned to what the development machine runs.
WHEELS=(fastapi==0.165.0 starlette==1.10.0 pydantic==2.14.4 pydantic_core==2.50.5
        pydantic-settings==2.16.3 python-dotenv==1.2.4 annotated-types annotated-doc==0.0.7
        typing-inspection==0.4.5 typing_extensions==4.16.0 opentelemetry-api==1.45.2
        uvicorn==0.54.0 orjson==3.13.0 plotly==7.1.0 torchviz==0.0.3 graphviz==0.21
        pyseccomp==0.1.2)

case "${1:-}" in
  wheels)
    for wheel in "${WHEELS[@]}"; do
      python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux2014_x86_64 -d .whl "$wheel" || exit 1
    done
    ;;
  run)
    out="${OUT:-/tmp/gpu-check}"
    mkdir -p "$out"
    export PYTHONUNBUFFERED=1
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site \
      .whl/*.whl || exit 3
    export PYTHONPATH="/tmp/site:$PWD"
    nvidia-smi -L
    python3 -c "import torch; print(torch.__version__, torch.cuda.is_available())"
    # pytest-benchmark, where installed, fails the run when xdist is on: -p no:benchmark.
    flags=(-p no:cacheprovider -p no:benchmark -q --ignore=tests/browser
           --ignore=tests/web/test_openapi_fuzz.py)
    echo "== cuda tests (the walls with CUDA started in each child)"
    timeout 150 python3 -m pytest "${flags[@]}" -m cuda tests 2>&1 | tee "$out/cuda.log" | tail -20
    echo "== the walls' own tests"
    timeout 150 python3 -m pytest "${flags[@]}" tests/runner/test_walls.py 2>&1 \
      | tee "$out/walls.log" | tail -20
    echo "== whole suite, device auto = cuda"
    timeout 300 python3 -m pytest "${flags[@]}" -n 6 --junitxml="$out/junit.xml" 2>&1 \
      | tee "$out/full.log" | tail -40
    ;;
  *)
    echo "usage: bash scripts/gpu-check.sh wheels|run" >&2
    exit 2
    ;;
esac
