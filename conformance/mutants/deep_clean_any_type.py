"""Mutant: ``deep_clean`` scans ``P:item:*`` without ``TYPE string``: a nested queue's lists are requeued."""

from __future__ import annotations

from _clean import rewritten
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Call, Command
from rwq.protocol.operations import CleanReport


def _any_type(sent: Command) -> Command:
    if isinstance(sent, Call) and sent.args[0] == "SCAN":
        return Call(sent.args[:6], sent.route_key)
    return sent


class AnyTypeQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(rewritten(ops.deep_clean(self.keys, chunk=chunk), command=_any_type))


if __name__ == "__main__":
    serve(AnyTypeQueue)
