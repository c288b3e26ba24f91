"""Mutant: the client's light_clean drops ``pace_ms``, so every worker's cleaner walks the whole
processing list every time (RWQ-CLEAN-007)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.operations import CleanReport


class UnpacedQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return self._run(ops.light_clean(self.keys, chunk=chunk))


if __name__ == "__main__":
    serve(UnpacedQueue)
