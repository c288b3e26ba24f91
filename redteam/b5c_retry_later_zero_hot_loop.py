"""B5c: a handler that raises RetryLater(0) (e.g. it passes on a `Retry-After: 0` header) on a
queue without a retry policy (retry=None, or the stored one removed) runs its item in a hot loop
for ever: the requested delay replaces the worker's 1 s fallback (RWQ-WORKER-002 promises "never a
hot loop" only for failures that ask nothing), and with no policy there is no attempt limit.

    .venv/bin/python redteam/b5c_retry_later_zero_hot_loop.py
"""

from __future__ import annotations

import logging
import threading
import time

import redis

from _server import redis_server
from rwq import Job, RetryLater, Worker, WorkQueue

logging.disable(logging.CRITICAL)
runs = 0


def handle(job: Job) -> None:
    global runs
    runs += 1
    raise RetryLater(0, "the API said Retry-After: 0")


with redis_server() as port:
    queue = WorkQueue(redis.Redis(port=port), "jobs")
    queue.add("invoice-42", b"{}")
    worker = Worker(queue, handle, retry=None)
    thread = threading.Thread(target=worker.run)
    thread.start()
    time.sleep(2.0)
    worker.stop()
    thread.join(15)
    print(f"runs of one item in 2 s: {runs}")
