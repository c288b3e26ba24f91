"""Mutant: a blocking lease always waits a full second on the doorbell, whatever time it has
left, so a lease with a short timeout returns up to a second late."""

from __future__ import annotations

from typing import Any

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.commands import Call, Plan
from rwq.protocol.sharding import ShardLayout


def _wait_plan(layout: ShardLayout, wait_ms: int) -> Plan[Any]:
    return (yield Call(("BLPOP", layout.bell, 1), layout.bell))


if __name__ == "__main__":
    sharding._wait_plan = _wait_plan
    reference_adapter.main()
