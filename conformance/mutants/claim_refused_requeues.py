"""Mutant: after claim refused an id, a blocking lease pushes it back on the queue with ``RPUSH``
("so that nothing is lost"), putting ghosts and stray entries back where leases meet them."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import call, serve
from rwq.protocol.commands import Plan


class Requeuing(Blocking):
    def refused(self, moved: bytes) -> Plan[bool]:
        yield call(self.keys, "RPUSH", self.keys.queue, moved)
        return True


if __name__ == "__main__":
    serve(blocking_queue(Requeuing))
