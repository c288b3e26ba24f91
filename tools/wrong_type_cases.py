"""The conformance cases of conformance/cases/wrong-type.json (written by tools/generate.py).

One case per operation and key of the layout that the operation's script reads or writes
(SPEC §3, §15, §16): the runner builds a queue with raw commands, gives that one key another
Redis type, calls the operation, expects ``WRONG_TYPE`` (RWQ-SCRIPT-007) and checks every raw
key of the namespace, byte for byte, so that a script that wrote anything before its check fails.
"""

from __future__ import annotations

import json
from typing import Any

Json = Any

# Each key of the layout this suite builds, its SPEC §3 type, and the profile it belongs to.
TYPES = {
    "queue": "list",
    "processing": "list",
    "in_flight": "zset",
    "item:r": "string",
    "lease:r": "string",
    "leased_by_session:r": "string",
    "item:h": "string",
    "lease:h": "string",
    "leased_by_session:h": "string",
    "item:n": "string",
    "lease:n": "string",
    "leased_by_session:n": "string",
    "item:x": "string",
    "lease:x": "string",
    "leased_by_session:x": "string",
    "policy": "hash",
    "attempts": "hash",
    "dead": "zset",
    "dead:data": "hash",
    "dead:info": "hash",
    "delayed": "zset",
    "delayed:data": "hash",
    "cleaned": "string",
}
RETRY = {"policy", "attempts", "dead", "dead:data", "dead:info"}
DELAY = {"delayed", "delayed:data"}
ITEM = ("item:{}", "lease:{}", "leased_by_session:{}")

HELD = {"id": {"utf8": "h"}, "token": "tok-h"}
FIELDS = ("max_attempts", "backoff", "base_ms", "cap_ms", "jitter_pct", "dead_max_count", "dead_max_age_ms")
POLICY = dict(zip(FIELDS, (5, "fixed", 0, 0, 0, 0, 0), strict=True))
DEAD_INFO = '{"reason":"r","attempts":1}'


def _item(item_id: str) -> list[str]:
    return [key.format(item_id) for key in ITEM]


# operation name in the case id -> (adapter method, args, keys its script checks)
OPERATIONS: dict[str, tuple[str, dict[str, Json], list[str]]] = {
    "add": ("add", {"id": {"utf8": "n"}, "data": {"utf8": "N"}}, ["queue", "delayed", "dead", *_item("n")]),
    "add-delayed": (
        "add",
        {"id": {"utf8": "n"}, "data": {"utf8": "N"}, "delay_ms": 1000},
        ["queue", "delayed", "delayed:data", "dead", *_item("n")],
    ),
    "lease": (
        "lease",
        {"lease_ms": 30000},
        ["queue", "processing", "in_flight", *sorted(RETRY | DELAY), *_item("r")],
    ),
    "renew": ("renew", {"lease": HELD, "lease_ms": 30000}, _item("h")),
    "complete": (
        "complete",
        {"id": {"utf8": "h"}},
        ["queue", "processing", "in_flight", "attempts", "delayed", "delayed:data", *_item("h")],
    ),
    "complete-owner": (
        "complete",
        {"lease": HELD, "require_lease": True},
        ["queue", "processing", "in_flight", "attempts", *_item("h")],
    ),
    "complete-and-lease": (
        "complete_and_lease",
        {"items": [{"id": {"utf8": "h"}}], "lease_ms": 30000},
        ["queue", "processing", "in_flight", *sorted(RETRY | DELAY), *_item("h"), *_item("r")],
    ),
    "release": ("release", {"lease": HELD}, ["queue", "processing", "in_flight", *_item("h")]),
    "release-delayed": (
        "release",
        {"lease": HELD, "delay_ms": 1000},
        ["queue", "processing", "in_flight", "delayed", "delayed:data", *_item("h")],
    ),
    "fail": (
        "fail",
        {"lease": HELD},
        ["queue", "processing", "in_flight", *sorted(RETRY | DELAY), *_item("h")],
    ),
    "counts": ("counts", {}, ["queue", "processing", "in_flight", "delayed", "dead"]),
    "light-clean": (
        "light_clean",
        {},
        ["queue", "processing", "in_flight", *sorted(RETRY | DELAY), *_item("h")],
    ),
    "light-clean-paced": ("light_clean", {"pace_ms": 5000}, ["cleaned"]),
    # item:h is in processing, so its refusal comes from the run's second call: the client must
    # still finish the run, deleting its index (RWQ-DEEP-005), for the raw keys to be unchanged.
    "deep-clean": ("deep_clean", {}, ["queue", "processing", "in_flight", *_item("r"), *_item("h")]),
    "set-policy": ("set_policy", {"policy": POLICY}, ["policy"]),
    "set-policy-if-absent": ("set_policy_if_absent", {"policy": POLICY}, ["policy"]),
    "get-policy": ("get_policy", {}, ["policy"]),
    "dead-list": ("dead_list", {}, ["dead", "dead:data", "dead:info"]),
    "dead-get": ("dead_get", {"id": {"utf8": "x"}}, ["dead", "dead:data", "dead:info"]),
    "dead-purge": ("dead_purge", {"ids": [{"utf8": "x"}]}, ["dead", "dead:data", "dead:info"]),
    "dead-requeue": (
        "dead_requeue",
        {"ids": [{"utf8": "x"}]},
        ["queue", "attempts", "dead", "dead:data", "dead:info", "delayed", *_item("x")],
    ),
}
# Requirements beyond RWQ-SCRIPT-007 that an operation's cases also test.
ALSO_CITED = {
    "deep-clean": ["RWQ-DEEP-005"],
    "get-policy": ["RWQ-RETRY-014"],
    "light-clean-paced": ["RWQ-CLEAN-007"],
}
RETRY_METHODS = {
    "fail",
    "set_policy",
    "set_policy_if_absent",
    "get_policy",
    "dead_list",
    "dead_get",
    "dead_purge",
    "dead_requeue",
}


def _baseline(retry: bool, delay: bool) -> dict[str, Json]:
    """The raw keys every case starts from: ready item r, item h leased with token tok-h, and the
    profiles' keys (a retry policy, h's attempts, dead item x; delayed item d, due in ~300 years)."""
    keys: dict[str, Json] = {
        "queue": ["r"],
        "processing": ["h"],
        "item:r": "R",
        "item:h": "H",
        "lease:h": "tok-h",
    }
    if retry:
        keys |= {
            "policy": {name: str(value) for name, value in POLICY.items()},
            "attempts": {"h": "1"},
            "dead": [["x", 1000.0]],
            "dead:data": {"x": "X"},
            "dead:info": {"x": DEAD_INFO},
        }
    if delay:
        keys |= {"delayed": [["d", 9999999999999.0]], "delayed:data": {"d": "D"}}
    return keys


def _write(name: str, value: Json) -> list[Json]:
    """The raw command that creates key ``name`` (under ``${ns}:``) holding ``value``: a string,
    a hash (dict), a zset ([[member, score], ...]) or a list ([member, ...])."""
    key = "${ns}:" + name
    if isinstance(value, str):
        return ["SET", key, value, "PX", 600000] if name.startswith("lease:") else ["SET", key, value]
    if isinstance(value, dict):
        return ["HSET", key, *(part for pair in value.items() for part in pair)]
    if isinstance(value[0], list):
        return ["ZADD", key, *(part for member, score in value for part in (int(score), member))]
    return ["RPUSH", key, *value]


def _expect(value: Json) -> Json:
    """The raw key check of a key holding ``value``."""
    if isinstance(value, str):
        return {"type": "string", "value": {"utf8": value}}
    if isinstance(value, dict):
        return {"type": "hash", "value": {field: {"utf8": v} for field, v in value.items()}}
    if isinstance(value[0], list):
        return {"type": "zset", "value": [[{"utf8": member}, score] for member, score in value]}
    return {"type": "list", "value": [{"utf8": v} for v in value]}


def case(operation: str, wrong: str) -> Json:
    """The case: key ``wrong`` has another type when ``operation`` runs."""
    method, args, _ = OPERATIONS[operation]
    # The profiles are those of the methods and options called (a core operation's canonical
    # script checks the profile keys too); the keys built are those the script reads.
    every = operation in {"lease", "complete-and-lease", "light-clean"}  # reads both profiles' keys
    profiles = ["core"]
    if method in RETRY_METHODS:
        profiles.append("retry")
    if "delay_ms" in args:
        profiles.append("delay")
    retry = every or "retry" in profiles or wrong in RETRY
    keys = _baseline(retry, every or "delay" in profiles or wrong in DELAY)
    # A string key becomes a list, any other a string: both are what a stray SET or LPUSH leaves.
    keys[wrong] = ["wrong"] if TYPES[wrong] == "string" else "wrong"
    actual = "list" if TYPES[wrong] == "string" else "string"
    steps: list[Json] = [{"redis": _write(name, value)} for name, value in keys.items()]
    steps.append({"call": method, "session": "p", "args": args, "expect": {"error": "WRONG_TYPE"}})
    expected = {"${ns}:" + name: _expect(value) for name, value in keys.items()}
    steps.append({"check": {"keys": {"$only": True, **expected}}})
    slug = wrong.replace(":", "-").replace("_", "-")
    built = {
        "id": f"wrong-type/{operation}/{slug}",
        "title": f"{method} with {wrong} holding a {actual}, not a {TYPES[wrong]}: WRONG_TYPE, no write",
        "requirements": ["RWQ-SCRIPT-007", *ALSO_CITED.get(operation, [])],
        "profiles": profiles,
        "steps": steps,
    }
    if operation == "complete-and-lease" and wrong.endswith(":r"):
        # With profile declared-keys a cold window stops the lease part before the item it would
        # lease; the composite then completes, and the lease after it reports WRONG_TYPE (SPEC 20).
        built["needs"] = ["undeclared-keys"]
    return built


def document() -> str:
    """The text of conformance/cases/wrong-type.json."""
    cases = [case(operation, wrong) for operation, (_, _, keys) in OPERATIONS.items() for wrong in keys]
    lines = [
        "{",
        '  "$schema": "../../schemas/conformance-case.schema.json",',
        '  "format": 1,',
        '  "group": "wrong-type",',
        '  "description": "GENERATED by tools/wrong_type_cases.py (make generate): every operation with'
        " each key of the layout its script reads or writes holding another Redis type: WRONG_TYPE,"
        ' and every raw key of the namespace unchanged.",',
        '  "defaults": {"profiles": ["core"], "sessions": {"p": {}}},',
        '  "cases": [',
    ]
    for index, item in enumerate(cases):
        head = {k: v for k, v in item.items() if k != "steps"}
        body = json.dumps(head, ensure_ascii=False)[:-1]
        steps = ",\n".join("        " + json.dumps(step, ensure_ascii=False) for step in item["steps"])
        comma = "," if index < len(cases) - 1 else ""
        lines.append(f'    {body}, "steps": [\n{steps}\n    ]}}{comma}')
    lines += ["  ]", "}", ""]
    return "\n".join(lines)
