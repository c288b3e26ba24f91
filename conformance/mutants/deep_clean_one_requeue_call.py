"""Mutant: ``deep_clean`` collects the ids of every ``SCAN`` page and requeues them in one script
call at the end, unbounded work that the script refuses beyond 1000 ids."""

from __future__ import annotations

import secrets

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import CleanReport, QueueKeys
from rwq.protocol.scripts import registry


def _deep_clean(keys: QueueKeys, chunk: int) -> Plan[CleanReport]:
    script = registry()["deep_clean"]
    three = (keys.queue, keys.processing, keys.deep_clean_index(secrets.token_hex(8)))
    dropped = 0
    for name in (b"queue", b"processing"):
        start = 0
        while start >= 0:
            start, ghosts = yield RunScript(script, three, (b"index", name, start, chunk))
            dropped += ghosts
    item_prefix = keys.prefix.encode("utf-8") + b":item:"
    ids: list[bytes] = []
    cursor = 0
    while True:
        cursor, found = yield call(keys, "SCAN", cursor, "MATCH", item_prefix + b"*", "COUNT", chunk)
        ids += [key[len(item_prefix) :] for key in found if 0 < len(key) - len(item_prefix) <= v.MAX_ID_BYTES]
        if int(cursor) == 0:
            break
    requeued = (yield RunScript(script, three, (b"requeue", *ids))) if ids else []
    yield RunScript(script, three, (b"finish",))
    return CleanReport(tuple(v.decode_id(raw) for raw in requeued), dropped)


class OneRequeueCallQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        v.batch_size(chunk, "chunk")
        return self._run(_deep_clean(self.keys, chunk))


if __name__ == "__main__":
    serve(OneRequeueCallQueue)
