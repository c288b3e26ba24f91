"""Mutant: the port embeds ``add.lua`` of an older manifest (before commit 0572f62) while its hello
reports the current SHA1s: it runs a script that is not the one of the manifest it claims."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import Script, registry

_NEW = b"""-- One call answers the common case, a queue with neither profile key.
local extended = redis.call('EXISTS', delayed, dead) > 0
local check_delayed = extended and redis.call('EXISTS', delayed) == 1
local check_dead = extended and redis.call('EXISTS', dead) == 1
"""
_OLD = b"""local check_delayed = redis.call('EXISTS', delayed) == 1
local check_dead = redis.call('EXISTS', dead) == 1
"""


def _stale() -> Script:
    source = registry()["add"].source.replace(_NEW, _OLD)
    return Script("add", source, hashlib.sha1(source).hexdigest())


def _add(keys: QueueKeys, items: list[tuple[str, bytes]], delay_ms: int) -> Plan[list[bool]]:
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    pairs = [(v.encode_new_id(item_id), v.payload(data)) for item_id, data in items]
    script = _stale()
    added: list[bool] = []
    for start in range(0, len(pairs), v.MAX_BATCH):
        chunk = pairs[start : start + v.MAX_BATCH]
        reply = yield RunScript(script, (keys.queue,), (delay_ms, *(part for pair in chunk for part in pair)))
        added.extend(bool(flag) for flag in reply)
    return added


class StaleQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        return self.add_many([(item_id, data)], delay_ms=delay_ms)[0]

    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        return self._run(_add(self.keys, list(items), delay_ms))


if __name__ == "__main__":
    serve(StaleQueue)
