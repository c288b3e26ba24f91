"""Mutant: a port computes a beat's deadline from its own clock: it sends its local time with the
beat and its script copy takes that as now, so a worker's deadline and ``now_ms`` are the client
host's time, not the server's (RWQ-LIVE-002, RWQ-TIME-001). The frozen server clock of the cases
stands years away from the adapter's clock."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue
from rwq.protocol import live
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.scripts import registry

BEAT_ARGS = "then return redis.error_reply('RWQ_INVALID_ARGUMENT beat takes"
edit("heartbeat", f"if #ARGV ~= 4 {BEAT_ARGS}", f"if #ARGV ~= 5 {BEAT_ARGS}")
edit(
    "heartbeat",
    "local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)",
    "local now = tonumber(ARGV[5]) or tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)",
)


class ClientClock(WorkQueue):
    def worker_beat(self, worker_id: str, ttl_ms: int, record: Mapping[str, Any]) -> live.Beat:
        def plan() -> Plan[live.Beat]:
            raw = live.worker_id(worker_id)
            v.integer(ttl_ms, "ttl_ms", live.MIN_TTL_MS, live.MAX_TTL_MS)
            body = live.record_json(record)
            local = int(time.time() * 1000)
            args = (b"beat", raw, ttl_ms, body, local)
            now, removed = yield RunScript(registry()["heartbeat"], (self.keys.queue,), args)
            return live.Beat(int(now), int(removed))

        return self._run(plan())


if __name__ == "__main__":
    serve(ClientClock)
