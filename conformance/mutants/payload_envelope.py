"""Mutant: payloads travel in an envelope of the port's own (JSON with base64 data): its own items
round-trip, but an item that an older client added holds bare bytes, and leasing it fails."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


def _wrap(data: bytes) -> bytes:
    return json.dumps({"rwq": 1, "data": base64.b64encode(data).decode("ascii")}).encode()


def _unwrap(lease: Lease) -> Lease:
    data = base64.b64decode(json.loads(lease.data)["data"])
    return Lease(lease.id, data, lease.token, lease.attempt)


class EnvelopeQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        return super().add(item_id, _wrap(data), delay_ms=delay_ms)

    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        return super().add_many([(item_id, _wrap(data)) for item_id, data in items], delay_ms=delay_ms)

    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        held = super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        return None if held is None else _unwrap(held)

    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        return [_unwrap(held) for held in super().lease_many(count, lease_ms)]


if __name__ == "__main__":
    serve(EnvelopeQueue)
