"""B1b: an AsyncWorker handler that forgets an ``await`` (``return process(job)``, where
``process`` is async) gets its item completed while ``process`` never runs. Worker catches the
sync twin of this (a sync handler returning an awaitable fails the item); AsyncWorker ignores
what the awaited handler returns.

    .venv/bin/python redteam/b1b_async_returns_coroutine.py
"""

from __future__ import annotations

import asyncio
import logging
import warnings

import redis.asyncio as aioredis

from _server import redis_server
from rwq import AsyncJob
from rwq.aio import AsyncWorkQueue
from rwq.aio_worker import AsyncWorker

logging.disable(logging.CRITICAL)
warnings.simplefilter("ignore")  # the "never awaited" RuntimeWarning is all a user would see
ran: list[str] = []


async def process(job: AsyncJob) -> None:
    ran.append(job.id)


async def handle(job: AsyncJob):  # noqa: ANN201 - returns a coroutine: a missing await
    return process(job)


async def main(port: int) -> None:
    queue = AsyncWorkQueue(aioredis.Redis(port=port), "jobs")
    await queue.add("invoice-42", b"{}")
    worker = AsyncWorker(queue, handle, burst=True, retry=None)
    await worker.run()
    print(f"process ran for {ran}; stats {worker.stats}; counts {await queue.counts()}")


with redis_server() as port:
    asyncio.run(main(port))
