"""B7: one key of another application that looks like a queue's (``app:queue`` a list, with
``app:processing`` a string) makes ``rwq queues`` and ``rwq top`` fail as a whole (WRONG_TYPE,
exit 1): every real queue on the server is missed, not just the odd one.

    .venv/bin/python redteam/b7_queues_wrong_type.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import redis

from _server import redis_server
from rwq import WorkQueue

RWQ = str(Path(sys.executable).with_name("rwq"))

with redis_server() as port:
    r = redis.Redis(port=port)
    WorkQueue(r, "jobs").add("invoice-42", b"{}")
    url = f"redis://127.0.0.1:{port}/0"
    print(subprocess.run([RWQ, "queues", "--url", url], capture_output=True, text=True, timeout=30).stdout)
    r.lpush("app:queue", "x")  # another application's keys, or a half-corrupted queue
    r.set("app:processing", "not a list")
    for argv in (["queues"], ["top", "--iterations", "1"]):
        done = subprocess.run([RWQ, *argv, "--url", url], capture_output=True, text=True, timeout=30)
        print(f"rwq {argv[0]}: exit {done.returncode}: {(done.stdout + done.stderr).strip()[-300:]}")
