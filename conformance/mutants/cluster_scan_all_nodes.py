"""Mutant: on a cluster, ``deep_clean`` scans with the cluster client's ``scan_iter``, which sends
``SCAN`` to every master and merges the keys: the result is right, the other masters are asked."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Call, Command


class FanOutScanQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if self._cluster and isinstance(command, Call) and command.args[0] == "SCAN":
            _, _, _, pattern, _, count, _, key_type = command.args
            return 0, list(self._redis.scan_iter(match=pattern, count=count, _type=key_type))
        return super()._execute(command)


if __name__ == "__main__":
    serve(FanOutScanQueue)
