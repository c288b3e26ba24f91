"""Mutant: ``add`` is not idempotent: it writes the payload and pushes the id every time."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import QueueKeys


def _add(keys: QueueKeys, item_id: str, data: bytes) -> Plan[bool]:
    yield call(keys, "SET", keys.item(item_id), data)
    yield call(keys, "LPUSH", keys.queue, v.encode_id(item_id))
    return True


class OverwritingQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        if delay_ms:
            return super().add(item_id, data, delay_ms=delay_ms)
        v.encode_new_id(item_id)
        return self._run(_add(self.keys, item_id, v.payload(data)))


if __name__ == "__main__":
    serve(OverwritingQueue)
