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

# What some tests need from Debian, beside Python: the browser tests drive its headless
# Chromium, and fonts-noto-cjk draws the Chinese pages (without it their screenshots show
# boxes); class mode's store contract runs against redis-server too (tests/rooms), which the
# tests start on a free loopback port of their own. As root they are installed here; as
# anyone else, one line says what to ask for, and those tests skip.
missing=() skipping=""
[[ -x /usr/bin/chromium ]] || { missing+=(chromium chromium-driver); skipping="the browser tests"; }
fc-list :lang=zh 2>/dev/null | grep -q . || missing+=(fonts-noto-cjk)
if ! command -v redis-server >/dev/null && [[ ! -x /usr/bin/redis-server ]]; then
  missing+=(redis-server)
  skipping="${skipping:+$skipping and }the Redis tests"
fi
as_root=()
[[ "$(id -u)" == 0 ]] || as_root=(sudo -n)  # sudo without a password, where it is allowed
if (( ${#missing[@]} )); then
  if command -v apt-get >/dev/null && "${as_root[@]}" true 2>/dev/null; then
    if ! { "${as_root[@]}" apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${missing[@]}"; }; then
      echo "WARNING: could not install ${missing[*]}; ${skipping:-no test} will skip." >&2
    fi
  else
    what="the Chinese pages' screenshots will show boxes"
    [[ -z "$skipping" ]] || what="$skipping will skip"
    echo "NOTE: $what; to run them, as root: apt-get install ${missing[*]}" >&2
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
