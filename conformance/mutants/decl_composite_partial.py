"""Mutant: complete_and_lease returns the items its lease part leased before it stopped at an
undeclared id, and falls back to lease only when that part leased nothing: with a stale window
it returns fewer items than are ready (RWQ-DECL-004)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from rwq.conformance import reference_adapter
from rwq.protocol import operations
from rwq.protocol.commands import RunScript

complete_and_lease = operations.complete_and_lease


def _partial(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
    plan = complete_and_lease(*args, **kwargs)
    command = next(plan)
    while True:
        reply = yield command
        if isinstance(command, RunScript) and command.script.name == "complete_and_lease":
            completed, (_again, _now, _due_in, *entries) = reply
            if entries:  # the port stops here, again or not
                token = bytes(command.args[1]).decode()  # type: ignore[arg-type]
                return [operations.Outcome(code) for code in completed], operations._leases(entries, token)
        try:
            command = plan.send(reply)
        except StopIteration as done:
            return done.value


if __name__ == "__main__":
    operations.complete_and_lease = _partial
    reference_adapter.main()
