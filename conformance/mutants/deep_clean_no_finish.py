"""Mutant: ``deep_clean`` never sends the ``finish`` call, leaving its run index behind."""

from __future__ import annotations

from _clean import script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan, T
from rwq.protocol.operations import CleanReport


def _without_finish(plan: Plan[T]) -> Plan[T]:
    try:
        sent = next(plan)
        while True:
            sent = plan.send(1 if script(sent, "deep_clean", b"finish") else (yield sent))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


class NoFinishQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(_without_finish(ops.deep_clean(self.keys, chunk=chunk)))


if __name__ == "__main__":
    serve(NoFinishQueue)
