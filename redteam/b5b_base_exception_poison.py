"""B5b: a handler that raises a BaseException which is not an Exception (SystemExit from a
library's ``sys.exit``, say) stops the Worker, as documented, but its item is then given back
with ``refund_attempt=True`` as if it had never run: restarted, every worker runs it again and
stops again, and under ``max_attempts=3`` the item never reaches the dead-letter set.

    .venv/bin/python redteam/b5b_base_exception_poison.py
"""

from __future__ import annotations

import logging

import redis

from _server import redis_server
from rwq import Job, RetryPolicy, Worker, WorkQueue

logging.disable(logging.CRITICAL)
runs = 0


def handle(job: Job) -> None:
    global runs
    runs += 1
    raise SystemExit("a library gave up")


with redis_server() as port:
    r = redis.Redis(port=port)
    queue = WorkQueue(r, "jobs")
    queue.set_retry_policy(RetryPolicy(max_attempts=3, base_ms=0, jitter_pct=0))
    queue.add("invoice-42", b"{}")
    for restart in range(5):
        worker = Worker(queue, handle, burst=True, shutdown_grace_ms=100)
        try:
            worker.run()
        except BaseException as exc:  # noqa: BLE001
            print(f"run {restart}: {type(exc).__name__}; attempts {r.hget('jobs:attempts', 'invoice-42')}; {queue.counts()}")
    print(f"max_attempts=3; handler runs: {runs}; dead: {queue.dead_item('invoice-42') is not None}")
