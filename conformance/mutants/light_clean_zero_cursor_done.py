"""Mutant: ``light_clean`` takes a returned cursor of 0 for "done" (a chunk whose entries were all
requeued returns 0, and the rest of the list is never examined)."""

from __future__ import annotations

from typing import Any

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command
from rwq.protocol.operations import CleanReport


def _zero_is_done(sent: Command, reply: Any) -> Any:
    return [-1, *reply[1:]] if script(sent, "light_clean") and reply[0] == 0 else reply


class ZeroCursorQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return self._run(rewritten(ops.light_clean(self.keys, chunk=chunk), reply=_zero_is_done))


if __name__ == "__main__":
    serve(ZeroCursorQueue)
