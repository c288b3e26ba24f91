"""The benchmark's own rwq drains still run against the current scripts (``make bench`` is not
part of ``make test``, so an argument the scripts gained would otherwise break them unseen)."""

from __future__ import annotations

import redis
from bench.peers.rwq_peers import _drain, _drain_lean

from rwq import WorkQueue


def test_the_bench_drains_empty_a_queue(r: redis.Redis, prefix: str) -> None:
    queue = WorkQueue(r, prefix)
    for lean in (False, True):
        queue.add_many([(f"i{n}", b"x") for n in range(250)])
        assert (_drain_lean(queue, r, 100) if lean else _drain(queue, 100)) == 250
        counts = queue.counts()
        assert (counts.queued, counts.processing) == (0, 0)
