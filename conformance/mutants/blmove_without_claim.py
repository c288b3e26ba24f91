"""Mutant: a blocking lease returns the id BLMOVE moved with the payload read by ``GET``, without
the claim script ("BLMOVE already moved it"): a ghost id is handed out and no lease key is set."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import call, serve
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease


class NoClaim(Blocking):
    def after_move(self, moved: bytes) -> Plan[Lease | None]:
        item_id = v.decode_id(moved)
        data = yield call(self.keys, "GET", self.keys.item(item_id))
        return Lease(item_id, data or b"", self.token)


if __name__ == "__main__":
    serve(blocking_queue(NoClaim))
