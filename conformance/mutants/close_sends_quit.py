"""Mutant: closing a session sends ``QUIT`` on its connection before dropping it, as ioredis's
``quit()`` does; QUIT is not among the commands RWQ-SCRIPT-006 allows. The Node port of issue
#24 shipped this."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.conformance import reference_adapter
from rwq.conformance.encoding import Json


def _close(self: reference_adapter.Adapter, args: dict[str, Any]) -> Json:
    client, _ = self.sessions.pop(args["session"], (None, None))
    if client is not None:
        client.execute_command("QUIT")  # type: ignore[no-untyped-call]
        client.close()
    return {}


if __name__ == "__main__":
    reference_adapter.Adapter.close = _close  # type: ignore[method-assign]
    serve(WorkQueue)
