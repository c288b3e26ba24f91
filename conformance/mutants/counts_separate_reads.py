"""Mutant: ``counts`` reads the four sizes with separate plain commands (LLEN, LLEN, ZCARD, ZCARD):
right values when nothing moves, but not read at one instant."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Counts, QueueKeys


def _counts(keys: QueueKeys) -> Plan[Counts]:
    ready = yield call(keys, "LLEN", keys.queue)
    in_flight = yield call(keys, "LLEN", keys.processing)
    delayed = yield call(keys, "ZCARD", keys.prefix + ":delayed")
    dead = yield call(keys, "ZCARD", keys.prefix + ":dead")
    return Counts(int(ready), int(in_flight), int(delayed), int(dead))


class SeparateReadsCountsQueue(WorkQueue):
    def counts(self) -> Counts:
        return self._run(_counts(self.keys))


if __name__ == "__main__":
    serve(SeparateReadsCountsQueue)
