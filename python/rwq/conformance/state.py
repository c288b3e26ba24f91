"""What Redis holds, as the cases see it: a queue's logical state, and raw keys.

The logical state of the queue with prefix ``P`` (SPEC "Key layout")::

    {"queue": [ids, next to be leased first],          # <P>:queue read from its right end
     "processing": [ids, oldest lease first],          # <P>:processing read from its right end
     "in_flight": {id: {"remaining_ms": n}},           # <P>:in_flight: score - the server's now
     "items": {id: bytes},                             # <P>:item:<id>
     "leases": {id: {"remaining_ms": n | null}},       # <P>:lease:<id>, PTTL (null: no TTL)
     "legacy_leases": {id: {"remaining_ms": n | null}}}  # <P>:leased_by_session:<id>

Ids are text (bytes that are not UTF-8 survive as surrogate escapes); payloads are bytes values.
"""

from __future__ import annotations

from typing import Any

from .encoding import Json, encode_bytes
from .environment import glob_escape


def _id(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _scan(client: Any, match: str) -> list[bytes]:
    found: set[bytes] = set()
    cursor = b"0"
    while True:
        cursor, batch = client.execute_command("SCAN", cursor, "MATCH", match, "COUNT", 1000)
        found.update(batch)
        if cursor == b"0":
            return sorted(found)


def _remaining(client: Any, key: bytes) -> int | None:
    pttl = int(client.execute_command("PTTL", key))
    return None if pttl == -1 else pttl


def logical_state(client: Any, prefix: str) -> dict[str, Json]:
    """The logical state of the queue whose key prefix is ``prefix``."""
    base = prefix.encode("utf-8") + b":"
    pattern = glob_escape(prefix) + ":"
    state: dict[str, Json] = {
        name: [_id(raw) for raw in reversed(client.execute_command("LRANGE", base + name.encode(), 0, -1))]
        for name in ("queue", "processing")
    }
    items: dict[str, Json] = {}
    for key in _scan(client, pattern + "item:*"):
        payload = client.execute_command("GET", key)
        if payload is not None:
            items[_id(key[len(base) + 5 :])] = encode_bytes(payload)
    state["items"] = items
    clock = client.execute_command("TIME")
    seconds, micros = next(iter(clock.values())) if isinstance(clock, dict) else clock  # cluster: per node
    now_ms = int(seconds) * 1000 + int(micros) // 1000
    flat = client.execute_command("ZRANGE", base + b"in_flight", 0, -1, "WITHSCORES")
    state["in_flight"] = {
        _id(flat[i]): {"remaining_ms": int(float(flat[i + 1])) - now_ms} for i in range(0, len(flat), 2)
    }
    for field, kind in (("leases", "lease:"), ("legacy_leases", "leased_by_session:")):
        held: dict[str, Json] = {}
        for key in _scan(client, pattern + kind + "*"):
            remaining = _remaining(client, key)
            if remaining != -2:
                held[_id(key[len(base) + len(kind) :])] = {"remaining_ms": remaining}
        state[field] = held
    return state


def raw_key(client: Any, key: bytes) -> dict[str, Json] | None:
    """One key as ``{"type", "value", "pttl_ms"}`` (see the case schema's keyExpect), or None."""
    kind = client.execute_command("TYPE", key).decode()
    value: Any
    if kind == "none":
        return None
    if kind == "string":
        value = encode_bytes(client.execute_command("GET", key))
    elif kind == "list":
        value = [encode_bytes(v) for v in client.execute_command("LRANGE", key, 0, -1)]
    elif kind == "set":
        value = [encode_bytes(v) for v in sorted(client.execute_command("SMEMBERS", key))]
    elif kind == "hash":
        flat = client.execute_command("HGETALL", key)
        value = {_id(flat[i]): encode_bytes(flat[i + 1]) for i in range(0, len(flat), 2)}
    elif kind == "zset":
        flat = client.execute_command("ZRANGE", key, 0, -1, "WITHSCORES")
        value = [[encode_bytes(flat[i]), float(flat[i + 1])] for i in range(0, len(flat), 2)]
    else:
        value = None
    return {"type": kind, "value": value, "pttl_ms": int(client.execute_command("PTTL", key))}


def raw_keys(client: Any, keys: list[bytes]) -> dict[str, dict[str, Json]]:
    """Several keys by name (text); keys that vanished meanwhile are left out."""
    found = {}
    for key in keys:
        described = raw_key(client, key)
        if described is not None:
            found[_id(key)] = described
    return found
