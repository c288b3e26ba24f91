"""Mutant: after claim refused an id, a blocking lease "undoes" its BLMOVE with ``LREM processing 1
id``, which removes the only entry of an item someone else holds: once that lease expires no
cleaner finds the item, and it is never delivered again."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import call, serve
from rwq.protocol.commands import Plan


class Undoing(Blocking):
    def refused(self, moved: bytes) -> Plan[bool]:
        yield call(self.keys, "LREM", self.keys.processing, 1, moved)
        return True


if __name__ == "__main__":
    serve(blocking_queue(Undoing))
