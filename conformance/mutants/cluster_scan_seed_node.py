"""Mutant: on a cluster, ``deep_clean`` sends ``SCAN`` to the node the client was given (its
seed), not to the node that serves the queue's slot, and so finds no orphan there."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Call, Command


class SeedScanQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if self._cluster and isinstance(command, Call) and command.args[0] == "SCAN":
            seed = next(iter(self._redis.nodes_manager.startup_nodes.values()))
            reply = self._redis.execute_command(*command.args, target_nodes=seed)
            return _shell.call_reply(command, reply, cluster=True)
        return super()._execute(command)


if __name__ == "__main__":
    serve(SeedScanQueue)
