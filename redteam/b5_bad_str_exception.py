"""B5: a handler raising an exception whose ``__str__`` fails crashes the whole Worker (the reason
is formatted with an f-string, outside any guard); the item is then given back at shutdown with
``refund_attempt=True``, so its attempt is never counted: restarted by a supervisor, the worker
runs it again and crashes again, for ever, and the item never reaches the dead-letter set.

    .venv/bin/python redteam/b5_bad_str_exception.py
"""

from __future__ import annotations

import logging

import redis

from _server import redis_server
from rwq import Job, RetryPolicy, Worker, WorkQueue

logging.disable(logging.CRITICAL)  # the crash is logged at CRITICAL each run


class ApiError(Exception):
    def __init__(self, response: object) -> None:
        super().__init__()
        self.response = response

    def __str__(self) -> str:  # a buggy __str__, e.g. a missing attribute of the response
        return f"API said {self.response.status}"  # type: ignore[attr-defined]


runs = 0


def handle(job: Job) -> None:
    global runs
    runs += 1
    raise ApiError(object())


with redis_server() as port:
    r = redis.Redis(port=port)
    queue = WorkQueue(r, "jobs")
    queue.set_retry_policy(RetryPolicy(max_attempts=3, base_ms=0, jitter_pct=0))
    queue.add("invoice-42", b"{}")
    for restart in range(6):  # a supervisor restarting the worker
        worker = Worker(queue, handle, burst=True, shutdown_grace_ms=100)
        try:
            worker.run()
            print(f"run {restart}: returned normally, stats {worker.stats}")
        except BaseException as exc:
            print(f"run {restart}: worker crashed with {type(exc).__name__}: {exc!s:.80}")
        lease_attempts = r.hget("jobs:attempts", "invoice-42")
        print(f"    handler runs so far {runs}; attempts field {lease_attempts}; counts {queue.counts()}")
    print("max_attempts=3, yet the item ran", runs, "times and is not dead:", queue.dead_item("invoice-42") is None)
