"""Mutant: ``deep_clean`` stops after the first ``SCAN`` reply, as if its cursor were 0."""

from __future__ import annotations

from typing import Any

from _clean import rewritten
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Call, Command
from rwq.protocol.operations import CleanReport


def _one_page(sent: Command, reply: Any) -> Any:
    return (0, reply[1]) if isinstance(sent, Call) and sent.args[0] == "SCAN" else reply


class FirstScanPageQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(rewritten(ops.deep_clean(self.keys, chunk=chunk), reply=_one_page))


if __name__ == "__main__":
    serve(FirstScanPageQueue)
