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


def _pipelined(client: Any, commands: list[tuple[Any, ...]]) -> list[Any]:
    """The replies to ``commands``, sent in one round trip (no transaction: the case is idle
    while the runner reads)."""
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    return list(pipe.execute())


def logical_state(client: Any, prefix: str) -> dict[str, Json]:
    """The logical state of the queue whose key prefix is ``prefix``."""
    base = prefix.encode("utf-8") + b":"
    pattern = glob_escape(prefix) + ":"
    state: dict[str, Json] = {
        name: [_id(raw) for raw in reversed(client.execute_command("LRANGE", base + name.encode(), 0, -1))]
        for name in ("queue", "processing")
    }
    item_keys = _scan(client, pattern + "item:*")
    payloads = _pipelined(client, [("GET", key) for key in item_keys])
    state["items"] = {
        _id(key[len(base) + 5 :]): encode_bytes(payload)
        for key, payload in zip(item_keys, payloads, strict=True)
        if payload is not None
    }
    clock = client.execute_command("TIME")
    seconds, micros = next(iter(clock.values())) if isinstance(clock, dict) else clock  # cluster: per node
    now_ms = int(seconds) * 1000 + int(micros) // 1000
    flat = client.execute_command("ZRANGE", base + b"in_flight", 0, -1, "WITHSCORES")
    state["in_flight"] = {
        _id(flat[i]): {"remaining_ms": int(float(flat[i + 1])) - now_ms} for i in range(0, len(flat), 2)
    }
    for field, kind in (("leases", "lease:"), ("legacy_leases", "leased_by_session:")):
        keys = _scan(client, pattern + kind + "*")
        pttls = [int(pttl) for pttl in _pipelined(client, [("PTTL", key) for key in keys])]
        state[field] = {
            _id(key[len(base) + len(kind) :]): {"remaining_ms": None if pttl == -1 else pttl}
            for key, pttl in zip(keys, pttls, strict=True)
            if pttl != -2
        }
    return state


VALUE_COMMANDS: dict[str, tuple[Any, ...]] = {
    "string": ("GET",),
    "list": ("LRANGE", 0, -1),
    "set": ("SMEMBERS",),
    "hash": ("HGETALL",),
    "zset": ("ZRANGE", 0, -1, "WITHSCORES"),
}
"""How a key of each type is read (after the key's name)."""


def _value(kind: str, reply: Any) -> Json:
    """A key's value as the case schema's keyExpect writes it."""
    if kind == "string":
        return encode_bytes(reply)
    if kind == "list":
        return [encode_bytes(v) for v in reply]
    if kind == "set":
        return [encode_bytes(v) for v in sorted(reply)]
    if kind == "hash":
        return {_id(reply[i]): encode_bytes(reply[i + 1]) for i in range(0, len(reply), 2)}
    return [[encode_bytes(reply[i]), float(reply[i + 1])] for i in range(0, len(reply), 2)]


def raw_keys(client: Any, keys: list[bytes]) -> dict[str, dict[str, Json]]:
    """Several keys by name (text), each as ``{"type", "value", "pttl_ms"}`` (see the case
    schema's keyExpect), in two round trips; keys that vanished meanwhile are left out."""
    meta = _pipelined(client, [command for key in keys for command in (("TYPE", key), ("PTTL", key))])
    present = [
        (key, kind.decode(), int(pttl))
        for key, kind, pttl in zip(keys, meta[::2], meta[1::2], strict=True)
        if kind != b"none"
    ]
    readable = [(key, kind) for key, kind, _ in present if kind in VALUE_COMMANDS]
    replies = _pipelined(
        client, [(VALUE_COMMANDS[kind][0], key, *VALUE_COMMANDS[kind][1:]) for key, kind in readable]
    )
    values = {key: _value(kind, reply) for (key, kind), reply in zip(readable, replies, strict=True)}
    return {
        _id(key): {"type": kind, "value": values.get(key), "pttl_ms": pttl} for key, kind, pttl in present
    }
