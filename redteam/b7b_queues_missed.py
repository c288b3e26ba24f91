"""B7b: `rwq queues` silently leaves out queues that redis-work-queue clients (which accept any
prefix) created with a prefix rwq refuses, e.g. one with a glob character, and the "skipped"
count does not mention them.

    .venv/bin/python redteam/b7b_queues_missed.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import redis

from _server import redis_server

RWQ = str(Path(sys.executable).with_name("rwq"))

with redis_server() as port:
    r = redis.Redis(port=port)
    for prefix in ("jobs", "jobs[eu]", "reports*", "tenant:item"):  # as redis-work-queue writes an item
        r.set(f"{prefix}:item:a", b"{}")
        r.lpush(f"{prefix}:queue", "a")
    done = subprocess.run([RWQ, "queues", "--json", "--url", f"redis://127.0.0.1:{port}/0"], capture_output=True, text=True, timeout=30)
    print(done.returncode, done.stdout.strip(), done.stderr.strip())
