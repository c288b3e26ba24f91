"""An executable model of the RWQ/1 core profile (SPEC §3-§7), written from the SPEC, not the client.

One :class:`QueueModel` is one queue at one instant of a virtual clock: its items, the ready
order, the processing list, and both generations of lease keys with their tokens and expiry
times. Each method is one script call (or one client operation made of several) and returns
what a conforming implementation reports; the state changes exactly as Redis would.

Lists are held in the order of the runner's logical state (``state.py``): ``queue`` next to be
leased first, ``processing`` oldest lease first. So an ``LPUSH`` appends, taking from the right
of ``P:queue`` pops the front, ``LREM key -1`` (from the right) removes the first occurrence and
``LREM key 1`` (from the left) the last one.

A key with a TTL lives while ``now <= expiry`` (Redis expires a key once ``now > when``; its
``PTTL`` is 0 at the boundary). Tokens are opaque strings the caller chooses; a lease call's
token is fresh, so equal tokens mean the same lease call.

Extension point for the profiles: a profile model subclasses :class:`QueueModel` and overrides
:meth:`~QueueModel.grant` (``retry`` counts the attempt, or dead-letters and refuses) and
:meth:`~QueueModel.requeue_abandoned` (``retry`` dead-letters exhausted items), wraps
:meth:`~QueueModel.lease` and :meth:`~QueueModel.light_clean` to promote due items first
(``delay``), and extends :meth:`~QueueModel.state` and :meth:`~QueueModel.key_names` with its keys.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .encoding import Json, encode_bytes

DONE, GONE, LEASE_LOST = "done", "gone", "lease_lost"
"""Per-item outcomes of complete and release, as the adapter protocol names them."""


@dataclass(frozen=True)
class Held:
    """A lease key: its token and the virtual time it expires at."""

    token: str
    expires_ms: int


def remove_first(entries: list[str], item_id: str) -> bool:
    """``LREM key -1 id`` on a list held oldest first; whether an entry was removed."""
    if item_id in entries:
        entries.remove(item_id)
        return True
    return False


def remove_last(entries: list[str], item_id: str) -> bool:
    """``LREM key 1 id`` on a list held oldest first; whether an entry was removed."""
    for index in range(len(entries) - 1, -1, -1):
        if entries[index] == item_id:
            del entries[index]
            return True
    return False


@dataclass
class QueueModel:
    """One RWQ/1 queue (core profile) on a virtual clock in milliseconds."""

    now_ms: int = 0
    items: dict[str, bytes] = field(default_factory=dict)
    queue: list[str] = field(default_factory=list)
    processing: list[str] = field(default_factory=list)
    leases: dict[str, Held] = field(default_factory=dict)
    legacy_leases: dict[str, Held] = field(default_factory=dict)

    # -- time and leases -------------------------------------------------------------------
    def advance(self, ms: int) -> None:
        """Move the clock forward; lease keys past their expiry disappear."""
        self.now_ms += ms
        for keys in (self.leases, self.legacy_leases):
            for item_id in [i for i, held in keys.items() if held.expires_ms < self.now_ms]:
                del keys[item_id]

    def token_of(self, item_id: str) -> str | None:
        """The token in ``P:lease:<id>``, if that key exists."""
        held = self.leases.get(item_id)
        return held.token if held else None

    def held(self, item_id: str) -> bool:
        """Whether a lease or a legacy lease key exists for ``item_id``."""
        return item_id in self.leases or item_id in self.legacy_leases

    def set_lease(self, item_id: str, token: str, lease_ms: int) -> None:
        """``SET P:lease:<id> token PX lease_ms``."""
        self.leases[item_id] = Held(token, self.now_ms + lease_ms)

    def set_legacy_lease(self, item_id: str, token: str, lease_ms: int) -> None:
        """``SET P:leased_by_session:<id> token PX lease_ms`` (a redis-work-queue 0.1.x lease)."""
        self.legacy_leases[item_id] = Held(token, self.now_ms + lease_ms)

    def orphans(self) -> list[str]:
        """Existing items in neither list and without a lease, in id order."""
        return sorted(
            item_id
            for item_id in self.items
            if item_id not in self.queue and item_id not in self.processing and not self.held(item_id)
        )

    # -- operations ------------------------------------------------------------------------
    def add_many(self, pairs: Iterable[tuple[str, bytes]]) -> list[bool]:
        """One ``add`` script call (RWQ-ADD-001..006)."""
        results = []
        for item_id, data in pairs:
            if item_id in self.items:
                results.append(False)
                continue
            self.items[item_id] = data
            self.leases.pop(item_id, None)
            self.legacy_leases.pop(item_id, None)
            self.queue.append(item_id)
            results.append(True)
        return results

    def lease(self, count: int, lease_ms: int, token: str) -> list[tuple[str, bytes]]:
        """One ``lease`` script call: the (id, payload) pairs granted, in lease order."""
        granted: list[tuple[str, bytes]] = []
        while len(granted) < count and self.queue:
            item_id = self.queue.pop(0)
            self.processing.append(item_id)
            if item_id in self.items and not self.held(item_id):
                data = self.items[item_id]
                if self.grant(item_id, token, lease_ms):
                    granted.append((item_id, data))
            elif item_id not in self.items or self.processing.count(item_id) >= 2:
                remove_last(self.processing, item_id)  # a ghost, or a duplicate of a held item
        return granted

    def grant(self, item_id: str, token: str, lease_ms: int) -> bool:
        """A lease or claim may grant ``item_id``; whether it did (a profile may refuse here)."""
        self.set_lease(item_id, token, lease_ms)
        return True

    def renew(self, item_id: str, token: str, lease_ms: int) -> bool:
        """RWQ-RENEW-001/002: only the current holder of an existing item renews."""
        if self.token_of(item_id) != token or item_id not in self.items:
            return False
        self.set_lease(item_id, token, lease_ms)
        return True

    def complete(self, item_id: str, token: str | None = None) -> str:
        """``complete`` in mode ``any`` (``token`` None) or ``owner``."""
        if token is not None and self.token_of(item_id) != token:
            return LEASE_LOST
        deleted = self.items.pop(item_id, None) is not None
        unlisted = not remove_first(self.processing, item_id)
        self.leases.pop(item_id, None)
        self.legacy_leases.pop(item_id, None)
        if deleted and unlisted:
            remove_last(self.queue, item_id)
        return DONE if deleted else GONE

    def release(self, item_id: str, token: str) -> str:
        """``release`` without delay (RWQ-RELEASE-001..003): an item that is gone is reported
        gone to anyone, and its lease keys and a processing entry go with it."""
        if item_id in self.items and self.token_of(item_id) != token:
            return LEASE_LOST
        self.leases.pop(item_id, None)
        self.legacy_leases.pop(item_id, None)
        remove_first(self.processing, item_id)
        if item_id not in self.items:
            return GONE
        self.queue.append(item_id)
        return DONE

    def light_clean(self) -> tuple[list[str], int]:
        """A whole ``light_clean`` (every chunk): requeued ids in order, ghosts dropped."""
        requeued, dropped = [], 0
        for item_id in list(self.processing):  # every entry, oldest first, whatever the chunk size
            if self.held(item_id):
                continue
            remove_first(self.processing, item_id)
            if item_id in self.items:
                self.requeue_abandoned(item_id)
                requeued.append(item_id)
            else:
                dropped += 1
        return requeued, dropped

    def requeue_abandoned(self, item_id: str) -> None:
        """``light_clean`` found ``item_id`` abandoned (profiles hook in here)."""
        self.queue.append(item_id)

    def deep_clean(self) -> tuple[list[str], int]:
        """A whole ``deep_clean``: orphans requeued (SCAN order; here id order), ghosts dropped."""
        dropped = 0
        for entries in (self.queue, self.processing):
            kept = [item_id for item_id in entries if item_id in self.items]
            dropped += len(entries) - len(kept)
            entries[:] = kept
        orphans = self.orphans()
        self.queue += orphans
        return orphans, dropped

    # -- observation -----------------------------------------------------------------------
    def remaining(self, held: Held) -> int:
        """A lease key's ``PTTL``."""
        return held.expires_ms - self.now_ms

    def state(self) -> dict[str, Json]:
        """The logical state as ``state.logical_state`` reads it from Redis."""
        return {
            "queue": list(self.queue),
            "processing": list(self.processing),
            "in_flight": {},
            "items": {item_id: encode_bytes(data) for item_id, data in sorted(self.items.items())},
            "leases": {i: {"remaining_ms": self.remaining(h)} for i, h in sorted(self.leases.items())},
            "legacy_leases": {
                i: {"remaining_ms": self.remaining(h)} for i, h in sorted(self.legacy_leases.items())
            },
        }

    def key_names(self) -> list[str]:
        """Every key the queue holds, as suffixes of ``P:`` (empty lists do not exist)."""
        names = [name for name in ("queue", "processing") if getattr(self, name)]
        names += [f"item:{item_id}" for item_id in sorted(self.items)]
        names += [f"lease:{item_id}" for item_id in sorted(self.leases)]
        names += [f"leased_by_session:{item_id}" for item_id in sorted(self.legacy_leases)]
        return names

    def counts(self) -> dict[str, int]:
        """``counts`` as the adapter protocol reports it."""
        return {"queued": len(self.queue), "processing": len(self.processing)}
