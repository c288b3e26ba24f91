"""Mutant: ``deep_clean`` takes an ``index`` reply of start 0 for "list done" (a first chunk of
only ghosts returns 0), leaving the rest of the list unindexed and its ghosts in place."""

from __future__ import annotations

from typing import Any

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command
from rwq.protocol.operations import CleanReport


def _zero_is_done(sent: Command, reply: Any) -> Any:
    return [-1, reply[1]] if script(sent, "deep_clean", b"index") and reply[0] == 0 else reply


class ZeroStartQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(rewritten(ops.deep_clean(self.keys, chunk=chunk), reply=_zero_is_done))


if __name__ == "__main__":
    serve(ZeroStartQueue)
