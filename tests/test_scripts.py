"""The canonical scripts: manifest freshness, header contract, and argument checks done by Lua itself.

Every script is also called directly (EVAL through redis-py) with bad KEYS and ARGV: it must answer
with an ``RWQ_INVALID_ARGUMENT`` error reply and leave the keyspace exactly as it was, even when
the valid part of the arguments comes first (scripts are not rolled back, so they must validate
everything before their first write).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import redis

from rwq import WorkQueue
from rwq.protocol.scripts import SCRIPT_NAMES, lua_dir, manifest, manifest_text, registry

ROOT = Path(__file__).resolve().parents[1]


def keyspace(r: redis.Redis) -> dict[bytes, tuple[bytes | None, int]]:
    """Every key, its serialized value and its TTL in seconds, rounded (a lease key's TTL runs
    down by a few ms between two readings; a write would reset it to its full lease time)."""
    return {key: (r.dump(key), round(r.pttl(key) / 1000)) for key in sorted(r.keys("*"))}  # type: ignore[misc]


# --------------------------------------------------------------------------- manifest and headers


def test_manifest_file_is_fresh() -> None:
    assert (ROOT / "lua" / "manifest.json").read_text() == manifest_text()


def test_generate_check_exits_zero() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr


def test_manifest_sha1s_match_files() -> None:
    document = json.loads((ROOT / "lua" / "manifest.json").read_text())
    assert document["protocol"] == "RWQ/1"
    assert set(document["scripts"]) == set(SCRIPT_NAMES)
    for name, entry in document["scripts"].items():
        source = (ROOT / "lua" / entry["file"]).read_bytes()
        assert hashlib.sha1(source).hexdigest() == entry["sha1"], name
    assert document == manifest()


def test_every_lua_file_is_registered() -> None:
    on_disk = {path.stem for path in (ROOT / "lua").glob("*.lua")}
    assert on_disk == set(SCRIPT_NAMES)
    assert lua_dir().resolve() == (ROOT / "lua").resolve()


def test_server_computes_the_same_sha1(r: redis.Redis) -> None:
    for script in registry().values():
        assert r.script_load(script.source) == script.sha1


def header(source: str) -> list[str]:
    lines = []
    for line in source.splitlines():
        if not line.startswith("--"):
            break
        lines.append(line)
    return lines


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_script_header_names_the_contract(name: str) -> None:
    source = registry()[name].source.decode()
    lines = header(source)
    assert lines[0].startswith(f"-- rwq script: {name} ")
    for field in ("KEYS", "ARGV", "Reply", "Errors"):
        assert any(re.match(rf"-- {field}(\[\d+\])?\s", line) for line in lines), f"{name}: no {field}"
    errors = " ".join(line for line in lines if line.startswith("-- Errors"))
    assert "RWQ_INVALID_ARGUMENT" in errors
    assert "KEYS[1]" in source


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_script_error_codes_are_rwq_prefixed(name: str) -> None:
    source = registry()[name].source.decode()
    for message in re.findall(r"error_reply\('([^']*)'", source):
        assert re.match(r"RWQ_[A-Z_]+ ", message), f"{name}: {message!r}"


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_script_never_uses_keys_command(name: str) -> None:
    source = registry()[name].source.decode()
    assert "'KEYS'" not in source.upper().replace('"', "'")


# --------------------------------------------------------------------------- bad input, straight to Lua


@pytest.fixture
def populated(r: redis.Redis, queue: WorkQueue) -> WorkQueue:
    """A queue with something in every list, so a stray write would show."""
    queue.add_many([("a", b"A"), ("b", b"B"), ("c", b"C")])
    held = queue.lease(60_000)
    assert held is not None
    return queue


def run_script(r: redis.Redis, name: str, keys: Sequence[bytes], argv: Sequence[bytes | int | str]) -> Any:
    """EVAL a canonical script by its source, as a port without EVALSHA would."""
    client: Any = r
    return client.eval(registry()[name].source, len(keys), *keys, *argv)


def expect_invalid(r: redis.Redis, name: str, keys: list[bytes], argv: list[bytes | int | str]) -> None:
    before = keyspace(r)
    with pytest.raises(redis.ResponseError) as info:
        run_script(r, name, keys, argv)
    assert str(info.value).startswith("RWQ_INVALID_ARGUMENT "), str(info.value)
    assert keyspace(r) == before


BIG_ID = b"x" * 513
BIG_TOKEN = b"t" * 129
TOKEN = b"t" * 32

HELD = "<held token>"  # replaced by the token of the populated queue's lease on "a"


EVERY = '{"v":1,"every_ms":1000}'
DIGEST = "0a" * 20


def pairs(count: int) -> list[bytes | int | str]:
    return [part for n in range(count) for part in (f"id{n}", "x")]


def token_pairs(count: int) -> list[bytes | int | str]:
    return [part for n in range(count) for part in (f"id{n}", TOKEN)]


POLICY: list[bytes | int | str] = ["5", "fixed", "1000", "0", "0", "0", "0"]

# script -> list of (label, ARGV); the valid part of a call comes first where one exists, so
# that a script writing before it validates everything would leave a trace.
BAD_ARGV: dict[str, list[tuple[str, list[bytes | int | str]]]] = {
    "add": [
        ("no-argv", []),
        ("no-pairs", ["0"]),
        ("odd", ["0", "new", "x", "other"]),
        ("delay-negative", ["-1", "new", "x"]),
        ("delay-not-integer", ["1.5", "new", "x"]),
        ("delay-over-max", ["31536000001", "new", "x"]),
        ("empty-id-after-valid", ["0", "new", "x", "", "y"]),
        ("long-id-after-valid", ["0", "new", "x", BIG_ID, "y"]),
        ("invalid-utf8-after-valid", ["0", "new", "x", b"\xff\xfe", "y"]),
        ("utf8-surrogate", ["0", "new", "x", b"\xed\xa0\x80", "y"]),
        ("utf8-overlong", ["0", "new", "x", b"\xc0\xaf", "y"]),
        ("utf8-truncated", ["0", "new", "x", b"ab\xe2\x82", "y"]),
        ("utf8-above-u10ffff", ["0", "new", "x", b"\xf4\x90\x80\x80", "y"]),
        ("1001-pairs", ["0", *pairs(1001)]),
        ("delayed-empty-id", ["5000", "new", "x", "", "y"]),
    ],
    "lease": [
        ("no-argv", []),
        ("lease_ms-0", ["0", TOKEN, "1", "0", "0"]),
        ("lease_ms-negative", ["-5", TOKEN, "1", "0", "0"]),
        ("lease_ms-float", ["1.5", TOKEN, "1", "0", "0"]),
        ("lease_ms-leading-zero", ["01000", TOKEN, "1", "0", "0"]),
        ("lease_ms-over-max", ["31536000001", TOKEN, "1", "0", "0"]),
        ("token-empty", ["1000", "", "1", "0", "0"]),
        ("token-129", ["1000", BIG_TOKEN, "1", "0", "0"]),
        ("count-0", ["1000", TOKEN, "0", "0", "0"]),
        ("count-1001", ["1000", TOKEN, "1001", "0", "0"]),
        ("count-word", ["1000", TOKEN, "all", "0", "0"]),
        ("legacy-2", ["1000", TOKEN, "1", "2", "0"]),
        ("flat-2", ["1000", TOKEN, "1", "0", "2"]),
        ("flat-yes", ["1000", TOKEN, "1", "0", "yes"]),
        ("flat-missing", ["1000", TOKEN, "1", "0"]),
        ("argv-extra", ["1000", TOKEN, "1", "0", "0", "1000"]),
    ],
    "claim": [
        ("no-argv", []),
        ("id-empty", ["", "1000", TOKEN, "0", "0"]),
        ("id-513", [BIG_ID, "1000", TOKEN, "0", "0"]),
        ("lease_ms-0", ["b", "0", TOKEN, "0", "0"]),
        ("lease_ms-over-max", ["b", "31536000001", TOKEN, "0", "0"]),
        ("token-empty", ["b", "1000", "", "0", "0"]),
        ("token-129", ["b", "1000", BIG_TOKEN, "0", "0"]),
        ("legacy-yes", ["b", "1000", TOKEN, "yes", "0"]),
        ("flat-yes", ["b", "1000", TOKEN, "0", "yes"]),
        ("flat-missing", ["b", "1000", TOKEN, "0"]),
        ("argv-extra", ["b", "1000", TOKEN, "0", "0", "x"]),
    ],
    "renew": [
        ("no-argv", []),
        ("lease_ms-0", ["0", "0", "a", HELD]),
        ("lease_ms-over-max", ["31536000001", "0", "a", HELD]),
        ("legacy-2", ["1000", "2", "a", HELD]),
        ("no-pairs", ["1000", "0"]),
        ("odd", ["1000", "0", "a", HELD, "b"]),
        ("empty-id-after-valid", ["90000", "0", "a", HELD, "", TOKEN]),
        ("long-id-after-valid", ["90000", "0", "a", HELD, BIG_ID, TOKEN]),
        ("empty-token-after-valid", ["90000", "0", "a", HELD, "b", ""]),
        ("long-token-after-valid", ["90000", "1", "a", HELD, "b", BIG_TOKEN]),
        ("1001-pairs", ["90000", "0", *token_pairs(1001)]),
    ],
    "complete": [
        ("no-argv", []),
        ("mode-only", ["any"]),
        ("mode-unknown", ["all", "a"]),
        ("empty-id-after-valid", ["any", "a", ""]),
        ("long-id-after-valid", ["any", "a", BIG_ID]),
        ("owner-odd", ["owner", "a", HELD, "b"]),
        ("owner-empty-token-after-valid", ["owner", "a", HELD, "b", ""]),
        ("owner-long-token-after-valid", ["owner", "a", HELD, "b", BIG_TOKEN]),
        ("owner-empty-id-after-valid", ["owner", "a", HELD, "", TOKEN]),
        ("1001-ids", ["any", "a", *(f"id{n}" for n in range(1000))]),
    ],
    "release": [
        ("no-argv", []),
        ("no-pairs", ["0"]),
        ("delay-negative", ["-1", "a", HELD]),
        ("delay-word", ["soon", "a", HELD]),
        ("delay-over-max", ["31536000001", "a", HELD]),
        ("odd", ["0", "a", HELD, "b"]),
        ("empty-token-after-valid", ["0", "a", HELD, "b", ""]),
        ("empty-id-after-valid", ["0", "a", HELD, "", TOKEN]),
        ("long-token-after-valid", ["0", "a", HELD, "b", BIG_TOKEN]),
        ("1001-pairs", ["0", "a", HELD, *token_pairs(1000)]),
    ],
    "counts": [("argv-given", ["x"])],
    "light_clean": [
        ("no-argv", []),
        ("cursor-only", ["0"]),
        ("cursor-negative", ["-1", "10"]),
        ("cursor-word", ["start", "10"]),
        ("cursor-over-max", ["4294967296", "10"]),
        ("max-0", ["0", "0"]),
        ("max-1001", ["0", "1001"]),
        ("argv-extra", ["0", "10", "x"]),
    ],
    "deep_clean": [
        ("no-argv", []),
        ("mode-unknown", ["scan"]),
        ("index-list-unknown", ["index", "items", "0", "10"]),
        ("index-start-negative", ["index", "queue", "-1", "10"]),
        ("index-start-over-max", ["index", "queue", "4294967296", "10"]),
        ("index-max-0", ["index", "processing", "0", "0"]),
        ("index-argv-extra", ["index", "queue", "0", "10", "x"]),
        ("index-max-1001", ["index", "processing", "0", "1001"]),
        ("index-missing-max", ["index", "queue", "0"]),
        ("requeue-no-ids", ["requeue"]),
        ("requeue-empty-id-after-valid", ["requeue", "orphan", ""]),
        ("requeue-long-id", ["requeue", "orphan", BIG_ID]),
        ("requeue-1001", ["requeue", "orphan", *(f"id{n}" for n in range(1000))]),
        ("finish-with-args", ["finish", "now"]),
    ],
    "set_policy": [
        ("no-argv", []),
        ("clear-with-args", ["clear", "now"]),
        ("six-fields", POLICY[:6]),
        ("eight-fields", [*POLICY, "0"]),
        ("backoff-unknown", ["5", "linear", "1000", "0", "0", "0", "0"]),
        ("max_attempts-over", ["1000001", "fixed", "1000", "0", "0", "0", "0"]),
        ("max_attempts-negative", ["-1", "fixed", "1000", "0", "0", "0", "0"]),
        ("base_ms-over", ["5", "fixed", "31536000001", "0", "0", "0", "0"]),
        ("cap_ms-word", ["5", "exponential", "1000", "none", "0", "0", "0"]),
        ("jitter-101", ["5", "fixed", "1000", "0", "101", "0", "0"]),
        ("dead_max_count-over", ["5", "fixed", "1000", "0", "0", "100000001", "0"]),
        ("dead_max_age-over", ["5", "fixed", "1000", "0", "0", "0", "31536000001"]),
    ],
    "fail": [
        ("no-argv", []),
        ("three-args", ["a", HELD, ""]),
        ("five-args", ["a", HELD, "", "0", "x"]),
        ("id-empty", ["", HELD, "", "0"]),
        ("id-513", [BIG_ID, HELD, "", "0"]),
        ("token-empty", ["a", "", "", "0"]),
        ("token-129", ["a", BIG_TOKEN, "", "0"]),
        ("reason-1025", ["a", HELD, "r" * 1025, "0"]),
        ("random-1000000", ["a", HELD, "", "1000000"]),
        ("random-negative", ["a", HELD, "", "-1"]),
        ("random-word", ["a", HELD, "", "lucky"]),
    ],
    "dead": [
        ("no-argv", []),
        ("mode-unknown", ["show"]),
        ("list-no-args", ["list"]),
        ("list-count-0", ["list", "0", "0"]),
        ("list-count-1001", ["list", "0", "1001"]),
        ("list-offset-negative", ["list", "-1", "10"]),
        ("list-extra", ["list", "0", "10", "x"]),
        ("get-no-id", ["get"]),
        ("get-empty-id", ["get", ""]),
        ("get-two-ids", ["get", "a", "b"]),
        ("requeue-no-ids", ["requeue"]),
        ("requeue-empty-after-valid", ["requeue", "gone", ""]),
        ("purge-long-id", ["purge", "gone", BIG_ID]),
        ("purge-1001", ["purge", *(f"id{n}" for n in range(1001))]),
        ("trim-with-args", ["trim", "all"]),
    ],
    "shards": [
        ("no-argv", []),
        ("zero", ["0"]),
        ("over-1024", ["1025"]),
        ("word", ["four"]),
        ("leading-zero", ["04"]),
        ("argv-extra", ["4", "4"]),
    ],
    "ring": [
        ("no-argv", []),
        ("zero", ["0"]),
        ("over-16", ["17"]),
        ("word", ["one"]),
        ("leading-zero", ["01"]),
        ("argv-extra", ["1", "1"]),
    ],
    "heartbeat": [
        ("no-argv", []),
        ("unknown-mode", ["beats", "w1", "30000", "{}"]),
        ("beat-no-record", ["beat", "w1", "30000"]),
        ("beat-argv-extra", ["beat", "w1", "30000", "{}", "x"]),
        ("beat-empty-id", ["beat", "", "30000", "{}"]),
        ("beat-id-65-bytes", ["beat", "w" * 65, "30000", "{}"]),
        ("beat-id-bad-character", ["beat", "w 1", "30000", "{}"]),
        ("beat-ttl-999", ["beat", "w1", "999", "{}"]),
        ("beat-ttl-3600001", ["beat", "w1", "3600001", "{}"]),
        ("beat-ttl-not-integer", ["beat", "w1", "1.5", "{}"]),
        ("beat-record-array", ["beat", "w1", "30000", "[1]"]),
        ("beat-record-not-json", ["beat", "w1", "30000", "{"]),
        ("beat-record-string", ["beat", "w1", "30000", '"{}"']),
        ("beat-record-4097-bytes", ["beat", "w1", "30000", '{"a":"' + "x" * 4089 + '"}']),
        ("leave-no-id", ["leave"]),
        ("leave-bad-id", ["leave", "w/1"]),
        ("list-count-0", ["list", "0", "0"]),
        ("list-count-1001", ["list", "0", "1001"]),
        ("list-offset-1000001", ["list", "1000001", "10"]),
        ("list-argv-extra", ["list", "0", "10", "x"]),
    ],
    "stats": [
        ("no-argv", []),
        ("unknown-mode", ["on"]),
        ("argv-extra", ["read", "x"]),
    ],
    "schedule": [
        ("no-argv", []),
        ("unknown-mode", ["add", "s", EVERY, "x"]),
        ("put-no-payload", ["put", "s", EVERY]),
        ("put-argv-extra", ["put", "s", EVERY, "x", "y"]),
        ("put-empty-name", ["put", "", EVERY, "x"]),
        ("put-name-201-bytes", ["put", "s" * 201, EVERY, "x"]),
        ("put-name-leading-dot", ["put", ".s", EVERY, "x"]),
        ("put-name-at", ["put", "s@1", EVERY, "x"]),
        ("put-not-json", ["put", "s", "{", "x"]),
        ("put-array", ["put", "s", "[1]", "x"]),
        ("put-v2", ["put", "s", '{"v":2,"every_ms":1000}', "x"]),
        ("put-no-kind", ["put", "s", '{"v":1}', "x"]),
        ("put-both-kinds", ["put", "s", '{"v":1,"every_ms":1000,"cron":"* * * * *"}', "x"]),
        ("put-every-999", ["put", "s", '{"v":1,"every_ms":999}', "x"]),
        ("put-every-over-a-year", ["put", "s", '{"v":1,"every_ms":31536000001}', "x"]),
        ("put-every-fraction", ["put", "s", '{"v":1,"every_ms":1000.5}', "x"]),
        ("put-every-text", ["put", "s", '{"v":1,"every_ms":"1000"}', "x"]),
        ("put-offset-every", ["put", "s", '{"v":1,"every_ms":1000,"offset_ms":1000}', "x"]),
        ("put-offset-negative", ["put", "s", '{"v":1,"every_ms":1000,"offset_ms":-1}', "x"]),
        ("put-every-with-tz", ["put", "s", '{"v":1,"every_ms":1000,"tz":"UTC"}', "x"]),
        ("put-cron-201-bytes", ["put", "s", '{"v":1,"cron":"' + "*" * 201 + '"}', "x"]),
        ("put-cron-empty", ["put", "s", '{"v":1,"cron":""}', "x"]),
        ("put-cron-bad-character", ["put", "s", '{"v":1,"cron":"0 0 ? * 1"}', "x"]),
        ("put-cron-number", ["put", "s", '{"v":1,"cron":5}', "x"]),
        ("put-cron-offset", ["put", "s", '{"v":1,"cron":"* * * * *","offset_ms":0}', "x"]),
        ("put-tz-65-bytes", ["put", "s", '{"v":1,"cron":"* * * * *","tz":"' + "Z" * 65 + '"}', "x"]),
        ("put-tz-bad-character", ["put", "s", '{"v":1,"cron":"* * * * *","tz":"Europe/Lon don"}', "x"]),
        ("put-missed-never", ["put", "s", '{"v":1,"every_ms":1000,"missed":"never"}', "x"]),
        ("put-grace-negative", ["put", "s", '{"v":1,"every_ms":1000,"grace_ms":-1}', "x"]),
        ("put-grace-over-a-day", ["put", "s", '{"v":1,"every_ms":1000,"grace_ms":86400001}', "x"]),
        ("remove-no-name", ["remove"]),
        ("pause-bad-name", ["pause", "s s"]),
        ("resume-argv-extra", ["resume", "s", "x"]),
        ("list-count-0", ["list", "0", "0"]),
        ("list-count-1001", ["list", "0", "1001"]),
        ("list-cursor-word", ["list", "next", "10"]),
        ("list-argv-extra", ["list", "0", "10", "x"]),
    ],
    "fire": [
        ("no-argv", []),
        ("no-slot", ["s", DIGEST]),
        ("101-slots", ["s", DIGEST, *(str(1000 * n) for n in range(1, 102))]),
        ("empty-name", ["", DIGEST, "1000"]),
        ("name-201-bytes", ["s" * 201, DIGEST, "1000"]),
        ("name-at", ["s@1", DIGEST, "1000"]),
        ("digest-39", ["s", DIGEST[:39], "1000"]),
        ("digest-upper-case", ["s", DIGEST.upper(), "1000"]),
        ("slot-negative", ["s", DIGEST, "-1000"]),
        ("slot-leading-zero", ["s", DIGEST, "01000"]),
        ("slot-over-10-to-15", ["s", DIGEST, "1000000000000001"]),
        ("slot-fraction", ["s", DIGEST, "1000.5"]),
        ("slots-descending", ["s", DIGEST, "2000", "1000"]),
        ("slots-repeated", ["s", DIGEST, "1000", "1000"]),
    ],
}
# complete_and_lease: each bad lease argument with a valid completion after it (the script must
# not complete "a" before rejecting the lease part), and each bad completion after valid lease ones.
BAD_ARGV["complete_and_lease"] = [
    *((f"lease-{label}", [*argv, "any", "a"]) for label, argv in BAD_ARGV["lease"] if len(argv) == 5),
    *((f"complete-{label}", ["1000", TOKEN, "1", "0", "0", *argv]) for label, argv in BAD_ARGV["complete"]),
]


def script_keys(name: str, q: WorkQueue) -> list[bytes]:
    if name == "shards":
        return [f"{{{q.prefix}#0}}:queue".encode()]
    if name == "ring":
        return [f"{{{q.prefix}#bell}}".encode()]
    if name in ("add", "renew", "set_policy", "dead", "heartbeat", "stats", "schedule", "fire"):
        return [q.keys.queue]
    if name == "deep_clean":
        return [q.keys.queue, q.keys.processing, q.keys.deep_clean_index("run1")]
    return [q.keys.queue, q.keys.processing]


def test_bad_argv_table_covers_every_script() -> None:
    assert set(BAD_ARGV) == set(SCRIPT_NAMES)


@pytest.mark.parametrize(
    ("name", "argv"),
    [
        pytest.param(name, argv, id=f"{name}-{label}")
        for name, cases in BAD_ARGV.items()
        for label, argv in cases
    ],
)
def test_script_rejects_bad_argv(
    r: redis.Redis, populated: WorkQueue, name: str, argv: list[bytes | int | str]
) -> None:
    held = r.get(populated.keys.lease("a"))
    assert held is not None
    r.set(populated.keys.item("orphan"), b"")
    r.set(populated.keys.item("gone"), b"")
    args = [held if part == HELD else part for part in argv]
    expect_invalid(r, name, script_keys(name, populated), args)


def bad_keys(name: str, q: WorkQueue, other: WorkQueue) -> list[tuple[str, list[bytes]]]:
    keys = script_keys(name, q)
    cases = [
        ("no-keys", []),
        ("extra-key", [*keys, q.keys.item("a")]),
        ("first-not-queue", [q.keys.processing, *keys[1:]]),
        ("first-queue-suffix", [q.keys.queue + b"x", *keys[1:]]),
    ]
    if len(keys) >= 2:
        cases.append(("processing-of-other-queue", [keys[0], other.keys.processing, *keys[2:]]))
        cases.append(("missing-second", [keys[0]]))
    if name not in ("shards", "ring"):  # RWQ-SCRIPT-009: a prefix that RWQ-KEYS-008 refuses
        own = q.prefix.encode() + b":"
        for segment in (b"item:x", b"lease:x", b"leased_by_session:x", b"deep_clean:x", b"x:item"):
            nested = [key.replace(own, own + segment + b":", 1) for key in keys]
            cases.append((f"prefix-nested-{segment.decode()}", nested))
    if name == "deep_clean":
        cases += [
            ("index-of-other-queue", [*keys[:2], other.keys.deep_clean_index("run1")]),
            ("index-without-run", [*keys[:2], q.keys.deep_clean_index("")]),
            ("index-run-65-bytes", [*keys[:2], q.keys.deep_clean_index("r" * 65)]),
            ("index-not-deep-clean", [*keys[:2], q.keys.item("a")]),
        ]
    return cases


# A call with valid ARGV for each script, so that only the KEYS are wrong.
VALID_ARGV: dict[str, list[bytes | int | str]] = {
    "add": ["0", "new", "x"],
    "lease": ["1000", TOKEN, "1", "0", "0"],
    "claim": ["b", "1000", TOKEN, "0", "0"],
    "renew": ["90000", "0", "a", HELD],
    "complete": ["any", "a"],
    "complete_and_lease": ["1000", TOKEN, "1", "0", "0", "any", "a"],
    "release": ["0", "a", HELD],
    "counts": [],
    "light_clean": ["0", "10"],
    "deep_clean": ["finish"],
    "set_policy": POLICY,
    "fail": ["a", HELD, "", "0"],
    "dead": ["trim"],
    "shards": ["4"],
    "ring": ["1"],
    "heartbeat": ["beat", "w1", "30000", '{"a":"' + "x" * 4088 + '"}'],  # a record of 4096 bytes
    "stats": ["enable"],
    "schedule": ["put", "s" * 200, '{"v":1,"every_ms":31536000000,"offset_ms":31535999999}', "x"],
    "fire": ["s", DIGEST, *(str(1000 * n) for n in range(1, 101))],
}


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_script_rejects_bad_keys(r: redis.Redis, populated: WorkQueue, name: str) -> None:
    other = WorkQueue(r, populated.prefix + "other")
    held = r.get(populated.keys.lease("a"))
    assert held is not None
    args = [held if part == HELD else part for part in VALID_ARGV[name]]
    rejected = []
    for label, keys in bad_keys(name, populated, other):
        before = keyspace(r)
        try:
            run_script(r, name, keys, args)
        except redis.ResponseError as exc:
            if not str(exc).startswith("RWQ_INVALID_ARGUMENT "):
                rejected.append(f"{label}: {exc}")
        else:
            rejected.append(f"{label}: accepted")
        assert keyspace(r) == before, label
    assert rejected == []


def test_valid_argv_table_is_valid(r: redis.Redis, populated: WorkQueue) -> None:
    """The KEYS test above is only meaningful if these ARGV are accepted with the right KEYS."""
    held = r.get(populated.keys.lease("a"))
    assert held is not None
    for name in SCRIPT_NAMES:
        if name in ("complete", "release", "fail", "renew"):
            continue  # these would consume the lease the others need; covered by the client tests
        args = [held if part == HELD else part for part in VALID_ARGV[name]]
        run_script(r, name, script_keys(name, populated), args)
    for name in ("renew", "fail"):
        args = [held if part == HELD else part for part in VALID_ARGV[name]]
        run_script(r, name, script_keys(name, populated), args)


# --------------------------------------------------------------------------- wrong-typed keys


def expect_wrong_type(r: redis.Redis, name: str, keys: list[bytes], argv: list[bytes | int | str]) -> None:
    """The script refuses with RWQ_WRONG_TYPE (RWQ-SCRIPT-007) and writes nothing."""
    before = keyspace(r)
    with pytest.raises(redis.ResponseError) as info:
        run_script(r, name, keys, argv)
    assert str(info.value).startswith("RWQ_WRONG_TYPE "), str(info.value)
    assert keyspace(r) == before


CLAIM_KEYS = ["processing", "in_flight", "item:b", "lease:b", "leased_by_session:b"]
CLAIM_KEYS += ["policy", "attempts", "dead", "dead:data"]  # the retry keys, read while a policy exists


@pytest.mark.parametrize("wrong", CLAIM_KEYS)
def test_claim_refuses_wrong_typed_keys(r: redis.Redis, queue: WorkQueue, wrong: str) -> None:
    """claim (reached only after a BLMOVE, so no conformance case calls it with such keys)."""
    queue.add("b", b"B")
    r.lmove(queue.keys.queue.decode(), queue.keys.processing.decode(), "RIGHT", "LEFT")  # as BLMOVE does
    r.hset(queue.keys.policy, "max_attempts", "5")
    key = f"{queue.prefix}:{wrong}".encode()
    r.delete(key)
    if wrong.startswith(("item:", "lease:", "leased_by_session:")):
        r.rpush(key, "x")
    else:
        r.set(key, "x")
    expect_wrong_type(r, "claim", [queue.keys.queue, queue.keys.processing], ["b", "1000", TOKEN, "0", "0"])


@pytest.mark.parametrize("skipped", [2, 150])
def test_lease_checks_entries_behind_skipped_ones(r: redis.Redis, queue: WorkQueue, skipped: int) -> None:
    """The lease script's check walks the queue as its loop will: past ghosts and held items, and
    past its first page, to the entry it would lease; that entry's wrong-typed lease key refuses
    the call before a single entry has moved."""
    queue.add("r", b"R")
    assert queue.lease(60_000) is not None  # r is held now
    queue.add("x", b"X")
    r.rpush(queue.keys.lease("x"), "wrong")
    # From the tail, where leases take from: the ghosts, then a duplicate entry of held r, then x.
    r.rpush(queue.keys.queue, "r", *(f"ghost{n}" for n in range(skipped)))
    expect_wrong_type(r, "lease", [queue.keys.queue, queue.keys.processing], ["1000", TOKEN, "1", "0", "0"])
