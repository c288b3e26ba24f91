"""B3c (control): the timeout guard itself holds: with timeout_ms=300, a 1 s handler, a policy
that retries at once and two slots, one Worker never runs the item twice at once.

    .venv/bin/python redteam/b3c_timeout_guard_holds.py
"""

from __future__ import annotations

import logging
import threading
import time

import redis

from _server import redis_server
from rwq import Job, RetryPolicy, Worker, WorkQueue

logging.disable(logging.CRITICAL)
lock = threading.Lock()
running = most = starts = 0


def handle(job: Job) -> None:
    global running, most, starts
    with lock:
        running += 1
        starts += 1
        most = max(most, running)
    time.sleep(1.0)
    with lock:
        running -= 1


with redis_server() as port:
    queue = WorkQueue(redis.Redis(port=port), "jobs")
    queue.set_retry_policy(RetryPolicy(max_attempts=0, base_ms=0, jitter_pct=0))
    queue.add("invoice-42", b"{}")
    worker = Worker(queue, handle, concurrency=2, timeout_ms=300, poll_timeout_ms=100)
    thread = threading.Thread(target=worker.run)
    thread.start()
    time.sleep(3.5)
    worker.stop()
    thread.join(15)
    print(f"starts {starts}, most at once {most}")
