"""Mutant: the claim after a blocking wait mints a token of its own (a helper that makes a fresh
token per script call) while the lease returned carries the first lease call's token, so the
worker does not hold the item it was given."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import serve
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, new_token
from rwq.protocol.scripts import registry


class FreshClaimToken(Blocking):
    def after_move(self, moved: bytes) -> Plan[Lease | None]:
        claimed = yield RunScript(
            registry()["claim"], self.both, (moved, self.lease_ms, new_token().encode(), self.legacy, b"0")
        )
        if claimed[0] == 1:
            return Lease(v.decode_id(moved), claimed[1], self.token, claimed[2])
        return None


if __name__ == "__main__":
    serve(blocking_queue(FreshClaimToken))
