"""Regressions found in review, each pinned by the smallest reproduction."""

import redis

from rwq import WorkQueue


def test_light_clean_continues_after_a_fully_removed_first_chunk(queue: WorkQueue, r: redis.Redis) -> None:
    """A chunk whose entries were all requeued left cursor 0, which once read as 'done'."""
    queue.add_many([("a", b"A"), ("b", b"B"), ("c", b"C")])
    for _ in range(3):  # moved without a lease: abandoned
        r.lmove(queue.keys.queue.decode(), queue.keys.processing.decode(), "RIGHT", "LEFT")
    report = queue.light_clean(chunk=1)
    assert report.requeued == ("a", "b", "c")
    assert queue.counts().queued == 3
