"""conformance/cases/sharded.json: the cases of profile sharded (SPEC §19), written here because
their expectations follow from CRC-32 routing, which this module computes on its own (zlib),
independently of the reference client."""

from __future__ import annotations

import json
import zlib
from typing import Any

N = 3
Json = Any


def shard(item_id: str, count: int = N) -> int:
    return zlib.crc32(item_id.encode()) % count


def ids_on(index: int, many: int) -> list[str]:
    """The first ``many`` one-letter ids that CRC-32 routes to shard ``index`` of N."""
    return [c for c in "abcdefghijklmnopqrstuvwxyz" if shard(c) == index][:many]


def count_of(n: int) -> Json:
    """A JSON Schema: an array of exactly ``n`` entries."""
    return {"type": "array", "minItems": n, "maxItems": n}


def item(item_id: str) -> Json:
    return {"id": {"utf8": item_id}, "data": {"utf8": item_id.upper()}}


def add_many(ids: list[str], session: str = "p", **extra: Json) -> Json:
    return {"call": "add_many", "session": session, "args": {"items": [item(i) for i in ids], **extra}}


def lease(session: str = "w", lease_ms: int = 30000, *, save: str = "", **expect: Json) -> Json:
    step: Json = {"call": "lease", "session": session, "args": {"lease_ms": lease_ms}}
    if expect:
        step["expect"] = expect
    if save:
        step["save"] = {save: ""}
    return step


def shard_state(index: int, **state: Json) -> Json:
    return {"check": {"shard": index, "state": state}}


def key(index: int | str, family: str) -> str:
    return f"{{${{bare}}#{index}}}:{family}"


BELL = "{${bare}#bell}"
SHARDED: Json = {"untagged": True, "options": {"shards": N}}


def sessions(**extra: Json) -> Json:
    """The three default clients p, w and x, and ``extra`` ones."""
    return {"p": SHARDED, "w": SHARDED, "x": SHARDED, **extra}


POLICY: Json = {
    "max_attempts": 1,
    "backoff": "fixed",
    "base_ms": 1000,
    "cap_ms": 0,
    "jitter_pct": 0,
    "dead_max_count": 0,
    "dead_max_age_ms": 0,
}
LEASES: Json = {f"{v}{n}": f"/{n}{ptr}" for n in range(N) for v, ptr in (("l", ""), ("i", "/id"))}
"""Saves the N leases of a lease_many as l0.., and their ids as i0.."""
OWN = {**SHARDED, "own_process": True}  # a session that makes async calls


def routing() -> list[Json]:
    on = [ids_on(i, 2) for i in range(N)]
    every = [i for ids in zip(*on, strict=True) for i in ids]  # interleaved over the shards
    keys: dict[str, Json] = {"$only": True, key(0, "shards"): {"type": "string", "value": {"utf8": str(N)}}}
    for i in every:
        keys[key(shard(i), f"item:{i}")] = {"type": "string", "value": {"utf8": i.upper()}}
    for index in range(N):
        keys[key(index, "queue")] = {"type": "list", "value": [{"utf8": i} for i in reversed(on[index])]}
    keys[BELL] = {"type": "list", "value": [{"utf8": "1"}] * len(every)}
    return [
        {
            "id": "sharded/add/routed-by-crc32",
            "title": "each id lands on shard CRC-32(id) mod N, the count is recorded, the bell rung",
            "requirements": ["RWQ-SHARD-001", "RWQ-SHARD-002", "RWQ-SHARD-003", "RWQ-SHARD-006"],
            "steps": [
                {**add_many(every), "expect": {"result": [True] * len(every)}},
                {"check": {"keys": keys}},
                *(shard_state(index, queue=on[index], processing=[]) for index in range(N)),
            ],
        },
        {
            "id": "sharded/add/idempotent-across-clients",
            "title": "an id added again, by any client or in a batch, is found on its shard",
            "requirements": ["RWQ-SHARD-002"],
            "steps": [
                {"call": "add", "session": "p", "args": item(on[1][0]), "expect": {"result": True}},
                {"call": "add", "session": "x", "args": item(on[1][0]), "expect": {"result": False}},
                {
                    **add_many([on[2][0], on[1][0], on[0][0]], session="x"),
                    "expect": {"result": [True, False, True]},
                },
                *(shard_state(index, queue=[on[index][0]]) for index in range(N)),
            ],
        },
    ]


def count_check() -> list[Json]:
    a = ids_on(0, 1)[0]
    m4 = {"untagged": True, "refusable": False, "options": {"shards": N + 1}}
    return [
        {
            "id": "sharded/count/mismatch-refused",
            "title": "a client with another shard count gets SHARD_MISMATCH and writes nothing",
            "requirements": ["RWQ-SHARD-003"],
            "sessions": sessions(m=m4),
            "steps": [
                {"call": "add", "session": "p", "args": item(a), "expect": {"result": True}},
                {"call": "add", "session": "m", "args": item("z"), "expect": {"error": "SHARD_MISMATCH"}},
                {
                    "call": "lease",
                    "session": "m",
                    "args": {"lease_ms": 1000},
                    "expect": {"error": "SHARD_MISMATCH"},
                },
                {"call": "counts", "session": "m", "expect": {"error": "SHARD_MISMATCH"}},
                {
                    "check": {
                        "keys": {
                            "$only": True,
                            key(0, "shards"): {"value": {"utf8": str(N)}},
                            key(0, f"item:{a}"): {"type": "string"},
                            key(0, "queue"): {"value": [{"utf8": a}]},
                            BELL: {"type": "list"},
                        }
                    }
                },
                {
                    "call": "lease",
                    "session": "w",
                    "args": {"lease_ms": 1000},
                    "expect": {"result": {"id": {"utf8": a}}},
                },
            ],
        },
        {
            "id": "sharded/count/first-client-records",
            "title": "the first client of a queue records its count; a later one with another is refused",
            "requirements": ["RWQ-SHARD-003"],
            "sessions": sessions(m=m4),
            "steps": [
                {"call": "counts", "session": "m", "expect": {"result": {"queued": 0, "processing": 0}}},
                {"check": {"keys": {"$only": True, key(0, "shards"): {"value": {"utf8": str(N + 1)}}}}},
                {"call": "add", "session": "p", "args": item("a"), "expect": {"error": "SHARD_MISMATCH"}},
                {"check": {"keys": {"$only": True, key(0, "shards"): {"value": {"utf8": str(N + 1)}}}}},
            ],
        },
        {
            "id": "sharded/count/garbage-is-a-mismatch",
            "title": "a shard count key that holds no count is a mismatch, never taken as absent",
            "requirements": ["RWQ-SHARD-003"],
            "steps": [
                {"redis": ["SET", key(0, "shards"), "three"]},
                {"call": "add", "session": "p", "args": item("a"), "expect": {"error": "SHARD_MISMATCH"}},
                {"check": {"keys": {"$only": True, key(0, "shards"): {"value": {"utf8": "three"}}}}},
            ],
        },
    ]


def rotation() -> list[Json]:
    on2 = [ids_on(i, 2) for i in range(N)]
    on3 = [ids_on(i, 3) for i in range(N)]
    busy = ids_on(0, 5)
    return [
        {
            "id": "sharded/lease/rotation-takes-one-from-each",
            "title": "N consecutive leases of one client take one item from each non-empty shard",
            "requirements": ["RWQ-SHARD-004"],
            "steps": [
                add_many([i for ids in on2 for i in ids]),
                *(lease() for _ in range(N)),
                *(
                    shard_state(index, queue=[on2[index][1]], processing=[on2[index][0]])
                    for index in range(N)
                ),
                *(lease() for _ in range(N)),
                *(shard_state(index, queue=[]) for index in range(N)),
                lease(result=None),
            ],
        },
        {
            "id": "sharded/lease/busy-shard-starves-no-other",
            "title": "with one shard full, the others' items are still leased within N calls",
            "requirements": ["RWQ-SHARD-004"],
            "steps": [
                add_many([*busy, ids_on(1, 1)[0], ids_on(2, 1)[0]]),
                *(lease() for _ in range(N)),
                shard_state(1, queue=[]),
                shard_state(2, queue=[]),
                {"call": "counts", "session": "p", "expect": {"result": {"queued": 4, "processing": 3}}},
            ],
        },
        {
            "id": "sharded/lease/blocking-leases-rotate-too",
            "title": "blocking leases that find items visit the shards in rotation like the others",
            "requirements": ["RWQ-SHARD-004", "RWQ-SHARD-007"],
            "steps": [
                add_many([*busy, ids_on(1, 1)[0], ids_on(2, 1)[0]]),
                *(
                    {
                        "call": "lease",
                        "session": "w",
                        "args": {"lease_ms": 30000, "block": True, "timeout_ms": 1000},
                    }
                    for _ in range(N)
                ),
                shard_state(1, queue=[]),
                shard_state(2, queue=[]),
            ],
        },
        {
            "id": "sharded/lease-many/rotation-advances",
            "title": "each lease_many starts one shard further than the last",
            "requirements": ["RWQ-SHARD-004"],
            "steps": [
                add_many([i for ids in on3 for i in ids]),
                *(
                    {
                        "call": "lease_many",
                        "session": "w",
                        "args": {"count": 2, "lease_ms": 30000},
                        "expect": {"result_matches": count_of(2)},
                    }
                    for _ in range(N)
                ),
                *(shard_state(index, queue=[on3[index][2]]) for index in range(N)),
            ],
        },
    ]


def per_id() -> list[Json]:
    (a, c, d), g, b = ids_on(0, 3), ids_on(1, 1)[0], ids_on(2, 1)[0]
    return [
        {
            "id": "sharded/settle/routed-by-id",
            "title": "renew, complete and release by another client reach the item's shard",
            "requirements": ["RWQ-SHARD-002", "RWQ-SHARD-006"],
            "steps": [
                add_many([a, g, b]),
                *(
                    {"call": "lease", "session": "w", "args": {"lease_ms": 30000}, "save": {f"l{n}": ""}}
                    for n in range(N)
                ),
                {
                    "call": "renew",
                    "session": "x",
                    "args": {"lease": "${l0}", "lease_ms": 60000},
                    "expect": {"result": True},
                },
                {
                    "call": "complete",
                    "session": "x",
                    "args": {"lease": "${l1}", "require_lease": True},
                    "expect": {"result": True},
                },
                {"redis": ["DEL", BELL]},
                {"call": "release", "session": "x", "args": {"lease": "${l2}"}, "expect": {"result": True}},
                {"check": {"keys": {BELL: {"type": "list", "value": [{"utf8": "1"}]}}}},
                {"call": "counts", "session": "p", "expect": {"result": {"queued": 1, "processing": 1}}},
                {
                    "call": "complete",
                    "session": "x",
                    "args": {"id": {"utf8": "nope"}},
                    "expect": {"result": False},
                },
            ],
        },
        {
            "id": "sharded/settle/batches-in-input-order",
            "title": "complete_many and release_many over every shard answer in input order",
            "requirements": ["RWQ-SHARD-002", "RWQ-SHARD-006"],
            "steps": [
                add_many([a, g, b]),
                {
                    "call": "lease_many",
                    "session": "w",
                    "args": {"count": 3, "lease_ms": 30000},
                    "save": {"all": ""},
                },
                {
                    "call": "release_many",
                    "session": "w",
                    "args": {"leases": "${all}"},
                    "expect": {"result": ["done", "done", "done"]},
                },
                {"check": {"keys": {BELL: {"type": "list", "value": [{"utf8": "1"}] * 6}}}},
                {
                    "call": "complete_many",
                    "session": "x",
                    "args": {
                        "items": [
                            {"id": {"utf8": b}},
                            {"id": {"utf8": "nope"}},
                            {"id": {"utf8": a}},
                            {"id": {"utf8": g}},
                        ]
                    },
                    "expect": {"result": ["done", "gone", "done", "done"]},
                },
                {
                    "check": {
                        "keys": {"$only": True, key(0, "shards"): {"type": "string"}, BELL: {"type": "list"}}
                    }
                },
            ],
        },
        {
            "id": "sharded/settle/renew-many-across-shards",
            "title": "renew_many renews each lease on its shard, in input order",
            "requirements": ["RWQ-SHARD-002"],
            "steps": [
                add_many([a, g, b]),
                {
                    "call": "lease_many",
                    "session": "w",
                    "args": {"count": 3, "lease_ms": 30000},
                    "save": LEASES,
                },
                {"call": "complete", "session": "x", "args": {"id": "${i1}"}, "expect": {"result": True}},
                {
                    "call": "renew_many",
                    "session": "w",
                    "args": {"leases": ["${l0}", "${l1}", "${l2}"], "lease_ms": 60000},
                    "expect": {"result": [True, False, True]},
                },
            ],
        },
        {
            "id": "sharded/settle/batches-answer-in-input-order",
            "title": "batch results follow the input order, not the order of the shards",
            "requirements": ["RWQ-SHARD-002", "RWQ-SHARD-006"],
            "steps": [
                add_many([a, g]),
                {"redis": ["DEL", BELL]},
                {**add_many([a, g, c], session="x"), "expect": {"result": [False, False, True]}},
                {"check": {"keys": {BELL: {"type": "list", "value": [{"utf8": "1"}]}}}},
                {"redis": ["DEL", BELL]},
                {**add_many([g, a], session="x"), "expect": {"result": [False, False]}},
                {"check": {"keys": {BELL: None}}},
                {
                    "call": "complete_many",
                    "session": "x",
                    "args": {"items": [{"id": {"utf8": a}}, {"id": {"utf8": g}}, {"id": {"utf8": d}}]},
                    "expect": {"result": ["done", "done", "gone"]},
                },
            ],
        },
        {
            "id": "sharded/ring/capped-at-sixteen-tokens",
            "title": "a batch of more than 16 new items rings 16 tokens",
            "requirements": ["RWQ-SHARD-006"],
            "steps": [
                add_many([f"n{k}" for k in range(20)]),
                {"check": {"keys": {BELL: {"type": "list", "value": [{"utf8": "1"}] * 16}}}},
            ],
        },
        {
            "id": "sharded/complete-and-lease/items-on-every-shard",
            "title": "complete_and_lease completes items of several shards each on its own shard",
            "requirements": ["RWQ-SHARD-005", "RWQ-SHARD-002"],
            "steps": [
                add_many([a, g, b]),
                {
                    "call": "lease_many",
                    "session": "w",
                    "args": {"count": 3, "lease_ms": 30000},
                    "save": LEASES,
                },
                {
                    "call": "complete_and_lease",
                    "session": "w",
                    "args": {
                        "items": [{"lease": "${l0}"}, {"lease": "${l1}"}, {"lease": "${l2}"}],
                        "count": 1,
                        "lease_ms": 30000,
                    },
                    "expect": {"result": {"outcomes": ["done", "done", "done"], "leases": []}},
                },
                {
                    "check": {
                        "keys": {"$only": True, key(0, "shards"): {"type": "string"}, BELL: {"type": "list"}}
                    }
                },
            ],
        },
        {
            "id": "sharded/release/delayed-rings-nothing",
            "title": "a delayed add or release makes nothing ready, so it rings no bell",
            "requirements": ["RWQ-SHARD-006"],
            "profiles": ["core", "sharded", "delay"],
            "steps": [
                add_many([a]),
                lease(save="l"),
                {"redis": ["DEL", BELL]},
                {
                    "call": "release",
                    "session": "w",
                    "args": {"lease": "${l}", "delay_ms": 5000},
                    "expect": {"result": True},
                },
                {"check": {"keys": {BELL: None}}},
                {**add_many([g, b], delay_ms=5000), "expect": {"result": [True, True]}},
                {"check": {"keys": {BELL: None}}},
            ],
        },
    ]


def composite() -> list[Json]:
    one = [ids_on(i, 1)[0] for i in range(N)]
    return [
        {
            "id": "sharded/complete-and-lease/fast-path-tops-up",
            "title": "the composite on the shard next in turn leases what that shard lacks from the others",
            "requirements": ["RWQ-SHARD-005"],
            "steps": [
                add_many(one),
                *(lease(save=f"l{n}") for n in range(N)),
                add_many([ids_on(i, 2)[1] for i in range(N)]),
                {
                    "call": "complete_and_lease",
                    "session": "w",
                    "args": {"items": [{"lease": "${l0}"}], "count": N, "lease_ms": 30000},
                    "expect": {
                        "result_matches": {
                            "properties": {"outcomes": {"const": ["done"]}, "leases": count_of(N)},
                            "required": ["outcomes", "leases"],
                        }
                    },
                },
                {
                    "call": "counts",
                    "session": "p",
                    "expect": {"result": {"queued": 0, "processing": 2 * N - 1}},
                },
            ],
        },
        {
            "id": "sharded/complete-and-lease/keeps-the-rotation",
            "title": "complete_and_lease leases from the next shard in turn, not from the item's",
            "requirements": ["RWQ-SHARD-005", "RWQ-SHARD-004"],
            "steps": [
                add_many(one),
                lease(save="l"),
                {
                    "call": "complete_and_lease",
                    "session": "w",
                    "args": {"items": [{"lease": "${l}"}], "count": 1, "lease_ms": 30000},
                    "expect": {
                        "result_matches": {
                            "properties": {"outcomes": {"const": ["done"]}, "leases": count_of(1)},
                            "required": ["outcomes", "leases"],
                        }
                    },
                },
                {"call": "counts", "session": "p", "expect": {"result": {"queued": 1, "processing": 1}}},
            ],
        },
        {
            "id": "sharded/complete-and-lease/requeued-copies-not-leased-again",
            "title": "complete_and_lease completes every shard's items before it leases from that shard",
            "comment": "One item per shard, each requeued by a cleaner while held: whichever shard is "
            "next in turn, its items are completed before anything is leased from it, so their requeued "
            "copies are ghosts, never leased again. A client that leases first (to be refused before "
            "its first write, RWQ-SEC-006) must still complete each shard's items first.",
            "requirements": ["RWQ-SHARD-005", "RWQ-NEXT-001"],
            "needs": ["clock-control"],
            "steps": [
                add_many([ids_on(i, 1)[0] for i in range(N)]),
                {
                    "call": "lease_many",
                    "session": "w",
                    "args": {"count": N, "lease_ms": 1000},
                    "expect": {"result_matches": count_of(N)},
                    "save": LEASES,
                },
                {"advance_time_ms": 1001},
                {
                    "call": "light_clean",
                    "session": "p",
                    "expect": {
                        "result_matches": {"properties": {"requeued": count_of(N)}, "required": ["requeued"]}
                    },
                },
                {
                    "call": "complete_and_lease",
                    "session": "w",
                    "args": {
                        "items": [{"lease": f"${{l{n}}}"} for n in range(N)],
                        "count": N,
                        "lease_ms": 30000,
                    },
                    "expect": {"result": {"outcomes": ["done"] * N, "leases": []}},
                },
                {"call": "counts", "session": "p", "expect": {"result": {"queued": 0, "processing": 0}}},
            ],
        },
    ]


def timed_out(case_id: str, title: str, timeout_ms: int) -> Json:
    """A blocking lease on an empty queue that returns nothing once the frozen clock has passed
    its timeout (by 1 ms)."""
    return {
        "id": case_id,
        "title": title,
        "requirements": ["RWQ-SHARD-007"],
        "needs": ["standalone", "frozen-clock", "multi-process"],
        "sessions": sessions(w=OWN),
        "steps": [
            {
                "call": "lease",
                "session": "w",
                "args": {"lease_ms": 30000, "block": True, "timeout_ms": timeout_ms},
                "async": "waiting",
            },
            {"wait_blocked": "w"},
            {"advance_time_ms": timeout_ms + 1},
            {"await": "waiting", "expect": {"result": None}},
        ],
    }


def blocking() -> list[Json]:
    g = ids_on(1, 1)[0]
    return [
        {
            "id": "sharded/blocking/woken-by-the-bell",
            "title": "a consumer blocked on an empty sharded queue gets an item added to any shard",
            "requirements": ["RWQ-SHARD-006", "RWQ-SHARD-007"],
            "needs": ["standalone", "frozen-clock", "multi-process"],
            "sessions": sessions(w=OWN),
            "steps": [
                {
                    "call": "lease",
                    "session": "w",
                    "args": {"lease_ms": 30000, "block": True, "timeout_ms": 0},
                    "async": "waiting",
                },
                {"wait_blocked": "w"},
                {"call": "add", "session": "p", "args": item(g), "expect": {"result": True}},
                {"await": "waiting", "expect": {"result": {"id": {"utf8": g}}}},
                shard_state(1, queue=[], processing=[g]),
            ],
        },
        {
            "id": "sharded/blocking/release-wakes",
            "title": "a release wakes a consumer blocked on the bell",
            "requirements": ["RWQ-SHARD-006", "RWQ-SHARD-007"],
            "needs": ["standalone", "frozen-clock", "multi-process"],
            "sessions": sessions(w=OWN),
            "steps": [
                add_many([g]),
                lease(session="x", save="l"),
                {
                    "call": "lease",
                    "session": "w",
                    "args": {"lease_ms": 30000, "block": True, "timeout_ms": 0},
                    "async": "waiting",
                },
                {"wait_blocked": "w"},
                {"call": "release", "session": "x", "args": {"lease": "${l}"}, "expect": {"result": True}},
                {"await": "waiting", "expect": {"result": {"id": {"utf8": g}}}},
            ],
        },
        timed_out(
            "sharded/blocking/short-timeout-waits-no-longer",
            "a blocking lease's wait on the bell is no longer than the time it has left",
            300,
        ),
        timed_out(
            "sharded/blocking/timeout-returns-nothing",
            "a blocking lease on a sharded queue gives up once its timeout has passed",
            2500,
        ),
    ]


def every_shard() -> list[Json]:
    one = [ids_on(i, 1)[0] for i in range(N)]
    return [
        {
            "id": "sharded/counts/sum-of-shards",
            "title": "counts adds up every shard",
            "requirements": ["RWQ-SHARD-008"],
            "steps": [
                add_many([*ids_on(0, 2), *ids_on(1, 2), *ids_on(2, 1)]),
                *(lease() for _ in range(N)),
                {"call": "counts", "session": "x", "expect": {"result": {"queued": 2, "processing": 3}}},
            ],
        },
        {
            "id": "sharded/clean/light-clean-every-shard",
            "title": "a light clean requeues the expired leases of every shard",
            "requirements": ["RWQ-SHARD-008"],
            "needs": ["standalone", "clock-control"],
            "steps": [
                add_many(one),
                *(lease(lease_ms=1000) for _ in range(N)),
                {"advance_time_ms": 2000},
                {
                    "call": "light_clean",
                    "session": "x",
                    "expect": {
                        "result_matches": {"properties": {"requeued": count_of(N), "dropped": {"const": 0}}}
                    },
                },
                *(shard_state(index, queue=[one[index]], processing=[], leases={}) for index in range(N)),
            ],
        },
        {
            "id": "sharded/clean/deep-clean-every-shard",
            "title": "a deep clean requeues the orphaned items of every shard",
            "requirements": ["RWQ-SHARD-008"],
            "steps": [
                add_many(one),
                *({"redis": ["DEL", key(index, "queue")]} for index in range(N)),
                {
                    "call": "deep_clean",
                    "session": "x",
                    "expect": {"result_matches": {"properties": {"requeued": count_of(N)}}},
                },
                *(shard_state(index, queue=[one[index]]) for index in range(N)),
            ],
        },
        {
            "id": "sharded/retry/policy-and-dead-set-cover-every-shard",
            "title": "the policy is set on every shard; the dead set lists every shard's, newest first",
            "requirements": ["RWQ-SHARD-008", "RWQ-SHARD-006"],
            "profiles": ["core", "sharded", "retry"],
            "needs": ["standalone", "clock-control"],
            "steps": [
                {"call": "set_policy", "session": "x", "args": {"policy": POLICY}},
                *({"check": {"keys": {key(index, "policy"): {"type": "hash"}}}} for index in range(N)),
                {"call": "get_policy", "session": "w", "expect": {"result": POLICY}},
                add_many(one),
                *(
                    step
                    for n in range(N)
                    for step in (
                        {**lease(save=f"l{n}"), "save": {f"l{n}": "", f"i{n}": "/id"}},
                        {
                            "call": "fail",
                            "session": "w",
                            "args": {"lease": f"${{l{n}}}", "reason": "boom"},
                            "expect": {"result": {"outcome": "dead"}},
                        },
                        {"advance_time_ms": 10},
                    )
                ),
                {
                    "call": "dead_list",
                    "session": "x",
                    "args": {"offset": 0, "count": 10},
                    "expect": {"result": [{"id": f"${{i{n}}}"} for n in reversed(range(N))]},
                },
                {
                    "call": "dead_list",
                    "session": "x",
                    "args": {"offset": 1, "count": 1},
                    "expect": {"result": [{"id": "${i1}"}]},
                },
                {
                    "call": "counts",
                    "session": "p",
                    "expect": {"result": {"queued": 0, "processing": 0, "dead": N}},
                },
                {"redis": ["DEL", BELL]},
                {
                    "call": "dead_requeue",
                    "session": "x",
                    "args": {"ids": [{"utf8": i} for i in [*one, "nope"]]},
                    "expect": {"result": [True] * N + [False]},
                },
                {"check": {"keys": {BELL: {"type": "list", "value": [{"utf8": "1"}] * N}}}},
                {"call": "counts", "session": "p", "expect": {"result": {"queued": N, "dead": 0}}},
            ],
        },
    ]


RETRY_POLICY: Json = {**POLICY, "max_attempts": 3}
"""Attempts left after a first failure, so only the options can dead-letter or delay an item."""
DEAD_INFO = (
    "local i = cjson.decode(redis.call('HGET', KEYS[1], ARGV[1])) "
    "return {i.reason, i.attempts, i.detail or false}"
)


def fail(save: str, expect: Json, **args: Json) -> Json:
    """``fail`` by w of the lease saved as ``save``."""
    return {"call": "fail", "session": "w", "args": {"lease": f"${{{save}}}", **args}, "expect": expect}


def release(save: str, **args: Json) -> Json:
    """``release`` by w, with ``refund_attempt``, of the lease saved as ``save``; it was held."""
    return {
        "call": "release",
        "session": "w",
        "args": {"lease": f"${{{save}}}", "refund_attempt": True, **args},
        "expect": {"result": True},
    }


def retry_options() -> list[Json]:
    """fail's options and release's refund (SPEC 15) reach the item's shard (RWQ-SHARD-001)."""
    a, g, b = (ids_on(i, 1)[0] for i in range(N))
    attempt = {"type": "array", "items": {"properties": {"attempt": {"const": 1}}}}
    return [
        {
            "id": "sharded/retry/fail-options-reach-the-shard",
            "title": "fail's fallback delay, dead with a detail and requested delay act on the item's shard",
            "requirements": [
                "RWQ-SHARD-001",
                "RWQ-RETRY-016",
                "RWQ-RETRY-017",
                "RWQ-RETRY-018",
                "RWQ-RETRY-019",
            ],
            "profiles": ["core", "sharded", "retry", "delay"],
            "steps": [
                add_many([b]),
                lease(save="l", result={"id": {"utf8": b}, "attempt": 0}),
                fail(
                    "l",
                    {"result": {"outcome": "retry", "delay_ms": 60000}},
                    reason="boom",
                    fallback_delay_ms=60000,
                ),
                {
                    "check": {
                        "keys": {
                            key(2, "delayed:data"): {"value": {b: {"utf8": b.upper()}}},
                            key(2, f"item:{b}"): None,
                        }
                    }
                },
                {"call": "set_policy", "session": "x", "args": {"policy": RETRY_POLICY}},
                add_many([a]),
                lease(save="l", result={"id": {"utf8": a}, "attempt": 1}),
                fail(
                    "l",
                    {"result": {"outcome": "dead", "delay_ms": 0}},
                    reason="bad",
                    dead=True,
                    detail="Trace a",
                ),
                {
                    "redis": ["EVAL", DEAD_INFO, 1, key(0, "dead:info"), a],
                    "expect": {"result": [{"utf8": "bad"}, 1, {"utf8": "Trace a"}]},
                },
                {
                    "call": "dead_get",
                    "session": "x",
                    "args": {"id": {"utf8": a}},
                    "expect": {"result": {"id": {"utf8": a}, "reason": "bad", "detail": "Trace a"}},
                },
                add_many([g]),
                lease(save="l", result={"id": {"utf8": g}, "attempt": 1}),
                fail(
                    "l", {"result": {"outcome": "retry", "delay_ms": 60000}}, reason="later", delay_ms=60000
                ),
                {
                    "check": {
                        "keys": {
                            key(1, "delayed:data"): {"value": {g: {"utf8": g.upper()}}},
                            key(1, "attempts"): {"value": {g: {"utf8": "1"}}},
                        }
                    }
                },
            ],
        },
        {
            "id": "sharded/retry/refund-reaches-the-shard",
            "title": "release and release_many with refund_attempt give the attempt back on the item's shard",
            "requirements": ["RWQ-SHARD-001", "RWQ-RETRY-020"],
            "profiles": ["core", "sharded", "retry", "delay"],
            "steps": [
                {"call": "set_policy", "session": "x", "args": {"policy": RETRY_POLICY}},
                add_many([a]),
                lease(save="l", result={"id": {"utf8": a}, "attempt": 1}),
                release("l"),
                lease(save="l", result={"id": {"utf8": a}, "attempt": 1}),
                release("l", delay_ms=60000),
                {
                    "check": {
                        "keys": {
                            key(0, "attempts"): None,
                            key(0, "delayed:data"): {"value": {a: {"utf8": "A"}}},
                        }
                    }
                },
                add_many([g, b]),
                {
                    "call": "lease_many",
                    "session": "w",
                    "args": {"count": 2, "lease_ms": 30000},
                    "expect": {"result_matches": {**count_of(2), **attempt}},
                    "save": {"l0": "/0", "l1": "/1"},
                },
                {
                    "call": "release_many",
                    "session": "w",
                    "args": {"leases": ["${l0}", "${l1}"], "refund_attempt": True},
                    "expect": {"result": ["done", "done"]},
                },
                {"check": {"keys": {key(index, "attempts"): None for index in range(N)}}},
                {
                    "call": "lease_many",
                    "session": "w",
                    "args": {"count": 2, "lease_ms": 30000},
                    "expect": {"result_matches": {**count_of(2), **attempt}},
                },
            ],
        },
    ]


BAD_FAIL_OPTIONS: list[Json] = [
    {"detail": "d" * 8193},
    {"dead": True, "delay_ms": 5},
    {"delay_ms": -1},
    {"fallback_delay_ms": 31_536_000_001},
]


def bad_fail(held: Json, options: Json) -> Json:
    """``fail`` by x of ``held`` with bad ``options``: refused before any I/O."""
    return {
        "call": "fail",
        "session": "x",
        "args": {"lease": held, "reason": "x", **options},
        "expect": {"error": "INVALID_ARGUMENT"},
        "sends_nothing": True,
    }


def invalid() -> list[Json]:
    return [
        {
            "id": "sharded/invalid/shard-count-and-name",
            "title": "a shard count outside 1..1024 or a name with a brace is refused before any I/O",
            "requirements": ["RWQ-SHARD-001"],
            "needs": ["standalone", "managed-redis"],
            "sessions": sessions(
                zero={"untagged": True, "refusable": True, "options": {"shards": 0}},
                big={"untagged": True, "refusable": True, "options": {"shards": 1025}},
                brace={"untagged": True, "refusable": True, "queue": "a{b}", "options": {"shards": 2}},
            ),
            "steps": [
                {
                    "call": "add",
                    "session": name,
                    "args": item("a"),
                    "expect": {"error": "INVALID_ARGUMENT"},
                    "sends_nothing": True,
                }
                for name in ("zero", "big", "brace")
            ]
            + [{"check": {"keys": {"$only": True}}}],
        },
        {
            "id": "sharded/invalid/fail-options-before-any-io",
            "title": "fail with bad options is refused before the shard count check and before any I/O",
            "comment": "x's first operation is a refused fail: it must not run the shards script, which "
            "records the count (a write) on a new queue.",
            "requirements": ["RWQ-SHARD-003", "RWQ-RETRY-021", "RWQ-ERR-002"],
            "profiles": ["core", "sharded", "retry", "delay"],
            "needs": ["standalone", "managed-redis"],
            "steps": [
                *(bad_fail({"id": {"utf8": "a"}, "token": "t"}, options) for options in BAD_FAIL_OPTIONS),
                {"check": {"keys": {"$only": True}}},
                add_many(["a"]),
                lease(save="l"),
                *(bad_fail("${l}", options) for options in BAD_FAIL_OPTIONS),
                shard_state(0, queue=[], processing=["a"], items={"a": {"utf8": "A"}}),
            ],
        },
    ]


def document() -> str:
    cases = [
        *routing(),
        *count_check(),
        *rotation(),
        *per_id(),
        *composite(),
        *blocking(),
        *every_shard(),
        *retry_options(),
        *invalid(),
    ]
    doc = {
        "$schema": "../../schemas/conformance-case.schema.json",
        "format": 1,
        "group": "sharded",
        "description": (
            f"Profile sharded (SPEC 19): queue ${{bare}} over {N} shards {{${{bare}}#i}}. Generated by "
            "tools/sharded_cases.py (make generate), which computes each id's shard with zlib's CRC-32. "
            "Sessions p, w and x are three clients of the queue, each with its own rotation."
        ),
        "defaults": {
            "profiles": ["core", "sharded"],
            "needs": ["standalone"],
            "sessions": sessions(),
        },
        "cases": cases,
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
