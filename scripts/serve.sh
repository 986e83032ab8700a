#!/usr/bin/env bash
# Start the app (settings from APP_* variables; see README.md). Arguments go to
# `gradient-lab serve`: bash scripts/serve.sh --lan
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/_env.sh
setup_env .
exec python -m gradient_lab serve "$@"
