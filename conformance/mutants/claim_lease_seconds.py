"""Mutant: the claim after a blocking wait gets the lease time in seconds (the blocking path
converts durations for BLMOVE and reuses the converted value), so the item is held 1000x shorter."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import serve
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease
from rwq.protocol.scripts import registry


class SecondsClaim(Blocking):
    def after_move(self, moved: bytes) -> Plan[Lease | None]:
        lease_s = max(self.lease_ms // 1000, 1)
        claimed = yield RunScript(
            registry()["claim"], self.both, (moved, lease_s, self.token.encode(), self.legacy, b"0")
        )
        if claimed[0] == 1:
            return Lease(v.decode_id(moved), claimed[1], self.token, claimed[2])
        return None


if __name__ == "__main__":
    serve(blocking_queue(SecondsClaim))
