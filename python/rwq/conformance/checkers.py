"""Checkers for the history of a concurrent workload (``workload.py``), Jepsen style.

A history is a list of :class:`Event`: each operation of a session is an ``invoke`` followed by
its completion, ``ok`` (it took effect, with its result), ``fail`` (it certainly did not: an
``INVALID_ARGUMENT`` or ``LEASE_LOST`` error) or ``info`` (unknown: ``REDIS_ERROR``, a crash or a
timeout). Method names and values are the adapter protocol's (``lease_many``, ``{"lease": ...}``).
Every event carries a bound on the virtual (server) clock, ``vt_ms``: an invocation the lowest
time the operation can have taken effect at, a completion the highest; ``at_ms`` is the runner's
monotonic clock, for people reading the history.

The checkers report :class:`Anomaly` records:

- ``lost``: an acknowledged add never completed, not even by an operation of unknown outcome
  (RWQ-DELIVERY-001);
- ``double-lease``: an item delivered while an earlier delivery's lease was certainly held,
  unexpired by the virtual clock and not ended by a release or complete that may have taken
  effect (RWQ-DELIVERY-002). A crashed holder explains nothing by itself: its lease key lives on;
- ``delivered-after-complete``: a delivery invoked after the item's first completer returned
  (RWQ-DELIVERY-003);
- ``double-complete``: two ``complete`` calls on one item both told they were first
  (RWQ-COMPLETE-002);
- ``corrupted``: a delivered payload that differs from the one added, or an id never added
  (RWQ-ENC-002, RWQ-GHOST-001);
- ``unexplained-error``: ``REDIS_ERROR`` on a session no connection fault hit, e.g. after a
  ``SCRIPT FLUSH`` (RWQ-SCRIPT-002);
- ``stray-keys``: keys left under the namespace after the final drain (RWQ-KEYS-005), but for
  the retry profile's keys the run legitimately leaves (``allowed``: its policy and dead set).

With the ``retry`` and ``delay`` profiles, a history also holds ``set_policy``, ``fail``, adds and
releases with ``delay_ms``, and the drain's final ``dead_list`` and ``dead_get`` calls; then:

- ``lost`` also spares an item found in the final dead set (the last ``ok`` ``dead_list``);
- ``corrupted`` also covers a dead item whose payload (``dead_get``) differs from the one added,
  or that was never added (RWQ-RETRY-008);
- ``early-delivery``: an item delivered certainly before the due time an add or release with
  ``delay_ms``, or a ``fail`` that scheduled a retry, gave it (RWQ-DELAY-005, RWQ-RETRY-004);
- ``attempts``: a lease's attempt number outside 1..``max_attempts``, or not above the attempt
  of a delivery of the item that certainly came before it (RWQ-RETRY-002, RWQ-RETRY-003);
- ``wrong-backoff``: a ``fail`` whose outcome or delay disagrees with the policy and the lease's
  attempt number (only checked for a ``fixed`` policy without jitter, RWQ-RETRY-004).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .encoding import Json, decode_bytes

INVOKE, OK, FAIL, INFO = "invoke", "ok", "fail", "info"


@dataclass(frozen=True)
class Event:
    """One line of the history."""

    index: int
    process: str
    type: str
    f: str
    value: Json
    vt_ms: int
    at_ms: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "process": self.process,
            "type": self.type,
            "f": self.f,
            "value": self.value,
            "vt_ms": self.vt_ms,
            "at_ms": self.at_ms,
        }


@dataclass(frozen=True)
class Op:
    """An invocation and its completion (``info`` with no value if it never completed)."""

    process: str
    f: str
    params: Json
    type: str
    result: Json
    start: int
    end: int
    vt_low: int
    vt_high: int


@dataclass(frozen=True)
class Anomaly:
    """Something the history shows that RWQ/1 forbids."""

    kind: str
    requirement: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "requirement": self.requirement, "message": self.message}


def operations(history: Sequence[Event]) -> list[Op]:
    """Pair each invocation with its process's next completion (completions without one, such
    as clock jumps, are left out)."""
    pending: dict[str, Event] = {}
    ops: list[Op] = []
    for event in history:
        if event.type == INVOKE:
            pending[event.process] = event
        elif event.process in pending:
            start = pending.pop(event.process)
            ops.append(
                Op(
                    event.process,
                    start.f,
                    start.value,
                    event.type,
                    event.value,
                    start.index,
                    event.index,
                    start.vt_ms,
                    event.vt_ms,
                )
            )
    last = history[-1].index + 1 if history else 0
    ops += [Op(e.process, e.f, e.value, INFO, None, e.index, last, e.vt_ms, 10**15) for e in pending.values()]
    return sorted(ops, key=lambda op: op.start)


def _id(value: Json) -> str:
    return decode_bytes(value).decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Delivery:
    """One item handed out by an ``ok`` lease."""

    op: Op
    id: str
    data: bytes
    token: str
    lease_ms: int
    attempt: int | None = None


@dataclass(frozen=True)
class Touch:
    """One item's part of an operation: ``effect`` True (it happened), None (maybe) or False."""

    op: Op
    id: str
    token: str | None
    effect: bool | None


def _leases(op: Op) -> list[Json]:
    if op.type != OK:
        return []
    if op.f == "complete_and_lease":
        return list(op.result["leases"])
    return [op.result] if op.f == "lease" and op.result is not None else list(op.result or [])


def deliveries(ops: Sequence[Op]) -> list[Delivery]:
    found = []
    for op in ops:
        if op.f in ("lease", "lease_many", "complete_and_lease"):
            for lease in _leases(op):
                found.append(
                    Delivery(
                        op,
                        _id(lease["id"]),
                        decode_bytes(lease["data"]),
                        lease["token"],
                        op.params["lease_ms"],
                        lease.get("attempt"),
                    )
                )
    return found


def touches(ops: Sequence[Op], method: str, done: Sequence[Json]) -> Iterator[Touch]:
    """The per-item parts of every ``complete``, ``release`` or ``renew`` operation (single or
    batch; ``complete_and_lease`` counts as a complete); a part took effect when the operation
    is ``ok`` and its outcome is in ``done``."""
    for op in ops:
        if op.f == method:
            targets, outcomes = [op.params], [op.result]
        elif method == "complete" and op.f == "complete_and_lease":
            targets = op.params["items"]
            outcomes = op.result["outcomes"] if op.type == OK else [None] * len(targets)
        elif op.f == f"{method}_many":
            many = op.params["items"] if method == "complete" else [{"lease": x} for x in op.params["leases"]]
            targets, outcomes = many, op.result if op.type == OK else [None] * len(many)
        else:
            continue
        for target, outcome in zip(targets, outcomes, strict=True):
            lease = target.get("lease")
            item_id = _id(lease["id"] if lease else target["id"])
            effect = None if op.type == INFO else op.type == OK and outcome in done
            yield Touch(op, item_id, lease["token"] if lease else None, effect)


def fails(ops: Sequence[Op]) -> Iterator[Touch]:
    """Every ``fail``: whatever its outcome (retry, dead or gone) it ends the caller's lease."""
    for op in ops:
        if op.f == "fail":
            lease = op.params["lease"]
            effect = None if op.type == INFO else op.type == OK
            yield Touch(op, _id(lease["id"]), lease["token"], effect)


def dead_set(ops: Sequence[Op]) -> dict[str, bytes | None]:
    """The final dead set: the ids of the last ``ok`` ``dead_list``, with the payloads ``dead_get``
    returned afterwards (None when unknown)."""
    last = max(
        (op for op in ops if op.f == "dead_list" and op.type == OK), key=lambda op: op.end, default=None
    )
    if last is None:
        return {}
    dead: dict[str, bytes | None] = {_id(item["id"]): None for item in last.result or []}
    for op in ops:
        if op.f == "dead_get" and op.type == OK and op.start > last.end and isinstance(op.result, dict):
            dead[_id(op.result["id"])] = decode_bytes(op.result["data"])
    return dead


def policy(ops: Sequence[Op]) -> dict[str, Any] | None:
    """The retry policy of the last ``ok`` ``set_policy`` (None: no policy was set)."""
    found = None
    for op in ops:
        if op.f == "set_policy" and op.type == OK:
            found = op.params["policy"]
    return found if isinstance(found, dict) else None


def _added(ops: Sequence[Op]) -> dict[str, tuple[bytes, bool]]:
    """Every id an add was invoked for: its payload, and whether an add was acknowledged."""
    added: dict[str, tuple[bytes, bool]] = {}
    for op in ops:
        if op.f not in ("add", "add_many"):
            continue
        items = [op.params] if op.f == "add" else op.params["items"]
        results = ([op.result] if op.f == "add" else op.result) if op.type == OK else [None] * len(items)
        for item, result in zip(items, results, strict=True):
            item_id = _id(item["id"])
            acked = op.type == OK and result is True
            added[item_id] = (decode_bytes(item["data"]), acked or added.get(item_id, (b"", False))[1])
    return added


def _completions(ops: Sequence[Op]) -> list[Touch]:
    return list(touches(ops, "complete", (True, "done")))


RELEASED = (True, False, "done", "gone")
"""Release outcomes that clear the caller's lease (released, or the item was gone)."""


def check_lost(ops: Sequence[Op]) -> list[Anomaly]:
    completed = {touch.id for touch in _completions(ops) if touch.effect is not False}
    dead = dead_set(ops)
    return [
        Anomaly(
            "lost",
            "RWQ-DELIVERY-001",
            f"item {item_id!r} was added (acknowledged) but neither completed nor dead-lettered",
        )
        for item_id, (_, acked) in sorted(_added(ops).items())
        if acked and item_id not in completed and item_id not in dead
    ]


def check_double_complete(ops: Sequence[Op]) -> list[Anomaly]:
    firsts: dict[str, list[Touch]] = defaultdict(list)
    for touch in _completions(ops):
        if touch.effect:
            firsts[touch.id].append(touch)
    return [
        Anomaly(
            "double-complete",
            "RWQ-COMPLETE-002",
            f"item {item_id!r}: {len(found)} completes were told they were first "
            f"(events {', '.join(str(t.op.end) for t in found)})",
        )
        for item_id, found in sorted(firsts.items())
        if len(found) > 1
    ]


def check_after_complete(ops: Sequence[Op]) -> list[Anomaly]:
    first_done: dict[str, int] = {}
    for touch in _completions(ops):
        if touch.effect:
            first_done[touch.id] = min(first_done.get(touch.id, touch.op.end), touch.op.end)
    return [
        Anomaly(
            "delivered-after-complete",
            "RWQ-DELIVERY-003",
            f"item {d.id!r} delivered to {d.op.process} (event {d.op.end}) after its first completer "
            f"returned (event {first_done[d.id]})",
        )
        for d in deliveries(ops)
        if d.id in first_done and d.op.start > first_done[d.id]
    ]


def check_corrupted(ops: Sequence[Op]) -> list[Anomaly]:
    added = _added(ops)
    found = []
    for d in deliveries(ops):
        if d.id not in added:
            found.append(
                Anomaly(
                    "corrupted",
                    "RWQ-GHOST-001",
                    f"{d.op.process} was delivered {d.id!r}, which was never added (event {d.op.end})",
                )
            )
        elif d.data != added[d.id][0]:
            found.append(
                Anomaly(
                    "corrupted",
                    "RWQ-ENC-002",
                    f"item {d.id!r} delivered with payload "
                    f"{d.data!r}, added with {added[d.id][0]!r} (event {d.op.end})",
                )
            )
    for item_id, payload in sorted(dead_set(ops).items()):
        if item_id not in added:
            found.append(Anomaly("corrupted", "RWQ-RETRY-008", f"dead item {item_id!r} was never added"))
        elif payload is not None and payload != added[item_id][0]:
            found.append(
                Anomaly(
                    "corrupted",
                    "RWQ-RETRY-008",
                    f"dead item {item_id!r} kept payload {payload!r}, added with {added[item_id][0]!r}",
                )
            )
    return found


def _due_times(ops: Sequence[Op]) -> Iterator[tuple[Op, str, int, str]]:
    """``(op, id, earliest due time, requirement)`` for every item an operation certainly or
    possibly made delayed: an add or release with ``delay_ms`` and a ``fail`` that scheduled a
    retry after a backoff."""
    for op in ops:
        if op.type == FAIL:
            continue
        delay = op.params.get("delay_ms", 0) if isinstance(op.params, dict) else 0
        if op.f in ("add", "add_many") and delay > 0:
            for item in [op.params] if op.f == "add" else op.params["items"]:
                yield op, _id(item["id"]), op.vt_low + delay, "RWQ-DELAY-005"
        elif op.f == "release" and delay > 0 and op.type == OK and op.result is True:
            yield op, _id(op.params["lease"]["id"]), op.vt_low + delay, "RWQ-DELAY-005"
        elif op.f == "fail" and op.type == OK and op.result.get("outcome") == "retry":
            backoff = op.result.get("delay_ms", 0)
            if backoff > 0:
                yield op, _id(op.params["lease"]["id"]), op.vt_low + backoff, "RWQ-RETRY-004"


def check_early_delivery(ops: Sequence[Op]) -> list[Anomaly]:
    """A delivery that certainly took effect before a due time it certainly came after. An add
    is the item's first appearance, so any delivery counts; a release or fail must have returned
    before the delivery was invoked."""
    by_item: dict[str, list[Delivery]] = defaultdict(list)
    for d in deliveries(ops):
        by_item[d.id].append(d)
    found = []
    for op, item_id, due, requirement in _due_times(ops):
        for d in by_item[item_id]:
            after = op.f.startswith("add") or op.end < d.op.start
            if after and d.op.vt_high < due:
                found.append(
                    Anomaly(
                        "early-delivery",
                        requirement,
                        f"item {item_id!r} delivered to {d.op.process} (event {d.op.end}) by virtual time "
                        f"{d.op.vt_high}, before its due time {due} (set by {op.f} at event {op.end})",
                    )
                )
    return found


def check_attempts(ops: Sequence[Op]) -> list[Anomaly]:
    """Under a policy, every lease reports an attempt in 1..max_attempts (0: no limit), higher
    than that of every delivery of the item that certainly came before it."""
    rules = policy(ops)
    if rules is None:
        return []
    set_at = max(op.end for op in ops if op.f == "set_policy" and op.type == OK)
    limit = rules["max_attempts"] or 10**15
    by_item: dict[str, list[Delivery]] = defaultdict(list)
    found = []
    for d in deliveries(ops):
        if d.op.start < set_at:
            continue
        attempt = d.attempt
        if attempt is None or not 1 <= attempt <= limit:
            found.append(
                Anomaly(
                    "attempts",
                    "RWQ-RETRY-003" if attempt is not None and attempt > limit else "RWQ-RETRY-002",
                    f"item {d.id!r} delivered to {d.op.process} (event {d.op.end}) with attempt {attempt}, "
                    f"outside 1..{rules['max_attempts']}",
                )
            )
        for earlier in by_item[d.id]:
            if earlier.op.end < d.op.start and attempt is not None and (earlier.attempt or 0) >= attempt:
                found.append(
                    Anomaly(
                        "attempts",
                        "RWQ-RETRY-002",
                        f"item {d.id!r} delivered with attempt {attempt} (event {d.op.end}) after a delivery "
                        f"with attempt {earlier.attempt} (event {earlier.op.end})",
                    )
                )
        by_item[d.id].append(d)
    return found


def check_backoff(ops: Sequence[Op]) -> list[Anomaly]:
    """With a fixed policy without jitter, a ``fail`` of a lease with attempt ``n`` dead-letters
    the item when ``n >= max_attempts`` (not 0), and otherwise retries it after ``base_ms``."""
    rules = policy(ops)
    if rules is None or rules["backoff"] != "fixed" or rules["jitter_pct"] != 0:
        return []
    found = []
    for op in ops:
        if op.f != "fail" or op.type != OK or op.result.get("outcome") not in ("retry", "dead"):
            continue
        attempt = op.params["lease"].get("attempt", 0)
        dead = rules["max_attempts"] != 0 and attempt >= rules["max_attempts"]
        expected = (
            {"outcome": "dead", "delay_ms": 0} if dead else {"outcome": "retry", "delay_ms": rules["base_ms"]}
        )
        got = {"outcome": op.result.get("outcome"), "delay_ms": op.result.get("delay_ms")}
        if got != expected:
            found.append(
                Anomaly(
                    "wrong-backoff",
                    "RWQ-RETRY-004",
                    f"{op.process} fail of attempt {attempt} (event {op.end}) returned {got}, "
                    f"expected {expected}",
                )
            )
    return found


def _min_expiry(first: Delivery, second: Op, renewals: Sequence[Touch]) -> int:
    """The earliest virtual time ``first``'s lease can expire at, as of ``second``'s grant: the
    smallest expiry set by the grant or a renewal that may have been the last to act before it
    (one that certainly acted after it, and before ``second`` started, rules it out)."""
    setters = [(first.op, first.lease_ms, True)]
    setters += [
        (touch.op, touch.op.params["lease_ms"], bool(touch.effect))
        for touch in renewals
        if touch.token == first.token and touch.effect is not False and touch.op.start < second.end
    ]
    return min(
        op.vt_low + lease_ms
        for op, lease_ms, _ in setters
        if not any(sure and op.end < later.start and later.end < second.start for later, _, sure in setters)
    )


def _held_at(first: Delivery, second: Delivery, ends: Sequence[Touch], renewals: Sequence[Touch]) -> bool:
    """Whether ``first``'s lease was certainly held when ``second`` was granted, granting that
    ``first`` was granted before it. ``ends``: the item's completes (by anyone) and releases
    (by the lease's token) that may have taken effect."""
    if any(
        t.op.start < second.op.end for t in ends if t.op.f.startswith("complete") or t.token == first.token
    ):
        return False  # it may have been ended first
    return second.op.vt_high <= _min_expiry(first, second.op, renewals)


def check_double_lease(ops: Sequence[Op]) -> list[Anomaly]:
    by_item: dict[str, list[Delivery]] = defaultdict(list)
    for d in deliveries(ops):
        by_item[d.id].append(d)
    ends: dict[str, list[Touch]] = defaultdict(list)
    for touch in itertools.chain(_completions(ops), touches(ops, "release", RELEASED), fails(ops)):
        if touch.effect is not False:
            ends[touch.id].append(touch)
    renewals: dict[str, list[Touch]] = defaultdict(list)
    for touch in touches(ops, "renew", (True,)):
        renewals[touch.id].append(touch)
    found = []
    for item_id, items in sorted(by_item.items()):
        for x, y in itertools.combinations(items, 2):
            end, rn = ends[item_id], renewals[item_id]
            if x.op.end < y.op.start:
                double = _held_at(x, y, end, rn)
            elif y.op.end < x.op.start:
                double = _held_at(y, x, end, rn)
            else:  # concurrent: whichever came first, it was held when the other was granted
                double = _held_at(x, y, end, rn) and _held_at(y, x, end, rn)
            if double:
                found.append(
                    Anomaly(
                        "double-lease",
                        "RWQ-DELIVERY-002",
                        f"item {item_id!r} delivered to {y.op.process} (event {y.op.end}) while the lease "
                        f"{x.op.process} got at event {x.op.end} was held and unexpired",
                    )
                )
    return found


def check_errors(ops: Sequence[Op]) -> list[Anomaly]:
    """``REDIS_ERROR`` on a session whose connections no fault hit since its previous operation
    started: the server was up, so the client failed by itself (after a ``SCRIPT FLUSH``, say)."""
    faults: dict[str, list[Op]] = defaultdict(list)
    for op in ops:
        if op.process == "nemesis" and op.f in ("kill-connections", "stall-kill", "kill-process"):
            for worker in op.params["workers"]:
                faults[worker].append(op)
    found: list[Anomaly] = []
    since: dict[str, int] = {}  # process -> where its previous operation started
    for op in ops:
        previous, since[op.process] = since.get(op.process, -1), op.start
        if op.type != INFO or not isinstance(op.result, dict) or op.result.get("code") != "REDIS_ERROR":
            continue
        if not any(fault.start < op.end and fault.end > previous for fault in faults[op.process]):
            found.append(
                Anomaly(
                    "unexplained-error",
                    "RWQ-SCRIPT-002",
                    f"{op.process} {op.f} failed with REDIS_ERROR (event {op.end}) though no fault hit its "
                    f"connections: {op.result.get('message', '')}",
                )
            )
    return found


def check_stray_keys(final_keys: Sequence[str], allowed: Collection[str] = ()) -> list[Anomaly]:
    return [
        Anomaly("stray-keys", "RWQ-KEYS-005", f"after the drain, key {key} is left under the namespace")
        for key in final_keys
        if key not in allowed
    ]


def check(
    history: Sequence[Event], final_keys: Sequence[str], allowed: Collection[str] = ()
) -> list[Anomaly]:
    """Every anomaly the history and the keys left after the drain (but ``allowed``) show."""
    ops = operations(history)
    return [
        *check_lost(ops),
        *check_early_delivery(ops),
        *check_attempts(ops),
        *check_backoff(ops),
        *check_double_lease(ops),
        *check_after_complete(ops),
        *check_double_complete(ops),
        *check_corrupted(ops),
        *check_errors(ops),
        *check_stray_keys(final_keys, allowed),
    ]
