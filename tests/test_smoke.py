"""The shortest path through the client: add, lease, complete."""

from rwq import WorkQueue


def test_add_lease_complete(queue: WorkQueue) -> None:
    assert queue.add("a", b"A")
    held = queue.lease(1000)
    assert held is not None
    assert (held.id, held.data) == ("a", b"A")
    assert queue.complete(held)
    assert not queue.complete(held)
    assert queue.counts().queued == queue.counts().processing == 0
