"""Blind mutant (issue #25, written from SPEC alone): a window of ``w`` complete minutes sums the
``w - 1`` minutes before the current one (``series[-w:-1]``), an off-by-one in the client's window
arithmetic (RWQ-STATS-006: minutes ``minute - w`` to ``minute - 1``)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import stats
from rwq.protocol.stats import StatCounts


def _window(series: Sequence[StatCounts], minutes: int) -> StatCounts:
    total = StatCounts()
    for counts in series[-minutes:-1]:
        total = total + counts
    return total


stats.window = _window

if __name__ == "__main__":
    serve(WorkQueue)
