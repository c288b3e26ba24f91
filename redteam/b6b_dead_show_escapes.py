"""B6b: `rwq dead show` and `dead list` print a dead item's detail (a traceback) and reason: a
handler's exception message with terminal escape codes or rich markup must print as text.

    .venv/bin/python redteam/b6b_dead_show_escapes.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import redis

from _server import redis_server
from rwq import RetryPolicy, WorkQueue

RWQ = str(Path(sys.executable).with_name("rwq"))
EVIL = "\x1b[2J\x1b[31mPWNED\x1b]0;title\x07 [bold red]markup[/] :smile:"

with redis_server() as port:
    r = redis.Redis(port=port)
    q = WorkQueue(r, "jobs")
    q.set_retry_policy(RetryPolicy(max_attempts=1))
    q.add("a", EVIL.encode())
    lease = q.lease(60_000)
    assert lease is not None
    q.fail(lease, EVIL, dead=True, detail="Traceback ...\n" + EVIL)
    for argv in (["dead", "show", "a"], ["dead", "list"], ["dead", "show", "a", "--json"]):
        done = subprocess.run([RWQ, *argv, "--prefix", "jobs", "--url", f"redis://127.0.0.1:{port}/0"], capture_output=True, text=True, timeout=30)
        out = done.stdout + done.stderr
        print(argv, "exit", done.returncode, "raw ESC in output:", "\x1b" in out, "BEL:", "\x07" in out, "markup eaten:", "[bold red]" not in out and "markup" in out)
