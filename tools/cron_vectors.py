"""Write conformance/vectors/cron.json, the cron slot vectors of profile periodic (SPEC §23).

Every expected slot is found here by brute force, independently of the clients' walks: a scan of
UTC minutes with ``zoneinfo`` (UTC to local only, the conversion with no ambiguity), which finds a
repeated wall time as one already seen in the last 26 hours and a gap as a jump of the local
clock, and reads each skipped wall time with the offset of the minute before the jump. The grammar
is parsed here by hand, token by token, not by the clients' regular expressions or libraries.

``--check`` exits 1 when the file is stale instead of writing it."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import cache
from importlib import resources
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "conformance" / "vectors" / "cron.json"

MINUTE_MS = 60_000
DAY_MS = 86_400_000
MAX_EXPR_BYTES = 200
MAX_TZ_BYTES = 64
NEVER_DAYS = 3000  # RWQ-SCHED-007: a matching date among the 3,000 dates from 2000-01-01
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (name, least, greatest, names of the values from least on)
FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day-of-month", 1, 31, ()),
    ("month", 1, 12, MONTHS),
    ("day-of-week", 0, 6, DAYS),
)
MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}


class Refused(ValueError):
    """The expression or the zone is outside the dialect."""


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    doms: frozenset[int]
    months: frozenset[int]
    dows: frozenset[int]
    hour_star: bool
    or_days: bool  # day-of-month and day-of-week both restricted

    def day(self, d: date) -> bool:
        if d.month not in self.months:
            return False
        dom, dow = d.day in self.doms, (d.weekday() + 1) % 7 in self.dows
        return dom or dow if self.or_days else dom and dow


def _value(text: str, least: int, greatest: int, names: tuple[str, ...]) -> int:
    if text.lower() in names and len(text) == 3:
        return least + names.index(text.lower())
    if not (1 <= len(text) <= 2 and all(c in "0123456789" for c in text)):
        raise Refused(f"not a value: {text!r}")
    number = int(text)
    if not least <= number <= greatest:
        raise Refused(f"out of range: {text!r}")
    return number


def _field(text: str, least: int, greatest: int, names: tuple[str, ...]) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        base, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not (1 <= len(step_text) <= 2 and all(c in "0123456789" for c in step_text)):
                raise Refused(f"not a step: {item!r}")
            step = int(step_text)
            if not 1 <= step <= greatest - least + 1:
                raise Refused(f"step out of range: {item!r}")
        if base == "*":
            first, last = least, greatest
        else:
            start, dash, end = base.partition("-")
            if slash and not dash:
                raise Refused(f"a step needs * or a range: {item!r}")
            first = _value(start, least, greatest, names)
            last = _value(end, least, greatest, names) if dash else first
            if first > last:
                raise Refused(f"range start after its end: {item!r}")
        values.update(range(first, last + 1, step))
    return frozenset(values)


def parse(expr: str) -> Cron:
    """The dialect of SPEC §23, parsed by hand; raises Refused."""
    if len(expr.encode()) > MAX_EXPR_BYTES or not expr.isascii():
        raise Refused("too long or not ASCII")
    expr = MACROS.get(expr, expr)
    if expr[:1] in ("", " ", "\t") or expr[-1:] in (" ", "\t"):
        raise Refused("space before or after the fields")
    texts = [text for text in expr.replace("\t", " ").split(" ") if text]
    if len(texts) != 5:
        raise Refused("not five fields")
    minutes, hours, doms, months, dows = (
        _field(text, *spec[1:]) for text, spec in zip(texts, FIELDS, strict=True)
    )
    cron = Cron(minutes, hours, doms, months, dows, texts[1] == "*", texts[2] != "*" and texts[4] != "*")
    first = date(2000, 1, 1)
    if not any(cron.day(first + timedelta(days=n)) for n in range(NEVER_DAYS)):
        raise Refused("no matching day")
    return cron


@cache
def _zone_names() -> frozenset[str]:
    return frozenset(resources.files("tzdata").joinpath("zones").read_text().split()) - {"Factory"}


def zone(tz: str) -> ZoneInfo:
    """The zone, when its name is an IANA name of the tzdata package's list; raises Refused."""
    names = _zone_names()
    if len(tz.encode()) > MAX_TZ_BYTES or tz not in names:
        raise Refused(f"not a zone: {tz!r}")
    return ZoneInfo(tz)


def _utc(ms: int) -> datetime:
    return datetime(1970, 1, 1) + timedelta(milliseconds=ms)


def slots(cron: Cron, tz: ZoneInfo, after_ms: int, count: int) -> list[int]:
    """The first ``count`` slots above ``after_ms``, by a scan of UTC minutes.

    A wall time is kept as ms since 1970-01-01T00:00 read as UTC. A slot of a UTC day comes from
    a local date within a day of it (offsets are under 24 hours), so a UTC day is scanned when a
    date from one day before to three days after it matches: two scanned days come before any
    slot, enough to have seen the first pass of a repeated wall time."""
    found: set[int] = set()
    seen: tuple[set[int], set[int]] = (set(), set())  # walls of this UTC day and the one before
    previous: tuple[int, int] | None = None  # (wall, offset) of the minute before
    epoch = date(1970, 1, 1)

    def matches(wall: int) -> bool:
        minute, hour = wall // MINUTE_MS % 60, wall // 3_600_000 % 24
        return (
            wall % MINUTE_MS == 0
            and minute in cron.minutes
            and hour in cron.hours
            and cron.day(epoch + timedelta(days=wall // DAY_MS))
        )

    day = after_ms // DAY_MS - 2
    while True:
        utc_day = epoch + timedelta(days=day)
        if not any(cron.day(utc_day + timedelta(days=n)) for n in range(-1, 4)):
            previous, seen = None, (set(), set())
            day += 1
            continue
        seen = (set(), seen[0])
        for u in range(day * DAY_MS, (day + 1) * DAY_MS, MINUTE_MS):
            offset = datetime.fromtimestamp(u // 1000, tz).utcoffset()
            assert offset is not None
            offset_ms = offset // timedelta(milliseconds=1)
            wall = u + offset_ms
            if previous is not None and wall - previous[0] > MINUTE_MS:
                # The clock jumped forward: each skipped wall time read with the offset before.
                for skipped in range(previous[0] + MINUTE_MS, wall, MINUTE_MS):
                    instant = skipped - previous[1]
                    if not cron.hour_star and instant > after_ms and matches(skipped):
                        found.add(instant)
            repeat = wall in seen[0] or wall in seen[1]
            if u > after_ms and (not repeat or cron.hour_star) and matches(wall):
                found.add(u)  # a wall time's first pass, or a later one under hour *
            seen[0].add(wall)
            previous = (wall, offset_ms)
            if len(found) >= count:
                done = sorted(s for s in found if s <= u)  # later finds are all >= u
                if len(done) >= count:
                    return done[:count]
        day += 1
        if day * DAY_MS > max(found, default=after_ms) + (NEVER_DAYS + 10) * DAY_MS:
            raise AssertionError("no slot found")


def _ms(iso: str) -> int:
    instant = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return (instant - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)


def _local(ms: int, tz: ZoneInfo) -> str:
    return _utc(ms).replace(tzinfo=timezone.utc).astimezone(tz).isoformat()


# (id, expression, zone, after (UTC, ISO 8601), count, what it shows)
SLOTS: list[tuple[str, str, str, str, int, str]] = [
    ("grammar/every-minute", "* * * * *", "UTC", "2025-01-01T00:00Z", 5, "after_ms on a slot: the next one"),
    ("grammar/ms-before", "* * * * *", "UTC", "2024-12-31T23:59:59.999Z", 2, "1 ms before a slot"),
    ("grammar/number", "7 3 * * *", "UTC", "2025-01-01T00:00Z", 3, ""),
    ("grammar/leading-zero", "05 09 * * *", "UTC", "2025-01-01T00:00Z", 2, "05 is 5"),
    ("grammar/list", "0,15,45 * * * *", "UTC", "2025-01-01T00:00Z", 5, ""),
    ("grammar/range", "10-12 * * * *", "UTC", "2025-01-01T00:00Z", 5, ""),
    ("grammar/range-one", "7-7 * * * *", "UTC", "2025-01-01T00:00Z", 2, "a-a is a"),
    ("grammar/range-one-step", "0 0 * * 3-3/2", "UTC", "2025-01-01T00:00Z", 3, "a-a/n is a"),
    ("grammar/range-one-list", "0 5-5,17 * * *", "UTC", "2025-01-01T00:00Z", 3, "hours 5 and 17"),
    ("grammar/range-one-name", "0 0 1 jan-JAN *", "UTC", "2025-01-01T00:00Z", 2, "January"),
    (
        "grammar/list-overlap",
        "1-5,3,*/20 * * * *",
        "UTC",
        "2025-01-01T00:00Z",
        7,
        "items overlap: their union",
    ),
    ("grammar/list-repeat", "0,0,00 0 * * sun,0,SUN", "UTC", "2025-01-01T00:00Z", 2, "repeated values"),
    ("grammar/star-step", "*/20 * * * *", "UTC", "2025-01-01T00:00Z", 5, ""),
    ("grammar/range-step", "5-59/20 * * * *", "UTC", "2025-01-01T00:00Z", 5, "what 5/20 means elsewhere"),
    ("grammar/range-step-wider", "10-20/15 * * * *", "UTC", "2025-01-01T00:00Z", 3, "step past b: a only"),
    ("grammar/step-width-minute", "*/60 * * * *", "UTC", "2025-01-01T00:10Z", 3, "step 60: minute 0"),
    ("grammar/step-width-hour", "0 */24 * * *", "UTC", "2025-01-01T00:10Z", 3, "step 24: hour 0"),
    ("grammar/step-width-dom", "0 0 */31 * *", "UTC", "2025-01-01T00:10Z", 3, "step 31: the 1st"),
    ("grammar/step-width-month", "0 0 1 */12 *", "UTC", "2025-01-01T00:10Z", 2, "step 12: January"),
    ("grammar/step-width-dow", "0 0 * * */7", "UTC", "2025-01-01T00:10Z", 3, "step 7: Sunday"),
    ("grammar/list-mixed", "0 1-3,5,*/12 * * *", "UTC", "2025-01-01T00:10Z", 6, "hours 0-3, 5, 12"),
    ("grammar/month-names", "0 12 1 jan,Apr,JUL-sep *", "UTC", "2025-01-01T00:00Z", 5, "any case"),
    ("grammar/month-names-step", "0 0 1 FEB-dec/3 *", "UTC", "2025-01-01T00:00Z", 5, "Feb, May, Aug, Nov"),
    ("grammar/dow-names", "30 8 * * MON-FRI", "UTC", "2025-01-02T00:00Z", 5, "weekdays"),
    ("grammar/dow-name-number", "0 0 * * sun,3-Sat", "UTC", "2025-01-01T00:00Z", 5, "names, numbers"),
    ("grammar/dow-range-name-number", "0 0 * * 0-sun", "UTC", "2025-01-01T00:00Z", 2, "0-SUN is Sunday"),
    (
        "grammar/dow-range-name-equal-number",
        "0 0 * * sun-0,6-sat",
        "UTC",
        "2025-01-01T00:00Z",
        3,
        "sun-0, 6-sat",
    ),
    (
        "grammar/month-range-name-equal-number",
        "0 0 1 1-jan,jan-1 *",
        "UTC",
        "2025-01-01T00:00Z",
        2,
        "January",
    ),
    ("grammar/dow-sunday-zero", "0 0 * * 0", "UTC", "2025-01-01T00:00Z", 2, "Sunday is 0"),
    ("grammar/tabs-and-spaces", "0\t0  *\t * *", "UTC", "2025-01-01T00:00Z", 2, "runs of spaces and tabs"),
    ("grammar/length-200", "00" + ",0" * 95 + " * * * *", "UTC", "2025-01-01T00:00Z", 2, "200 bytes"),
    ("macro/hourly", "@hourly", "UTC", "2025-01-01T00:00Z", 3, "0 * * * *"),
    ("macro/daily", "@daily", "UTC", "2025-01-01T00:00Z", 3, "0 0 * * *"),
    ("macro/midnight", "@midnight", "UTC", "2025-01-01T00:00Z", 3, "0 0 * * *"),
    ("macro/weekly", "@weekly", "UTC", "2025-01-01T00:00Z", 3, "0 0 * * 0"),
    ("macro/monthly", "@monthly", "UTC", "2025-01-01T00:00Z", 3, "0 0 1 * *"),
    ("macro/yearly", "@yearly", "UTC", "2025-01-01T00:00Z", 3, "0 0 1 1 *"),
    ("macro/annually", "@annually", "UTC", "2025-01-01T00:00Z", 3, "0 0 1 1 *"),
    ("macro/hourly-fall-back", "@hourly", "America/New_York", "2025-11-02T04:30Z", 4, "01:00 twice"),
    ("macro/daily-gap", "@daily", "Africa/Cairo", "2025-04-24T12:00Z", 2, "hour 0: midnight gap read"),
    ("days/dom-only", "0 0 13 * *", "UTC", "2025-01-01T00:00Z", 3, "dow *: the 13th"),
    ("days/dow-only", "0 0 * * 5", "UTC", "2025-01-01T00:00Z", 3, "dom *: Fridays"),
    ("days/or", "0 0 13 * FRI", "UTC", "2025-06-01T00:00Z", 6, "the 13th or a Friday"),
    ("days/or-star-step", "0 0 */2 * 1", "UTC", "2025-01-01T00:00Z", 8, "*/2 restricted: odd days, Mondays"),
    ("days/or-star-step-one", "0 0 */1 * 1", "UTC", "2025-01-01T00:00Z", 4, "every day"),
    ("days/or-full-range", "0 0 1-31 * 1", "UTC", "2025-01-01T00:00Z", 4, "every day"),
    ("days/and-month", "0 0 * 2 1", "UTC", "2025-01-01T00:00Z", 5, "Mondays in February"),
    ("days/or-in-month", "0 0 1 6 MON", "UTC", "2025-01-01T00:00Z", 6, "June 1st or Mondays in June"),
    ("days/or-rescues-dom", "0 0 30 2 1", "UTC", "2025-01-01T00:00Z", 4, "no 30 Feb, but Mondays"),
    ("days/dow-star-step", "0 0 * * */2", "UTC", "2025-01-01T00:00Z", 4, "dom *: Sun, Tue, Thu, Sat"),
    ("days/31st", "0 0 31 * *", "UTC", "2025-01-01T00:00Z", 4, "months with 31 days"),
    ("days/31-feb-or-mar", "0 0 31 2,3 *", "UTC", "2025-01-01T00:00Z", 2, "31 March only"),
    ("leap/29-feb", "0 0 29 2 *", "UTC", "2025-01-01T00:00Z", 3, ""),
    ("leap/2096-2104", "0 0 29 2 *", "UTC", "2096-01-01T00:00Z", 3, "2100 is no leap year"),
    ("leap/2096-2104-zone", "30 2 29 2 *", "Europe/London", "2096-03-01T00:00Z", 2, "8 years on"),
    ("leap/far-future", "0 0 29 2 *", "UTC", "8993-03-01T00:00Z", 1, "1,461 days on, near 9000"),
    ("leap/29-feb-or-monday", "0 0 29 2 1", "UTC", "2027-02-20T00:00Z", 4, "Mondays in Feb, or the 29th"),
    ("year/last-minute", "59 23 31 12 *", "UTC", "2025-12-31T23:58:59.999Z", 2, ""),
    ("year/new-year-new-york", "0 0 1 1 *", "America/New_York", "2025-06-01T00:00Z", 2, ""),
    ("year/new-year-kolkata", "0 0 1 1 *", "Asia/Kolkata", "2025-06-01T00:00Z", 2, "+05:30"),
    ("year/across", "*/30 * * * *", "UTC", "2025-12-31T23:00Z", 4, ""),
    ("year/epoch", "0 0 1 1 *", "UTC", "1970-01-01T00:00Z", 2, "after_ms 0"),
    ("year/epoch-west", "0 * * * *", "America/New_York", "1970-01-01T00:00Z", 2, "local date 1969-12-31"),
    ("new-york/spring-restricted", "30 2 * * *", "America/New_York", "2025-03-08T12:00Z", 3, "03:30 EDT"),
    ("new-york/spring-two-in-gap", "0,30 2 * * *", "America/New_York", "2025-03-08T12:00Z", 4, "distinct"),
    ("new-york/spring-hour-star", "0 * * * *", "America/New_York", "2025-03-09T05:30Z", 3, "no 02:00"),
    ("new-york/spring-star-step", "0 */1 * * *", "America/New_York", "2025-03-09T05:30Z", 3, "02:00 = 03:00"),
    ("new-york/spring-minutes-of-gap", "* 2 * * *", "America/New_York", "2025-03-09T06:58Z", 4, "60 slots"),
    ("new-york/spring-minutes-end", "* 2 * * *", "America/New_York", "2025-03-09T07:57Z", 3, ""),
    ("new-york/fall-restricted", "30 1 * * *", "America/New_York", "2025-11-01T12:00Z", 3, "once, EDT"),
    (
        "new-york/fall-quarter-hours",
        "*/15 * * * *",
        "America/New_York",
        "2025-11-02T04:50Z",
        10,
        "both passes",
    ),
    ("new-york/fall-hour-range", "0 0-23 * * *", "America/New_York", "2025-11-02T04:30Z", 3, "0-23: once"),
    ("new-york/fall-hour-star", "0 * * * *", "America/New_York", "2025-11-02T04:30Z", 3, "twice"),
    ("new-york/fall-after-first", "30 1 * * *", "America/New_York", "2025-11-02T05:30Z", 1, "no 2nd pass"),
    ("new-york/fall-0230", "30 2 * * *", "America/New_York", "2025-11-01T12:00Z", 2, "occurs once"),
    ("new-york/link", "30 2 * * *", "US/Eastern", "2025-03-08T12:00Z", 2, "a Link name"),
    ("london/spring-restricted", "30 1 * * *", "Europe/London", "2025-03-29T12:00Z", 2, "02:30 BST"),
    ("london/spring-hour-star", "*/30 * * * *", "Europe/London", "2025-03-30T00:15Z", 4, "no 01:00, 01:30"),
    ("london/fall-restricted", "30 1 * * *", "Europe/London", "2025-10-25T12:00Z", 2, "once, BST"),
    ("london/fall-hour-star", "*/30 * * * *", "Europe/London", "2025-10-25T23:45Z", 6, "twice"),
    ("lord-howe/spring-restricted", "0 2 * * *", "Australia/Lord_Howe", "2025-10-04T00:00Z", 2, "30 min"),
    ("lord-howe/spring-quarter", "15 2 * * *", "Australia/Lord_Howe", "2025-10-04T00:00Z", 2, "02:45 +11"),
    ("lord-howe/spring-hour-star", "0 * * * *", "Australia/Lord_Howe", "2025-10-04T14:00Z", 3, "no 02:00"),
    ("lord-howe/fall-quarters", "*/15 * * * *", "Australia/Lord_Howe", "2025-04-05T14:10Z", 6, "x2"),
    ("lord-howe/fall-restricted", "45 1 * * *", "Australia/Lord_Howe", "2025-04-05T00:00Z", 2, "once"),
    ("kolkata/daily", "30 9 * * *", "Asia/Kolkata", "2025-03-01T00:00Z", 3, "no DST"),
    ("kolkata/half-hour-offset", "0 * * * *", "Asia/Kolkata", "2025-03-30T00:00Z", 3, ":30 UTC"),
    ("cairo/midnight-gap", "0 0 * * *", "Africa/Cairo", "2025-04-24T12:00Z", 2, "22:00Z on the 24th"),
    ("cairo/midnight-gap-hour-star", "0 * * * *", "Africa/Cairo", "2025-04-24T20:30Z", 3, "no 00:00"),
    ("cairo/fall", "30 23 * * *", "Africa/Cairo", "2025-10-30T12:00Z", 2, "once"),
    ("apia/skipped-day", "0 9 * * *", "Pacific/Apia", "2011-12-28T12:00Z", 4, "30 Dec 2011 = 31 Dec"),
    ("apia/skipped-day-hour-star", "0 * 30 12 *", "Pacific/Apia", "2011-12-01T00:00Z", 2, "none in 2011"),
    ("apia/skipped-day-only", "0 12 30 12 *", "Pacific/Apia", "2011-12-01T00:00Z", 2, "read -10"),
    ("apia/skipped-day-after-midnight", "0 12 30 12 *", "Pacific/Apia", "2011-12-30T10:00Z", 1, "day before"),
    ("moscow/offset-change", "30 1 * * *", "Europe/Moscow", "2014-10-25T12:00Z", 2, "+4 -> +3 for good"),
    ("moscow/offset-change-hour-star", "0 * * * *", "Europe/Moscow", "2014-10-25T20:30Z", 3, "01:00 twice"),
    ("moscow/spring-2011", "30 2 * * *", "Europe/Moscow", "2011-03-26T12:00Z", 2, "+3 -> +4 for good"),
    ("troll/two-hour-gap", "30 1 * * *", "Antarctica/Troll", "2025-03-29T12:00Z", 2, "+0 to +2"),
    ("troll/two-hour-gap-hour-star", "*/30 * * * *", "Antarctica/Troll", "2025-03-30T00:15Z", 3, ""),
    ("chatham/gap-at-quarter", "0 3 * * *", "Pacific/Chatham", "2025-09-27T00:00Z", 2, "+12:45 to +13:45"),
    ("chatham/repeat-hour-star", "0 * * * *", "Pacific/Chatham", "2025-04-05T12:00Z", 4, "02:45-03:44 twice"),
    ("kathmandu/quarter-offset", "0 * * * *", "Asia/Kathmandu", "2025-03-01T00:00Z", 2, "+05:45"),
    (
        "pyongyang/gap-before-midnight",
        "5,40 0,23 * * *",
        "Asia/Pyongyang",
        "2018-05-04T14:59:59.999Z",
        2,
        "00:05 +09 is before 23:40 (in the gap) read +08:30",
    ),
    ("santiago/midnight-gap", "0 0 * * *", "America/Santiago", "2025-09-06T00:00Z", 2, "Sunday 00:00"),
    (
        "santiago/late-repeat-hour-star",
        "*/30 * * * *",
        "America/Santiago",
        "2025-04-06T01:45Z",
        5,
        "Sat 23:00-23:59 twice, late in the day",
    ),
    ("havana/midnight-repeat", "0 0 * * *", "America/Havana", "2025-11-01T12:00Z", 2, "once"),
    ("havana/midnight-repeat-hour-star", "@hourly", "America/Havana", "2025-11-02T03:30Z", 3, "00:00 twice"),
    ("dublin/spring", "30 1 * * *", "Europe/Dublin", "2025-03-29T12:00Z", 2, "01:30 read GMT"),
    ("etc/gmt-plus-5", "0 12 * * *", "Etc/GMT+5", "2025-01-01T00:00Z", 2, "Etc/GMT+5 is UTC-5"),
    ("zone-name/kyiv", "0 12 * * *", "Europe/Kyiv", "2025-06-01T00:00Z", 1, "ICU's Europe/Kiev"),
    ("zone-name/calcutta", "0 12 * * *", "Asia/Calcutta", "2025-06-01T00:00Z", 1, "a Link"),
    ("zone-name/est5edt", "0 12 * * *", "EST5EDT", "2025-06-01T00:00Z", 1, "EDT in June"),
    ("zone-name/etc-utc", "0 12 * * *", "Etc/UTC", "2025-06-01T00:00Z", 1, ""),
    ("zone-name/gmt", "0 12 * * *", "GMT", "2025-06-01T00:00Z", 1, ""),
    (
        "zone-name/ciudad-juarez",
        "0 12 * * *",
        "America/Ciudad_Juarez",
        "2025-06-01T00:00Z",
        1,
        "tzdata 2022g",
    ),
    ("etc/kiritimati", "0 0 1 1 *", "Pacific/Kiritimati", "2025-06-01T00:00Z", 2, "+14"),
]

# (id, expression, zone, why it is refused)
LONG_TZ = "America/" + "A" * 57
REFUSALS: list[tuple[str, str, str, str]] = [
    ("fields/six", "0 0 * * * 15", "UTC", "six fields (seconds or year)"),
    ("fields/six-seconds-first", "15 0 0 * * *", "UTC", "six fields"),
    ("fields/four", "0 0 * *", "UTC", "four fields"),
    ("fields/empty", "", "UTC", "no fields"),
    ("fields/leading-space", " 0 0 * * *", "UTC", "space before the fields"),
    ("fields/trailing-space", "0 0 * * * ", "UTC", "space after the fields"),
    ("fields/trailing-newline", "0 0 * * *\n", "UTC", "a newline"),
    ("fields/newline-separator", "0\n0 * * *", "UTC", "a newline between fields"),
    ("fields/too-long", "00" + ",0" * 95 + "  * * * *", "UTC", "201 bytes"),
    ("macro/reboot", "@reboot", "UTC", "not a macro of the dialect"),
    ("macro/every", "@every 1h", "UTC", "robfig's @every"),
    ("macro/upper-case", "@DAILY", "UTC", "macros are lower case"),
    ("macro/space", "@daily ", "UTC", "space after a macro"),
    ("dow/seven", "0 0 * * 7", "UTC", "7 for Sunday"),
    ("dow/range-to-seven", "0 0 * * 1-7", "UTC", "7 for Sunday"),
    ("quartz/question-mark", "0 0 ? * 1", "UTC", "?"),
    ("quartz/last-day", "0 0 L * *", "UTC", "L"),
    ("quartz/last-weekday", "0 0 * * 5L", "UTC", "L"),
    ("quartz/weekday", "0 0 15W * *", "UTC", "W"),
    ("quartz/nth", "0 0 * * 1#2", "UTC", "#"),
    ("jenkins/hash", "H * * * *", "UTC", "H"),
    ("jenkins/hash-range", "H(0-29) * * * *", "UTC", "H"),
    ("step/lone-start", "5/20 * * * *", "UTC", "a/n without a range"),
    ("step/lone-start-dom", "0 0 1/2 * *", "UTC", "a/n without a range"),
    ("step/zero", "*/0 * * * *", "UTC", "step 0"),
    ("step/zero-padded", "0 0 * * */00", "UTC", "step 0"),
    ("step/over-minute", "*/61 * * * *", "UTC", "step over 60"),
    ("step/over-hour", "0 */25 * * *", "UTC", "step over 24"),
    ("step/over-dom", "0 0 */32 * *", "UTC", "step over 31"),
    ("step/over-month", "0 0 1 */13 *", "UTC", "step over 12"),
    ("step/over-dow", "0 0 * * */8", "UTC", "step over 7"),
    ("step/over-range", "0-59/61 * * * *", "UTC", "step over 60"),
    ("step/twice", "*/2/2 * * * *", "UTC", "two steps"),
    ("step/empty", "*/ * * * *", "UTC", "no step"),
    ("range/reversed", "30-10 * * * *", "UTC", "start after end"),
    ("range/reversed-dow-names", "0 0 * * FRI-MON", "UTC", "no wrap-around"),
    ("range/reversed-month-names", "0 0 1 DEC-JAN *", "UTC", "no wrap-around"),
    ("range/star", "*-5 * * * *", "UTC", "* in a range"),
    ("range/three", "1-2-3 * * * *", "UTC", "three values"),
    ("range/open", "1- * * * *", "UTC", "no end"),
    ("range/negative", "-1 * * * *", "UTC", "a sign"),
    ("range/plus", "+1 * * * *", "UTC", "a sign"),
    ("value/minute-60", "60 * * * *", "UTC", "minute 60"),
    ("value/hour-24", "0 24 * * *", "UTC", "hour 24"),
    ("value/dom-0", "0 0 0 * *", "UTC", "day 0"),
    ("value/dom-32", "0 0 32 * *", "UTC", "day 32"),
    ("value/month-0", "0 0 * 0 *", "UTC", "month 0"),
    ("value/month-13", "0 0 * 13 *", "UTC", "month 13"),
    ("value/dow-8", "0 0 * * 8", "UTC", "day of week 8"),
    ("value/three-digits", "000 * * * *", "UTC", "three digits"),
    ("value/name-in-dom", "0 0 MON * *", "UTC", "a name in day-of-month"),
    ("value/name-in-hour", "0 JAN * * *", "UTC", "a name in hour"),
    ("value/dow-name-in-month", "0 0 * MON *", "UTC", "a day name in month"),
    ("value/full-day-name", "0 0 * * MONDAY", "UTC", "full names"),
    ("value/full-month-name", "0 0 1 JANUARY *", "UTC", "full names"),
    ("value/long-s", "0 0 * * \u017fun", "UTC", "not ASCII (folds to 'sun' in some regex engines)"),
    ("value/fullwidth-digit", "\uff10 0 * * *", "UTC", "not ASCII"),
    ("list/empty-item", "1,,2 * * * *", "UTC", "an empty item"),
    ("list/trailing-comma", "1, * * * *", "UTC", "an empty item"),
    ("list/leading-comma", ",1 * * * *", "UTC", "an empty item"),
    ("list/double-star", "** * * * *", "UTC", "**"),
    ("never/30-feb", "0 0 30 2 *", "UTC", "no day matches"),
    ("never/31-apr", "0 0 31 4 *", "UTC", "no day matches"),
    ("never/30-31-feb", "0 0 30,31 2 *", "UTC", "no day matches"),
    ("never/31-short-months", "0 0 31 2,4,6,9,11 *", "UTC", "no day matches"),
    ("zone/unknown", "0 0 * * *", "Mars/Olympus", "not a zone"),
    ("zone/lower-case", "0 0 * * *", "europe/london", "names are case-sensitive"),
    ("zone/go-local", "0 0 * * *", "Local", "Go's name for the process zone"),
    ("zone/localtime", "0 0 * * *", "localtime", "a file of some systems, no IANA name"),
    ("zone/posix-dir", "0 0 * * *", "posix/Europe/London", "a directory of some systems"),
    ("zone/right-dir", "0 0 * * *", "right/UTC", "a directory of some systems"),
    ("zone/posixrules", "0 0 * * *", "posixrules", "a file of some systems"),
    ("zone/absolute", "0 0 * * *", "/UTC", "a path"),
    ("zone/trailing-slash", "0 0 * * *", "UTC/", "a path"),
    ("zone/double-slash", "0 0 * * *", "America//New_York", "a path"),
    ("zone/dot-dot", "0 0 * * *", "../zoneinfo/UTC", "a path"),
    ("zone/file", "0 0 * * *", "zone.tab", "a file of the database"),
    ("zone/space", "0 0 * * *", "Europe/London ", "a space"),
    ("zone/empty", "0 0 * * *", "", "no zone"),
    ("zone/offset", "0 0 * * *", "+01:00", "an offset is no zone"),
    ("zone/lower-case-link", "0 0 * * *", "us/eastern", "names are case-sensitive"),
    ("zone/upper-case", "0 0 * * *", "EUROPE/LONDON", "names are case-sensitive"),
    ("zone/factory", "0 0 * * *", "Factory", "tzdata's zone for an unset clock; ICU has none"),
    ("zone/icu-java-id", "0 0 * * *", "PST", "an ICU alias, no IANA name"),
    ("zone/icu-java-id-ist", "0 0 * * *", "IST", "an ICU alias, no IANA name"),
    ("zone/icu-system-v", "0 0 * * *", "SystemV/AST4", "an ICU alias, no IANA name"),
    ("zone/icu-removed-link", "0 0 * * *", "US/Pacific-New", "removed from tzdata in 2020"),
    ("zone/too-long", "0 0 * * *", LONG_TZ, "65 bytes"),
]


def document() -> str:
    """The vectors file's text."""
    vectors: list[dict[str, object]] = []
    for ident, expr, tz, after, count, note in SLOTS:
        cron, zi, after_ms = parse(expr), zone(tz), _ms(after)
        found = slots(cron, zi, after_ms, count)
        vectors.append(
            {
                "id": ident,
                "expr": expr,
                "tz": tz,
                "after_ms": after_ms,
                "next_ms": found,
                "next_local": [_local(s, zi) for s in found],
                **({"note": note} if note else {}),
            }
        )
    for ident, expr, tz, why in REFUSALS:
        try:
            parse(expr)
            zone(tz)
        except Refused:
            pass
        else:
            raise AssertionError(f"{ident}: the hand parser accepts it")
        vectors.append({"id": f"refused/{ident}", "expr": expr, "tz": tz, "refused": why})
    body = {
        "$schema": "../../schemas/cron-vectors.schema.json",
        "description": "Cron slot vectors of profile periodic; README.md beside this file gives the rules. "
        "Generated by tools/cron_vectors.py: do not edit.",
        "vectors": vectors,
    }
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = document()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run python tools/cron_vectors.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
