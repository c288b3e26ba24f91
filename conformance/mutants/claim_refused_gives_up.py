"""Mutant: a blocking lease whose claim was refused returns no item instead of waiting on."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import serve
from rwq.protocol.commands import Plan


class GivingUp(Blocking):
    def refused(self, moved: bytes) -> Plan[bool]:
        return False
        yield  # a plan that sends nothing


if __name__ == "__main__":
    serve(blocking_queue(GivingUp))
