"""Mutant: a blocking lease shortens its BLMOVE to the next delayed item's due time only when it
waits without limit; with a finite timeout it waits for the deadline alone."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import serve
from rwq.protocol.operations import MAX_BLOCK_STEP_MS


class DeadlineOnly(Blocking):
    def wait_ms(self, now: int, due_in: int) -> int:
        if self.deadline is not None:
            return min(MAX_BLOCK_STEP_MS, self.deadline - now)
        return super().wait_ms(now, due_in)


if __name__ == "__main__":
    serve(blocking_queue(DeadlineOnly))
