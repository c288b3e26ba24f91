"""Profile stats (SPEC §22, "Queue statistics"): turn a queue's statistics on or off, and read them.

The canonical scripts count the events (added, completed, failed, dead, recovered) per minute
while ``<P>:stats`` exists; these plans only switch that flag and read the counts. Each plan
makes one script call per shard; none takes an argument that could be invalid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from .commands import Plan, RunScript
from .operations import QueueKeys
from .scripts import registry
from .sharding import OnShard, ShardLayout, ShardPlan

COUNTERS = ("added", "completed", "failed", "dead", "recovered")
"""The counters of SPEC §22.1, in the order the ``stats`` script replies with them."""
WINDOWS = (1, 5, 15, 60)
"""The windows ``stats`` reports, in complete minutes before the current one (RWQ-STATS-006)."""
MINUTES = 61
"""The minutes the ``stats`` read replies with: the current one and the 60 before it."""


@dataclass(frozen=True, slots=True)
class StatCounts:
    """One count per counter of SPEC §22.1."""

    added: int = 0
    completed: int = 0
    failed: int = 0
    dead: int = 0
    recovered: int = 0

    def __add__(self, other: StatCounts) -> StatCounts:
        return StatCounts(*(a + b for a, b in zip(self.values(), other.values(), strict=True)))

    def values(self) -> tuple[int, ...]:
        """The counts in the order of :data:`COUNTERS`."""
        return (self.added, self.completed, self.failed, self.dead, self.recovered)

    def as_dict(self) -> dict[str, int]:
        """The counts by counter name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class QueueStats:
    """A queue's statistics at the server's ``now_ms``.

    ``enabled``: stats are on (on every shard of a sharded queue); ``since_ms``: when they were
    turned on (server ms; the latest shard's), None while off. ``series``: the counts of minutes
    ``minute - 60`` .. ``minute``, oldest first (``minute`` = ``now_ms // 60000``); ``current``:
    this minute's so far; ``windows[w]``: the sum of the last ``w`` complete minutes.
    """

    enabled: bool
    since_ms: int | None
    now_ms: int
    minute: int
    series: tuple[StatCounts, ...]

    @property
    def current(self) -> StatCounts:
        """The counts of the current minute so far."""
        return self.series[-1]

    @property
    def windows(self) -> Mapping[int, StatCounts]:
        """Per window of :data:`WINDOWS`: the counts of the last ``w`` complete minutes."""
        return MappingProxyType({w: window(self.series, w) for w in WINDOWS})

    def rate(self, counter: str, minutes: int = 5) -> float:
        """``counter``'s events per second over the last ``minutes`` complete minutes."""
        if counter not in COUNTERS:
            raise ValueError(f"counter must be one of {', '.join(COUNTERS)}")
        if minutes not in WINDOWS:
            raise ValueError(f"minutes must be one of {', '.join(map(str, WINDOWS))}")
        return float(getattr(window(self.series, minutes), counter)) / (minutes * 60)


def window(series: Sequence[StatCounts], minutes: int) -> StatCounts:
    """The sum of the ``minutes`` complete minutes before the last one of ``series``."""
    total = StatCounts()
    for counts in series[-1 - minutes : -1]:
        total = total + counts
    return total


def parse(reply: Any) -> QueueStats:
    """The ``stats`` script's read reply as :class:`QueueStats`."""
    now, since, minute, minutes = reply
    series = tuple(StatCounts(*(int(n) for n in counts)) for counts in minutes)
    return QueueStats(int(since) >= 0, int(since) if int(since) >= 0 else None, int(now), int(minute), series)


def summed(shards: Sequence[QueueStats]) -> QueueStats:
    """The shards' statistics summed minute by minute, aligned on the latest shard's minute
    (RWQ-STATS-007): on only when on for every shard."""
    latest = max(shards, key=lambda s: s.now_ms)
    series = [StatCounts()] * MINUTES
    for shard in shards:
        shift = latest.minute - shard.minute  # a shard read in the minute before: one step older
        for i, counts in enumerate(shard.series):
            if 0 <= i - shift < MINUTES:
                series[i - shift] = series[i - shift] + counts
    enabled = all(shard.enabled for shard in shards)
    since = max(shard.since_ms or 0 for shard in shards) if enabled else None
    return QueueStats(enabled, since, latest.now_ms, latest.minute, tuple(series))


def stats_enable(keys: QueueKeys) -> Plan[bool]:
    """Turn stats on (RWQ-STATS-001); False when they were on already."""
    return bool((yield RunScript(registry()["stats"], (keys.queue,), (b"enable",))))


def stats_disable(keys: QueueKeys) -> Plan[bool]:
    """Turn stats off and delete the counts; False when they were off already."""
    return bool((yield RunScript(registry()["stats"], (keys.queue,), (b"disable",))))


def stats(keys: QueueKeys) -> Plan[QueueStats]:
    """The queue's statistics, from one script call (RWQ-STATS-006)."""
    return parse((yield RunScript(registry()["stats"], (keys.queue,), (b"read",))))


def sharded_enable(layout: ShardLayout) -> ShardPlan[bool]:
    """Stats on for every shard, shard 0 first (RWQ-STATS-007); True when any shard was off."""
    changed = False
    for shard in range(layout.count):
        changed = bool((yield OnShard(shard, "enable_stats", (), {}))) or changed
    return changed


def sharded_disable(layout: ShardLayout) -> ShardPlan[bool]:
    """Stats off for every shard, shard 0 first; True when any shard was on."""
    changed = False
    for shard in range(layout.count):
        changed = bool((yield OnShard(shard, "disable_stats", (), {}))) or changed
    return changed


def sharded_stats(layout: ShardLayout) -> ShardPlan[QueueStats]:
    """The shards' statistics summed minute by minute."""
    shards = []
    for shard in range(layout.count):
        shards.append((yield OnShard(shard, "stats", (), {})))
    return summed(shards)
