"""Mutant: ``add`` limits an id to 512 characters instead of 512 UTF-8 bytes, so an id of
multi-byte characters just over the byte limit reaches the script."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import registry


def _add(keys: QueueKeys, item_id: str, data: bytes) -> Plan[bool]:
    if not 1 <= len(item_id) <= v.MAX_ID_BYTES:
        raise InvalidArgument(f"id must be 1..{v.MAX_ID_BYTES} characters")
    reply = yield RunScript(
        registry()["add"], (keys.queue,), (0, item_id.encode("utf-8", "surrogateescape"), data)
    )
    return bool(reply[0])


class CharCountQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        if delay_ms:
            return super().add(item_id, data, delay_ms=delay_ms)
        return self._run(_add(self.keys, item_id, v.payload(data)))


if __name__ == "__main__":
    serve(CharCountQueue)
