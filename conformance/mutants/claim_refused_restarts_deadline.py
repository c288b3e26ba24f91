"""Mutant: a blocking lease whose claim was refused starts its timeout over, so a ghost or a stray
entry pushed while it waits keeps it waiting past its deadline."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import serve
from rwq.protocol.commands import Plan


class RestartingDeadline(Blocking):
    def refused(self, moved: bytes) -> Plan[bool]:
        self.deadline = None  # measured again from the next lease call
        return (yield from super().refused(moved))


if __name__ == "__main__":
    serve(blocking_queue(RestartingDeadline))
