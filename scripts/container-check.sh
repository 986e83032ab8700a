#!/usr/bin/env bash
# Build the Dockerfile with podman on this machine, run the image, and check that it serves.
#
# This machine has no Docker engine and reaches no image registry, so (../shared/notes/containers.md):
# podman with the runc runtime stands in for docker, and a local Debian image with python3 stands in
# for python:3.11-slim. What this machine needs to build (its CA bundle, the CPU torch wheel on local
# disk) goes in as build arguments and read-only mounts from here; the Dockerfile stays the one a
# machine with internet builds as is.
#
# Usage: bash scripts/container-check.sh          (run as root; safe to run again)
# Environment: IMAGE (default gradient-lab:check), CACHE_DIR (default /var/tmp/gradient-lab-container,
# where the base image's root filesystem is made), DEBIAN_MIRROR.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

IMAGE=${IMAGE:-gradient-lab:check}
BASE=docker.io/library/python:3.11-slim   # the name the Dockerfile's FROM resolves to
CACHE_DIR=${CACHE_DIR:-/var/tmp/gradient-lab-container}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
WHEELS=/opt/wheels
CONTAINER=gradient-lab-check-$$

say() { printf '\n==> %s\n' "$*"; }
fail() { printf '\nFAILED: %s\n' "$*" >&2; exit 1; }

# --- podman, configured for this machine -----------------------------------------------------
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  say "installing podman, runc and debootstrap"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q podman runc debootstrap
else
  say "podman, runc and debootstrap are installed: $(podman --version)"
fi

# The default ulimits are refused here ("setrlimit RLIMIT_NOFILE: Operation not permitted").
CONF=/etc/containers/containers.conf
if grep -qs '^default_ulimits *= *\[\]' "$CONF"; then
  say "$CONF already has default_ulimits = [] and pids_limit = 0"
else
  say "adding default_ulimits = [] and pids_limit = 0 to $CONF"
  if grep -qs '^\[containers\]' "$CONF"; then
    sed -i 's/^\[containers\]$/[containers]\ndefault_ulimits = []\npids_limit = 0/' "$CONF"
  else
    printf '[containers]\ndefault_ulimits = []\npids_limit = 0\n' >> "$CONF"
  fi
fi
# crun fails here ("cgroups in hybrid mode not supported").
PODMAN_RUN=(podman run --runtime runc)

# --- the stand-in base image -----------------------------------------------------------------
if podman image exists "$BASE"; then
  say "reusing the stand-in base image $BASE"
else
  if podman image exists localhost/debian-base:bookworm; then
    say "reusing localhost/debian-base:bookworm"
  else
    say "making a minimal Debian bookworm root filesystem with debootstrap (a few minutes)"
    rm -rf "$CACHE_DIR/rootfs"
    mkdir -p "$CACHE_DIR"
    debootstrap --variant=minbase bookworm "$CACHE_DIR/rootfs" "$DEBIAN_MIRROR" \
      > "$CACHE_DIR/debootstrap.log" 2>&1 || fail "debootstrap; see $CACHE_DIR/debootstrap.log"
    tar -C "$CACHE_DIR/rootfs" -c . | podman import - localhost/debian-base:bookworm
    rm -rf "$CACHE_DIR/rootfs"
  fi
  say "building $BASE from it with Debian's python3, venv and pip"
  # What python:3.11-slim offers that the build uses: python at /usr/local/bin, venv, useradd, and a
  # CA bundle file to mount this machine's over.
  podman build --runtime runc --pull=never --network=host -t "$BASE" -f - . <<'EOF'
FROM localhost/debian-base:bookworm
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv python3-pip passwd ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s /usr/bin/python3 /usr/local/bin/python
CMD ["python3"]
EOF
fi

# --- the image -------------------------------------------------------------------------------
# torch: the CPU wheel that lies in /opt/wheels (download.pytorch.org is not reachable from here),
# served over HTTP on the host's loopback for the build, by a direct reference, so that PyPI
# (reachable) serves only the other packages. A server rather than a mount: podman leaves a mount's
# target behind in the image as an empty file or folder.
wheel=$(find "$WHEELS" -maxdepth 1 -name 'torch-*+cpu-cp311-*.whl' -printf '%f\n' | sort -V | tail -n1)
[[ -n "$wheel" ]] || fail "no CPU torch wheel for Python 3.11 in $WHEELS"
torch_version=${wheel#torch-}
torch_version=${torch_version%%-*}
free_port() {  # $1 if it is free, else any free port
  python3 -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])' "${1:-0}"
}
# The same port each time when it is free: the port is in a build argument, and so in the cache key.
wheel_port=$(free_port 38111)
python3 -m http.server --bind 127.0.0.1 --directory "$WHEELS" "$wheel_port" \
  > "$CACHE_DIR/wheel-server.log" 2>&1 &
wheel_server=$!
cleanup() {
  kill "$wheel_server" 2>/dev/null || true
  podman rm -f "$CONTAINER" >/dev/null 2>&1 || true
}
trap cleanup EXIT

say "building $IMAGE with torch $torch_version from $WHEELS (served on 127.0.0.1:$wheel_port), the rest from PyPI"
build_start=$(date +%s)
# --format docker: the OCI format has no HEALTHCHECK. pip behind this machine's TLS proxy needs its
# CA bundle; Debian's pip reads the system bundle, so mounting it over that file (which the image
# has already) is enough. --network=host: the build reaches PyPI, and the wheel server on loopback.
podman build --runtime runc --pull=never --network=host --format docker \
  --volume "$CA_BUNDLE:$CA_BUNDLE:ro" \
  --build-arg TORCH_INDEX_URL=https://pypi.org/simple \
  --build-arg TORCH_SPEC="torch @ http://127.0.0.1:$wheel_port/${wheel//+/%2B}" \
  -t "$IMAGE" .
build_seconds=$(( $(date +%s) - build_start ))
kill "$wheel_server" 2>/dev/null || true

# --- run it and check it ---------------------------------------------------------------------
port=$(free_port)

say "running $IMAGE as $CONTAINER, container port 8000 published on 127.0.0.1:$port"
echo "(podman schedules HEALTHCHECKs with systemd, which this machine lacks, and logs an error"
echo " saying so; the check below runs the image's HEALTHCHECK by hand instead.)"
run_start=$(date +%s.%N)
"${PODMAN_RUN[@]}" -d --name "$CONTAINER" -p "127.0.0.1:$port:8000" \
  -e APP_RUNNER_READY=2 "$IMAGE" >/dev/null

healthz=""
for _ in $(seq 1 240); do
  if healthz=$(curl -fsS -m 2 "http://127.0.0.1:$port/healthz" 2>/dev/null); then break; fi
  if [[ "$(podman inspect -f '{{.State.Running}}' "$CONTAINER")" != true ]]; then
    podman logs "$CONTAINER" >&2 || true
    fail "the container stopped before /healthz answered"
  fi
  healthz=""
  sleep 0.5
done
if [[ -z "$healthz" ]]; then
  podman logs "$CONTAINER" >&2 || true
  fail "/healthz did not answer within 120 s"
fi
start_seconds=$(python3 -c "import time; print(f'{time.time() - $run_start:.1f}')")
say "GET /healthz answered after ${start_seconds} s: $healthz"
grep -q '"status": *"ok"' <<<"$healthz" || fail "/healthz did not say status ok"
grep -q '"walls_missing": *\[\]' <<<"$healthz" || fail "/healthz says a wall is missing"

say "POST /api/graph with a three-line program"
graph=$(curl -sS -m 30 -o - -w '\n%{http_code}' -H 'Content-Type: application/json' \
  -d '{"code": "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * x + 3 * x\ny.backward()"}' \
  "http://127.0.0.1:$port/api/graph")
status=${graph##*$'\n'}
body=${graph%$'\n'*}
[[ "$status" == 200 ]] || { echo "$body" >&2; fail "/api/graph answered $status, not 200"; }
python3 - "$body" <<'EOF' || fail "/api/graph's answer lacks the program's variables"
import json, sys
graph = json.loads(sys.argv[1])
names = sorted(graph["variables"])
assert {"x", "y"} <= set(names), names
print(f"200, variables {names}, {len(graph['nodes'])} nodes, {len(graph['edges'])} edges")
EOF

say "the assume-breach program (tests/runner/attacks.py) inside the container"
server_pid=$(podman exec "$CONTAINER" python -c "import os; print(os.getppid())" 2>/dev/null || echo 1)
readable=$(podman exec "$CONTAINER" python -c "import torch; print(torch.__file__)")
python3 scripts/breach_probe.py "$port" "$server_pid" "$readable" || fail "a move got through the walls in the container"

say "HEALTHCHECK, run by podman inside the container"
if podman healthcheck run "$CONTAINER"; then
  echo "healthy"
else
  fail "the image's HEALTHCHECK failed"
fi

user=$(podman exec "$CONTAINER" id -un)
size=$(podman image inspect -f '{{.Size}}' "$IMAGE")
say "summary"
echo "image        $IMAGE, $(( size / 1000000 )) MB ($size bytes), built in ${build_seconds} s"
echo "torch        $torch_version (CPU)"
echo "runs as      $user"
echo "start        /healthz answered ${start_seconds} s after podman run"
echo "healthz      $healthz"
echo "OK: the image builds, serves /healthz and /api/graph, and passes its HEALTHCHECK."
