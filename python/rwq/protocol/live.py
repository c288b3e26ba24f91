"""Profile workers (SPEC §21, "Live workers"): heartbeats, leaving, and the list of live workers.

Each plan validates all of its arguments before its one script call, so bad input raises
:class:`~rwq.errors.InvalidArgument` and nothing reaches Redis.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument, InvalidType
from . import validation as v
from .commands import Plan, RunScript
from .operations import QueueKeys
from .scripts import registry

MIN_TTL_MS, MAX_TTL_MS = 1000, 3_600_000
"""The range of a beat's ``ttl_ms`` (RWQ-LIVE-002)."""
MAX_RECORD_BYTES = 4096
MAX_OFFSET = 1_000_000
BEAT_MS, TTL_MS = 5000, 30_000
"""A worker's default beat interval and time to live: six beats may be missed (RWQ-LIVE-001)."""
MAX_ITEMS = 10
"""The most ids a record lists in ``items``."""
_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


@dataclass(frozen=True, slots=True)
class Beat:
    """What a beat did: the server's time, and the expired entries it removed."""

    now_ms: int
    removed: int


@dataclass(frozen=True, slots=True)
class LiveWorker:
    """A registered worker whose deadline is after the server's now: its id, the record its last
    beat wrote, and that deadline (server ms)."""

    id: str
    record: dict[str, Any]
    deadline_ms: int


def new_worker_id() -> str:
    """A worker id: 16 lower-case hex digits from a secure random source (host and pid are
    record fields: containers reuse pids)."""
    return secrets.token_hex(8)


def worker_id(value: object) -> bytes:
    """Validate a worker id: 1..64 bytes of ``A-Z a-z 0-9 _ . : -``."""
    if not isinstance(value, str):
        raise InvalidType(f"worker id must be a str, not {type(value).__name__}")
    if not _ID.fullmatch(value):
        raise InvalidArgument("worker id must be 1..64 characters of A-Z a-z 0-9 _ . : - (RWQ-LIVE-002)")
    return value.encode("ascii")


def record_json(record: object) -> bytes:
    """A record as compact JSON: a mapping of at most 4096 bytes once encoded (RWQ-LIVE-002)."""
    raw = encode_record(record)
    if len(raw) > MAX_RECORD_BYTES:
        raise InvalidArgument(f"record must be at most {MAX_RECORD_BYTES} bytes of JSON, got {len(raw)}")
    return raw


def encode_record(record: object) -> bytes:
    """A record as compact UTF-8 JSON, whatever its size."""
    if not isinstance(record, Mapping):
        raise InvalidType(f"record must be a mapping (a JSON object), not {type(record).__name__}")
    try:
        text = json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"record must be JSON: {exc}") from None
    return text.encode("utf-8")


def worker_beat(keys: QueueKeys, worker: str, ttl_ms: int, record: Mapping[str, Any]) -> Plan[Beat]:
    """Register or refresh ``worker`` until the server's now plus ``ttl_ms`` (RWQ-LIVE-002)."""
    raw_id = worker_id(worker)
    v.integer(ttl_ms, "ttl_ms", MIN_TTL_MS, MAX_TTL_MS, unit=" ms")
    raw = record_json(record)
    now, removed = yield RunScript(registry()["heartbeat"], (keys.queue,), (b"beat", raw_id, ttl_ms, raw))
    return Beat(int(now), int(removed))


def worker_leave(keys: QueueKeys, worker: str) -> Plan[bool]:
    """Remove ``worker``'s entry; False when it had none."""
    raw_id = worker_id(worker)
    return bool((yield RunScript(registry()["heartbeat"], (keys.queue,), (b"leave", raw_id))))


def workers(keys: QueueKeys, *, offset: int = 0, count: int = 100) -> Plan[list[LiveWorker]]:
    """The live workers, earliest deadline first (RWQ-LIVE-003)."""
    v.integer(offset, "offset", 0, MAX_OFFSET)
    v.batch_size(count, "count")
    _now, entries = yield RunScript(registry()["heartbeat"], (keys.queue,), (b"list", offset, count))
    return [LiveWorker(raw.decode("ascii"), _record(data), int(deadline)) for raw, data, deadline in entries]


def _record(data: bytes) -> dict[str, Any]:
    """A stored record; one that is not a JSON object (written around the script) reads as {}."""
    try:
        value = json.loads(data)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
