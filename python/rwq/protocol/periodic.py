"""Profile periodic (SPEC §23): schedules, their slots, and the plans of the ``schedule`` and
``fire`` scripts.

Each plan validates all of its arguments before its one script call, so bad input raises
:class:`~rwq.errors.InvalidArgument` and nothing reaches Redis. Slots are computed from the
server's time carried by the replies (RWQ-SCHED-011), never from this process's clock.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument, InvalidType
from . import validation as v
from .commands import Plan, RunScript
from .cron import CronSchedule
from .operations import QueueKeys
from .scripts import registry

MIN_EVERY_MS, MAX_EVERY_MS = 1000, 31_536_000_000
MAX_GRACE_MS = 86_400_000
GRACE_MS = 60_000
"""The default ``grace_ms``: a slot at most this late still fires under ``missed = skip``."""
MAX_CRON_BYTES = 200
MAX_SLOTS = 100
"""The most slots one ``fire`` call takes."""
MAX_SLOT = 10**15
LIST_COUNT = 1000
"""How many schedules one ``schedule list`` call asks for."""
REFRESH_MS = 10_000
"""The longest a scheduler waits between ticks (RWQ-SCHED-012, -018)."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")
_TZ = re.compile(r"[A-Za-z0-9_+/-]{1,64}")
_CRON_CHARS = re.compile(r"[A-Za-z0-9*/,@ \t-]+")
MISSED = ("skip", "once")


@dataclass(frozen=True, slots=True)
class Schedule:
    """A definition (SPEC §23.1): exactly one of ``every_ms`` (slots ``k·every_ms + offset_ms``)
    or ``cron`` (a 5-field expression in zone ``tz``); ``missed`` and ``grace_ms`` say what
    happens to late slots. Build one with :meth:`every` or :meth:`cron_in`."""

    every_ms: int | None = None
    offset_ms: int = 0
    cron: str | None = None
    tz: str = "UTC"
    missed: str = "skip"
    grace_ms: int = GRACE_MS

    @classmethod
    def every(
        cls, every_ms: int, *, offset_ms: int = 0, missed: str = "skip", grace_ms: int = GRACE_MS
    ) -> Schedule:
        """Every ``every_ms`` ms, on the grid ``k·every_ms + offset_ms`` from the epoch."""
        return cls(every_ms=every_ms, offset_ms=offset_ms, missed=missed, grace_ms=grace_ms).checked()

    @classmethod
    def cron_in(
        cls, expr: str, tz: str = "UTC", *, missed: str = "skip", grace_ms: int = GRACE_MS
    ) -> Schedule:
        """At the times the cron expression ``expr`` gives in zone ``tz`` (SPEC §23.2)."""
        return cls(cron=expr, tz=tz, missed=missed, grace_ms=grace_ms).checked()

    def checked(self) -> Schedule:
        """This definition, or InvalidArgument where SPEC §23.1 refuses it (RWQ-SCHED-001)."""
        if (self.every_ms is None) == (self.cron is None):
            raise InvalidArgument("a schedule takes exactly one of every_ms or cron (RWQ-SCHED-001)")
        if self.every_ms is not None:
            v.integer(self.every_ms, "every_ms", MIN_EVERY_MS, MAX_EVERY_MS, unit=" ms")
            v.integer(self.offset_ms, "offset_ms", 0, self.every_ms - 1, unit=" ms")
            if self.tz != "UTC":
                raise InvalidArgument("tz applies to cron schedules only (RWQ-SCHED-001)")
        else:
            if not isinstance(self.cron, str):
                raise InvalidType(f"cron must be a str, not {type(self.cron).__name__}")
            if not isinstance(self.tz, str):
                raise InvalidType(f"tz must be a str, not {type(self.tz).__name__}")
            if self.offset_ms != 0:
                raise InvalidArgument("offset_ms applies to every_ms schedules only (RWQ-SCHED-001)")
            raw = self.cron.encode("utf-8")
            if not 1 <= len(raw) <= MAX_CRON_BYTES or not _CRON_CHARS.fullmatch(self.cron):
                raise InvalidArgument("cron must be 1..200 bytes of a cron expression (RWQ-SCHED-004)")
            if not _TZ.fullmatch(self.tz):
                raise InvalidArgument("tz must be an IANA zone name of 1..64 bytes (RWQ-SCHED-001)")
            cron_schedule(self.cron, self.tz)  # the grammar, the zone, and a slot within 3,000 days
        if self.missed not in MISSED:
            raise InvalidArgument(f"missed must be skip or once, not {self.missed!r} (RWQ-SCHED-001)")
        v.integer(self.grace_ms, "grace_ms", 0, MAX_GRACE_MS, unit=" ms")
        return self

    def to_json(self) -> bytes:
        """The stored definition: compact JSON with ``v`` = 1."""
        doc: dict[str, Any] = {"v": 1}
        if self.every_ms is not None:
            doc |= {"every_ms": self.every_ms, "offset_ms": self.offset_ms}
        else:
            doc |= {"cron": self.cron, "tz": self.tz}
        doc |= {"missed": self.missed, "grace_ms": self.grace_ms}
        return json.dumps(doc, separators=(",", ":")).encode("ascii")

    @classmethod
    def from_json(cls, text: bytes) -> Schedule:
        """A stored definition; InvalidArgument for another ``v`` or one that does not parse
        (a scheduler then skips it, RWQ-SCHED-017)."""
        try:
            doc = json.loads(text)
        except ValueError:
            raise InvalidArgument("the definition is not JSON (RWQ-SCHED-017)") from None
        if not isinstance(doc, dict) or doc.get("v") != 1 or isinstance(doc.get("v"), bool):
            raise InvalidArgument("the definition is not a version 1 object (RWQ-SCHED-017)")
        return cls.from_mapping(doc)

    @classmethod
    def from_mapping(cls, doc: dict[str, Any]) -> Schedule:
        """A definition from its members (absent ones take their defaults), checked."""
        known = {"v", "every_ms", "offset_ms", "cron", "tz", "missed", "grace_ms"}
        members = {key: value for key, value in doc.items() if key in known and key != "v"}
        for key in ("every_ms", "offset_ms", "grace_ms"):
            if key in members and (isinstance(members[key], bool) or not isinstance(members[key], int)):
                raise InvalidArgument(f"{key} must be an integer (RWQ-SCHED-001)")
        return cls(**members).checked()

    def next_slot(self, after_ms: int) -> int:
        """The least slot greater than ``after_ms`` (server ms since the epoch)."""
        if self.every_ms is not None:
            return ((after_ms - self.offset_ms) // self.every_ms + 1) * self.every_ms + self.offset_ms
        assert self.cron is not None
        return cron_schedule(self.cron, self.tz).next_slot(max(after_ms, 0))

    def latest_slot(self, low_ms: int, high_ms: int) -> int | None:
        """The greatest slot in ``(low_ms, high_ms]``, or None."""
        if self.every_ms is not None:
            slot = (high_ms - self.offset_ms) // self.every_ms * self.every_ms + self.offset_ms
            return slot if slot > low_ms else None
        window = 3_600_000  # look back an hour, doubling, so that a long outage costs few steps
        while True:
            start = max(low_ms, high_ms - window)
            slot, found = self.next_slot(start), None
            while slot <= high_ms:
                found, slot = slot, self.next_slot(slot)
            if found is not None or start <= max(low_ms, 0):
                return found
            window *= 2

    def due_slots(self, watermark_ms: int, now_ms: int) -> list[int]:
        """The slots a scheduler offers at ``now_ms`` (RWQ-SCHED-010): those after the watermark
        at most ``grace_ms`` late, oldest first (at most 100); under ``once``, when there is none
        such but a later slot than the watermark, the latest of them."""
        slots: list[int] = []
        slot = self.next_slot(max(watermark_ms, now_ms - self.grace_ms - 1))
        while slot <= now_ms and len(slots) < MAX_SLOTS:
            slots.append(slot)
            slot = self.next_slot(slot)
        if not slots and self.missed == "once":
            late = self.latest_slot(watermark_ms, now_ms)
            slots = [late] if late is not None else []
        return slots


def next_slots(schedule: Schedule, after_ms: int, count: int) -> list[int]:
    """The ``count`` (1..100) slots of ``schedule`` after ``after_ms``, in order; no I/O."""
    if not isinstance(schedule, Schedule):
        raise InvalidType(f"schedule must be a Schedule, not {type(schedule).__name__}")
    schedule.checked()
    v.integer(after_ms, "after_ms", 0, MAX_SLOT, unit=" ms")
    v.integer(count, "count", 1, MAX_SLOTS)
    slots = [schedule.next_slot(after_ms)]
    while len(slots) < count:
        slots.append(schedule.next_slot(slots[-1]))
    return slots


@functools.lru_cache(maxsize=256)
def cron_schedule(expr: str, tz: str) -> CronSchedule:
    """The parsed cron walk (SPEC §23.2) of ``expr`` in ``tz``, kept for the next tick;
    InvalidArgument for an expression or zone it refuses (RWQ-SCHED-004, -007), and where the
    ``cron`` extra is not installed (a scheduler then skips cron schedules, logged once)."""
    try:
        return CronSchedule.parse(expr, tz)
    except ImportError as exc:
        raise InvalidArgument(str(exc)) from None


@dataclass(frozen=True, slots=True)
class StoredSchedule:
    """A schedule as Redis holds it: its name, definition text (its SHA1 is the ``fire``
    digest), payload, watermark (the last slot fired) and the time of its pause, if paused."""

    name: str
    definition: bytes
    data: bytes
    last_fired_ms: int | None
    paused_ms: int | None

    @property
    def digest(self) -> str:
        return hashlib.sha1(self.definition).hexdigest()

    def schedule(self) -> Schedule:
        """The parsed definition (InvalidArgument when it does not parse, RWQ-SCHED-017)."""
        return Schedule.from_json(self.definition)


@dataclass(frozen=True, slots=True)
class ScheduleList:
    """Every schedule of the queue, by name, and the server's now when the list was read."""

    now_ms: int
    schedules: list[StoredSchedule]


@dataclass(frozen=True, slots=True)
class Fired:
    """What one ``fire`` did: the server's now, the status (``ok``, ``gone``, ``stale``,
    ``paused``, ``corrupt``: a watermark written by hand that is not decimal ms), the watermark
    after the call, and per slot offered its outcome: 1 added, 0 fired but an item with that id
    existed, ``old``, ``late`` or ``early``."""

    now_ms: int
    status: str
    last_fired_ms: int | None
    outcomes: list[int | str]
    added: list[str]


def schedule_name(value: object) -> bytes:
    """Validate a schedule name: 1..200 bytes of ``A-Z a-z 0-9 _ . : -``, not starting with a
    punctuation mark (RWQ-SCHED-001)."""
    if not isinstance(value, str):
        raise InvalidType(f"schedule name must be a str, not {type(value).__name__}")
    if not _NAME.fullmatch(value):
        raise InvalidArgument(
            "a schedule name must be 1..200 characters of A-Z a-z 0-9 _ . : -, "
            "starting with a letter or digit (RWQ-SCHED-001)"
        )
    return value.encode("ascii")


def item_id(name: str, slot_ms: int) -> str:
    """The id of slot ``slot_ms``'s item (RWQ-SCHED-002)."""
    return f"{name}@{slot_ms}"


def put_schedule(keys: QueueKeys, name: str, schedule: Schedule, data: bytes) -> Plan[bool]:
    """Create or replace ``name``; True when it was created (its watermark is then the server's now)."""
    raw = schedule_name(name)
    if not isinstance(schedule, Schedule):
        raise InvalidType(f"schedule must be a Schedule, not {type(schedule).__name__}")
    definition = schedule.checked().to_json()
    payload = v.payload(data)
    created, _now = yield RunScript(registry()["schedule"], (keys.queue,), (b"put", raw, definition, payload))
    return bool(created)


def change_schedule(keys: QueueKeys, mode: str, name: str) -> Plan[bool]:
    """``remove``, ``pause`` or ``resume`` ``name``; False when nothing changed."""
    raw = schedule_name(name)
    return bool((yield RunScript(registry()["schedule"], (keys.queue,), (mode.encode(), raw))))


def schedules(keys: QueueKeys) -> Plan[ScheduleList]:
    """Every schedule, by name, with the server's now of the last page read."""
    cursor: bytes = b"0"
    found: dict[str, StoredSchedule] = {}
    now = 0
    while True:
        now, cursor, rows = yield RunScript(
            registry()["schedule"], (keys.queue,), (b"list", cursor, LIST_COUNT)
        )
        for name, definition, data, mark, paused in rows:
            text = name.decode("ascii")
            found[text] = StoredSchedule(text, definition, data, _ms(mark), _ms(paused))
        if cursor in (b"0", 0, "0"):
            return ScheduleList(int(now), [found[key] for key in sorted(found)])


def _ms(raw: bytes) -> int | None:
    """A watermark or pause time; None when absent or not decimal ms (written by hand, RWQ-SCHED-021)."""
    return int(raw) if raw.isdigit() else None


def fire(keys: QueueKeys, name: str, digest: str, slots: Sequence[int]) -> Plan[Fired]:
    """Fire ``slots`` (ascending, 1..100) of ``name``, whose definition has SHA1 ``digest``."""
    raw = schedule_name(name)
    if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{40}", digest):
        raise InvalidArgument("digest must be 40 lower-case hex digits (the SHA1 of the definition)")
    offered = list(v.batch(slots, "slots"))
    if not 1 <= len(offered) <= MAX_SLOTS:
        raise InvalidArgument(f"fire takes 1..{MAX_SLOTS} slots, got {len(offered)}")
    for slot in offered:
        v.integer(slot, "slot", 0, MAX_SLOT, unit=" ms")
    if any(b <= a for a, b in itertools.pairwise(offered)):
        raise InvalidArgument("slots must be strictly ascending")
    now, status, mark, outcomes = yield RunScript(registry()["fire"], (keys.queue,), (raw, digest, *offered))
    results: list[int | str] = [o.decode() if isinstance(o, bytes) else int(o) for o in outcomes]
    added = [item_id(name, slot) for slot, o in zip(offered, results, strict=False) if o == 1]
    return Fired(
        int(now), status.decode() if isinstance(status, bytes) else str(status), _ms(mark), results, added
    )
