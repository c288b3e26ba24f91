"""B9: a Worker (worker ACL role) on a sharded queue whose shard count the admin has not recorded
yet, though the admin did set the retry policy on every shard: it refuses to start with
PolicyMissing, "has no retry policy ... run `rwq policy set`", which is wrong (the policy is
there); the fix it needs is `rwq shards`. Running the command it names changes nothing.

    .venv/bin/python redteam/b9_sharded_policy_missing.py
"""

from __future__ import annotations

import shlex

import redis
from click.testing import CliRunner

from _server import redis_server
from rwq import RetryPolicy, Worker
from rwq.cli import cli
from rwq.sharded import ShardedWorkQueue
from rwq.worker import DEFAULT_RETRY

with redis_server() as port:
    admin = redis.Redis(port=port)
    for role in ("worker", "admin"):
        line = CliRunner().invoke(cli, ["acl", role, "--prefix", "jobs", "--shards", "2", "--user", role]).output
        admin.execute_command(*shlex.split(line.strip()), ">pw")
    as_admin = ShardedWorkQueue(redis.Redis(port=port, username="admin", password="pw"), "jobs", shards=2)
    # the admin stores the policy on every shard by hand (or an older rwq did), then deletes the
    # count, e.g. following SPEC §19's resharding procedure
    as_admin.set_retry_policy(DEFAULT_RETRY)
    admin.delete("{jobs#0}:shards")
    print("policy on shard 0:", admin.hgetall("{jobs#0}:policy") != {})
    queue = ShardedWorkQueue(redis.Redis(port=port, username="worker", password="pw"), "jobs", shards=2)
    try:
        Worker(queue, lambda job: None, burst=True).run()
    except Exception as exc:  # noqa: BLE001
        print(f"{type(exc).__name__}: {exc}")
    assert RetryPolicy  # the policy type, for readers
