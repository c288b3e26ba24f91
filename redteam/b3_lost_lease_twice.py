"""B3: one Worker runs one item twice at once after its lease is lost (not timed out). The "never
twice at once in one worker" guard covers only ``timeout_ms``: when a renewal finds the lease
gone (it expired during a stall: a GC or VM pause, a partition longer than ``lease_ms``) and a
cleaner requeues the item, another slot of the same worker leases it and starts it while the
first run still goes on. Here the expiry is made by deleting the lease key (what expiry does)
and the cleaner is an external ``light_clean``.

    .venv/bin/python redteam/b3_lost_lease_twice.py
"""

from __future__ import annotations

import logging
import threading
import time

import redis

from _server import redis_server
from rwq import Job, Worker, WorkQueue

logging.disable(logging.WARNING)
lock = threading.Lock()
running = 0
most = 0
starts = 0


def handle(job: Job) -> None:
    global running, most, starts
    with lock:
        running += 1
        starts += 1
        most = max(most, running)
    try:
        time.sleep(2.0)
    finally:
        with lock:
            running -= 1


with redis_server() as port:
    r = redis.Redis(port=port)
    queue = WorkQueue(r, "jobs")
    queue.add("invoice-42", b"{}")
    worker = Worker(queue, handle, concurrency=2, lease_ms=1000, clean_interval_ms=None, retry=None, poll_timeout_ms=100)
    thread = threading.Thread(target=worker.run)
    thread.start()
    while starts == 0:
        time.sleep(0.01)
    r.delete("jobs:lease:invoice-42")  # the lease expires (a stall longer than lease_ms)
    time.sleep(0.5)  # a renewal finds it lost
    print("external light_clean:", queue.light_clean())
    time.sleep(0.5)
    worker.stop()
    thread.join(15)
    print(f"handler starts: {starts}; most runs of invoice-42 at once in this one worker: {most}")
