"""Mutant: ``add_many`` checks the id of its first item only and sends the others unchecked (the
script refuses the call, after I/O)."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import registry


def _add(keys: QueueKeys, items: list[tuple[str, bytes]]) -> Plan[list[bool]]:
    v.encode_new_id(items[0][0])
    args = [part for item_id, data in items for part in (item_id.encode("utf-8", "surrogateescape"), data)]
    reply = yield RunScript(registry()["add"], (keys.queue,), (0, *args))
    return [bool(flag) for flag in reply]


class FirstCheckedQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        batch = list(items)
        if delay_ms or not 1 <= len(batch) <= v.MAX_BATCH:
            return super().add_many(batch, delay_ms=delay_ms)
        return self._run(_add(self.keys, batch))


if __name__ == "__main__":
    serve(FirstCheckedQueue)
