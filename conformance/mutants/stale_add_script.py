"""Mutant: the port embeds an older ``add.lua`` than its manifest's while its hello
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

# add.lua as an older manifest had it (the same behaviour, another SHA1).
_NEW = b"if existing == 0 then\n"
_OLD = b"if existing < 1 then\n"


def _stale() -> Script:
    source = registry()["add"].source.replace(_NEW, _OLD)
    if source == registry()["add"].source:  # a change of add.lua must not turn this mutant into the reference
        raise RuntimeError("stale_add_script: add.lua no longer has the line this mutant rewrites")
    return Script("add", source, hashlib.sha1(source).hexdigest())


_STALE = _stale()  # at import, so that tools/mutants.py's load check sees a stale rewrite


def _add(keys: QueueKeys, items: list[tuple[str, bytes]], delay_ms: int) -> Plan[list[bool]]:
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    pairs = [(v.encode_new_id(item_id), v.payload(data)) for item_id, data in items]
    script = _STALE
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
