"""Mutant: ``deep_clean`` indexes each list at ``start + chunk`` instead of the start the script
returned, skipping as many entries as the last chunk dropped ghosts."""

from __future__ import annotations

from typing import Any

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command
from rwq.protocol.operations import CleanReport


def _advance_by_chunk(sent: Command, reply: Any) -> Any:
    if script(sent, "deep_clean", b"index") and reply[0] >= 0:
        _mode, _list, start, chunk = sent.args
        return [int(start) + int(chunk), reply[1]]
    return reply


class IndexChunkStartQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(rewritten(ops.deep_clean(self.keys, chunk=chunk), reply=_advance_by_chunk))


if __name__ == "__main__":
    serve(IndexChunkStartQueue)
