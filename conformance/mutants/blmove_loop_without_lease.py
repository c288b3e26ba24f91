"""Mutant: after a BLMOVE step times out, a blocking lease goes straight back to BLMOVE, counting
the time it waited on its own, instead of running the lease script again: delayed items that fall
due are never promoted for it."""

from __future__ import annotations

from typing import Any

from _blocking import Blocking, blocking_queue
from _mutant import serve
from rwq.protocol.commands import Plan


class BlmoveLoop(Blocking):
    def after_timeout(self, wait_ms: int) -> Plan[list[Any]]:
        return [0, self.now + wait_ms, -1]
        yield  # a plan that sends nothing


if __name__ == "__main__":
    serve(blocking_queue(BlmoveLoop))
