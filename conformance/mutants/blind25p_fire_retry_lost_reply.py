"""A port whose client sends a fire again once when its reply was lost to a connection error:
RWQ-SCHED-011."""

from collections.abc import Sequence

from _blind25p import patch, serve_reference
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.periodic import Fired

ORIGINAL = WorkQueue.fire


def fire(self: WorkQueue, name: str, digest: str, slots: Sequence[int]) -> Fired:
    try:
        return ORIGINAL(self, name, digest, slots)
    except RedisFailure:
        return ORIGINAL(self, name, digest, slots)


patch(WorkQueue, "fire", fire)

if __name__ == "__main__":
    serve_reference()
