"""Mutant: a ``deep_clean`` run that a call refuses with ``WRONG_TYPE`` is abandoned without its
``finish`` call, leaving the run index behind (RWQ-DEEP-005)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan, T
from rwq.protocol.operations import CleanReport


def _errors_not_passed_on(plan: Plan[T]) -> Plan[T]:
    try:
        sent = next(plan)
        while True:
            sent = plan.send((yield sent))  # an error ends the run here, never reaching the plan
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


class KeptOnRefusalQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(_errors_not_passed_on(ops.deep_clean(self.keys, chunk=chunk)))


if __name__ == "__main__":
    serve(KeptOnRefusalQueue)
