"""Mutant: the BLMOVE timeout is sent in milliseconds (``BLMOVE ... 1000``), which Redis reads as
seconds: a wait step of 16 minutes instead of one second."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import call, serve
from rwq.protocol.commands import Call


class MillisecondTimeout(Blocking):
    def blmove(self, wait_ms: int) -> Call:
        return call(self.keys, "BLMOVE", self.keys.queue, self.keys.processing, "RIGHT", "LEFT", wait_ms)


if __name__ == "__main__":
    serve(blocking_queue(MillisecondTimeout))
