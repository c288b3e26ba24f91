"""Mutant: ``add_many`` sends every item in one script call, however many: past 1000 the script
refuses the call, after I/O, instead of the client splitting it."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import registry


def _add(keys: QueueKeys, items: list[tuple[str, bytes]]) -> Plan[list[bool]]:
    pairs = [part for item_id, data in items for part in (v.encode_new_id(item_id), v.payload(data))]
    reply = yield RunScript(registry()["add"], (keys.queue,), (0, *pairs))
    return [bool(flag) for flag in reply]


class OneCallQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        batch = list(items)
        if delay_ms or not batch:
            return super().add_many(batch, delay_ms=delay_ms)
        return self._run(_add(self.keys, batch))


if __name__ == "__main__":
    serve(OneCallQueue)
