"""The conformance cases of conformance/cases/boundaries.json (written by tools/generate.py).

For every numeric argument of the coverage matrix (``rwq.conformance.coverage.ARGUMENTS``), two
cases: one passes each value a client must refuse (below the minimum, above the maximum, and the
non-integers 1.5, "5" and true) and expects INVALID_ARGUMENT before any I/O with nothing written;
the other passes the minimum, the maximum and, for durations, 999, 1,001 and 1,500 ms, and looks
at what the call did on the frozen server clock, so that a port that takes seconds for
milliseconds, truncates, or refuses a valid end fails.
"""

from __future__ import annotations

import json
from typing import Any

from rwq.conformance.coverage import ARGUMENTS, CLASSES, UNIT_TELLERS, Argument, boundary_value

Json = Any
MAX = 31_536_000_000
FAKE = {"id": {"utf8": "k"}, "token": "not-the-token"}
REFUSED_REQS = ["RWQ-ERR-002", "RWQ-ERR-004"]
POLICY = {
    "max_attempts": 0,
    "backoff": "fixed",
    "base_ms": 0,
    "cap_ms": 0,
    "jitter_pct": 0,
    "dead_max_count": 0,
    "dead_max_age_ms": 0,
}


def u(text: str) -> Json:
    return {"utf8": text}


def call(method: str, args: Json, session: str = "w", **extra: Json) -> Json:
    return {"call": method, "session": session, "args": args, **extra}


# method -> (profiles, requirements, args with the argument set to value)
def _args(argument: Argument, value: Json) -> Json:
    name = argument.name
    if name.startswith("policy."):
        return {"policy": {**POLICY, name.removeprefix("policy."): value}}
    base: dict[str, Json] = {
        "add": {"id": u("n"), "data": u("N")},
        "add_many": {"items": [{"id": u("n"), "data": u("N")}]},
        "release": {"lease": FAKE},
        "release_many": {"leases": [FAKE]},
        "lease": {"lease_ms": 1000},
        "lease_many": {"count": 1, "lease_ms": 1000},
        "renew": {"lease": FAKE, "lease_ms": 1000},
        "renew_many": {"leases": [FAKE], "lease_ms": 1000},
        "complete_and_lease": {"items": [{"id": u("k")}], "count": 1, "lease_ms": 1000},
        "light_clean": {},
        "deep_clean": {},
        "fail": {"lease": FAKE},
        "dead_list": {},
        "worker_beat": {"id": "w", "ttl_ms": 30_000, "record": {}},
        "workers": {},
    }[argument.method]
    if argument.key == "lease.timeout_ms":
        base = {**base, "block": True}
    return {**base, name: value}


def _profiles(argument: Argument) -> list[str]:
    if argument.method == "open":
        return ["core", "sharded"] if argument.name == "shards" else ["core", "ack"]
    if argument.method == "fail":
        return ["retry", "delay"]  # a retry after a delay makes the item a delayed one
    if argument.method in ("set_policy", "set_policy_if_absent", "dead_list"):
        return ["retry"]
    if argument.method in ("worker_beat", "workers"):
        return ["workers"]
    if argument.name == "delay_ms":
        return ["delay"]
    return ["core"]


def _requirements(argument: Argument) -> list[str]:
    specific = {
        "add.delay_ms": "RWQ-DELAY-001",
        "add_many.delay_ms": "RWQ-DELAY-001",
        "release.delay_ms": "RWQ-DELAY-003",
        "release_many.delay_ms": "RWQ-DELAY-003",
        "fail.delay_ms": "RWQ-RETRY-017",
        "fail.fallback_delay_ms": "RWQ-RETRY-019",
        "light_clean.pace_ms": "RWQ-CLEAN-007",
        "dead_list": "RWQ-RETRY-009",
        "open.shards": "RWQ-SHARD-001",
        "open.wait_replicas": "RWQ-ACK-003",
        "open.wait_timeout_ms": "RWQ-ACK-003",
        "lease_many.count": "RWQ-LEASE-013",
        "set_policy": "RWQ-RETRY-001",
        "set_policy_if_absent": "RWQ-RETRY-015",
        "worker_beat": "RWQ-LIVE-002",
        "workers": "RWQ-LIVE-003",
    }
    found = [specific.get(argument.key) or specific.get(argument.method)]
    if argument.duration and argument.method != "open":
        found.append("RWQ-ENC-003")
    return sorted({r for r in found if r})


def _slug(argument: Argument) -> str:
    return f"{argument.method.replace('_', '-')}/{argument.name.replace('policy.', '').replace('_', '-')}"


def _session(argument: Argument, value: Json) -> Json:
    options: dict[str, Json] = {argument.name: value}
    if argument.name == "wait_timeout_ms":
        options["wait_replicas"] = 1000
    if argument.name == "shards":
        return {"untagged": True, "options": options, "refusable": True}
    return {"options": options, "refusable": True}


def refused_case(argument: Argument) -> Json:
    """Every value a client must refuse, each before any I/O, and nothing written."""
    values = [
        (k, v[0])
        for k in CLASSES
        if (v := boundary_value(argument, k)) is not None and not v[1] and k not in UNIT_TELLERS
    ]
    steps: list[Json] = [call("add", {"id": u("k"), "data": u("K")}, "p")]
    sessions: dict[str, Json] = {"p": {}, "w": {}}
    refused = {"expect": {"error": "INVALID_ARGUMENT"}, "sends_nothing": True}
    for index, (klass, value) in enumerate(values):
        if argument.method == "open":
            name = f"s{index}"
            sessions[name] = _session(argument, value)
            steps.append({**call("add", {"id": u("n"), "data": u("N")}, name), **refused, "comment": klass})
        else:
            steps.append({**call(argument.method, _args(argument, value)), **refused, "comment": klass})
    if argument.name == "shards":
        sessions["p"] = {"untagged": True, "options": {"shards": 2}}
        steps.append({"check": {"shard": 0, "state": {"processing": []}}})
        steps.append({"call": "counts", "session": "p", "expect": {"result": {"queued": 1, "processing": 0}}})
    else:
        steps.append(
            {"check": {"state": {"queue": ["k"], "processing": [], "items": {"k": u("K")}, "leases": {}}}}
        )
    if argument.method.startswith("set_policy"):
        steps.append({"check": {"keys": {"${ns}:policy": None}}})
    shown = ", ".join(json.dumps(v) for _, v in values)
    case: Json = {
        "id": f"boundaries/{_slug(argument)}/refused",
        "title": f"{argument.key} {shown}: INVALID_ARGUMENT before any I/O"[:100],
        "requirements": sorted({*REFUSED_REQS, *_requirements(argument)}),
        "profiles": _profiles(argument),
        "needs": ["managed-redis", *(["standalone"] if argument.name == "shards" else [])],
        "sessions": sessions,
        "steps": steps,
    }
    return case


def _accepted_steps(argument: Argument, klass: str, value: int, n: int) -> list[Json]:
    """Steps that pass ``value`` and look at its effect; ids carry ``n`` to stay apart."""
    item, data = f"i{n}", f"I{n}"
    add = call("add", {"id": u(item), "data": u(data)}, "p")
    key, timed = argument.key, klass in UNIT_TELLERS
    lease = {"id": u(item)}
    if key in ("lease.lease_ms", "lease_many.lease_ms", "complete_and_lease.lease_ms"):
        args = _args(argument, value)
        if key == "complete_and_lease.lease_ms":
            args = {**args, "items": [{"id": u("gone")}]}
        expect = {"lease.lease_ms": lease, "lease_many.lease_ms": [lease]}.get(key, {"leases": [lease]})
        return [
            add,
            {**call(argument.method, args), "expect": {"result": expect}},
            {"check": {"state": {"leases": {item: {"remaining_ms": value}}}}},
            call("complete", {"id": u(item)}, "p"),
        ]
    if key in ("renew.lease_ms", "renew_many.lease_ms"):
        many = key == "renew_many.lease_ms"
        args = {"leases": ["${l}"], "lease_ms": value} if many else {"lease": "${l}", "lease_ms": value}
        return [
            add,
            {**call("lease", {"lease_ms": 1000}), "save": {"l": ""}},
            {**call(argument.method, args), "expect": {"result": [True] if many else True}},
            {"check": {"state": {"leases": {item: {"remaining_ms": value}}}}},
            call("complete", {"id": u(item)}, "p"),
        ]
    if key == "lease.timeout_ms":
        if not timed:
            return [
                add,
                {**call("lease", _args(argument, value)), "expect": {"result": lease}},
                call("complete", {"id": u(item)}, "p"),
            ]
        blocking = {"lease_ms": 1000, "block": True, "timeout_ms": value}
        return [
            {**call("lease", blocking, "b"), "async": f"a{n}"},
            {"wait_blocked": "b"},
            {"advance_time_ms": value - 1},
            add,
            {
                "await": f"a{n}",
                "expect": {"result": lease},
                "comment": "not timed out 1 ms before its timeout",
            },
            call("complete", {"id": u(item)}, "p"),
            {**call("lease", blocking, "b"), "async": f"t{n}"},
            {"wait_blocked": "b"},
            {"advance_time_ms": value + 1, "comment": "BLMOVE times out only past its timeout"},
            {"await": f"t{n}", "expect": {"result": None}, "comment": "timed out"},
        ]
    if key in ("add.delay_ms", "add_many.delay_ms", "release.delay_ms", "release_many.delay_ms"):
        if argument.method.startswith("add"):
            items = (
                {"items": [{"id": u(item), "data": u(data)}]}
                if argument.method == "add_many"
                else {"id": u(item), "data": u(data)}
            )
            steps = [
                {
                    **call(argument.method, {**items, "delay_ms": value}, "p"),
                    "expect": {"result": [True] if argument.method == "add_many" else True},
                }
            ]
        else:
            many = argument.method == "release_many"
            held: Json = {"leases": ["${l}"]} if many else {"lease": "${l}"}
            steps = [
                add,
                {**call("lease", {"lease_ms": 1000}), "save": {"l": ""}},
                {
                    **call(argument.method, {**held, "delay_ms": value}),
                    "expect": {"result": ["done"] if many else True},
                },
            ]
        return steps + _due_after(value, item)
    if key in ("fail.delay_ms", "fail.fallback_delay_ms"):
        return [
            add,
            {**call("lease", {"lease_ms": 1000}), "save": {"l": ""}},
            {
                **call("fail", {"lease": "${l}", argument.name: value}),
                "expect": {"result": {"outcome": "retry", "delay_ms": value}},
            },
            *_due_after(value, item),
        ]
    if key == "light_clean.pace_ms":
        expect = None if value == 0 else {"pttl_ms": value}
        return [
            {**call("light_clean", {"pace_ms": value}), "expect": {"result_matches": {"type": "object"}}},
            {"check": {"keys": {"${ns}:cleaned": expect}}},
            {"redis": ["DEL", "${ns}:cleaned"]},
        ]
    if key in ("lease_many.count", "complete_and_lease.count"):
        other = f"j{n}"
        args = _args(argument, value)
        if argument.method == "complete_and_lease":
            args = {**args, "items": [{"id": u("gone")}]}
        want = [lease] if value == 1 else [lease, {"id": u(other)}]
        expect = want if argument.method == "lease_many" else {"leases": want}
        return [
            call(
                "add_many",
                {"items": [{"id": u(item), "data": u(data)}, {"id": u(other), "data": u(data)}]},
                "p",
            ),
            {**call(argument.method, args), "expect": {"result": expect}},
            call("complete_many", {"items": [{"id": u(item)}, {"id": u(other)}]}, "p"),
        ]
    if argument.name == "chunk":
        return [{**call(argument.method, {"chunk": value}), "expect": {"result_matches": {"type": "object"}}}]
    if argument.method == "dead_list":
        expect = [] if argument.name == "offset" and value > 0 else [{"id": u("d")}]
        return [{**call("dead_list", {argument.name: value}), "expect": {"result": expect}}]
    if argument.method.startswith("set_policy"):
        return _policy_steps(argument, klass, value, n)
    if argument.method in ("worker_beat", "workers"):
        return _live_steps(argument, value, n)
    if argument.method == "open":
        return _option_steps(argument, klass, value, n)
    raise AssertionError(argument.key)


def _live_steps(argument: Argument, value: int, n: int) -> list[Json]:
    """Profile workers: a worker beating with ``ttl_ms`` is listed until exactly then and its
    keys expire then (the beat trims the earlier ones); ``offset`` and ``count`` page the list."""
    worker = f"w{n}"
    listed = [{"id": worker, "record": {"n": n}}]
    if argument.key == "worker_beat.ttl_ms":
        expires, beat = {"pttl_ms": value}, {"id": worker, "ttl_ms": value, "record": {"n": n}}
        return [
            {**call("worker_beat", beat), "expect": {"result": {}}},
            {"check": {"keys": {"${ns}:workers:seen": expires, "${ns}:workers": expires}}},
            {"advance_time_ms": value - 1},
            {**call("workers", {}), "expect": {"result": listed}, "comment": "1 ms before its deadline"},
            {"advance_time_ms": 1},
            {**call("workers", {}), "expect": {"result": []}, "comment": "at its deadline"},
        ]
    shown = [] if argument.name == "offset" and value > 0 else listed
    return [
        call("worker_beat", {"id": worker, "ttl_ms": 30_000, "record": {"n": n}}),
        {**call("workers", {argument.name: value}), "expect": {"result": shown}},
        {**call("worker_leave", {"id": worker}), "expect": {"result": True}},
    ]


def _due_after(delay: int, item: str) -> list[Json]:
    """The item is delayed for exactly ``delay`` ms: not leasable 1 ms before, leasable then."""
    done = [call("complete", {"id": u(item)}, "p")]
    if delay == 0:
        return [{**call("lease", {"lease_ms": 1000}), "expect": {"result": {"id": u(item)}}}, *done]
    if delay == MAX:
        return [
            {**call("lease", {"lease_ms": 1000}), "expect": {"result": None}},
            {**call("counts", {}), "expect": {"result": {"delayed": 1}}},
            *done,
        ]
    return [
        {"advance_time_ms": delay - 1},
        {**call("lease", {"lease_ms": 1000}), "expect": {"result": None}, "comment": "1 ms before it is due"},
        {"advance_time_ms": 1},
        {**call("lease", {"lease_ms": 1000}), "expect": {"result": {"id": u(item)}}, "comment": "due now"},
        *done,
    ]


def _policy_steps(argument: Argument, klass: str, value: int, n: int) -> list[Json]:
    field = argument.name.removeprefix("policy.")
    policy = {**POLICY, field: value}
    first = argument.method == "set_policy_if_absent"
    steps: list[Json] = [
        {"redis": ["DEL", "${ns}:policy"]},
        {**call(argument.method, {"policy": policy}), "expect": {"result": True if first else {}}},
        {**call("get_policy", {}), "expect": {"result": policy}},
    ]
    if klass not in UNIT_TELLERS:
        return steps
    item = f"i{n}"
    steps[1]["args"]["policy"] = policy = {
        **POLICY,
        "backoff": "exponential",
        "base_ms": 2_000_000,
        field: value,
    }
    if field == "base_ms":
        policy["backoff"] = "fixed"
    steps[2]["expect"]["result"] = policy
    lease = [
        call("add", {"id": u(item), "data": u("D")}, "p"),
        {**call("lease", {"lease_ms": 1000}), "save": {"l": ""}},
    ]
    if field in ("base_ms", "cap_ms"):
        fail = {
            **call("fail", {"lease": "${l}"}),
            "expect": {"result": {"outcome": "retry", "delay_ms": value}},
        }
        return [*steps, *lease, fail, *_due_after(value, item)]
    # dead_max_age_ms: a dead item is kept while younger than the age, trimmed once older
    return [
        *steps,
        *lease,
        {**call("fail", {"lease": "${l}", "dead": True}), "expect": {"result": {"outcome": "dead"}}},
        {"advance_time_ms": value - 1},
        {**call("light_clean", {}), "comment": "trims the dead-letter set (RWQ-RETRY-011)"},
        {
            **call("dead_list", {}),
            "expect": {"result": [{"id": u(item)}]},
            "comment": "1 ms younger than the age",
        },
        {"advance_time_ms": 2},
        call("light_clean", {}),
        {**call("dead_list", {}), "expect": {"result": []}, "comment": "older than the age"},
    ]


def _option_steps(argument: Argument, klass: str, value: int, n: int) -> list[Json]:
    session = f"s{n}"
    add = call("add", {"id": u(f"i{n}"), "data": u("I")}, session)
    if argument.name == "shards":
        lease = {**call("lease", {"lease_ms": 1000}, session), "expect": {"result": {"id": u(f"i{n}")}}}
        # 1024 shards: a lease would visit up to 1024 of them; the add shows the count accepted
        return [{**add, "expect": {"result": True}}, *([lease] if value < 1024 else [])]
    if argument.name == "wait_replicas" and value == 0:
        return [{**add, "expect": {"result": True}, "comment": "0: no WAIT"}]
    timeout = 2000 if argument.name == "wait_replicas" else value
    if timeout == MAX:
        return [
            {
                **add,
                "expect": {"result": True},
                "comment": "wait_replicas 0: the timeout is accepted, no WAIT",
            }
        ]
    early = (
        [
            {"advance_time_ms": timeout - 1},
            {"wait_blocked": session, "comment": "still waiting 1 ms before the timeout"},
        ]
        if timeout > 1
        else []
    )
    return [
        {**add, "async": f"a{n}"},
        {"wait_blocked": session},
        *early,
        {"advance_time_ms": 2},
        {"await": f"a{n}", "expect": {"error": "NOT_REPLICATED"}},
    ]


def accepted_case(argument: Argument) -> Json:
    """The minimum, the maximum and (durations) 999, 1,001 and 1,500 ms, each doing what it says."""
    values = [
        (k, v[0])
        for k in CLASSES
        if (v := boundary_value(argument, k)) is not None
        and v[1]
        and (argument.duration or k not in UNIT_TELLERS)
    ]
    sessions: dict[str, Json] = {"p": {}, "w": {}}
    steps: list[Json] = []
    if argument.key == "lease.timeout_ms":
        sessions["b"] = {"own_process": True}
    if argument.method == "dead_list":
        steps += [
            call("add", {"id": u("d"), "data": u("D")}, "p"),
            {**call("lease", {"lease_ms": 1000}), "save": {"l": ""}},
            {**call("fail", {"lease": "${l}", "dead": True}), "expect": {"result": {"outcome": "dead"}}},
        ]
    for n, (klass, value) in enumerate(values):
        if argument.method == "open":
            options = {argument.name: value}
            if argument.name == "wait_timeout_ms":
                options["wait_replicas"] = 0 if value == MAX else 1000
            if argument.name == "wait_replicas" and value:
                options["wait_timeout_ms"] = 2000
            sessions[f"s{n}"] = {"options": options, "queue": f"q{n}"}
            if argument.name == "shards":
                sessions[f"s{n}"]["untagged"] = True
            if options.get("wait_replicas"):
                sessions[f"s{n}"]["own_process"] = True
        steps += _accepted_steps(argument, klass, value, n)
    shown = ", ".join(str(v) for _, v in values)
    needs = ["frozen-clock"]
    if any(spec.get("own_process") for spec in sessions.values()):
        needs.append("multi-process")
    if argument.name == "shards":
        needs.append("standalone")
    return {
        "id": f"boundaries/{_slug(argument)}/accepted",
        "title": f"{argument.key} {shown}: accepted, and each does what it says"[:100],
        "requirements": _requirements(argument) or ["RWQ-ERR-004"],
        "profiles": _profiles(argument),
        "needs": needs,
        "sessions": sessions,
        "steps": steps,
    }


def cases() -> list[Json]:
    """Both cases of every argument."""
    return [case for argument in ARGUMENTS for case in (refused_case(argument), accepted_case(argument))]


def case_file(group: str, description: str, found: list[Json]) -> str:
    """A generated case file: one line per case head and per step, like the hand-kept files."""
    lines = [
        "{",
        '  "$schema": "../../schemas/conformance-case.schema.json",',
        '  "format": 1,',
        f'  "group": "{group}",',
        f'  "description": {json.dumps(description, ensure_ascii=False)},',
        '  "defaults": {"profiles": ["core"], "sessions": {"p": {}, "w": {}}},',
        '  "cases": [',
    ]
    for index, item in enumerate(found):
        head = {k: v for k, v in item.items() if k != "steps"}
        body = json.dumps(head, ensure_ascii=False)[:-1]
        steps = ",\n".join("        " + json.dumps(step, ensure_ascii=False) for step in item["steps"])
        comma = "," if index < len(found) - 1 else ""
        lines.append(f'    {body}, "steps": [\n{steps}\n    ]}}{comma}')
    lines += ["  ]", "}", ""]
    return "\n".join(lines)


def document() -> str:
    """The text of conformance/cases/boundaries.json."""
    return case_file(
        "boundaries",
        "GENERATED by tools/boundary_cases.py (make generate): every numeric argument of"
        " every method (rwq.conformance.coverage.ARGUMENTS) at its boundaries: the values a client must"
        " refuse (INVALID_ARGUMENT before any I/O, nothing written), and the minimum, the maximum and"
        " 999, 1,001 and 1,500 ms, each doing what it says on the frozen clock.",
        cases(),
    )


if __name__ == "__main__":
    print(document(), end="")
