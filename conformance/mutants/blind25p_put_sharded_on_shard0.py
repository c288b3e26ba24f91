"""A port that stores a sharded queue's schedules on its shard 0 (as live workers are) instead of
refusing schedule put: RWQ-SCHED-016."""

from typing import Any

from _blind25p import patch, serve_reference
from rwq.sharded import ShardedWorkQueue


def put_schedule(self: ShardedWorkQueue, name: str, schedule: Any, data: bytes = b"") -> bool:
    return self.queues[0].put_schedule(name, schedule, data)


patch(ShardedWorkQueue, "put_schedule", put_schedule)

if __name__ == "__main__":
    serve_reference()
