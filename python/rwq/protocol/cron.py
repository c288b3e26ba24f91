"""Profile periodic (SPEC §23, "Cron: the dialect and the slot set"): cron expressions and their slots.

Sans-IO. :meth:`CronSchedule.parse` checks an expression with one regular expression per field
(so croniter only ever reads the part of cron every library reads alike), lets croniter expand the
fields into sets, and checks the zone; :meth:`CronSchedule.next_slot` walks local dates with
``zoneinfo`` by SPEC's rule, not by croniter's own iteration (which fires a repeated hour twice and
moves a time in a gap to the hour's start). Bad input raises :class:`~rwq.errors.InvalidArgument`
before any I/O. The vectors every client must reproduce are ``conformance/vectors/cron.json``.

Needs the ``cron`` extra (croniter and tzdata), imported when a schedule is first parsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from functools import cache
from importlib import resources
from zoneinfo import ZoneInfo

from ..errors import InvalidArgument, InvalidType

MAX_EXPR_BYTES = 200
"""The longest cron expression, in bytes (RWQ-SCHED-001)."""
MAX_TZ_BYTES = 64
"""The longest zone name, in bytes (RWQ-SCHED-001)."""
NEVER_DAYS = 3000
"""An expression must match a date among this many from 2000-01-01 (RWQ-SCHED-007): the longest
wait of one that matches at all is 2,922 days, 29 February 2096 to 2104."""
MAX_AFTER_MS = 221_845_392_000_000
"""``next_slot`` takes instants in 0..9000-01-01T00:00Z (exclusive), ms."""

MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_DAY_MS = 86_400_000
_EPOCH = date(1970, 1, 1)


@dataclass(frozen=True)
class _Field:
    name: str
    least: int
    greatest: int
    names: tuple[str, ...]
    pattern: re.Pattern[str]


def _pattern(value: str, step: str, names: tuple[str, ...] = ()) -> re.Pattern[str]:
    """One field: ``item *("," item)``, item ``* ["/" step]``, ``a-b ["/" step]`` or ``a``."""
    value = "|".join((value, *names))
    item = rf"(?:\*(?:/(?:{step}))?|(?:{value})-(?:{value})(?:/(?:{step}))?|(?:{value}))"
    return re.compile(rf"{item}(?:,{item})*", re.IGNORECASE | re.ASCII)


_FIELDS = (
    _Field("minute", 0, 59, (), _pattern("[0-5]?[0-9]", "0?[1-9]|[1-5][0-9]|60")),
    _Field("hour", 0, 23, (), _pattern("[01]?[0-9]|2[0-3]", "0?[1-9]|1[0-9]|2[0-4]")),
    _Field("day-of-month", 1, 31, (), _pattern("0?[1-9]|[12][0-9]|3[01]", "0?[1-9]|[12][0-9]|3[01]")),
    _Field("month", 1, 12, _MONTHS, _pattern("0?[1-9]|1[0-2]", "0?[1-9]|1[0-2]", _MONTHS)),
    _Field("day-of-week", 0, 6, _DAYS, _pattern("0?[0-6]", "0?[1-7]", _DAYS)),
)
_SEPARATOR = re.compile(r"[ \t]+")
_ZONE = re.compile(r"[A-Z][A-Za-z0-9_+-]*(?:/[A-Z][A-Za-z0-9_+-]*)*", re.ASCII)


def _value(text: str, spec: _Field) -> int:
    lower = text.lower()
    return spec.least + spec.names.index(lower) if lower in spec.names else int(text)


def _check_ranges(text: str, spec: _Field) -> None:
    """The one rule the field's pattern cannot say: a range's start is at most its end."""
    for item in text.split(","):
        start, dash, end = item.partition("/")[0].partition("-")
        if dash and _value(start, spec) > _value(end, spec):
            raise InvalidArgument(
                f"cron {spec.name} range {item!r} starts after its end (no wrap-around) (RWQ-SCHED-004)"
            )


def _fields(expr: object) -> list[str]:
    """The five field texts of a valid expression (a macro expanded); raises InvalidArgument."""
    if not isinstance(expr, str):
        raise InvalidType(f"cron expression must be a str, not {type(expr).__name__}")
    if not expr.isascii() or len(expr) > MAX_EXPR_BYTES:
        raise InvalidArgument(f"cron expression must be 1..{MAX_EXPR_BYTES} ASCII bytes (RWQ-SCHED-001)")
    texts = _SEPARATOR.split(MACROS.get(expr, expr))
    if len(texts) != 5 or "" in texts:
        raise InvalidArgument(
            f"cron expression {expr!r} must be five fields (minute hour day-of-month month "
            "day-of-week) separated by spaces or tabs, or one of @hourly, @daily, @midnight, "
            "@weekly, @monthly, @yearly, @annually (RWQ-SCHED-004)"
        )
    for text, spec in zip(texts, _FIELDS, strict=True):
        if not spec.pattern.fullmatch(text):
            raise InvalidArgument(
                f"cron {spec.name} field {text!r} is outside the dialect: numbers {spec.least}-"
                f"{spec.greatest}{' or names' if spec.names else ''}, *, a-b, */n, a-b/n (n at most "
                f"{spec.greatest - spec.least + 1}) and lists of them (RWQ-SCHED-004)"
            )
        _check_ranges(text, spec)
    return texts


def _for_croniter(text: str, spec: _Field) -> str:
    """``text`` with each range whose ends are equal written as that one value: croniter 7.0.0
    reads ``5-5`` as the whole field and ``5-5/20`` as ``*/20``."""
    items = []
    for item in text.split(","):
        start, dash, end = item.partition("/")[0].partition("-")
        items.append(start if dash and _value(start, spec) == _value(end, spec) else item)
    return ",".join(items)


def _expand(texts: list[str]) -> list[frozenset[int]]:
    """croniter's field sets for five checked fields (``*`` as the whole range)."""
    try:
        from croniter import croniter  # noqa: PLC0415 - the cron extra may be missing
    except ImportError as exc:  # pragma: no cover - the extra is installed wherever tests run
        raise ImportError("cron schedules need the 'cron' extra: pip install 'rwq[cron]'") from exc
    fields = (_for_croniter(text, spec) for text, spec in zip(texts, _FIELDS, strict=True))
    expanded, _ = croniter.expand(" ".join(fields))
    return [
        frozenset(range(spec.least, spec.greatest + 1))
        if "*" in values
        else frozenset(int(value) for value in values)
        for values, spec in zip(expanded, _FIELDS, strict=True)
    ]


@cache
def _zone_names() -> frozenset[str]:
    """The IANA names (Zones and Links) of the tzdata package, but ``Factory`` (the zone of a
    machine whose local time is unset, unknown to ICU): not the files a system's zone directory
    also holds (``localtime``, ``posix/...``), and compared case-sensitively."""
    try:
        return frozenset(resources.files("tzdata").joinpath("zones").read_text().split()) - {"Factory"}
    except ModuleNotFoundError as exc:  # pragma: no cover - the extra is installed wherever tests run
        raise ImportError("cron schedules need the 'cron' extra: pip install 'rwq[cron]'") from exc


def _zone(tz: object) -> ZoneInfo:
    if not isinstance(tz, str):
        raise InvalidType(f"time zone must be a str, not {type(tz).__name__}")
    if not (len(tz) <= MAX_TZ_BYTES and _ZONE.fullmatch(tz) and tz in _zone_names()):
        raise InvalidArgument(
            f"time zone must be an IANA zone name (such as UTC or Europe/London) of at most "
            f"{MAX_TZ_BYTES} bytes, got {tz[: MAX_TZ_BYTES + 1]!r} (RWQ-SCHED-001)"
        )
    try:
        return ZoneInfo(tz)
    except (KeyError, ValueError, OSError) as exc:  # ZoneInfoNotFoundError is a KeyError
        raise InvalidArgument(f"time zone {tz!r} has no zone data here (RWQ-SCHED-001)") from exc


def _naive_ms(d: date) -> int:
    """Local midnight of ``d`` read as UTC, in ms: every slot of ``d`` is within a day of it."""
    return (d - _EPOCH).days * _DAY_MS


@dataclass(frozen=True)
class CronSchedule:
    """A parsed cron expression and zone: the slot set of SPEC §23.

    ``hour_star`` is true when the hour field's text is exactly ``*`` (a gap has no slots, a
    repeated wall time fires on both passes); ``or_days`` when neither day-of-month nor
    day-of-week is exactly ``*`` (a day matches when either does)."""

    expr: str
    tz: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days_of_month: frozenset[int]
    months: frozenset[int]
    days_of_week: frozenset[int]
    hour_star: bool
    or_days: bool
    zone: ZoneInfo = field(repr=False, compare=False)

    @classmethod
    def parse(cls, expr: str, tz: str = "UTC") -> CronSchedule:
        """Check and expand ``expr`` in zone ``tz``; raises InvalidArgument (RWQ-SCHED-001, -004, -007)."""
        texts = _fields(expr)
        zone = _zone(tz)
        minutes, hours, doms, months, dows = _expand(texts)
        schedule = cls(
            expr,
            tz,
            minutes,
            hours,
            doms,
            months,
            dows,
            hour_star=texts[1] == "*",
            or_days=texts[2] != "*" and texts[4] != "*",
            zone=zone,
        )
        first = date(2000, 1, 1)
        if not any(schedule.matches_day(first + timedelta(days=n)) for n in range(NEVER_DAYS)):
            raise InvalidArgument(
                f"cron expression {expr!r} matches no day (such as 30 February) (RWQ-SCHED-007)"
            )
        return schedule

    def matches_day(self, d: date) -> bool:
        """Whether local date ``d`` has slots: its month matches, and its day of month or of
        week (either when both are restricted, else both) (RWQ-SCHED-005)."""
        if d.month not in self.months:
            return False
        dom, dow = d.day in self.days_of_month, (d.weekday() + 1) % 7 in self.days_of_week
        return (dom or dow) if self.or_days else (dom and dow)

    def _offset_ms(self, instant_ms: int) -> int:
        offset = datetime.fromtimestamp(instant_ms // 1000, self.zone).utcoffset()
        assert offset is not None
        return offset // timedelta(milliseconds=1)

    def _instants(self, d: date, after_ms: int) -> Iterator[int]:
        """The slots of local date ``d`` that may be above ``after_ms`` (RWQ-SCHED-006).

        No zone changes its offset twice within five days (since 1960, the closest two changes
        of tzdata 2026.6 are 6.96 days apart): so when the offsets a day before ``d`` and a day
        after it are equal, every wall time of ``d`` occurs once, at the wall time minus that
        offset. Otherwise PEP 495 tells: ``fold=0`` is a repeated wall time's first occurrence
        and reads a wall time in a gap with the offset before it, ``fold=1`` the second
        occurrence and the offset after; so the two agree for a wall time that occurs once,
        fold 1 is later for a repeat, earlier in a gap."""
        midnight = _naive_ms(d)
        offset = self._offset_ms(midnight - _DAY_MS)
        plain = offset == self._offset_ms(midnight + 2 * _DAY_MS)
        for hour in sorted(self.hours):
            for minute in sorted(self.minutes):
                naive = midnight + (hour * 60 + minute) * 60_000
                if plain:
                    if naive - offset > after_ms:
                        yield naive - offset
                        return  # the later wall times of d are later instants
                    continue
                if naive + _DAY_MS <= after_ms:
                    continue  # every instant of this wall time is at or before after_ms
                wall = datetime(d.year, d.month, d.day, hour, minute, tzinfo=self.zone)
                first = int(wall.timestamp()) * 1000
                second = int(wall.replace(fold=1).timestamp()) * 1000
                if second >= first or not self.hour_star:
                    yield first
                if second > first and self.hour_star:
                    yield second

    def next_slot(self, after_ms: int) -> int:
        """The least slot greater than ``after_ms`` (ms since the epoch)."""
        if isinstance(after_ms, bool) or not isinstance(after_ms, int):
            raise InvalidType(f"after_ms must be an int, not {type(after_ms).__name__}")
        if not 0 <= after_ms < MAX_AFTER_MS:
            raise InvalidArgument(f"after_ms must be in 0..{MAX_AFTER_MS - 1}, got {after_ms}")
        d = datetime.fromtimestamp(after_ms // 1000, timezone.utc).astimezone(self.zone).date()
        d -= timedelta(days=1)  # a gap can move a slot of the day before past midnight
        best: int | None = None
        for _ in range(NEVER_DAYS + 370):
            if best is not None and best <= _naive_ms(d) - _DAY_MS:
                return best  # every slot of d and later dates is after best
            if self.matches_day(d):
                for instant in self._instants(d, after_ms):
                    if instant > after_ms and (best is None or instant < best):
                        best = instant
            d += timedelta(days=1)
        if best is None:  # pragma: no cover - parse refused expressions that match no day
            raise AssertionError(f"no slot of {self.expr!r} within {NEVER_DAYS + 370} days")
        return best
