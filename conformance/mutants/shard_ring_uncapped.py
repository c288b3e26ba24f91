"""Mutant: rings the doorbell with k tokens rather than min(k, 16): the ring script refuses k > 16,
and the client takes the refusal as a failed hint, so a batch of 17 or more items wakes no one."""

from __future__ import annotations

from typing import Any

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.scripts import registry
from rwq.protocol.sharding import ShardLayout


def _ring_plan(layout: ShardLayout, tokens: int) -> Plan[Any]:
    return (yield RunScript(registry()["ring"], (layout.bell,), (tokens,)))


if __name__ == "__main__":
    sharding._ring_plan = _ring_plan
    reference_adapter.main()
