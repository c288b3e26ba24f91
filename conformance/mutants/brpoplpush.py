"""Mutant: a blocking lease waits with the deprecated ``BRPOPLPUSH`` (written for Redis before 6.2)
instead of ``BLMOVE``: the same move, but a command the protocol does not allow."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import call, serve
from rwq.protocol.commands import Call


class OldBlockingPop(Blocking):
    def blmove(self, wait_ms: int) -> Call:
        return call(self.keys, "BRPOPLPUSH", self.keys.queue, self.keys.processing, wait_ms / 1000)


if __name__ == "__main__":
    serve(blocking_queue(OldBlockingPop))
