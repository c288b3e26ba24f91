"""Mutant: a blocking lease takes any reply of ``claim`` as success (it checks that a reply came,
not that it is ``[1, ...]``), so a refused id is handed out with an empty payload."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import serve
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease
from rwq.protocol.scripts import registry


class AnyReplyClaims(Blocking):
    def after_move(self, moved: bytes) -> Plan[Lease | None]:
        claimed = yield RunScript(
            registry()["claim"], self.both, (moved, self.lease_ms, self.token.encode(), self.legacy, b"0")
        )
        data, attempt = (claimed[1], claimed[2]) if len(claimed) == 3 else (b"", 0)
        return Lease(v.decode_id(moved), data, self.token, attempt)


if __name__ == "__main__":
    serve(blocking_queue(AnyReplyClaims))
