"""Mutant: ``light_clean`` reports only its last script call's requeued ids and ghosts (each page
overwrites the report instead of adding to it)."""

from __future__ import annotations

from typing import Any

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Command
from rwq.protocol.operations import CleanReport


class LastPageQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        pages: list[Any] = []

        def keep(sent: Command, reply: Any) -> Any:
            if script(sent, "light_clean"):
                pages.append(reply)
            return reply

        report = self._run(rewritten(ops.light_clean(self.keys, chunk=chunk), reply=keep))
        _cursor, ids, ghosts, _dead, _promoted = pages[-1]
        return CleanReport(tuple(v.decode_id(raw) for raw in ids), ghosts, report.dead, report.promoted)


if __name__ == "__main__":
    serve(LastPageQueue)
