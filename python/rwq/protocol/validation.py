"""Argument validation shared by every operation (SPEC "Encodings")."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InvalidArgument, InvalidType

MAX_ID_BYTES = 512
MAX_DURATION_MS = 31_536_000_000
MAX_BATCH = 1000
_GLOB_CHARS = frozenset("*?[]\\")
# Key families whose names continue with any text (ids, runs): a prefix with one of these as a
# segment after its first would nest a queue inside another queue's keys (RWQ-KEYS-008).
RESERVED_SEGMENTS = frozenset(("item", "lease", "leased_by_session", "deep_clean"))
# The form of shard i of a sharded queue P, {P#i} (SPEC 19): no queue opened on its own may have
# it (RWQ-KEYS-010), or it would be that shard.
_SHARD_FORM = re.compile(r"\{[^{}]+#(0|[1-9][0-9]{0,3})\}")
MAX_SHARDS = 1024


class ShardPrefix(str):
    """The prefix of a shard, made by a sharded queue's layout: the one way to open a queue of
    the form ``{P#i}`` (RWQ-KEYS-010)."""

    __slots__ = ()


def encode_new_id(item_id: object) -> bytes:
    """Validate an id for an item being created: a str of 1..512 UTF-8 bytes."""
    if not isinstance(item_id, str):
        raise InvalidType(f"id must be a str, not {type(item_id).__name__}")
    try:
        raw = item_id.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgument("id must be valid UTF-8 (no lone surrogates)") from exc
    return _check_id_length(raw)


def encode_id(item_id: object) -> bytes:
    """Encode the id of an existing item; ids read back from Redis round-trip exactly."""
    return _check_id_length(_encode_text(item_id, "id"))


MAX_TOKEN_BYTES = 128


def token(value: object) -> bytes:
    """Validate a lease token: a str of 1..128 bytes."""
    raw = _encode_text(value, "token")
    if not 1 <= len(raw) <= MAX_TOKEN_BYTES:
        raise InvalidArgument(f"token must be 1..{MAX_TOKEN_BYTES} bytes, got {len(raw)}")
    return raw


def _encode_text(value: object, name: str) -> bytes:
    """A str as the bytes Redis holds; surrogate escapes of bytes that are not UTF-8 survive."""
    if not isinstance(value, str):
        raise InvalidType(f"{name} must be a str, not {type(value).__name__}")
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise InvalidArgument(f"{name} must be UTF-8 (a lone surrogate is not)") from exc


def decode_id(raw: bytes) -> str:
    """Decode an id read from Redis (bytes that are not UTF-8 survive as surrogates)."""
    return raw.decode("utf-8", "surrogateescape")


def _check_id_length(raw: bytes) -> bytes:
    if not 1 <= len(raw) <= MAX_ID_BYTES:
        raise InvalidArgument(f"id must be 1..{MAX_ID_BYTES} bytes of UTF-8, got {len(raw)}")
    return raw


def payload(data: object) -> bytes:
    """Validate a payload: bytes-like only, never str (its encoding would be a guess)."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise InvalidType(f"payload must be bytes, not {type(data).__name__}")


def duration_ms(value: object, name: str, *, minimum: int = 1) -> int:
    """Validate a duration in integer milliseconds."""
    return integer(value, name, minimum, MAX_DURATION_MS, unit=" ms")


def batch_size(value: object, name: str) -> int:
    """Validate a per-call item count."""
    return integer(value, name, 1, MAX_BATCH)


def lease_many_arguments(args: tuple[int, ...], count: int | None, lease_ms: int | None) -> tuple[int, int]:
    """lease_many's ``count`` and ``lease_ms``, given by keyword. By position, ``(count, lease_ms)``
    still works with a DeprecationWarning: ``lease(lease_ms)`` puts the lease time first, and a
    swapped pair such as ``(500, 10)`` passed every check (500 items leased for 10 ms)."""
    if args:
        if len(args) != 2 or count is not None or lease_ms is not None:
            raise InvalidType("lease_many takes count= and lease_ms= by keyword")
        warnings.warn(
            "lease_many(count, lease_ms) by position is deprecated (the order is easy to swap): "
            "write lease_many(count=..., lease_ms=...)",
            DeprecationWarning,
            stacklevel=3,
        )
        count, lease_ms = args
    if count is None or lease_ms is None:
        raise InvalidType("lease_many needs count= and lease_ms=")
    return count, lease_ms


def integer(value: object, name: str, minimum: int, maximum: int, *, unit: str = "") -> int:
    """Validate an int (never a bool or a float) in ``minimum..maximum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidType(f"{name} must be an int{unit and ' of milliseconds'}, not {type(value).__name__}")
    if not minimum <= value <= maximum:
        raise InvalidArgument(f"{name} must be in {minimum}..{maximum}{unit}, got {value}")
    return value


def flag(value: object, name: str) -> bool:
    """Validate a bool (an int or None is not one: ``block=0`` is more likely a mistake)."""
    if not isinstance(value, bool):
        raise InvalidType(f"{name} must be a bool, not {type(value).__name__}")
    return value


def batch(items: object, name: str) -> list[Any]:
    """A batch as a list: any iterable but a str, bytes or a mapping (their items are not items)."""
    if isinstance(items, (str, bytes, bytearray, memoryview, Mapping)) or not isinstance(items, Iterable):
        raise InvalidType(f"{name} must be a sequence of items, not a {type(items).__name__}")
    return list(items)


def hash_tag(key: str) -> str | None:
    """The Redis Cluster hash tag of a key: the text between the first '{' and the next '}'."""
    start = key.find("{")
    if start < 0:
        return None
    end = key.find("}", start + 1)
    if end <= start + 1:
        return None
    return key[start + 1 : end]


def prefix(value: object, *, cluster: bool) -> str:
    """Validate a queue prefix; on Redis Cluster it must carry a hash tag."""
    if not isinstance(value, str):
        raise InvalidType(f"prefix must be a str, not {type(value).__name__}")
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgument("prefix must be valid UTF-8 (no lone surrogates)") from exc
    if not 1 <= len(raw) <= MAX_ID_BYTES:
        raise InvalidArgument(f"prefix must be 1..{MAX_ID_BYTES} bytes")
    if _GLOB_CHARS.intersection(value):
        raise InvalidArgument(f"prefix must not contain glob characters * ? [ ] \\: {value!r}")
    nested = RESERVED_SEGMENTS.intersection(value.split(":")[1:])
    if nested:
        raise InvalidArgument(
            f"prefix must not have a segment {min(nested)!r} after its first: its keys would be "
            f"another queue's item or lease keys (RWQ-KEYS-008): {value!r}"
        )
    if cluster and hash_tag(value) is None:
        raise InvalidArgument(
            f"on Redis Cluster the prefix must contain a hash tag such as '{{jobs}}' so all of "
            f"a queue's keys share one slot: {value!r}"
        )
    return value


def shard_form(value: str) -> bool:
    """Whether ``value`` is the prefix of a shard of some sharded queue, ``{P#i}``, i in 0..1023."""
    shard = _SHARD_FORM.fullmatch(value)
    return shard is not None and int(shard[1]) < MAX_SHARDS


def queue_prefix(value: object, *, cluster: bool) -> str:
    """Validate the prefix of a queue opened on its own: :func:`prefix`, and not the form of a
    shard of a sharded queue, ``{P#i}`` with i in 0..1023 (RWQ-KEYS-010), unless a sharded
    queue's layout made it (:class:`ShardPrefix`)."""
    prefix(value, cluster=cluster)
    assert isinstance(value, str)
    if shard_form(value) and not isinstance(value, ShardPrefix):
        raise InvalidArgument(
            f"prefix must not have the form {{P#i}} of a sharded queue's shard i (RWQ-KEYS-010): "
            f"{value!r}; open the sharded queue instead"
        )
    return value
