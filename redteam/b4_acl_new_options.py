"""B4: every ACL role x the operations #21 added or changed (fail with dead / a requested delay /
a fallback / a detail, release with refund, their batch forms), on a plain, a declared-keys and a
sharded queue, sync and asyncio, with a due delayed item waiting: a call Redis refuses must
leave every key as it was (RWQ-SEC-006). Prints each outcome; "WROTE" marks a violation.

    .venv/bin/python redteam/b4_acl_new_options.py
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import Callable
from typing import Any

import redis
import redis.asyncio as aioredis
from click.testing import CliRunner

from _server import redis_server
from rwq import RetryPolicy, WorkQueue
from rwq.aio import AsyncWorkQueue
from rwq.cli import cli
from rwq.errors import NoPermission, RwqError
from rwq.sharded import AsyncShardedWorkQueue, ShardedWorkQueue

ROLES = ("producer", "worker", "operator", "admin")
PASSWORD = "pw"


def snapshot(r: redis.Redis) -> dict[bytes, Any]:
    state = {}
    for key in r.scan_iter(count=1000):
        kind = r.type(key)
        value = {
            b"string": r.get,
            b"list": lambda k: r.lrange(k, 0, -1),
            b"hash": r.hgetall,
            b"zset": lambda k: r.zrange(k, 0, -1, withscores=True),
            b"set": r.smembers,
        }[kind](key)
        state[key] = (kind, value)
    return state


def held(q: Any) -> Any:
    q.set_retry_policy(RetryPolicy(max_attempts=3, base_ms=0))
    q.add("h", b"H")
    q.add("d", b"D", delay_ms=1)  # due by the time the call runs
    lease = q.lease(60_000)
    q.add("d2", b"D", delay_ms=1)
    time.sleep(0.01)
    return lease


OPS: dict[str, Callable[[Any, Any], Any]] = {
    "fail dead+detail": lambda q, l: q.fail(l, "bad", dead=True, detail="trace"),
    "fail delay_ms": lambda q, l: q.fail(l, "later", delay_ms=5),
    "fail delay_ms=0": lambda q, l: q.fail(l, "now", delay_ms=0),
    "fail fallback": lambda q, l: q.fail(l, "x", fallback_delay_ms=1000, detail="t"),
    "release refund": lambda q, l: q.release(l, refund_attempt=True),
    "release refund delay": lambda q, l: q.release(l, delay_ms=5, refund_attempt=True),
    "release_many refund": lambda q, l: q.release_many([l], refund_attempt=True),
    "complete_and_lease": lambda q, l: q.complete_and_lease(l, 60_000),
    "lease": lambda q, l: q.lease(60_000),
    "light_clean": lambda q, l: q.light_clean(),
}


def run_async(q: Any, name: str, lease: Any) -> Any:
    async def go() -> Any:
        result = OPS[name](q, lease)
        return await result if asyncio.iscoroutine(result) else result

    return asyncio.run(go())


def main() -> None:
    with redis_server() as port:
        admin = redis.Redis(port=port)
        violations = 0
        for variant in ("plain", "declared", "sharded", "async", "async-sharded"):
            for role in ROLES:
                options = ["--declared-keys"] if variant == "declared" else []
                if "sharded" in variant:
                    options = ["--shards", "2"]
                out = CliRunner().invoke(cli, ["acl", role, "--prefix", "jobs", *options, "--user", f"u-{role}"])
                admin.execute_command(*shlex.split(out.output.strip()), f">{PASSWORD}")
            for role in ROLES:
                for name in OPS:
                    admin.flushall()
                    setup_q: Any = (
                        ShardedWorkQueue(admin, "jobs", shards=2) if "sharded" in variant else WorkQueue(admin, "jobs")
                    )
                    lease = held(setup_q)
                    before = snapshot(admin)
                    if variant.startswith("async"):
                        client: Any = aioredis.Redis(port=port, username=f"u-{role}", password=PASSWORD)
                        q: Any = (
                            AsyncShardedWorkQueue(client, "jobs", shards=2)
                            if "sharded" in variant
                            else AsyncWorkQueue(client, "jobs")
                        )
                    else:
                        client = redis.Redis(port=port, username=f"u-{role}", password=PASSWORD)
                        q = (
                            ShardedWorkQueue(client, "jobs", shards=2)
                            if variant == "sharded"
                            else WorkQueue(client, "jobs", declared_keys=variant == "declared")
                        )
                    try:
                        run_async(q, name, lease) if variant.startswith("async") else OPS[name](q, lease)
                        outcome = "ok"
                    except NoPermission:
                        outcome = "NOPERM" if snapshot(admin) == before else "WROTE"
                    except RwqError as exc:
                        outcome = f"{exc.code}" + ("" if snapshot(admin) == before else " WROTE")
                    except Exception as exc:  # noqa: BLE001
                        outcome = f"{type(exc).__name__}: {exc}"[:120]
                    if "WROTE" in outcome or outcome not in ("ok", "NOPERM"):
                        violations += "WROTE" in outcome
                        changed = sorted(k for k in before.keys() | snapshot(admin).keys()
                                         if before.get(k) != snapshot(admin).get(k))
                        print(f"{variant:13} {role:9} {name:22} {outcome}  changed={changed}")
                    else:
                        print(f"{variant:13} {role:9} {name:22} {outcome}")
        print("violations:", violations)


main()
