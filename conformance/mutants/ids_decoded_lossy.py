"""Mutant: ids read from Redis are decoded as UTF-8 with replacement, so an id that is not UTF-8
comes back changed and the item can no longer be renewed, released or completed by it."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation


def _lossy(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


if __name__ == "__main__":
    vars(validation)["decode_id"] = _lossy
    serve(WorkQueue)
