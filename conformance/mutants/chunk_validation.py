"""Mutant: ``add_many`` validates each chunk of 1000 just before sending it, so an invalid id past
the first 1000 is refused only after the first chunk was written."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import registry


def _add(keys: QueueKeys, items: list[tuple[str, bytes]]) -> Plan[list[bool]]:
    added: list[bool] = []
    for start in range(0, len(items), v.MAX_BATCH):
        chunk = [(v.encode_new_id(i), v.payload(d)) for i, d in items[start : start + v.MAX_BATCH]]
        reply = yield RunScript(registry()["add"], (keys.queue,), (0, *(p for pair in chunk for p in pair)))
        added.extend(bool(flag) for flag in reply)
    return added


class ChunkCheckedQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        if delay_ms:
            return super().add_many(items, delay_ms=delay_ms)
        return self._run(_add(self.keys, list(items)))


if __name__ == "__main__":
    serve(ChunkCheckedQueue)
