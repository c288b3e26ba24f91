"""Mutant: ``dead trim`` runs once after a clean or a fail instead of until it removes fewer than
1000, so an excess of more than 1000 dead items survives: right for a few, wrong for many."""

from __future__ import annotations

from _mutant import serve
from _trim import trim_queue
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import registry


def _trim_once(keys: QueueKeys) -> Plan[None]:
    yield RunScript(registry()["dead"], (keys.queue,), (b"trim",))


if __name__ == "__main__":
    serve(trim_queue(_trim_once, _trim_once))
