"""Edge checks of release with refund on the canonical scripts (RWQ-RETRY-020/021), through the
reference client: counts 0/1/2/malformed, a repeated lease, a lease not held, no policy, a gone
item, and the refund word with a bad delay. Prints each outcome and the attempts field after.

    .venv/bin/python redteam/a_refund_edges.py
"""

from __future__ import annotations

import redis

from _server import redis_server
from rwq import RetryPolicy, WorkQueue
from rwq.errors import RwqError
from rwq.protocol.operations import Lease


def fresh(r: redis.Redis, name: str, policy: bool = True) -> tuple[WorkQueue, Lease]:
    q = WorkQueue(r, name)
    if policy:
        q.set_retry_policy(RetryPolicy(max_attempts=10))
    q.add("a", b"A")
    lease = q.lease(60_000)
    assert lease is not None
    return q, lease


def show(label: str, r: redis.Redis, name: str, call) -> None:  # noqa: ANN001
    try:
        result = call()
    except RwqError as exc:
        result = f"{exc.code}: {exc}"
    print(f"{label:45} -> {result!s:40} attempts={r.hget(f'{name}:attempts', 'a')}")


with redis_server() as port:
    r = redis.Redis(port=port)
    for n, raw in enumerate([b"0", b"1", b"2", b"abc", b"-3", b"1e3", b" 2", b"99999999999999999999"]):
        q, lease = fresh(r, f"q{n}")
        r.hset(f"q{n}:attempts", "a", raw)
        show(f"refund with the count set to {raw!r}", r, f"q{n}", lambda: q.release(lease, refund_attempt=True))
    q, lease = fresh(r, "rep")
    r.hset("rep:attempts", "a", 3)
    show("release_many([l, l], refund) at 3", r, "rep", lambda: q.release_many([lease, lease], refund_attempt=True))
    q, lease = fresh(r, "nh")
    other = Lease("a", b"", "0" * 32)
    show("refund of a lease not held", r, "nh", lambda: q.release(other, refund_attempt=True))
    q, lease = fresh(r, "np", policy=False)
    r.hset("np:attempts", "a", 2)
    show("refund without a policy (count 2)", r, "np", lambda: q.release(lease, refund_attempt=True))
    q, lease = fresh(r, "gone")
    q.complete("a")
    r.hset("gone:attempts", "a", 2)
    show("refund of a completed (gone) item (count 2)", r, "gone", lambda: q.release(lease, refund_attempt=True))
    q, lease = fresh(r, "dl")
    show("refund with delay_ms=5", r, "dl", lambda: q.release(lease, delay_ms=5, refund_attempt=True))
    q, lease = fresh(r, "raw")
    sha = r.script_load(open("../lua/release.lua", "rb").read())
    for argv in (["refund", "-1", "a", lease.token], ["refund", "1.5", "a", lease.token], ["refund", "a", lease.token], ["Refund", "0", "a", lease.token]):
        try:
            print("EVALSHA release", argv[:2], "->", r.evalsha(sha, 2, "raw:queue", "raw:processing", *argv), "attempts", r.hget("raw:attempts", "a"))
        except redis.ResponseError as exc:
            print("EVALSHA release", argv[:2], "->", exc, "attempts", r.hget("raw:attempts", "a"))
