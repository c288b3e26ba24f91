"""B1: a Worker accepts a generator function (or an async generator function) as a handler;
calling it only builds a generator, so the handler's body never runs, yet the item is completed.

    .venv/bin/python redteam/b1_generator_handler.py
"""

from __future__ import annotations

import redis

from _server import redis_server
from rwq import Job, Worker, WorkQueue

ran: list[str] = []


def handle(job: Job):  # a handler that yields progress, say
    ran.append(job.id)
    yield "step 1"


async def ahandle(job: Job):  # an async generator: streams results
    ran.append(job.id)
    yield "chunk"


with redis_server() as port:
    r = redis.Redis(port=port)
    for name, handler in (("generator", handle), ("async generator", ahandle)):
        queue = WorkQueue(r, f"jobs-{name.replace(' ', '-')}")
        queue.add("invoice-42", b"{}")
        worker = Worker(queue, handler, burst=True, retry=None)
        worker.run()
        print(f"{name}: handler body ran for {ran}; stats {worker.stats}; counts {queue.counts()}")
        ran.clear()
