"""Mutant: ``deep_clean`` finds item keys with ``KEYS`` instead of ``SCAN``."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Call, Plan, T
from rwq.protocol.operations import CleanReport


def _keys_for_scan(plan: Plan[T]) -> Plan[T]:
    """``plan`` with each ``SCAN`` answered by one ``KEYS`` of the same pattern."""
    try:
        command = next(plan)
        while True:
            if isinstance(command, Call) and command.args[0] == "SCAN":
                found = yield Call(("KEYS", command.args[3]), command.route_key)
                command = plan.send((0, found))
            else:
                command = plan.send((yield command))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


class KeysQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(_keys_for_scan(ops.deep_clean(self.keys, chunk=chunk)))


if __name__ == "__main__":
    serve(KeysQueue)
