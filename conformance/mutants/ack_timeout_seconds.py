"""Mutant: the ack setting's timeout is handed to ``WAIT`` in seconds (as ``BLPOP`` takes them),
although ``WAIT`` takes milliseconds: 1,500 ms waits 1 ms (at least 1) (RWQ-ACK-003). The ack
cases' timeout of 2,000 ms still passes (2 ms, then the runner moves the clock 2,001 ms)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Wait

_checked = ops.wait_for


def _seconds(replicas: int, timeout_ms: int) -> Wait | None:
    wait = _checked(replicas, timeout_ms)
    return None if wait is None else Wait(wait.replicas, max(1, wait.timeout_ms // 1000))


if __name__ == "__main__":
    ops.wait_for = _seconds
    serve(WorkQueue)
