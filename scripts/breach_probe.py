"""Post the assume-breach program (tests/runner/attacks.py) to a running lab; fail if a move
got through its walls or the child held more than its two pipes.

Usage: python scripts/breach_probe.py PORT SERVER_PID READABLE_FILE
(container-check.sh and compose-check.sh run it against the server inside a container.)
"""

import json
import sys
import urllib.request
from pathlib import Path

port, server_pid, readable = sys.argv[1], int(sys.argv[2]), sys.argv[3]
target = {"server_pid": server_pid, "port": 8000, "readable": readable, "memory": 3 << 30}
attacks = Path(__file__).resolve().parent.parent / "tests" / "runner" / "attacks.py"
program = attacks.read_text().replace("TARGET = {", f"TARGET = {target!r}\n_ = {{", 1)
request = urllib.request.Request(f"http://127.0.0.1:{port}/api/graph", method="POST",
                                 data=json.dumps({"code": program}).encode(),
                                 headers={"Content-Type": "application/json"})
results = json.loads(json.load(urllib.request.urlopen(request, timeout=60))["stdout"])
held = [kind for _, kind in results.pop("descriptors")]
through = {k: v for k, v in results.items() if str(v).startswith("succeeded")}
print(f"{len(results)} moves: {len(results) - len(through)} blocked; descriptors held: {held}")
for name, result in through.items():
    print(f"  GOT THROUGH: {name}: {result}")
sys.exit(0 if not through and held == ["pipe", "pipe"] else 1)
