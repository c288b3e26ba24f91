"""Mutant: payloads are stored base64-encoded (text-safe) and decoded on lease: the port reads its
own items back right, but the item key does not hold the payload bytes."""

from __future__ import annotations

import base64
from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease


def _decoded(lease: Lease | None) -> Lease | None:
    if lease is None:
        return None
    return Lease(lease.id, base64.b64decode(lease.data), lease.token, lease.attempt)


class Base64Queue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        return super().add(item_id, base64.b64encode(v.payload(data)), delay_ms=delay_ms)

    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        encoded = [(item_id, base64.b64encode(v.payload(data))) for item_id, data in items]
        return super().add_many(encoded, delay_ms=delay_ms)

    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        return _decoded(super().lease(lease_ms, block=block, timeout_ms=timeout_ms))


if __name__ == "__main__":
    serve(Base64Queue)
