"""Mutant: ``deep_clean`` stops at the first ``SCAN`` page that matched no key, although SCAN
only ends when its cursor comes back 0."""

from __future__ import annotations

from typing import Any

from _clean import rewritten
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Call, Command
from rwq.protocol.operations import CleanReport


def _empty_is_done(sent: Command, reply: Any) -> Any:
    if isinstance(sent, Call) and sent.args[0] == "SCAN" and not reply[1]:
        return (0, reply[1])
    return reply


class EmptyPageQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(rewritten(ops.deep_clean(self.keys, chunk=chunk), reply=_empty_is_done))


if __name__ == "__main__":
    serve(EmptyPageQueue)
