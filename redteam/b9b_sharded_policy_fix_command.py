"""B9b: on a sharded queue (count recorded, no policy yet), a worker-role Worker refuses to start
with PolicyMissing naming `rwq policy set --prefix jobs`, without `--shards N`: run as the admin,
that command addresses the plain queue `jobs` (the sharded admin's ACL refuses it; an
unrestricted admin stores `jobs:policy`, which no shard reads), and the worker still refuses.

    .venv/bin/python redteam/b9b_sharded_policy_fix_command.py
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import redis
from click.testing import CliRunner

from _server import redis_server
from rwq import Worker
from rwq.cli import cli
from rwq.sharded import ShardedWorkQueue

RWQ = str(Path(sys.executable).with_name("rwq"))


def start(port: int) -> str:
    queue = ShardedWorkQueue(redis.Redis(port=port, username="worker", password="pw"), "jobs", shards=2)
    try:
        Worker(queue, lambda job: None, burst=True).run()
        return "started"
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"


with redis_server() as port:
    root = redis.Redis(port=port)
    for role in ("worker", "admin"):
        line = CliRunner().invoke(cli, ["acl", role, "--prefix", "jobs", "--shards", "2", "--user", role]).output
        root.execute_command(*shlex.split(line.strip()), ">pw")
    subprocess.run([RWQ, "shards", "--prefix", "jobs", "--shards", "2", "--url", f"redis://admin:pw@127.0.0.1:{port}/0"], check=True, capture_output=True)
    message = start(port)
    print("1st start:", message)
    fix = re.search(r"`(rwq policy set[^`]*)`", message)
    assert fix is not None
    for user in ("admin:pw@", ""):  # the sharded admin, then an unrestricted one
        done = subprocess.run([RWQ, *shlex.split(fix.group(1))[1:], "--url", f"redis://{user}127.0.0.1:{port}/0"], capture_output=True, text=True)
        print(f"`{fix.group(1)}` as {user or 'default user'}: exit {done.returncode} {(done.stdout + done.stderr).strip()[-160:]!r}")
        print("   start again:", start(port)[:100])
