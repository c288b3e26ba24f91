"""Mutant: the client accepts a WAIT timeout of 0 ms, which WAIT takes as forever (RWQ-ACK-003)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Wait


def _lenient(replicas: int, timeout_ms: int) -> Wait | None:
    return Wait(replicas, timeout_ms) if replicas else None


if __name__ == "__main__":
    ops.wait_for = _lenient
    serve(WorkQueue)
