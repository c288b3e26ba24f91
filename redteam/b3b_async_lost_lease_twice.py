"""B3b: B3 on AsyncWorker: after its lease is lost mid-run and a cleaner requeues the item, a
second task of the same AsyncWorker starts it while the first still runs.

    .venv/bin/python redteam/b3b_async_lost_lease_twice.py
"""

from __future__ import annotations

import asyncio
import logging

import redis.asyncio as aioredis

from _server import redis_server
from rwq import AsyncJob
from rwq.aio import AsyncWorkQueue
from rwq.aio_worker import AsyncWorker

logging.disable(logging.WARNING)
running = most = starts = 0


async def handle(job: AsyncJob) -> None:
    global running, most, starts
    running += 1
    starts += 1
    most = max(most, running)
    try:
        await asyncio.sleep(2.0)
    finally:
        running -= 1


async def main(port: int) -> None:
    r = aioredis.Redis(port=port)
    queue = AsyncWorkQueue(r, "jobs")
    await queue.add("invoice-42", b"{}")
    worker = AsyncWorker(queue, handle, concurrency=2, lease_ms=1000, clean_interval_ms=None, retry=None, poll_timeout_ms=100)
    task = asyncio.create_task(worker.run())
    while starts == 0:
        await asyncio.sleep(0.01)
    await r.delete("jobs:lease:invoice-42")  # the lease expires (a stall longer than lease_ms)
    await asyncio.sleep(0.5)
    print("external light_clean:", await queue.light_clean())
    await asyncio.sleep(0.5)
    worker.stop()
    await asyncio.wait_for(task, 15)
    print(f"handler starts: {starts}; most runs of invoice-42 at once in this one worker: {most}")


with redis_server() as port:
    asyncio.run(main(port))
