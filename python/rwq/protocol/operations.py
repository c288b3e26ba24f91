"""RWQ/1 operations as plans: generators that yield commands and return parsed results.

Every plan validates all of its arguments before yielding its first command, so bad input
raises :class:`~rwq.errors.InvalidArgument` and nothing reaches Redis.
"""

from __future__ import annotations

import enum
import json
import secrets
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import (
    InvalidArgument,
    InvalidType,
    LeaseLost,
    NotReplicated,
    RedisFailure,
    UnsupportedServer,
    WrongType,
)
from . import validation as v
from .commands import Call, Plan, RunScript, T, Wait
from .scripts import registry

MIN_REDIS = (6, 2)
MAX_BLOCK_STEP_MS = 1000  # a blocked lease re-checks delayed items and its deadline this often


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

    @property
    def policy(self) -> bytes:
        return self._base + b"policy"

    def deep_clean_index(self, run: str) -> bytes:
        return self._base + b"deep_clean:" + run.encode("ascii")


@dataclass(frozen=True, slots=True)
class Lease:
    """A leased item: id, payload, the token that proves ownership, and the attempt number.

    ``attempt`` is 1 for the first lease of an item, 2 for the second...; it is 0 when the queue
    has no retry policy (attempts are counted only under one). The token is a capability
    (RWQ-SEC-003): the repr leaves it out.
    """

    id: str
    data: bytes
    token: str = field(repr=False)
    attempt: int = 0


def lease_arg(value: object) -> Lease:
    """Validate an argument that must be a Lease (its token proves ownership)."""
    if not isinstance(value, Lease):
        raise InvalidType(f"lease must be a Lease, not {type(value).__name__}")
    return value


class Outcome(enum.IntEnum):
    """Per-item result of complete and release."""

    DONE = 1
    GONE = 0
    LEASE_LOST = -1


@dataclass(frozen=True, slots=True)
class Counts:
    """Ready (``LLEN <P>:queue``), in-flight (``LLEN <P>:processing`` + ``ZCARD <P>:in_flight``),
    delayed and dead items."""

    queued: int
    processing: int
    delayed: int = 0
    dead: int = 0


@dataclass(frozen=True, slots=True)
class CleanReport:
    """What a clean did: ids requeued, ghost entries dropped, ids dead-lettered, items promoted."""

    requeued: tuple[str, ...]
    dropped: int
    dead: tuple[str, ...] = ()
    promoted: int = 0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """A queue's retry policy, stored in ``<P>:policy`` so every client applies the same one.

    Failure number n waits ``base_ms`` (fixed) or ``min(cap_ms, base_ms * 2**(n-1))``
    (exponential), reduced by up to ``jitter_pct`` percent at random. ``max_attempts`` 0 and the
    retention limits 0 mean "no limit".
    """

    max_attempts: int = 5
    backoff: Literal["fixed", "exponential"] = "exponential"
    base_ms: int = 1000
    cap_ms: int = 300_000
    jitter_pct: int = 0
    dead_max_count: int = 10_000
    dead_max_age_ms: int = 7 * 24 * 3600 * 1000

    def __post_init__(self) -> None:
        """Refuse a wrong type, or a number no stored policy holds (RWQ-RETRY-014 reads up to 10**15).

        ``set_policy`` also applies the narrower limits a policy is written with.
        """
        if not isinstance(self.backoff, str):
            raise InvalidType(f"backoff must be a str, not {type(self.backoff).__name__}")
        if self.backoff not in ("fixed", "exponential"):
            raise InvalidArgument("backoff must be 'fixed' or 'exponential'")
        for name in _POLICY_LIMITS:
            v.integer(getattr(self, name), name, 0, MAX_STORED_NUMBER)

    def fields(self) -> tuple[str | int, ...]:
        """The ``set_policy`` script arguments, in order."""
        return (
            self.max_attempts,
            self.backoff,
            self.base_ms,
            self.cap_ms,
            self.jitter_pct,
            self.dead_max_count,
            self.dead_max_age_ms,
        )


class FailOutcome(enum.Enum):
    """What ``fail`` did with the item."""

    RETRY = 1
    DEAD = 2
    GONE = 0


@dataclass(frozen=True, slots=True)
class FailResult:
    """The outcome of ``fail`` and, for a retry, the backoff the queue's policy chose."""

    outcome: FailOutcome
    delay_ms: int


@dataclass(frozen=True, slots=True)
class DeadItem:
    """A dead-lettered item; ``data`` is only filled in by ``dead_item``. ``detail`` is what the
    failure kept apart from its reason (a worker keeps the handler's traceback), or ""."""

    id: str
    dead_at_ms: int
    reason: str
    attempts: int
    data: bytes | None = None
    detail: str = ""


def new_token() -> str:
    """A fresh lease token: 128 random bits, hex."""
    return secrets.token_hex(16)


def _chunks(items: Sequence[Any], size: int = v.MAX_BATCH) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _flag(flag: bool) -> bytes:
    return b"1" if flag else b"0"


def add(
    keys: QueueKeys, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0, wait: Wait | None = None
) -> Plan[list[bool]]:
    """add / add_many: one result per item, True when this call created it."""
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    pairs = [add_pair(item) for item in v.batch(items, "items")]
    script = registry()["add"]
    added: list[bool] = []
    for chunk in _chunks(pairs):
        args = (delay_ms, *(part for pair in chunk for part in pair))
        reply = yield from acknowledged(RunScript(script, (keys.queue,), args, wait))
        added.extend(bool(flag) for flag in reply)
    return added


def add_pair(item: object) -> tuple[bytes, bytes]:
    """An (id, payload) pair of add_many."""
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        raise InvalidType(f"each item must be an (id, payload) pair, not {type(item).__name__}")
    return v.encode_new_id(item[0]), v.payload(item[1])


def lease(
    keys: QueueKeys,
    lease_ms: int,
    *,
    count: int = 1,
    block: bool = False,
    timeout_ms: int = 0,
    legacy: bool = False,
    flat: bool = False,
) -> Plan[list[Lease]]:
    """lease / lease_many. Blocking waits with BLMOVE, then claims with the claim script.
    ``flat`` (profile flat) keeps the leased ids in ``<P>:in_flight`` rather than processing.

    A blocking wait is measured on the server's clock (the lease script reports it) and goes in
    steps of at most a second, so that due delayed items are promoted while a worker waits.
    """
    v.duration_ms(lease_ms, "lease_ms")
    v.batch_size(count, "count")
    v.duration_ms(timeout_ms, "timeout_ms", minimum=0)
    if v.flag(block, "block"):
        if count != 1:
            raise InvalidArgument("a blocking lease takes one item (count=1)")
    elif timeout_ms != 0:
        raise InvalidArgument("timeout_ms needs block=True (RWQ-LEASE-014)")
    token = new_token()
    claim_script = registry()["claim"]
    both = (keys.queue, keys.processing)
    deadline: int | None = None
    while True:
        leased, now, due_in = yield from _lease_call(keys, lease_ms, token, count, legacy=legacy, flat=flat)
        if deadline is None and block and timeout_ms:
            deadline = now + timeout_ms  # from the first call's server time (RWQ-LEASE-010)
        if leased or not block:
            return leased
        wait_ms = MAX_BLOCK_STEP_MS
        if deadline is not None:
            if now >= deadline:
                return []
            wait_ms = min(wait_ms, deadline - now)
        if due_in >= 0:
            wait_ms = max(min(wait_ms, due_in), 1)
        moved = yield Call(
            ("BLMOVE", keys.queue, keys.processing, "RIGHT", "LEFT", wait_ms / 1000), keys.queue
        )
        if moved is None:
            continue
        claimed = yield RunScript(
            claim_script, both, (moved, lease_ms, token.encode(), _flag(legacy), _flag(flat))
        )
        if claimed[0] == 1:
            return [Lease(v.decode_id(moved), claimed[1], token, claimed[2])]


def _lease_call(
    keys: QueueKeys, lease_ms: int, token: str, count: int, *, legacy: bool, flat: bool
) -> Plan[tuple[list[Lease], int, int]]:
    """Non-blocking lease calls, under one token, until ``count`` are leased or a call finds
    nothing more (``again`` is 0): the leases, the server's time and the ms until the next
    delayed item is due (-1: none)."""
    script = registry()["lease"]
    leased: list[Lease] = []
    while True:
        args = (lease_ms, token.encode(), count - len(leased), _flag(legacy), _flag(flat))
        again, now, due_in, *entries = yield RunScript(script, (keys.queue, keys.processing), args)
        leased += _leases(entries, token)
        if len(leased) == count or not again:
            return leased, now, due_in


def lease_visit(
    keys: QueueKeys, lease_ms: int, *, legacy: bool = False, flat: bool = False
) -> Plan[tuple[Lease | None, int, int]]:
    """One non-blocking lease of one item, with the server's time and the ms until the next
    delayed item is due (-1: none): a visit of a sharded lease (RWQ-SHARD-004, RWQ-SHARD-007)."""
    v.duration_ms(lease_ms, "lease_ms")
    leased, now, due_in = yield from _lease_call(keys, lease_ms, new_token(), 1, legacy=legacy, flat=flat)
    return (leased[0] if leased else None), now, due_in


def renew(
    keys: QueueKeys, leases: Sequence[Lease], lease_ms: int, *, legacy: bool = False
) -> Plan[list[bool]]:
    """renew / renew_many: True where the caller still held the lease and it was extended."""
    v.duration_ms(lease_ms, "lease_ms")
    pairs = [(v.encode_id(one.id), v.token(one.token)) for one in map(lease_arg, v.batch(leases, "leases"))]
    script = registry()["renew"]
    renewed: list[bool] = []
    for chunk in _chunks(pairs):
        args = (lease_ms, _flag(legacy), *(part for pair in chunk for part in pair))
        reply = yield RunScript(script, (keys.queue,), args)
        renewed.extend(bool(flag) for flag in reply)
    return renewed


def _leases(entries: Sequence[Sequence[Any]], token: str) -> list[Lease]:
    """The ``[id, payload, attempt]`` entries of a lease reply, as leases under ``token``."""
    return [Lease(v.decode_id(raw_id), data, token, attempt) for raw_id, data, attempt in entries]


def _completion(items: Sequence[Lease | str], require_lease: bool) -> tuple[bytes, int, list[bytes]]:
    """The complete script's mode, ARGV entries per item, and the encoded ids (or id, token pairs)."""
    items = v.batch(items, "items")
    if not v.flag(require_lease, "require_lease"):
        return b"any", 1, [v.encode_id(item.id if isinstance(item, Lease) else item) for item in items]
    args: list[bytes] = []
    for item in items:
        if not isinstance(item, Lease):
            raise InvalidArgument("require_lease needs Lease objects (their tokens prove ownership)")
        args += (v.encode_id(item.id), v.token(item.token))
    return b"owner", 2, args


def complete(
    keys: QueueKeys, items: Sequence[Lease | str], *, require_lease: bool = False, wait: Wait | None = None
) -> Plan[list[Outcome]]:
    """complete / complete_many. With ``require_lease`` only a current lease holder completes."""
    mode, step, args = _completion(items, require_lease)
    script = registry()["complete"]
    outcomes: list[Outcome] = []
    for chunk in _chunks(args, v.MAX_BATCH * step):
        reply = yield from acknowledged(
            RunScript(script, (keys.queue, keys.processing), (mode, *chunk), wait)
        )
        outcomes.extend(Outcome(code) for code in reply)
    return outcomes


def complete_and_lease(
    keys: QueueKeys,
    items: Sequence[Lease | str],
    lease_ms: int,
    *,
    count: int = 1,
    require_lease: bool = False,
    legacy: bool = False,
    flat: bool = False,
    wait: Wait | None = None,
) -> Plan[tuple[list[Outcome], list[Lease]]]:
    """Complete 1..1000 items, then lease up to ``count`` without waiting, in one script call.

    A lease not held (``require_lease``) is an outcome, not an error: the items this call leased
    are returned either way (RWQ-NEXT-003).
    """
    v.duration_ms(lease_ms, "lease_ms")
    v.batch_size(count, "count")
    mode, step, args = _completion(items, require_lease)
    v.batch_size(len(args) // step, "items to complete")
    token = new_token()
    completed, (again, _now, _due_in, *entries) = yield from acknowledged(
        RunScript(
            registry()["complete_and_lease"],
            (keys.queue, keys.processing),
            (lease_ms, token.encode(), count, _flag(legacy), _flag(flat), mode, *args),
            wait,
        )
    )
    outcomes = [Outcome(code) for code in completed]
    leased = _leases(entries, token)
    if len(leased) == count or not again:
        return outcomes, leased
    more, _now, _due_in = yield from _lease_call(  # RWQ-NEXT-004
        keys, lease_ms, token, count - len(leased), legacy=legacy, flat=flat
    )
    return outcomes, leased + more


MAX_WAIT_REPLICAS = 1000


def wait_for(replicas: int, timeout_ms: int) -> Wait | None:
    """The WAIT that adds and completes send (None: they do not wait, the default)."""
    v.integer(replicas, "wait_replicas", 0, MAX_WAIT_REPLICAS)
    v.duration_ms(timeout_ms, "wait_timeout_ms")
    return Wait(replicas, timeout_ms) if replicas else None


def acknowledged(command: RunScript) -> Plan[Any]:
    """Run ``command``; with a ``wait``, fewer replicas than asked is NOT_REPLICATED (RWQ-ACK-002)."""
    if command.wait is None:
        return (yield command)
    reply, replicas = yield command
    if replicas < command.wait.replicas:
        raise NotReplicated(
            f"{command.script.name}: {replicas} of {command.wait.replicas} replicas acknowledged the write "
            f"within {command.wait.timeout_ms} ms; it took effect on the primary, and a failover may lose it"
        )
    return reply


def release(
    keys: QueueKeys, leases: Sequence[Lease], *, delay_ms: int = 0, refund_attempt: bool = False
) -> Plan[list[Outcome]]:
    """release: give held items back to the queue at once, or after ``delay_ms``; with
    ``refund_attempt`` the attempt each lease counted is given back (RWQ-RETRY-020)."""
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    head: tuple[bytes | int, ...] = (
        (b"refund", delay_ms) if v.flag(refund_attempt, "refund_attempt") else (delay_ms,)
    )
    pairs = [(v.encode_id(one.id), v.token(one.token)) for one in map(lease_arg, v.batch(leases, "leases"))]
    script = registry()["release"]
    outcomes: list[Outcome] = []
    for chunk in _chunks(pairs):
        args = (*head, *(part for pair in chunk for part in pair))
        reply = yield RunScript(script, (keys.queue, keys.processing), args)
        outcomes.extend(Outcome(code) for code in reply)
    return outcomes


def first(plan: Plan[Sequence[T]]) -> Plan[T | None]:
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
    """Ready, in-flight, delayed and dead counts read at one instant."""
    reply = yield RunScript(registry()["counts"], (keys.queue, keys.processing), ())
    return Counts(*(int(n) for n in reply))


def light_clean(keys: QueueKeys, *, chunk: int = 100, pace_ms: int = 0) -> Plan[CleanReport]:
    """Walk the processing list in bounded chunks, requeueing abandoned items; a paced clean
    (``pace_ms`` > 0) does nothing when another started within ``pace_ms`` (RWQ-CLEAN-007)."""
    v.batch_size(chunk, "chunk")
    v.duration_ms(pace_ms, "pace_ms", minimum=0)
    script = registry()["light_clean"]
    cursor, dropped, promoted, requeued, buried = 0, 0, 0, [], []
    paced = bool(pace_ms)
    while True:
        # Only the pass's first call is paced: a later one may come back to cursor 0.
        args = (cursor, chunk, pace_ms) if paced else (cursor, chunk)
        paced = False
        reply = yield RunScript(script, (keys.queue, keys.processing), args)
        cursor, ids, ghosts, dead, moved = reply
        requeued += [v.decode_id(raw) for raw in ids]
        buried += [v.decode_id(raw) for raw in dead]
        dropped += ghosts
        promoted += moved
        if cursor < 0:
            break
    yield from _trim_dead(keys)
    return CleanReport(tuple(requeued), dropped, tuple(buried), promoted)


def deep_clean(keys: QueueKeys, *, chunk: int = 1000) -> Plan[CleanReport]:
    """Index both lists, SCAN the item keys and requeue orphans; drop ghosts from both lists."""
    v.batch_size(chunk, "chunk")
    script = registry()["deep_clean"]
    three = (keys.queue, keys.processing, keys.deep_clean_index(secrets.token_hex(8)))
    dropped = 0
    requeued: list[str] = []
    item_prefix = keys.prefix.encode("utf-8") + b":item:"

    def scan(cursor: int) -> Call:
        # Only strings are items: a nested queue's lists and hashes are not (RWQ-KEYS-009).
        return Call(
            ("SCAN", cursor, "MATCH", item_prefix + b"*", "COUNT", chunk, "TYPE", "string"), keys.queue
        )

    # The first SCAN page comes before the index: SCAN is the command a role may lack, so a
    # refused deep clean writes nothing (RWQ-SEC-006). Its ids are judged against the index
    # built after it, as every later page's are.
    cursor, found = yield scan(0)
    try:
        for name in (b"queue", b"processing"):
            start = 0
            while start >= 0:
                start, ghosts = yield RunScript(script, three, (b"index", name, start, chunk))
                dropped += ghosts
        while True:
            # Ids longer than RWQ/1 allows (older clients have no limit) are left alone.
            ids = [key[len(item_prefix) :] for key in found]
            ids = [item_id for item_id in ids if 0 < len(item_id) <= v.MAX_ID_BYTES]
            for part in _chunks(ids, chunk):
                reply = yield RunScript(script, three, (b"requeue", *part))
                requeued += [v.decode_id(raw) for raw in reply]
            if int(cursor) == 0:
                break
            cursor, found = yield scan(int(cursor))
    except WrongType:
        # A refused run leaves no index behind (RWQ-DEEP-005): finish checks only the index key.
        yield RunScript(script, three, (b"finish",))
        raise
    yield RunScript(script, three, (b"finish",))
    return CleanReport(tuple(requeued), dropped)


def set_policy(keys: QueueKeys, policy: RetryPolicy | None, *, if_absent: bool = False) -> Plan[bool]:
    """Store the queue's retry policy (None removes it, which stops attempt counting); True when
    written. ``if_absent`` writes it only when the queue has none (RWQ-RETRY-015)."""
    if v.flag(if_absent, "if_absent") and policy is None:
        raise InvalidArgument("if_absent needs a policy to store")
    if policy is None:
        args: tuple[str | int, ...] = ("clear",)
    elif not isinstance(policy, RetryPolicy):
        raise InvalidType(f"policy must be a RetryPolicy or None, not {type(policy).__name__}")
    else:
        if policy.backoff not in ("fixed", "exponential"):
            raise InvalidArgument("backoff must be 'fixed' or 'exponential'")
        for name, limit in _POLICY_LIMITS.items():
            value = getattr(policy, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
                raise InvalidArgument(f"{name} must be an int in 0..{limit}, got {value!r}")
        args = ("default", *policy.fields()) if if_absent else policy.fields()
    return bool((yield RunScript(registry()["set_policy"], (keys.queue,), args)))


_POLICY_LIMITS = {
    "max_attempts": 1_000_000,
    "base_ms": v.MAX_DURATION_MS,
    "cap_ms": v.MAX_DURATION_MS,
    "jitter_pct": 100,
    "dead_max_count": 100_000_000,
    "dead_max_age_ms": v.MAX_DURATION_MS,
}
MAX_STORED_NUMBER = 10**15


def get_policy(keys: QueueKeys) -> Plan[RetryPolicy | None]:
    """The queue's retry policy, or None."""
    try:
        raw: dict[bytes, bytes] = yield Call(("HGETALL", keys.policy), keys.queue)
    except RedisFailure as exc:
        if "WRONGTYPE" not in str(exc):
            raise
        raise WrongType(f"{keys.prefix}:policy holds another Redis type than SPEC 3 gives it") from exc
    if not raw:
        return None
    fields = {key.decode("utf-8", "replace"): value.decode("utf-8", "replace") for key, value in raw.items()}
    backoff: Literal["fixed", "exponential"] = (
        "exponential" if fields.get("backoff") == "exponential" else "fixed"
    )
    # Read the way the scripts read it (RWQ-RETRY-014): fields a later version adds are ignored
    # (RWQ-VER-002), and a value that is not a non-negative integer counts as 0.
    numbers = {name: _stored_int(fields.get(name, "")) for name in _POLICY_LIMITS}
    return RetryPolicy(backoff=backoff, **numbers)


def _stored_int(value: str) -> int:
    """A number as the scripts read it: ASCII decimal digits (``^%d+$``) up to 10**15, else 0."""
    digits = value.lstrip("0")
    if not value or not value.isascii() or not value.isdigit() or len(digits) > 16:
        return 0
    number = int(digits or "0")
    return number if number <= 10**15 else 0


def fail_reason(reason: object) -> bytes:
    """A fail reason as the script takes it: a str of at most 1024 bytes in UTF-8."""
    return _fail_text(reason, "reason", MAX_REASON_BYTES)


MAX_REASON_BYTES = 1024
MAX_DETAIL_BYTES = 8192


def _fail_text(value: object, name: str, limit: int) -> bytes:
    if not isinstance(value, str):
        raise InvalidType(f"{name} must be a str, not {type(value).__name__}")
    raw = value.encode("utf-8", "replace")
    if len(raw) > limit:
        raise InvalidArgument(f"{name} must be at most {limit} bytes of UTF-8, got {len(raw)}")
    return raw


def fail_args(
    reason: object = "",
    *,
    dead: bool = False,
    delay_ms: int | None = None,
    fallback_delay_ms: int = 0,
    detail: str = "",
) -> tuple[bytes, ...]:
    """The fail script's reason, then its options (ARGV 5..7), validated before any I/O: ``dead``
    dead-letters now (RWQ-RETRY-016); ``delay_ms`` retries after exactly that delay
    (RWQ-RETRY-017); ``fallback_delay_ms`` is the delay when the queue has no policy
    (RWQ-RETRY-019); ``detail`` is kept with a dead item (RWQ-RETRY-018)."""
    raw_reason = fail_reason(reason)
    if v.flag(dead, "dead") and delay_ms is not None:
        raise InvalidArgument("dead and delay_ms exclude each other: a dead item is not retried")
    v.duration_ms(fallback_delay_ms, "fallback_delay_ms", minimum=0)
    raw_detail = _fail_text(detail, "detail", MAX_DETAIL_BYTES)
    if dead:
        how, ms = b"dead", 0
    elif delay_ms is not None:
        how, ms = b"delay", v.duration_ms(delay_ms, "delay_ms", minimum=0)
    else:
        how, ms = b"backoff", fallback_delay_ms
    return raw_reason, how, str(ms).encode(), raw_detail


def fail(
    keys: QueueKeys,
    held: Lease,
    reason: str = "",
    *,
    dead: bool = False,
    delay_ms: int | None = None,
    fallback_delay_ms: int = 0,
    detail: str = "",
) -> Plan[FailResult]:
    """Record a failed attempt: retry after the policy's backoff (or the delay asked), or
    dead-letter the item (its attempts used up, or ``dead``)."""
    lease_arg(held)
    raw_reason, *options = fail_args(
        reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail
    )
    random = secrets.randbelow(1_000_000)
    args: tuple[bytes | int, ...] = (v.encode_id(held.id), v.token(held.token), raw_reason, random, *options)
    status, delay = yield RunScript(registry()["fail"], (keys.queue, keys.processing), args)
    if status == -1:
        raise LeaseLost(f"the lease on {held.id!r} is no longer held by this caller")
    if status == 2:
        yield from _trim_dead(keys)
    return FailResult(FailOutcome(status), int(delay))


def _dead_item(raw: Sequence[Any]) -> DeadItem:
    """A dead item as the dead script reports it; info written by any client is read field by
    field (RWQ-RETRY-009)."""
    try:
        info = json.loads(raw[2].decode("utf-8", "replace"))
    except ValueError:
        info = {}
    if not isinstance(info, dict):
        info = {}
    reason, attempts, detail = info.get("reason"), info.get("attempts"), info.get("detail")
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 0:
        attempts = 0
    return DeadItem(
        v.decode_id(raw[0]),
        int(raw[1]),
        reason if isinstance(reason, str) else "",
        attempts,
        raw[3] if len(raw) > 3 else None,
        detail if isinstance(detail, str) else "",
    )


def dead_items(keys: QueueKeys, *, offset: int = 0, count: int = 100) -> Plan[list[DeadItem]]:
    """Dead-lettered items, newest first, without payloads."""
    v.integer(offset, "offset", 0, 100_000_000)
    v.batch_size(count, "count")
    reply = yield RunScript(registry()["dead"], (keys.queue,), (b"list", offset, count))
    return [_dead_item(entry) for entry in reply]


def dead_item(keys: QueueKeys, item_id: str) -> Plan[DeadItem | None]:
    """One dead-lettered item with its payload, or None."""
    reply = yield RunScript(registry()["dead"], (keys.queue,), (b"get", v.encode_id(item_id)))
    return None if reply is None else _dead_item(reply)


def dead_action(keys: QueueKeys, action: Literal["requeue", "purge"], ids: Sequence[str]) -> Plan[list[bool]]:
    """Requeue dead items as new ready items (attempts reset), or purge them."""
    raw = [v.encode_id(item_id) for item_id in v.batch(ids, "ids")]
    done: list[bool] = []
    for chunk in _chunks(raw):
        reply = yield RunScript(registry()["dead"], (keys.queue,), (action.encode(), *chunk))
        done.extend(bool(flag) for flag in reply)
    return done


def _trim_dead(keys: QueueKeys) -> Plan[None]:
    """Apply the dead-letter retention, at most 1000 removals per call."""
    while True:
        removed, _excess = yield RunScript(registry()["dead"], (keys.queue,), (b"trim",))
        if removed < 1000:
            return


def check_server(keys: QueueKeys) -> Plan[None]:
    """Refuse servers older than 6.2; warn when the eviction policy is not ``noeviction``.

    Both come from ``INFO`` (never ``CONFIG``, which no ACL role of SPEC §13 gets); a server that
    refuses ``INFO`` leaves them unknown, and the operation goes on.
    """
    info: Any = yield Call(("INFO", "server"), keys.queue, errors_as_values=True)
    if not isinstance(info, dict):
        return
    version = tuple(int(part) for part in str(info["redis_version"]).split(".")[:2])
    if version < MIN_REDIS:
        raise UnsupportedServer(f"RWQ/1 needs Redis >= 6.2, the server is {info['redis_version']}")
    memory: Any = yield Call(("INFO", "memory"), keys.queue, errors_as_values=True)
    if isinstance(memory, dict):
        value = memory.get("maxmemory_policy")
        if isinstance(value, bytes):
            value = value.decode()
        if value is not None and value != "noeviction":
            warnings.warn(
                f"Redis maxmemory-policy is {value!r}, not 'noeviction': an evicted lease or item "
                "means a duplicate run or a lost item",
                RwqWarning,
                stacklevel=4,
            )
