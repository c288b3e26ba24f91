"""The reference adapter: conformance protocol v1 (conformance/PROTOCOL.md) over stdio, mapped
onto :class:`rwq.WorkQueue`. Run it as ``python -m rwq.conformance.reference_adapter``.

It only translates: JSON params to library calls, results and errors back to JSON. A port's
adapter has the same shape.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, TextIO

import redis
from redis.cluster import RedisCluster

from .. import __version__
from ..client import WorkQueue
from ..errors import RwqError
from ..periodic import Scheduler
from ..protocol.live import Beat
from ..protocol.operations import CleanReport, DeadItem, FailOutcome, FailResult, Lease, Outcome, RetryPolicy
from ..protocol.periodic import Fired, Schedule, next_slots
from ..protocol.scripts import registry
from ..protocol.stats import QueueStats
from ..sharded import ShardedWorkQueue
from .encoding import Json, decode_bytes, encode_bytes

PROFILES = [
    "core",
    "retry",
    "delay",
    "ack",
    "flat",
    "sharded",
    "legacy-lease",
    "declared-keys",
    "workers",
    "stats",
    "periodic",
]
Queue = WorkQueue | ShardedWorkQueue
"""A session's queue: profile sharded's (option ``shards``) or a plain one."""
OUTCOMES = {Outcome.DONE: "done", Outcome.GONE: "gone", Outcome.LEASE_LOST: "lease_lost"}
FAIL_OUTCOMES = {FailOutcome.RETRY: "retry", FailOutcome.DEAD: "dead", FailOutcome.GONE: "gone"}


def _id(value: Json) -> str:
    return decode_bytes(value).decode("utf-8", "surrogateescape")


def _id_json(item_id: str) -> Json:
    return encode_bytes(item_id.encode("utf-8", "surrogateescape"))


def _lease(value: Json) -> Lease:
    return Lease(_id(value["id"]), b"", value["token"])


def _lease_json(lease: Lease | None) -> Json:
    if lease is None:
        return None
    return {
        "id": _id_json(lease.id),
        "data": encode_bytes(lease.data),
        "token": lease.token,
        "attempt": lease.attempt,
    }


def _target(value: Json) -> Lease | str:
    return _lease(value["lease"]) if "lease" in value else _id(value["id"])


def _clean(report: CleanReport) -> Json:
    return {
        "requeued": [_id_json(item_id) for item_id in report.requeued],
        "dropped": report.dropped,
        "dead": [_id_json(item_id) for item_id in report.dead],
        "promoted": report.promoted,
    }


def _counts(queue: Queue) -> Json:
    counts = queue.counts()
    return {
        "queued": counts.queued,
        "processing": counts.processing,
        "delayed": counts.delayed,
        "dead": counts.dead,
    }


def _given(p: dict[str, Any], *names: str) -> dict[str, Any]:
    """The optional params that are present, as keyword arguments (absent: the library's default)."""
    return {name: p[name] for name in names if name in p}


def _policy(value: Json) -> RetryPolicy | None:
    return None if value is None else RetryPolicy(**value)


def _policy_json(policy: RetryPolicy | None) -> Json:
    if policy is None:
        return None
    return {
        "max_attempts": policy.max_attempts,
        "backoff": policy.backoff,
        "base_ms": policy.base_ms,
        "cap_ms": policy.cap_ms,
        "jitter_pct": policy.jitter_pct,
        "dead_max_count": policy.dead_max_count,
        "dead_max_age_ms": policy.dead_max_age_ms,
    }


def _dead_json(item: DeadItem | None) -> Json:
    if item is None:
        return None
    value = {
        "id": _id_json(item.id),
        "dead_at_ms": item.dead_at_ms,
        "reason": item.reason,
        "attempts": item.attempts,
        "detail": item.detail,
    }
    if item.data is not None:
        value["data"] = encode_bytes(item.data)
    return value


def _fail(result: FailResult) -> Json:
    return {"outcome": FAIL_OUTCOMES[result.outcome], "delay_ms": result.delay_ms}


def _beat(beat: Beat) -> Json:
    return {"now_ms": beat.now_ms, "removed": beat.removed}


def _stats(stats: QueueStats) -> Json:
    return {
        "enabled": stats.enabled,
        "since_ms": stats.since_ms,
        "now_ms": stats.now_ms,
        "current": stats.current.as_dict(),
        "windows": {str(w): counts.as_dict() for w, counts in stats.windows.items()},
    }


SCHEDULE_MEMBERS = ("every_ms", "offset_ms", "cron", "tz", "missed", "grace_ms")


def _schedule(value: Json) -> Schedule:
    """A schedule object as the library's Schedule, unchecked: the library refuses bad values."""
    if not isinstance(value, dict):
        return value  # type: ignore[no-any-return]  # the library refuses what is not a Schedule
    return Schedule(**{name: value[name] for name in SCHEDULE_MEMBERS if name in value})


def _listed(queue: Queue) -> Json:
    if not isinstance(queue, WorkQueue):
        raise Unsupported("schedule_list on a sharded session")
    out = []
    for stored in queue.schedules().schedules:
        try:
            stored.schedule()
            definition = json.loads(stored.definition)
        except RwqError:
            definition = None
        out.append(
            {
                "name": stored.name,
                "schedule": definition,
                "data": encode_bytes(stored.data),
                "last_fired_ms": stored.last_fired_ms,
                "paused_ms": stored.paused_ms,
            }
        )
    return out


def _fired(reply: Fired) -> Json:
    return {
        "now_ms": reply.now_ms,
        "status": reply.status,
        "last_fired_ms": reply.last_fired_ms,
        "outcomes": reply.outcomes,
    }


def _plain(queue: Queue, method: str) -> WorkQueue:
    if not isinstance(queue, WorkQueue):
        raise Unsupported(f"{method} on a sharded session")
    return queue


def _complete_and_lease(queue: Queue, p: dict[str, Any]) -> Json:
    outcomes, leases = queue.complete_and_lease_many(
        [_target(t) for t in p["items"]],
        p.get("count", 1),
        p["lease_ms"],
        require_lease=p.get("require_lease", False),
    )
    return {"outcomes": [OUTCOMES[o] for o in outcomes], "leases": [_lease_json(lease) for lease in leases]}


def _set_policy(queue: Queue, p: dict[str, Any]) -> Json:
    queue.set_retry_policy(_policy(p["policy"]))
    return {}


def _set_policy_if_absent(queue: Queue, p: dict[str, Any]) -> Json:
    return queue.set_retry_policy(_policy(p["policy"]), if_absent=True)


METHODS: dict[str, Callable[[Queue, dict[str, Any]], Json]] = {
    "add": lambda q, p: q.add(_id(p["id"]), decode_bytes(p["data"]), **_given(p, "delay_ms")),
    "add_many": lambda q, p: q.add_many(
        [(_id(i["id"]), decode_bytes(i["data"])) for i in p["items"]], **_given(p, "delay_ms")
    ),
    "lease": lambda q, p: _lease_json(
        q.lease(p["lease_ms"], block=p.get("block", False), timeout_ms=p.get("timeout_ms", 0))
    ),
    "lease_many": lambda q, p: [
        _lease_json(lease) for lease in q.lease_many(count=p["count"], lease_ms=p["lease_ms"])
    ],
    "renew": lambda q, p: q.renew(_lease(p["lease"]), p["lease_ms"]),
    "renew_many": lambda q, p: q.renew_many([_lease(lease) for lease in p["leases"]], p["lease_ms"]),
    "complete": lambda q, p: q.complete(_target(p), require_lease=p.get("require_lease", False)),
    "complete_many": lambda q, p: [
        OUTCOMES[outcome]
        for outcome in q.complete_many(
            [_target(t) for t in p["items"]], require_lease=p.get("require_lease", False)
        )
    ],
    "complete_and_lease": _complete_and_lease,
    "release": lambda q, p: q.release(_lease(p["lease"]), **_given(p, "delay_ms", "refund_attempt")),
    "release_many": lambda q, p: [
        OUTCOMES[o]
        for o in q.release_many(
            [_lease(lease) for lease in p["leases"]], **_given(p, "delay_ms", "refund_attempt")
        )
    ],
    "counts": lambda q, p: _counts(q),
    "light_clean": lambda q, p: _clean(q.light_clean(**_given(p, "chunk", "pace_ms"))),
    "deep_clean": lambda q, p: _clean(q.deep_clean(**_given(p, "chunk"))),
    "fail": lambda q, p: _fail(
        q.fail(_lease(p["lease"]), **_given(p, "reason", "dead", "delay_ms", "fallback_delay_ms", "detail"))
    ),
    "set_policy": _set_policy,
    "set_policy_if_absent": _set_policy_if_absent,
    "get_policy": lambda q, p: _policy_json(q.retry_policy()),
    "dead_list": lambda q, p: [_dead_json(item) for item in q.dead_items(**_given(p, "offset", "count"))],
    "dead_get": lambda q, p: _dead_json(q.dead_item(_id(p["id"]))),
    "dead_requeue": lambda q, p: q.requeue_dead([_id(item_id) for item_id in p["ids"]]),
    "dead_purge": lambda q, p: q.purge_dead([_id(item_id) for item_id in p["ids"]]),
    "worker_beat": lambda q, p: _beat(q.worker_beat(p["id"], p["ttl_ms"], p["record"])),
    "worker_leave": lambda q, p: q.worker_leave(p["id"]),
    "workers": lambda q, p: [
        {"id": w.id, "record": w.record, "deadline_ms": w.deadline_ms}
        for w in q.workers(**_given(p, "offset", "count"))
    ],
    "stats_enable": lambda q, p: q.enable_stats(),
    "stats_disable": lambda q, p: q.disable_stats(),
    "stats": lambda q, p: _stats(q.stats()),
    "schedule_put": lambda q, p: q.put_schedule(p["name"], _schedule(p["schedule"]), decode_bytes(p["data"])),
    "schedule_remove": lambda q, p: _plain(q, "schedule_remove").remove_schedule(p["name"]),
    "schedule_pause": lambda q, p: _plain(q, "schedule_pause").pause_schedule(p["name"]),
    "schedule_resume": lambda q, p: _plain(q, "schedule_resume").resume_schedule(p["name"]),
    "schedule_list": lambda q, p: _listed(q),
    "schedule_fire": lambda q, p: _fired(_plain(q, "schedule_fire").fire(p["name"], p["digest"], p["slots"])),
    "schedule_next": lambda q, p: next_slots(_schedule(p["schedule"]), p["after_ms"], p["count"]),
    "scheduler_tick": lambda q, p: None,  # replaced per session by Adapter.call (it keeps a Scheduler)
}


OPS = ("hello", "open", "call", "close", "reset", "shutdown")


class BadRequest(Exception):
    """A request the adapter cannot parse (error kind ``protocol``)."""


class Unsupported(Exception):
    """A method this adapter does not implement (error kind ``unsupported``)."""


class Adapter:
    """Sessions by name, each one WorkQueue on its own redis-py client."""

    def __init__(self) -> None:
        self.redis_url = os.environ.get("RWQ_REDIS_URL", "")
        self.cluster = os.environ.get("RWQ_REDIS_CLUSTER") == "1"
        self.sessions: dict[str, tuple[redis.Redis | RedisCluster, Queue]] = {}
        self.schedulers: dict[str, Scheduler] = {}
        self.done = False

    def hello(self, args: dict[str, Any]) -> Json:
        if 1 not in args.get("protocols", []):
            raise BadRequest("this adapter speaks protocol 1 only")
        self.redis_url = args.get("redis", {}).get("url") or self.redis_url
        self.cluster = bool(args.get("redis", {}).get("cluster", self.cluster))
        return {
            "protocol": 1,
            "implementation": {"name": "rwq", "language": "python", "version": __version__},
            "profiles": PROFILES,
            "methods": sorted(METHODS),
            "scripts": {name: script.sha1 for name, script in registry().items()},
            "capabilities": {"cluster": True},
        }

    def open(self, args: dict[str, Any]) -> Json:
        self.close(args)
        client: redis.Redis | RedisCluster = (
            RedisCluster.from_url(self.redis_url, client_name=args["client_name"])
            if self.cluster
            else redis.Redis.from_url(self.redis_url, client_name=args["client_name"])
        )
        options = args.get("options", {})
        # Options beyond the legacy key are passed only when a case gives them, so that mutants
        # with a narrower constructor keep working on the cases that do not use them.
        extra = ("wait_replicas", "wait_timeout_ms", "flat_in_flight", "declared_keys")
        given = {name: options[name] for name in extra if name in options}
        legacy = options.get("legacy_lease_key", False)
        queue: Queue
        if "shards" in options:
            queue = ShardedWorkQueue(
                client, args["queue"], shards=options["shards"], legacy_lease_key=legacy, **given
            )
        else:
            queue = WorkQueue(client, args["queue"], legacy_lease_key=legacy, **given)
        self.sessions[args["session"]] = (client, queue)
        return {}

    def call(self, args: dict[str, Any]) -> Json:
        if args["session"] not in self.sessions:
            raise BadRequest(f"unknown session {args['session']!r}")
        queue = self.sessions[args["session"]][1]
        if args["method"] == "scheduler_tick":
            scheduler = self.schedulers.get(args["session"])
            if scheduler is None:
                scheduler = Scheduler(_plain(queue, "scheduler_tick"), heartbeat=False)
                self.schedulers[args["session"]] = scheduler
            tick = scheduler.tick()
            return {"fired": tick.fired, "next_ms": tick.next_ms}
        return METHODS[args["method"]](queue, args["params"])

    def close(self, args: dict[str, Any]) -> Json:
        self.schedulers.pop(args["session"], None)
        client, _ = self.sessions.pop(args["session"], (None, None))
        if client is not None:
            client.close()
        return {}

    def reset(self, args: dict[str, Any]) -> Json:
        for name in list(self.sessions):
            self.close({"session": name})
        return {}

    def shutdown(self, args: dict[str, Any]) -> Json:
        self.reset(args)
        self.done = True
        return {}

    def dispatch(self, request: dict[str, Any]) -> Json:
        """Run one request; raises on anything :meth:`handle` reports as an error."""
        op = request["op"]
        if op not in OPS:
            raise BadRequest(f"unknown op {op!r}")
        if op == "call" and request["args"]["method"] not in METHODS:
            raise Unsupported(request["args"]["method"])
        return getattr(self, op)(request.get("args", {}))

    def handle(self, line: str) -> dict[str, Any]:
        """One request line in, one response object out."""
        request_id = 0
        error: dict[str, Any]
        try:
            request = json.loads(line)
            request_id = request["id"]
            return {"v": 1, "id": request_id, "ok": self.dispatch(request)}
        except RwqError as exc:
            error = {"kind": "domain", "code": exc.code, "message": str(exc)}
        except Unsupported as exc:
            error = {"kind": "unsupported", "code": "UNSUPPORTED", "message": f"no method {exc}"}
        except (BadRequest, KeyError, TypeError, ValueError) as exc:
            error = {"kind": "protocol", "code": "BAD_REQUEST", "message": f"{type(exc).__name__}: {exc}"}
        except Exception as exc:  # anything else is an adapter or library bug, reported as such
            error = {
                "kind": "internal",
                "code": "INTERNAL",
                "message": f"{type(exc).__name__}: {exc}",
                "detail": {"traceback": traceback.format_exc()},
            }
        return {"v": 1, "id": request_id, "err": error}


def serve(stdin: TextIO, stdout: TextIO) -> None:
    """Answer requests from ``stdin`` on ``stdout`` until ``shutdown`` or end of input."""
    adapter = Adapter()
    for line in stdin:
        stdout.write(json.dumps(adapter.handle(line), separators=(",", ":")) + "\n")
        stdout.flush()
        if adapter.done:
            return
    adapter.reset({})


def main() -> None:
    protocol_out = sys.stdout
    sys.stdout = sys.stderr  # stdout carries the protocol only: stray prints go to stderr
    serve(sys.stdin, protocol_out)


if __name__ == "__main__":
    main()
