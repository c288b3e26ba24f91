"""B4b: `rwq clean --deep` run by a user whose role may light-clean but not SCAN (the worker role;
or the operator without `+scan` that SPEC §13.1 recommends for untrusted tenants) requeues the
expired leases and promotes the due delayed items (its light clean), then the deep clean is
refused, and the command exits 1 saying "nothing was written (RWQ-SEC-006)": the queue changed.

    .venv/bin/python redteam/b4b_clean_deep_refused_after_writing.py
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

import redis
from click.testing import CliRunner

from _server import redis_server
from rwq import WorkQueue
from rwq.cli import cli

RWQ = str(Path(sys.executable).with_name("rwq"))

with redis_server() as port:
    root = redis.Redis(port=port)
    line = CliRunner().invoke(cli, ["acl", "operator", "--prefix", "jobs"]).output.strip()
    root.execute_command(*shlex.split(line.replace(" +scan", "")), ">pw")  # SPEC 13.1: a tenant without SCAN
    q = WorkQueue(root, "jobs")
    q.add("a", b"A")
    q.lease(1)  # expires at once
    q.add("d", b"D", delay_ms=1)
    time.sleep(0.01)
    before = root.lrange("jobs:queue", 0, -1), root.zrange("jobs:delayed", 0, -1)
    done = subprocess.run([RWQ, "clean", "--deep", "--prefix", "jobs", "--url", f"redis://jobs-operator:pw@127.0.0.1:{port}/0"], capture_output=True, text=True, timeout=30)
    after = root.lrange("jobs:queue", 0, -1), root.zrange("jobs:delayed", 0, -1)
    print(f"exit {done.returncode}: {(done.stdout + done.stderr).strip()[:160]}")
    print(f"queue, delayed before {before} after {after}")
