"""Mutant: a deep cleaner of plain commands, as redis-work-queue 0.3's: an item counts as held
only through ``P:lease:<id>``, so one that an older client holds through
``P:leased_by_session:<id>`` is requeued."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import CleanReport, QueueKeys


def _deep_clean(keys: QueueKeys, chunk: int) -> Plan[CleanReport]:
    item_prefix = keys.prefix.encode("utf-8") + b":item:"
    requeued: list[str] = []
    cursor = 0
    while True:
        cursor, found = yield call(keys, "SCAN", cursor, "MATCH", item_prefix + b"*", "COUNT", chunk)
        for key in found:
            entry = key[len(item_prefix) :]
            item_id = v.decode_id(entry)
            if (yield call(keys, "EXISTS", keys.lease(item_id))):
                continue
            if (yield call(keys, "LPOS", keys.queue, entry)) is not None:
                continue
            if (yield call(keys, "LPOS", keys.processing, entry)) is not None:
                continue
            yield call(keys, "LPUSH", keys.queue, entry)
            requeued.append(item_id)
        if int(cursor) == 0:
            return CleanReport(tuple(requeued), 0)


class G2DeepCleanerQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(_deep_clean(self.keys, chunk))


if __name__ == "__main__":
    serve(G2DeepCleanerQueue)
