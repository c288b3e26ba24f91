"""Mutant: a client sums its windows over the last minutes including the current one, not the
complete minutes before it (RWQ-STATS-006)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import stats


def window(series: Sequence[stats.StatCounts], minutes: int) -> stats.StatCounts:
    total = stats.StatCounts()
    for counts in series[-minutes:]:
        total = total + counts
    return total


stats.window = window

if __name__ == "__main__":
    serve(WorkQueue)
