"""Mutant: the client sends light_clean's ``pace_ms`` in seconds (RWQ-CLEAN-007)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.operations import CleanReport


class SecondsQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return self._run(ops.light_clean(self.keys, chunk=chunk, pace_ms=pace_ms // 1000))


if __name__ == "__main__":
    serve(SecondsQueue)
