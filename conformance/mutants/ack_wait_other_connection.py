"""Mutant: the client sends WAIT on another connection of its pool than the script call's, where
it counts that connection's writes (none), not the script's (RWQ-ACK-001)."""

from __future__ import annotations

import dataclasses
from typing import Any

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import RunScript


def _wait_elsewhere(client: Any, command: RunScript) -> Any:
    pool = client.connection_pool
    connection, other = pool.get_connection(), pool.get_connection()
    try:
        reply = _shell.run_script_on_connection(connection, dataclasses.replace(command, wait=None))
        if command.wait is None:
            return reply
        other.send_command("WAIT", command.wait.replicas, command.wait.timeout_ms)
        return reply, other.read_response(timeout=command.wait.timeout_ms / 1000 + 5)
    finally:
        pool.release(connection)
        pool.release(other)


if __name__ == "__main__":
    _shell.run_script_once = _wait_elsewhere
    serve(WorkQueue)
