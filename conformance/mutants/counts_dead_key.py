"""Mutant: ``counts`` with plain reads that takes the dead count from the wrong key
(``ZCARD P:delayed`` twice, a copy-paste slip)."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Counts, QueueKeys


def _counts(keys: QueueKeys) -> Plan[Counts]:
    ready = yield call(keys, "LLEN", keys.queue)
    in_flight = yield call(keys, "LLEN", keys.processing)
    delayed = yield call(keys, "ZCARD", keys.prefix + ":delayed")
    dead = yield call(keys, "ZCARD", keys.prefix + ":delayed")
    return Counts(int(ready), int(in_flight), int(delayed), int(dead))


class DeadKeyCountsQueue(WorkQueue):
    def counts(self) -> Counts:
        return self._run(_counts(self.keys))


if __name__ == "__main__":
    serve(DeadKeyCountsQueue)
