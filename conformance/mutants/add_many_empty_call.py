"""Mutant: add_many chunks with a do-while loop, so an empty batch still sends one add script call
with no items, which the script refuses: add_many([]) fails instead of returning []."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.scripts import registry


class EmptyCallQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        pairs = list(items)
        if pairs:
            return super().add_many(pairs, delay_ms=delay_ms)
        return self._run(self._empty_call(delay_ms))

    def _empty_call(self, delay_ms: int) -> Plan[list[bool]]:
        reply = yield RunScript(registry()["add"], (self.keys.queue,), (delay_ms,))
        return [bool(flag) for flag in reply]


if __name__ == "__main__":
    serve(EmptyCallQueue)
