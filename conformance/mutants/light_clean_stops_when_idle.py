"""Mutant: ``light_clean`` stops at the first chunk that requeued nothing, taking the rest of the
processing list for clean."""

from __future__ import annotations

from typing import Any

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command
from rwq.protocol.operations import CleanReport


def _idle_is_done(sent: Command, reply: Any) -> Any:
    return [-1, *reply[1:]] if script(sent, "light_clean") and not reply[1] else reply


class IdleStopQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return self._run(rewritten(ops.light_clean(self.keys, chunk=chunk), reply=_idle_is_done))


if __name__ == "__main__":
    serve(IdleStopQueue)
