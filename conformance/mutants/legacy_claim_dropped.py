"""Mutant: a blocking lease passes the legacy flag to the ``lease`` script but ``0`` to ``claim``,
so an item taken after ``BLMOVE`` has no legacy lease key."""

from __future__ import annotations

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command, RunScript
from rwq.protocol.operations import Lease


def _claim_without_legacy(sent: Command) -> Command:
    if isinstance(sent, RunScript) and script(sent, "claim"):
        return RunScript(sent.script, sent.keys, (*sent.args[:3], b"0"))
    return sent


class LegacyClaimQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        plan = ops.lease(
            self.keys, lease_ms, block=block, timeout_ms=timeout_ms, legacy=self.legacy_lease_key
        )
        return self._run(ops.first(rewritten(plan, command=_claim_without_legacy)))


if __name__ == "__main__":
    serve(LegacyClaimQueue)
