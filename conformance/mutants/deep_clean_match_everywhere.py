"""Mutant: ``deep_clean`` scans ``MATCH *:item:*``, every queue's item keys, instead of its own
``P:item:*``."""

from __future__ import annotations

from _clean import rewritten
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Call, Command
from rwq.protocol.operations import CleanReport


def _everywhere(sent: Command) -> Command:
    if isinstance(sent, Call) and sent.args[0] == "SCAN":
        return Call(("SCAN", sent.args[1], "MATCH", b"*:item:*", *sent.args[4:]), sent.route_key)
    return sent


class MatchEverywhereQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(rewritten(ops.deep_clean(self.keys, chunk=chunk), command=_everywhere))


if __name__ == "__main__":
    serve(MatchEverywhereQueue)
