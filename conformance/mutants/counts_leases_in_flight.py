"""Mutant: ``counts`` reports as in flight the number of lease keys (found with SCAN) instead of
``LLEN P:processing``, so expired and unclaimed entries are not counted."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Counts, QueueKeys


def _counts(keys: QueueKeys) -> Plan[Counts]:
    ready = yield call(keys, "LLEN", keys.queue)
    leased, cursor = 0, b"0"
    while True:
        cursor, found = yield call(keys, "SCAN", cursor, "MATCH", keys.lease("*"), "COUNT", 1000)
        leased += len(found)
        if int(cursor) == 0:
            break
    delayed = yield call(keys, "ZCARD", keys.prefix + ":delayed")
    dead = yield call(keys, "ZCARD", keys.prefix + ":dead")
    return Counts(int(ready), leased, int(delayed), int(dead))


class LeasedCountsQueue(WorkQueue):
    def counts(self) -> Counts:
        return self._run(_counts(self.keys))


if __name__ == "__main__":
    serve(LeasedCountsQueue)
