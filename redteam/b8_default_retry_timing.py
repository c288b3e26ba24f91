"""B8: the README says a handler that always raises, under the worker's DEFAULT_RETRY, "runs 3
times in its first 3 s, and 5 times in all". Measure it: the runs' times after the first, and
where the item ends.

    .venv/bin/python redteam/b8_default_retry_timing.py [ROUNDS]
"""

from __future__ import annotations

import logging
import sys
import threading
import time

import redis

from _server import redis_server
from rwq import Job, Worker, WorkQueue

logging.disable(logging.CRITICAL)


def once(r: redis.Redis, n: int) -> list[float]:
    runs: list[float] = []
    queue = WorkQueue(r, f"jobs{n}")
    queue.add("invoice-42", b"{}")

    def handle(job: Job) -> None:
        runs.append(time.monotonic())
        raise RuntimeError("always")

    worker = Worker(queue, handle)
    thread = threading.Thread(target=worker.run)
    thread.start()
    deadline = time.monotonic() + 25
    while queue.counts().dead == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    worker.stop()
    thread.join(15)
    return [round(t - runs[0], 2) for t in runs]


with redis_server() as port:
    r = redis.Redis(port=port)
    for n in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        times = once(r, n)
        print(f"runs at {times}: {sum(t <= 3.0 for t in times)} in the first 3 s, {len(times)} in all")
