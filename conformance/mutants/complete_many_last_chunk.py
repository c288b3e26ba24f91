"""Mutant: ``complete_many`` completes every chunk of 1000 but returns the outcomes of the last
chunk only (it assigns each chunk's reply instead of appending it)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, Outcome, QueueKeys
from rwq.protocol.scripts import registry


def _complete(keys: QueueKeys, items: Sequence[Lease | str], require_lease: bool) -> Plan[list[Outcome]]:
    mode, step, args = ops._completion(items, require_lease)
    outcomes: list[Outcome] = []
    for start in range(0, len(args), v.MAX_BATCH * step):
        chunk = args[start : start + v.MAX_BATCH * step]
        reply = yield RunScript(registry()["complete"], (keys.queue, keys.processing), (mode, *chunk))
        outcomes = [Outcome(code) for code in reply]
    return outcomes


class LastChunkQueue(WorkQueue):
    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        return self._run(_complete(self.keys, items, require_lease))


if __name__ == "__main__":
    serve(LastChunkQueue)
