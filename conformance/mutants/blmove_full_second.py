"""Mutant: every BLMOVE of a blocking lease waits a full second, however near the deadline is, so
a lease with a timeout under a second waits too long."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import serve
from rwq.protocol.operations import MAX_BLOCK_STEP_MS


class FullSecond(Blocking):
    def wait_ms(self, now: int, due_in: int) -> int:
        return MAX_BLOCK_STEP_MS if due_in < 0 else max(min(MAX_BLOCK_STEP_MS, due_in), 1)


if __name__ == "__main__":
    serve(blocking_queue(FullSecond))
