"""RWQ/1 operations as plans: generators that yield commands and return parsed results.

Every plan validates all of its arguments before yielding its first command, so bad input
raises :class:`~rwq.errors.InvalidArgument` and nothing reaches Redis.
"""

from __future__ import annotations

import enum
import secrets
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument, LeaseLost, UnsupportedServer
from . import validation as v
from .commands import Call, Monotonic, Plan, RunScript, T
from .scripts import registry

MIN_REDIS = (6, 2)


class RwqWarning(UserWarning):
    """A server setting that breaks RWQ/1's guarantees (for example, an eviction policy)."""


@dataclass(frozen=True, slots=True)
class QueueKeys:
    """The key layout of one queue (SPEC "Key layout")."""

    prefix: str

    @property
    def _base(self) -> bytes:
        return self.prefix.encode("utf-8") + b":"

    @property
    def queue(self) -> bytes:
        return self._base + b"queue"

    @property
    def processing(self) -> bytes:
        return self._base + b"processing"

    def item(self, item_id: str) -> bytes:
        return self._base + b"item:" + v.encode_id(item_id)

    def lease(self, item_id: str) -> bytes:
        return self._base + b"lease:" + v.encode_id(item_id)

    def legacy_lease(self, item_id: str) -> bytes:
        return self._base + b"leased_by_session:" + v.encode_id(item_id)

    def deep_clean_index(self, run: str) -> bytes:
        return self._base + b"deep_clean:" + run.encode("ascii")


@dataclass(frozen=True, slots=True)
class Lease:
    """A leased item: its id, payload and the lease token that proves ownership."""

    id: str
    data: bytes
    token: str


class Outcome(enum.IntEnum):
    """Per-item result of complete and release."""

    DONE = 1
    GONE = 0
    LEASE_LOST = -1


@dataclass(frozen=True, slots=True)
class Counts:
    """Ready items (``LLEN <P>:queue``) and in-flight items (``LLEN <P>:processing``)."""

    queued: int
    processing: int


@dataclass(frozen=True, slots=True)
class CleanReport:
    """What a clean did: ids put back in the queue and ghost entries dropped."""

    requeued: tuple[str, ...]
    dropped: int


def new_token() -> str:
    """A fresh lease token: 128 random bits, hex."""
    return secrets.token_hex(16)


def _chunks(items: Sequence[Any], size: int = v.MAX_BATCH) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _legacy(flag: bool) -> bytes:
    return b"1" if flag else b"0"


def add(keys: QueueKeys, items: Iterable[tuple[str, bytes]]) -> Plan[list[bool]]:
    """add / add_many: one result per item, True when this call created it."""
    pairs = [(v.encode_new_id(item_id), v.payload(data)) for item_id, data in items]
    script = registry()["add"]
    added: list[bool] = []
    for chunk in _chunks(pairs):
        args = tuple(part for pair in chunk for part in pair)
        reply = yield RunScript(script, (keys.queue,), args)
        added.extend(bool(flag) for flag in reply)
    return added


def lease(
    keys: QueueKeys,
    lease_ms: int,
    *,
    count: int = 1,
    block: bool = False,
    timeout_ms: int = 0,
    legacy: bool = False,
) -> Plan[list[Lease]]:
    """lease / lease_many. Blocking waits with BLMOVE, then claims with the claim script."""
    v.duration_ms(lease_ms, "lease_ms")
    v.batch_size(count, "count")
    if block:
        v.duration_ms(timeout_ms, "timeout_ms", minimum=0)
        if count != 1:
            raise InvalidArgument("a blocking lease takes one item (count=1)")
    token = new_token()
    lease_script, claim_script = registry()["lease"], registry()["claim"]
    both = (keys.queue, keys.processing)
    deadline: float | None = None
    while True:
        reply = yield RunScript(lease_script, both, (lease_ms, token.encode(), count, _legacy(legacy)))
        again, entries = reply[0], reply[1:]
        if entries:
            return [Lease(v.decode_id(raw_id), data, token) for raw_id, data in entries]
        if again:
            continue
        if not block:
            return []
        wait_s = 0.0  # BLMOVE's "no limit"
        if timeout_ms:
            now = yield Monotonic()
            deadline = now + timeout_ms / 1000 if deadline is None else deadline
            if now >= deadline:
                return []
            wait_s = max(round(deadline - now, 3), 0.001)
        moved = yield Call(("BLMOVE", keys.queue, keys.processing, "RIGHT", "LEFT", wait_s), keys.queue)
        if moved is None:
            return []
        claimed = yield RunScript(claim_script, both, (moved, lease_ms, token.encode(), _legacy(legacy)))
        if claimed[0] == 1:
            return [Lease(v.decode_id(moved), claimed[1], token)]


def renew(
    keys: QueueKeys, leases: Sequence[Lease], lease_ms: int, *, legacy: bool = False
) -> Plan[list[bool]]:
    """renew / renew_many: True where the caller still held the lease and it was extended."""
    v.duration_ms(lease_ms, "lease_ms")
    pairs = [(v.encode_id(held.id), held.token.encode()) for held in leases]
    script = registry()["renew"]
    renewed: list[bool] = []
    for chunk in _chunks(pairs):
        args = (lease_ms, _legacy(legacy), *(part for pair in chunk for part in pair))
        reply = yield RunScript(script, (keys.queue,), args)
        renewed.extend(bool(flag) for flag in reply)
    return renewed


def complete(
    keys: QueueKeys, items: Sequence[Lease | str], *, require_lease: bool = False
) -> Plan[list[Outcome]]:
    """complete / complete_many. With ``require_lease`` only a current lease holder completes."""
    if require_lease:
        if not all(isinstance(item, Lease) for item in items):
            raise InvalidArgument("require_lease needs Lease objects (their tokens prove ownership)")
        args: list[bytes] = []
        for item in items:
            assert isinstance(item, Lease)
            args += (v.encode_id(item.id), item.token.encode())
        mode, step = b"owner", 2
    else:
        args = [v.encode_id(item.id if isinstance(item, Lease) else item) for item in items]
        mode, step = b"any", 1
    script = registry()["complete"]
    outcomes: list[Outcome] = []
    for chunk in _chunks(args, v.MAX_BATCH * step):
        reply = yield RunScript(script, (keys.queue, keys.processing), (mode, *chunk))
        outcomes.extend(Outcome(code) for code in reply)
    return outcomes


def release(keys: QueueKeys, leases: Sequence[Lease]) -> Plan[list[Outcome]]:
    """release: give held items back to the queue at once."""
    pairs = [(v.encode_id(held.id), held.token.encode()) for held in leases]
    script = registry()["release"]
    outcomes: list[Outcome] = []
    for chunk in _chunks(pairs):
        args = tuple(part for pair in chunk for part in pair)
        reply = yield RunScript(script, (keys.queue, keys.processing), args)
        outcomes.extend(Outcome(code) for code in reply)
    return outcomes


def first(plan: Plan[list[T]]) -> Plan[T | None]:
    """The first result of a batch plan, or None when it returned none (a single-item call)."""
    results = yield from plan
    return results[0] if results else None


def owned(plan: Plan[list[Outcome]], item_id: str) -> Plan[bool]:
    """A single complete or release: True if done, False if the item was gone; LeaseLost if not held."""
    outcome = (yield from plan)[0]
    if outcome is Outcome.LEASE_LOST:
        raise LeaseLost(f"the lease on {item_id!r} is no longer held by this caller")
    return outcome is Outcome.DONE


def counts(keys: QueueKeys) -> Plan[Counts]:
    """Ready and in-flight counts read at one instant."""
    queued, processing = yield RunScript(registry()["counts"], (keys.queue, keys.processing), ())
    return Counts(int(queued), int(processing))


def light_clean(keys: QueueKeys, *, chunk: int = 100) -> Plan[CleanReport]:
    """Walk the processing list in bounded chunks, requeueing abandoned items."""
    v.batch_size(chunk, "chunk")
    script = registry()["light_clean"]
    cursor, dropped, requeued = 0, 0, []
    while True:
        cursor, ids, ghosts = yield RunScript(script, (keys.queue, keys.processing), (cursor, chunk))
        requeued += [v.decode_id(raw) for raw in ids]
        dropped += ghosts
        if cursor == 0:
            return CleanReport(tuple(requeued), dropped)


def deep_clean(keys: QueueKeys, *, chunk: int = 1000) -> Plan[CleanReport]:
    """Index both lists, SCAN the item keys and requeue orphans; drop ghosts from both lists."""
    v.batch_size(chunk, "chunk")
    script = registry()["deep_clean"]
    three = (keys.queue, keys.processing, keys.deep_clean_index(secrets.token_hex(8)))
    dropped = 0
    for name in (b"queue", b"processing"):
        start = 0
        while start >= 0:
            start, ghosts = yield RunScript(script, three, (b"index", name, start, chunk))
            dropped += ghosts
    item_prefix = keys.prefix.encode("utf-8") + b":item:"
    requeued: list[str] = []
    cursor = 0
    while True:
        cursor, found = yield Call(("SCAN", cursor, "MATCH", item_prefix + b"*", "COUNT", chunk), keys.queue)
        ids = [key[len(item_prefix) :] for key in found if len(key) > len(item_prefix)]
        for part in _chunks(ids, chunk):
            reply = yield RunScript(script, three, (b"requeue", *part))
            requeued += [v.decode_id(raw) for raw in reply]
        if int(cursor) == 0:
            break
    yield RunScript(script, three, (b"finish",))
    return CleanReport(tuple(requeued), dropped)


def check_server(keys: QueueKeys) -> Plan[None]:
    """Refuse servers older than 6.2; warn when the eviction policy is not ``noeviction``."""
    info: Any = yield Call(("INFO", "server"), keys.queue)
    version = tuple(int(part) for part in str(info["redis_version"]).split(".")[:2])
    if version < MIN_REDIS:
        raise UnsupportedServer(f"RWQ/1 needs Redis >= 6.2, the server is {info['redis_version']}")
    policy: Any = yield Call(("CONFIG", "GET", "maxmemory-policy"), keys.queue, errors_as_values=True)
    if isinstance(policy, dict):
        value = policy.get("maxmemory-policy", policy.get(b"maxmemory-policy"))
        if isinstance(value, bytes):
            value = value.decode()
        if value is not None and value != "noeviction":
            warnings.warn(
                f"Redis maxmemory-policy is {value!r}, not 'noeviction': an evicted lease or item "
                "means a duplicate run or a lost item",
                RwqWarning,
                stacklevel=4,
            )
