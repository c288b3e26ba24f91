"""Mutant: a blocking lease gives up only once the server time is past its deadline (``now >
deadline``); at the deadline itself it sends ``BLMOVE ... 0``, which waits without limit."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import serve


class ExclusiveDeadline(Blocking):
    def expired(self, now: int) -> bool:
        return self.deadline is not None and now > self.deadline


if __name__ == "__main__":
    serve(blocking_queue(ExclusiveDeadline))
