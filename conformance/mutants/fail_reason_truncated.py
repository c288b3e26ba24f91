"""Mutant: ``fail`` cuts a reason longer than 1024 bytes down to 1024 instead of refusing it."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class TruncatingQueue(WorkQueue):
    def fail(self, lease: Lease, reason: str = "", **options: Any) -> FailResult:
        return super().fail(lease, reason.encode("utf-8")[:1024].decode("utf-8", "ignore"), **options)


if __name__ == "__main__":
    serve(TruncatingQueue)
