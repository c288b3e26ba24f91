"""Mutant: ``light_clean`` makes one script call and stops, whatever cursor it returned."""

from __future__ import annotations

from typing import Any

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command
from rwq.protocol.operations import CleanReport


def _done(sent: Command, reply: Any) -> Any:
    return [-1, *reply[1:]] if script(sent, "light_clean") else reply


class FirstPageQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return self._run(rewritten(ops.light_clean(self.keys, chunk=chunk), reply=_done))


if __name__ == "__main__":
    serve(FirstPageQueue)
