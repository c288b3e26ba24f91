"""A port that refuses schedule put on a sharded queue only after it stored the schedule on shard 0:
RWQ-SCHED-016."""

from typing import Any

from _blind25p import patch, serve_reference
from rwq.errors import InvalidArgument
from rwq.sharded import ShardedWorkQueue


def put_schedule(self: ShardedWorkQueue, name: str, schedule: Any, data: bytes = b"") -> bool:
    self.queues[0].put_schedule(name, schedule, data)
    raise InvalidArgument("schedules are not supported on a sharded queue yet (RWQ-SCHED-016)")


patch(ShardedWorkQueue, "put_schedule", put_schedule)

if __name__ == "__main__":
    serve_reference()
