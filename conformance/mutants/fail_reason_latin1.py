"""Mutant: fail sends its reason in Latin-1 (Java's ``getBytes(ISO_8859_1)``, '?' for what it
cannot encode) instead of UTF-8, so a reason with accents or symbols is recorded mangled."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class Latin1Queue(WorkQueue):
    def fail(self, lease: Lease, reason: str = "", **options: Any) -> FailResult:
        mangled = (
            reason.encode("latin-1", "replace").decode("utf-8", "replace")
            if isinstance(reason, str)
            else reason
        )
        return super().fail(lease, mangled, **options)


if __name__ == "__main__":
    serve(Latin1Queue)
