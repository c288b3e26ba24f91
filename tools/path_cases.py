"""The conformance cases of conformance/cases/paths.json (written by tools/generate.py).

The cells of the coverage matrix (conformance/README.md, "The coverage matrix") that no topic
file reached: client settings on the paths an operation can take (a lease behind more than 1000
skipped entries, the blocking lease's first call and its continuation, the composite's
continuation, a sharded queue's rotation and doorbell, cleaners over several pages), and error
codes on those paths (WRONG_TYPE, REDIS_ERROR from a dropped call, SHARD_MISMATCH,
NOT_REPLICATED, LEASE_LOST, INVALID_ARGUMENT on a sharded queue).
"""

from __future__ import annotations

import zlib
from typing import Any

from boundary_cases import case_file

Json = Any
GHOSTS = (
    "for i = 1, 1001 do redis.call('RPUSH', KEYS[1], 'ghost' .. i) end return redis.call('LLEN', KEYS[1])"
)
SHARDED = {"untagged": True}


def u(text: str) -> Json:
    return {"utf8": text}


def call(method: str, session: str, args: Json | None = None, **extra: Json) -> Json:
    return {"call": method, "session": session, **({"args": args} if args is not None else {}), **extra}


def add(session: str, *ids: str) -> Json:
    if len(ids) == 1:
        return call("add", session, {"id": u(ids[0]), "data": u(ids[0].upper())}, expect={"result": True})
    return call("add_many", session, {"items": [{"id": u(i), "data": u(i.upper())} for i in ids]})


def shard_of(item: str, shards: int) -> int:
    """RWQ-SHARD-002: CRC-32 of the id's bytes, modulo the count."""
    return zlib.crc32(item.encode()) % shards


def queue_key(shards: int | None, shard: int = 0) -> str:
    return "${ns}:" if shards is None else f"{{${{bare}}#{shard}}}:"


def ghosts(shards: int | None) -> list[Json]:
    """1001 ghost ids ahead of everything ready, on every shard."""
    return [
        {
            "redis": ["EVAL", GHOSTS, 1, queue_key(shards, i) + "queue"],
            "expect": {"result_matches": {"minimum": 1001}},
        }
        for i in range(shards or 1)
    ]


LEASE = {"lease_ms": 1000}
BLOCK = {"lease_ms": 1000, "block": True, "timeout_ms": 5000}
GONE = {"items": [{"id": u("gone")}], "count": 1, "lease_ms": 1000}

# path -> (how the subject session w leases a ready "a", extra requirements, needs)
LEASE_PATHS: dict[str, tuple[list[Json], list[str], list[str]]] = {
    "again": ([call("lease", "w", LEASE, expect={"result": {"id": u("a")}})], ["RWQ-LEASE-007"], []),
    "blocking-first": ([call("lease", "w", BLOCK, expect={"result": {"id": u("a")}})], ["RWQ-LEASE-008"], []),
    "blocking-again": (
        [call("lease", "w", BLOCK, expect={"result": {"id": u("a")}})],
        ["RWQ-LEASE-007", "RWQ-LEASE-008"],
        [],
    ),
    "composite-again": (
        [
            call(
                "complete_and_lease",
                "w",
                GONE,
                expect={"result": {"outcomes": ["gone"], "leases": [{"id": u("a")}]}},
            )
        ],
        ["RWQ-LEASE-015", "RWQ-NEXT-001"],
        [],
    ),
    "shard-visit": ([call("lease", "w", LEASE, expect={"result": {"id": u("a")}})], ["RWQ-SHARD-004"], []),
    "shard-composite": (
        [
            call(
                "complete_and_lease",
                "w",
                GONE,
                expect={"result": {"outcomes": ["gone"], "leases": [{"id": u("a")}]}},
            )
        ],
        ["RWQ-SHARD-005"],
        [],
    ),
    "shard-bell": (
        [
            call("lease", "w", BLOCK, **{"async": "wait"}),
            {"wait_blocked": "w"},
            add("p", "a"),
            {"await": "wait", "expect": {"result": {"id": u("a")}}},
        ],
        ["RWQ-SHARD-007"],
        ["multi-process"],
    ),
}


def _case(
    cid: str,
    title: str,
    requirements: list[str],
    *,
    profiles: list[str],
    needs: list[str],
    sessions: Json,
    steps: list[Json],
) -> Json:
    return {
        "id": f"paths/{cid}",
        "title": title[:100],
        "requirements": sorted(set(requirements)),
        "profiles": profiles,
        "needs": sorted(set(needs)),
        "sessions": sessions,
        "steps": steps,
    }


def setting_cases() -> list[Json]:
    """legacy_lease_key and flat_in_flight on every lease path: the continuation call, the claim
    and each shard's call carry the setting too."""
    found = []
    settings = {
        "legacy": ({"legacy_lease_key": True}, ["RWQ-COMPAT-004"], ["legacy-lease"], "legacy_leases"),
        "flat": ({"flat_in_flight": True}, ["RWQ-FLAT-001"], ["core", "flat"], "in_flight"),
    }
    for name, (options, reqs, profiles, field) in settings.items():
        for path, (lease, more, needs) in LEASE_PATHS.items():
            sharded = path.startswith("shard")
            base = SHARDED if sharded else {}
            w: Json = {**base, "options": {**options, **({"shards": 3} if sharded else {})}}
            if "multi-process" in needs:
                w["own_process"] = True
            sessions = {"p": {**base, **({"options": {"shards": 3}} if sharded else {})}, "w": w}
            setup = [] if path == "shard-bell" else [add("p", "a")]
            if path.endswith("again"):
                setup += ghosts(None)
            check: Json = {"state": {field: {"a": {"remaining_ms": 1000}}}}
            if sharded:
                check["shard"] = shard_of("a", 3)
            steps = [*setup, *lease, {"check": check}]
            if name == "legacy" and not sharded:
                steps.append(
                    {"check": {"keys": {"${ns}:leased_by_session:a": {"type": "string", "pttl_ms": 1000}}}}
                )
            found.append(
                _case(
                    f"{name}/{path}",
                    f"{options} on the {path} path: the lease it grants honours the setting",
                    reqs + more,
                    profiles=profiles + (["sharded"] if sharded else []),
                    needs=["frozen-clock", *needs, *(["standalone"] if sharded else [])],
                    sessions=sessions,
                    steps=steps,
                )
            )
    # declared_keys and delay on the blocking continuation; delay on the doorbell wait
    delayed = add("p", "d") | {"args": {"id": u("d"), "data": u("D"), "delay_ms": 3000}}
    found.append(
        _case(
            "delay/blocking-again",
            "a blocking lease behind 1001 ghosts gets a delayed item when it falls due",
            ["RWQ-DELAY-007", "RWQ-LEASE-007", "RWQ-LEASE-012"],
            profiles=["delay"],
            needs=["frozen-clock", "multi-process"],
            sessions={"p": {}, "w": {"own_process": True}},
            steps=[
                delayed,
                *ghosts(None),
                call("lease", "w", {"lease_ms": 1000, "block": True, "timeout_ms": 0}, **{"async": "wait"}),
                {"wait_blocked": "w"},
                {"advance_time_ms": 3000},
                {"await": "wait", "expect": {"result": {"id": u("d")}}},
            ],
        )
    )
    found.append(
        _case(
            "delay/shard-bell",
            "a blocking lease on a sharded queue gets a delayed item when it falls due",
            ["RWQ-DELAY-007", "RWQ-SHARD-007"],
            profiles=["delay", "sharded"],
            needs=["frozen-clock", "multi-process", "standalone"],
            sessions={
                "p": {**SHARDED, "options": {"shards": 3}},
                "w": {**SHARDED, "own_process": True, "options": {"shards": 3}},
            },
            steps=[
                delayed,
                call("lease", "w", {"lease_ms": 1000, "block": True, "timeout_ms": 0}, **{"async": "wait"}),
                {"wait_blocked": "w"},
                {"advance_time_ms": 3000},
                {"await": "wait", "expect": {"result": {"id": u("d")}}},
            ],
        )
    )
    found += sharded_cases() + policy_cases() + ack_cases()
    return found


def sharded_cases() -> list[Json]:
    """A sharded queue on the paths a shard's operation takes."""
    sessions = {"p": {**SHARDED, "options": {"shards": 2}}, "w": {**SHARDED, "options": {"shards": 2}}}
    profiles, needs = ["core", "sharded"], ["standalone"]
    many = [f"m{i}" for i in range(1001)]
    return [
        _case(
            "shards/again",
            "lease on a sharded queue with 1001 ghosts ahead on every shard still finds the item",
            ["RWQ-SHARD-004", "RWQ-LEASE-007"],
            profiles=profiles,
            needs=needs,
            sessions=sessions,
            steps=[add("p", "a"), *ghosts(2), *LEASE_PATHS["again"][0]],
        ),
        _case(
            "shards/blocking-again",
            "blocking lease on a sharded queue with 1001 ghosts ahead on every shard returns the item",
            ["RWQ-SHARD-007", "RWQ-LEASE-007"],
            profiles=profiles,
            needs=needs,
            sessions=sessions,
            steps=[add("p", "a"), *ghosts(2), *LEASE_PATHS["blocking-again"][0]],
        ),
        _case(
            "shards/composite-again",
            "complete_and_lease on a sharded queue behind 1001 ghosts on every shard leases the item",
            ["RWQ-SHARD-005", "RWQ-LEASE-015"],
            profiles=profiles,
            needs=needs,
            sessions=sessions,
            steps=[add("p", "a"), *ghosts(2), *LEASE_PATHS["composite-again"][0]],
        ),
        _case(
            "shards/batch-over-1000",
            "add_many of 1001 items on a sharded queue adds each once, on its shard",
            ["RWQ-SHARD-002", "RWQ-ENC-005"],
            profiles=profiles,
            needs=needs,
            sessions=sessions,
            steps=[
                call(
                    "add_many",
                    "p",
                    {"items": [{"id": u(i), "data": u(i)} for i in many]},
                    expect={
                        "result_matches": {
                            "type": "array",
                            "minItems": 1001,
                            "maxItems": 1001,
                            "items": {"const": True},
                        }
                    },
                ),
                call("counts", "w", expect={"result": {"queued": 1001, "processing": 0}}),
                {
                    "check": {
                        "shard": 0,
                        "state_matches": {"properties": {"queue": {"minItems": 400, "maxItems": 601}}},
                    }
                },
            ],
        ),
        _case(
            "shards/light-clean-pages",
            "light_clean with chunk 1 requeues the expired leases of every shard",
            ["RWQ-SHARD-008", "RWQ-CLEAN-001"],
            profiles=profiles,
            needs=["standalone", "frozen-clock"],
            sessions=sessions,
            steps=[
                add("p", "a", "b", "c"),
                call("lease_many", "w", {"count": 3, "lease_ms": 1000}),
                {"advance_time_ms": 1001},
                call(
                    "light_clean",
                    "w",
                    {"chunk": 1},
                    expect={"result_matches": {"properties": {"requeued": {"minItems": 3, "maxItems": 3}}}},
                ),
                call("counts", "w", expect={"result": {"queued": 3, "processing": 0}}),
            ],
        ),
        _case(
            "shards/deep-clean-pages",
            "deep_clean with chunk 1 requeues an orphan and drops a ghost on a sharded queue",
            ["RWQ-SHARD-008", "RWQ-DEEP-001", "RWQ-DEEP-003"],
            profiles=profiles,
            needs=needs,
            sessions=sessions,
            steps=[
                add("p", "a", "b", "c"),
                {"redis": ["SET", "{${bare}#0}:item:o", "O"]},
                {"redis": ["RPUSH", "{${bare}#1}:queue", "ghost"]},
                call(
                    "deep_clean", "w", {"chunk": 1}, expect={"result": {"requeued": [u("o")], "dropped": 1}}
                ),
                call("counts", "w", expect={"result": {"queued": 4, "processing": 0}}),
            ],
        ),
    ]


def policy_cases() -> list[Json]:
    """The policy on light_clean over several pages: attempts counted, the dead-letter set trimmed."""
    policy = {
        "max_attempts": 1,
        "backoff": "fixed",
        "base_ms": 0,
        "cap_ms": 0,
        "jitter_pct": 0,
        "dead_max_count": 1,
    }
    return [
        _case(
            "policy/light-clean-pages",
            "light_clean over pages dead-letters used-up items and trims the dead-letter set",
            ["RWQ-RETRY-007", "RWQ-RETRY-011"],
            profiles=["retry"],
            needs=["frozen-clock"],
            sessions={"p": {}, "w": {}},
            steps=[
                add("p", "x"),
                call("lease", "w", LEASE, save={"x": ""}),
                call("fail", "w", {"lease": "${x}", "dead": True}, expect={"result": {"outcome": "dead"}}),
                call("set_policy", "w", {"policy": {**policy, "dead_max_age_ms": 1000}}),
                add("p", "a", "b", "c"),
                call("lease_many", "w", {"count": 3, "lease_ms": 1000}),
                {"advance_time_ms": 1001},
                call(
                    "light_clean",
                    "w",
                    {"chunk": 1},
                    expect={"result": {"requeued": [], "dropped": 0, "dead": [u("a"), u("b"), u("c")]}},
                    comment="x died 1001 ms ago, older than dead_max_age_ms; of a, b, c one is kept",
                ),
                call("counts", "w", expect={"result": {"queued": 0, "processing": 0, "dead": 1}}),
            ],
        )
    ]


def ack_cases() -> list[Json]:
    """The ack setting on the composite's continuation and on a sharded queue."""
    ack = {"wait_replicas": 1000, "wait_timeout_ms": 2000}
    found = []
    single = {**SHARDED, "options": {"shards": 1}}
    for path, sessions, setup, step in (
        (
            "composite-again",
            {"p": {}, "w": {"own_process": True, "options": ack}},
            [add("p", "a"), *ghosts(None)],
            call("complete_and_lease", "w", GONE),
        ),
        (
            "shard-ring",
            {"p": single, "w": {**single, "own_process": True, "options": {**ack, "shards": 1}}},
            [call("counts", "w")],
            call("add", "w", {"id": u("a"), "data": u("A")}),
        ),
        (
            "shard-composite",
            {"p": single, "w": {**single, "own_process": True, "options": {**ack, "shards": 1}}},
            [add("p", "a"), call("counts", "w")],
            call("complete_and_lease", "w", GONE),
        ),
    ):
        sharded = path.startswith("shard")
        found.append(
            _case(
                f"ack/{path}",
                f"the WAIT of profile ack on the {path} path: NOT_REPLICATED",
                ["RWQ-ACK-001", "RWQ-ACK-002", *(["RWQ-SHARD-001"] if sharded else [])],
                profiles=["core", "ack", *(["sharded"] if sharded else [])],
                needs=["frozen-clock", "multi-process", *(["standalone"] if sharded else [])],
                sessions=sessions,
                steps=[
                    *setup,
                    {**step, "async": "w1"},
                    {"wait_blocked": "w"},
                    {"advance_time_ms": 2001},
                    {"await": "w1", "expect": {"error": "NOT_REPLICATED"}},
                ],
            )
        )
    return found


def error_cases() -> list[Json]:
    """Error codes on the paths that can return them."""
    found = []
    # WRONG_TYPE: a key of another type reached on the path; nothing of it changes
    hashed = {"type": "hash", "value": {"f": u("v")}}
    wrong = [
        (
            "batch",
            [{"redis": ["HSET", "${ns}:item:b", "f", "v"]}],
            add("w", "a", "b"),
            {"${ns}:item:a": None},
        ),
        (
            "batch-over-1000",
            [{"redis": ["HSET", "${ns}:item:m5", "f", "v"]}],
            call("add_many", "w", {"items": [{"id": u(f"m{i}"), "data": u("M")} for i in range(1001)]}),
            {"${ns}:item:m0": None},
        ),
        ("again", [*_wrong_a(None), *ghosts(None)], call("lease", "w", LEASE), {}),
        ("blocking-first", _wrong_a(None), call("lease", "w", BLOCK), {}),
        ("blocking-again", [*_wrong_a(None), *ghosts(None)], call("lease", "w", BLOCK), {}),
        ("composite-again", [*_wrong_a(None), *ghosts(None)], call("complete_and_lease", "w", GONE), {}),
        (
            "light-clean-pages",
            [
                add("p", "a", "b"),
                call("lease_many", "w", {"count": 2, "lease_ms": 1000}),
                {"advance_time_ms": 1001},
                {"redis": ["DEL", "${ns}:item:b"]},
                {"redis": ["HSET", "${ns}:item:b", "f", "v"]},
            ],
            call("light_clean", "w", {"chunk": 1}),
            {},
        ),
        (
            "deep-clean-pages",
            [add("p", "a"), *_wrong_a(None, "r")],
            call("deep_clean", "w", {"chunk": 1}),
            {},
        ),
        ("shard-visit", _wrong_a(1), call("lease", "w", LEASE), {}),
        ("shard-bell", _wrong_a(1), call("lease", "w", BLOCK), {}),
        ("shard-composite", _wrong_a(1), call("complete_and_lease", "w", GONE), {}),
        (
            "shard-ring",
            [{"redis": ["HSET", "{${bare}#0}:item:a", "f", "v"]}],
            call("add", "w", {"id": u("a"), "data": u("A")}),
            {},
        ),
    ]
    for path, setup, step, absent in wrong:
        sharded = path.startswith("shard")
        item = "{${bare}#0}:item:" if sharded else "${ns}:item:"
        key = item + (
            "r"
            if path == "deep-clean-pages"
            else "m5"
            if path == "batch-over-1000"
            else "b"
            if path in ("batch", "light-clean-pages")
            else "a"
        )
        sessions = (
            {"p": {**SHARDED, "options": {"shards": 1}}, "w": {**SHARDED, "options": {"shards": 1}}}
            if sharded
            else {"p": {}, "w": {}}
        )
        found.append(
            _case(
                f"wrong-type/{path}",
                f"a key of another type reached on the {path} path: WRONG_TYPE, the key unchanged",
                ["RWQ-SCRIPT-007", *(["RWQ-SHARD-001"] if sharded else [])],
                profiles=["core", *(["sharded"] if sharded else [])],
                needs=["frozen-clock", *(["standalone"] if sharded else [])],
                sessions=sessions,
                steps=[
                    *setup,
                    {**step, "expect": {"error": "WRONG_TYPE"}},
                    {"check": {"keys": {key: hashed, **absent}}},
                ],
            )
        )
    found.append(_wrong_type_blocking_wait())
    found += _redis_error_cases() + _shard_mismatch_cases() + _sharded_refusals()
    return found


def _wrong_a(shards: int | None, item: str = "a") -> list[Json]:
    """A ready id whose item key is a hash."""
    prefix = "${ns}:" if shards is None else "{${bare}#0}:"
    return [
        {"redis": ["LPUSH", prefix + "queue", item]},
        {"redis": ["HSET", prefix + f"item:{item}", "f", "v"]},
    ]


def _wrong_type_blocking_wait() -> Json:
    return _case(
        "wrong-type/blocking-wait",
        "a blocked lease whose BLMOVE brings an id with a hash item key: claim's WRONG_TYPE",
        ["RWQ-SCRIPT-007", "RWQ-LEASE-008"],
        profiles=["core"],
        needs=["frozen-clock", "multi-process"],
        sessions={"p": {}, "w": {"own_process": True}},
        steps=[
            call("lease", "w", BLOCK, **{"async": "wait"}),
            {"wait_blocked": "w"},
            {"redis": ["HSET", "${ns}:item:a", "f", "v"]},
            {"redis": ["LPUSH", "${ns}:queue", "a"]},
            {"await": "wait", "expect": {"error": "WRONG_TYPE"}},
            {
                "check": {
                    "keys": {"${ns}:item:a": {"type": "hash", "value": {"f": u("v")}}, "${ns}:lease:a": None}
                }
            },
        ],
    )


def _redis_error_cases() -> list[Json]:
    """A call that never reaches Redis on each path: REDIS_ERROR, never a result."""
    found = []
    many = {"items": [{"id": u(f"m{i}"), "data": u("M")} for i in range(1001)]}
    plain: list[tuple[str, list[Json], Json, list[str]]] = [
        (
            "batch",
            [],
            call(
                "add_many", "x", {"items": [{"id": u("a"), "data": u("A")}, {"id": u("b"), "data": u("B")}]}
            ),
            [],
        ),
        ("batch-over-1000", [], call("add_many", "x", many), []),
        ("again", [add("p", "a"), *ghosts(None)], call("lease", "x", LEASE), []),
        ("blocking-first", [add("p", "a")], call("lease", "x", BLOCK), []),
        ("blocking-again", [add("p", "a"), *ghosts(None)], call("lease", "x", BLOCK), []),
        ("composite-again", [add("p", "a"), *ghosts(None)], call("complete_and_lease", "x", GONE), []),
        (
            "light-clean-pages",
            [
                add("p", "a", "b"),
                call("lease_many", "p", {"count": 2, "lease_ms": 1000}),
                {"advance_time_ms": 1001},
            ],
            call("light_clean", "x", {"chunk": 1}),
            ["frozen-clock"],
        ),
        ("deep-clean-pages", [add("p", "a", "b")], call("deep_clean", "x", {"chunk": 1}), []),
        ("dead-set", [], call("dead_requeue", "x", {"ids": [u("a")]}), []),
    ]
    sharded = [
        ("shard-visit", [add("p", "a")], call("lease", "x", LEASE), []),
        ("shard-bell", [add("p", "a")], call("lease", "x", BLOCK), []),
        ("shard-composite", [add("p", "a")], call("complete_and_lease", "x", GONE), []),
        ("shard-ring", [], call("add", "x", {"id": u("a"), "data": u("A")}), []),
    ]
    for path, setup, step, needs in plain + sharded:
        on_shards = path.startswith("shard")
        base = {**SHARDED, "options": {"shards": 2}} if on_shards else {}
        retry = path == "dead-set"
        found.append(
            _case(
                f"redis-error/{path}",
                f"a call dropped before Redis gets it on the {path} path: REDIS_ERROR",
                ["RWQ-FAIL-001", "RWQ-ERR-003", *(["RWQ-SHARD-001"] if on_shards else [])],
                profiles=["retry"] if retry else ["core", *(["sharded"] if on_shards else [])],
                needs=["managed-redis", "multi-process", *needs, *(["standalone"] if on_shards else [])],
                sessions={"p": base, "x": {**base, "own_process": True, "proxied": True}},
                steps=[
                    *setup,
                    call("counts", "x", comment="the connection is open and the scripts loaded"),
                    {"fault": "drop-call", "session": "x"},
                    {**step, "expect": {"error": "REDIS_ERROR"}},
                ],
            )
        )
    return found


def _shard_mismatch_cases() -> list[Json]:
    """Every operation's first call on a queue recorded with another shard count."""
    steps: list[Json] = [add("p", "a", "b")]
    sessions: Json = {"p": {**SHARDED, "options": {"shards": 3}}}
    calls = [
        ("add_many", {"items": [{"id": u("n"), "data": u("N")}]}),
        ("add_many", {"items": [{"id": u(f"m{i}"), "data": u("M")} for i in range(1001)]}),
        ("lease", BLOCK),
        ("complete_and_lease", GONE),
        ("light_clean", {"chunk": 1}),
        ("deep_clean", {"chunk": 1}),
    ]
    for index, (method, args) in enumerate(calls):
        name = f"s{index}"
        sessions[name] = {**SHARDED, "options": {"shards": 2}}
        steps.append(call(method, name, args, expect={"error": "SHARD_MISMATCH"}))
    steps.append(call("counts", "p", expect={"result": {"queued": 2, "processing": 0}}))
    main = _case(
        "shard-mismatch/every-path",
        "each operation's first call with another shard count than recorded: SHARD_MISMATCH",
        ["RWQ-SHARD-003"],
        profiles=["core", "sharded"],
        needs=["standalone"],
        sessions=sessions,
        steps=steps,
    )
    dead = _case(
        "shard-mismatch/dead-set",
        "dead-set operations with another shard count than recorded: SHARD_MISMATCH",
        ["RWQ-SHARD-003"],
        profiles=["retry", "sharded"],
        needs=["standalone"],
        sessions={"p": {**SHARDED, "options": {"shards": 3}}, "s": {**SHARDED, "options": {"shards": 2}}},
        steps=[add("p", "a"), call("dead_list", "s", {}, expect={"error": "SHARD_MISMATCH"})],
    )
    return [main, dead]


def _sharded_refusals() -> list[Json]:
    sessions = {"p": {**SHARDED, "options": {"shards": 2}}, "w": {**SHARDED, "options": {"shards": 2}}}
    refused = {"expect": {"error": "INVALID_ARGUMENT"}, "sends_nothing": True}
    held: Json = {"id": u("a"), "token": "not-the-token"}
    return [
        _case(
            "sharded/invalid-lease-arguments",
            "lease, blocking lease and complete_and_lease on a sharded queue refuse lease_ms 0",
            ["RWQ-ERR-002", "RWQ-ENC-003", "RWQ-SHARD-001"],
            profiles=["core", "sharded"],
            needs=["standalone", "managed-redis"],
            sessions=sessions,
            steps=[
                add("p", "a"),
                call("lease", "w", {"lease_ms": 0}, **refused),
                call("lease", "w", {"lease_ms": 0, "block": True}, **refused),
                call("complete_and_lease", "w", {**GONE, "lease_ms": 0}, **refused),
                call("counts", "w", expect={"result": {"queued": 1, "processing": 0}}),
            ],
        ),
        _case(
            "sharded/release-lease-lost",
            "release by a caller that does not hold the lease on a sharded queue: LEASE_LOST",
            ["RWQ-SHARD-002", "RWQ-SHARD-006"],
            profiles=["core", "sharded"],
            needs=["standalone"],
            sessions=sessions,
            steps=[
                add("p", "a"),
                call("lease", "w", LEASE, expect={"result": {"id": u("a")}}),
                call("release", "p", {"lease": held}, expect={"error": "LEASE_LOST"}),
                call("counts", "w", expect={"result": {"queued": 0, "processing": 1}}),
            ],
        ),
    ]


def cases() -> list[Json]:
    return setting_cases() + error_cases()


def document() -> str:
    """The text of conformance/cases/paths.json."""
    return case_file(
        "paths",
        "GENERATED by tools/path_cases.py (make generate): client settings and error"
        " codes on the paths of the coverage matrix no topic file reached (conformance/README.md,"
        " The coverage matrix).",
        cases(),
    )


if __name__ == "__main__":
    print(document(), end="")
