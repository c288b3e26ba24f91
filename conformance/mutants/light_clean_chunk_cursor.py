"""Mutant: ``light_clean`` advances its cursor by the chunk size instead of using the returned
cursor, so after a chunk that requeued entries it skips as many unexamined ones."""

from __future__ import annotations

from typing import Any

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command
from rwq.protocol.operations import CleanReport


def _advance_by_chunk(sent: Command, reply: Any) -> Any:
    if script(sent, "light_clean") and reply[0] >= 0:
        cursor, chunk = sent.args
        return [int(cursor) + int(chunk), *reply[1:]]
    return reply


class ChunkCursorQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return self._run(rewritten(ops.light_clean(self.keys, chunk=chunk), reply=_advance_by_chunk))


if __name__ == "__main__":
    serve(ChunkCursorQueue)
