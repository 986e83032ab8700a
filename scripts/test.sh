#!/usr/bin/env bash
# The one test command: lint, type-check, then pytest (arguments go to pytest, in each phase).
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
# eslint 9 and prettier 3 (package.json) want Node 18.18 or newer; Debian 12's nodejs is 18.20.
node_ok() {
  command -v node >/dev/null && command -v npm >/dev/null &&
    node -e 'const [a, b] = process.versions.node.split(".").map(Number);
             process.exit(a > 18 || (a === 18 && b >= 18) ? 0 : 1)'
}
node_ok || missing+=(nodejs npm)
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
# The page's JavaScript: eslint for mistakes, prettier for layout, both at ruff's 100 columns.
# node_modules is installed from package-lock.json, again only when the lock file changes.
if node_ok; then
  lock="$(sha256sum package-lock.json | cut -d' ' -f1)"
  if [[ ! -d node_modules || "$(cat node_modules/.gradient-lab-lock 2>/dev/null)" != "$lock" ]]; then
    npm ci --no-audit --no-fund --loglevel=error
    echo "$lock" > node_modules/.gradient-lab-lock
  fi
  npx --no-install eslint static
  npx --no-install prettier --check --log-level=warn "static/**/*.js"
else
  echo "NOTE: no Node.js 18.18 or newer, so the JavaScript is not linted; to lint it, as root:" \
       "apt-get install nodejs npm" >&2
fi
# One worker per core, each given whole test files (their module fixtures start a server or a
# browser once): most of these tests wait on a child process. TEST_WORKERS=0: one process.
parallel() { pytest -n "${TEST_WORKERS:-auto}" --dist loadfile "$@"; }
# pytest's 5 is "no test chosen": the arguments may pick tests of one phase only.
chosen_ok() { "$@" || { local rc=$?; (( rc == 5 )) || return "$rc"; }; }
marks=("${tier[@]}")
for arg in "$@"; do [[ "$arg" == -m* ]] && marks=(-m); done  # a tier the caller chose
if (( ${#marks[@]} )); then
  parallel "${tier[@]}" "$@"
else
  # The browser tests after the rest, in one process: each keeps a server, its children and
  # Chromium busy, so on few cores a second worker only slows both past the pages' time limits.
  failed=0
  chosen_ok parallel -m "not browser" "$@" || failed=$?
  chosen_ok pytest -m browser "$@" || failed=$?
  exit "$failed"
fi
