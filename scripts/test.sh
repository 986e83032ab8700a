#!/usr/bin/env bash
# The one test command: lint, type-check, then pytest (arguments go to pytest).
# --quick: the loop's tier, everything but the browser and corpus tests (CI runs them all).
set -euo pipefail
tier=()
if [[ "${1:-}" == "--quick" ]]; then
  tier=(-m "not browser and not corpus")
  shift
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/_env.sh
setup_env '.[test]'

# The browser tests drive Debian's headless Chromium; fonts-noto-cjk draws the Chinese pages
# (without it their screenshots show boxes).
if [[ ! -x /usr/bin/chromium ]] || ! fc-list :lang=zh 2>/dev/null | grep -q .; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    if ! { apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver fonts-noto-cjk; }; then
      echo "WARNING: could not install chromium; the browser tests will not run." >&2
    fi
  else
    echo "WARNING: /usr/bin/chromium is missing; the browser tests will not run." >&2
  fi
fi

# Class mode's store contract runs against Redis too (tests/rooms): Debian's redis-server, which
# the tests start on a free loopback port of their own.
if ! command -v redis-server >/dev/null && [[ ! -x /usr/bin/redis-server ]]; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    if ! { apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; }; then
      echo "WARNING: could not install redis-server; the Redis tests will not run." >&2
    fi
  else
    echo "WARNING: redis-server is missing; the Redis tests will not run." >&2
  fi
fi

lint_paths=(gradient_lab tests)
[[ -d bench ]] && lint_paths+=(bench)
ruff check "${lint_paths[@]}" hatch_build.py
mypy gradient_lab
# The notebook's one script, inlined from the page's modules: a module it cannot inline fails
# here, before the tests (a wheel's build runs the same step, hatch_build.py).
python gradient_lab/notebook/bundle.py --check
pytest "${tier[@]}" "$@"
