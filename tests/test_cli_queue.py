"""The operator commands of the rwq CLI, against a real server, their JSON checked by its schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]
from redis.cluster import RedisCluster
from redis.crc import key_slot

from rwq import RetryPolicy, WorkQueue, cli_queue
from rwq.cli import cli
from rwq.conformance.cluster import SLOT_RANGES, LocalCluster
from rwq.conformance.redis_server import RedisServer
from rwq.sharded import ShardedWorkQueue

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "cli-output.schema.json").read_text())


def rwq(server: RedisServer, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, [*args, "--url", server.url, "--json"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)
    Draft202012Validator(SCHEMA).validate(document)
    return document


@pytest.fixture(scope="module")
def cluster_node_url() -> Iterator[str]:
    local = LocalCluster().start()
    try:
        yield local.url
    finally:
        local.stop()


def test_schema_is_valid() -> None:
    Draft202012Validator.check_schema(SCHEMA)


def test_stats_clean_and_the_dead_letter_set(
    queue: WorkQueue, r: redis.Redis, redis_server: RedisServer
) -> None:
    p = queue.prefix
    queue.set_retry_policy(RetryPolicy(max_attempts=1))
    queue.add_many([("a", b"A"), ("b", b"\x00B")])
    held = queue.lease(60_000)
    assert held is not None
    queue.fail(held, "boom")  # one attempt allowed: dead
    abandoned = queue.lease(60_000)
    assert abandoned is not None
    r.delete(queue.keys.lease("b"))  # its holder died

    assert rwq(redis_server, "stats", "--prefix", p) == {
        "command": "stats",
        "prefix": p,
        "queued": 0,
        "processing": 1,
        "delayed": 0,
        "dead": 1,
    }
    cleaned = rwq(redis_server, "clean", "--prefix", p, "--deep")
    assert cleaned["light"]["dead"] == ["b"]  # its one attempt was used: dead, not requeued
    assert cleaned["deep"]["requeued"] == []
    listed = rwq(redis_server, "dead", "list", "--prefix", p)
    reasons = [(item["id"], item["reason"]) for item in listed["items"]]
    assert reasons == [("b", "lease expired"), ("a", "boom")]
    shown = rwq(redis_server, "dead", "show", "--prefix", p, "b")
    assert shown["item"]["data_base64"] == "AEI="
    assert shown["item"]["detail"] == ""
    assert rwq(redis_server, "dead", "requeue", "--prefix", p, "a", "zz")["results"] == [
        {"id": "a", "done": True},
        {"id": "zz", "done": False},
    ]
    assert rwq(redis_server, "dead", "purge", "--prefix", p, "b")["results"] == [{"id": "b", "done": True}]
    assert queue.counts().queued == 1
    assert queue.counts().dead == 0


def test_dead_show_prints_the_detail_line_by_line(queue: WorkQueue, redis_server: RedisServer) -> None:
    """A dead item's detail (the handler's traceback, RWQ-RETRY-018) in JSON and in the table."""
    queue.add("a", b"A")
    held = queue.lease(60_000)
    assert held is not None
    detail = 'Traceback (most recent call last):\n  File "job.py", line 3\nValueError: x\n'
    queue.fail(held, "ValueError: x", dead=True, detail=detail)
    assert rwq(redis_server, "dead", "show", "--prefix", queue.prefix, "a")["item"]["detail"] == detail
    assert rwq(redis_server, "dead", "list", "--prefix", queue.prefix)["items"][0]["detail"] == detail
    table = CliRunner().invoke(
        cli, ["dead", "show", "--prefix", queue.prefix, "a", "--url", redis_server.url]
    )
    assert "Traceback (most recent call last):" in table.output
    assert "ValueError: x" in table.output


def test_operator_commands_on_a_sharded_queue(r: redis.Redis, redis_server: RedisServer) -> None:
    """``--shards N``: stats, clean and the dead-letter set cover every shard."""
    queue = ShardedWorkQueue(r, "sh", shards=3)
    queue.set_retry_policy(RetryPolicy(max_attempts=1))
    queue.add_many([(f"i{n}", b"x") for n in range(6)])
    for _ in range(3):
        held = queue.lease(60_000)
        assert held is not None
        queue.fail(held, "boom")
    args = ("--prefix", "sh", "--shards", "3")
    stats = rwq(redis_server, "stats", *args)
    assert (stats["queued"], stats["processing"], stats["dead"]) == (3, 0, 3)
    listed = rwq(redis_server, "dead", "list", *args)
    dead = [item["id"] for item in listed["items"]]
    assert len(dead) == 3
    assert {ShardedWorkQueue(r, "sh", shards=3).layout.shard_of(item_id) for item_id in dead} == {0, 1, 2}
    assert rwq(redis_server, "dead", "requeue", *args, *dead)["results"] == [
        {"id": i, "done": True} for i in dead
    ]
    assert rwq(redis_server, "clean", *args)["light"]["requeued"] == []
    assert rwq(redis_server, "stats", *args)["queued"] == 6
    result = CliRunner().invoke(cli, ["stats", "--prefix", "sh", "--shards", "2", "--url", redis_server.url])
    assert result.exit_code == 1
    assert "SHARD_MISMATCH" in result.output


@pytest.mark.parametrize(
    "args",
    [["stats", "--prefix", "bad*prefix"], ["dead", "show", "--prefix", "p", "nope"]],
    ids=["invalid-prefix", "not-dead"],
)
def test_errors_are_reported_cleanly(redis_server: RedisServer, r: redis.Redis, args: list[str]) -> None:
    result = CliRunner().invoke(cli, [*args, "--url", redis_server.url])
    assert result.exit_code == 1
    assert "Error:" in result.output
    assert "Traceback" not in result.output


# -- output that never crashes, never interprets data, never writes terminal codes into a pipe ------

PIECES = ["[", "]", "/", "bold", "link=x", "\x1b", "[31m", "\x07", "\r", "\n", "\t", "é", "💥", "\u202e", "a"]
HOSTILE = st.lists(st.sampled_from(PIECES), min_size=1, max_size=12).map("".join)


def _inert(output: str) -> bool:
    """No control or format character but newlines: nothing a terminal would act on."""
    return all(char == "\n" or unicodedata.category(char) not in ("Cc", "Cf") for char in output)


def _dead_with(r: redis.Redis, prefix: str, item_id: str, reason: str, data: bytes) -> None:
    """A dead item written with raw commands, as any client may have left it."""
    r.zadd(f"{prefix}:dead", {item_id: 1_700_000_000_000})
    r.hset(f"{prefix}:dead:data", item_id, data)
    info = {"reason": reason, "attempts": 3, "detail": f"frames:\n{reason}\n"}
    r.hset(f"{prefix}:dead:info", item_id, json.dumps(info))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(item_id=HOSTILE, reason=HOSTILE, data=st.binary(max_size=40) | HOSTILE.map(str.encode))
def test_dead_items_print_as_inert_text(
    redis_server: RedisServer, r: redis.Redis, item_id: str, reason: str, data: bytes
) -> None:
    prefix = "fuzz"
    r.delete(f"{prefix}:dead", f"{prefix}:dead:data", f"{prefix}:dead:info")
    if len(item_id.encode()) > 512:
        return
    _dead_with(r, prefix, item_id, reason, data)
    for args in (["dead", "list"], ["dead", "show", item_id]):
        result = CliRunner().invoke(cli, [*args, "--prefix", prefix, "--url", redis_server.url])
        assert result.exit_code == 0, result.output
        assert _inert(result.output), repr(result.output)
        assert "Traceback" not in result.output
        listed = CliRunner().invoke(cli, [*args, "--prefix", prefix, "--url", redis_server.url, "--json"])
        document = json.loads(listed.output)
        Draft202012Validator(SCHEMA).validate(document)
        shown_item = document["item"] if "item" in document else document["items"][0]
        assert (shown_item["id"], shown_item["reason"]) == (item_id, reason)  # JSON keeps the data exact
        assert shown_item["detail"] == f"frames:\n{reason}\n"


def test_a_pipe_gets_no_terminal_codes(redis_server: RedisServer, r: redis.Redis) -> None:
    _dead_with(r, "pipe", "[bold red]x[/]", "\x1b[31mred\x1b[0m [/]", b"\x00\xff")
    out = subprocess.run(
        [sys.executable, "-m", "rwq.cli", "dead", "list", "--prefix", "pipe", "--url", redis_server.url],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"},
    ).stdout
    assert "\x1b" not in out
    assert "[bold red]x[/]" in out  # shown as written, not read as markup
    assert "\\x1b[31mred\\x1b[0m [/]" in out


def test_the_url_comes_from_the_environment(redis_server: RedisServer, r: redis.Redis) -> None:
    WorkQueue(r, "env").add("a", b"x")
    for name in ("RWQ_URL", "REDIS_URL"):
        result = CliRunner().invoke(cli, ["stats", "--prefix", "env", "--json"], env={name: redis_server.url})
        assert json.loads(result.output)["queued"] == 1, (name, result.output)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("notaurl://x", "cannot use --url"),
        ("redis://127.0.0.1:1/0", "REDIS_ERROR"),
        ("redis://:hunter2@127.0.0.1:1/0", "REDIS_ERROR"),
    ],
    ids=["bad-scheme", "refused", "refused-with-password"],
)
def test_connection_problems_are_one_line(url: str, expected: str) -> None:
    result = CliRunner().invoke(cli, ["stats", "--prefix", "p", "--url", url])
    assert result.exit_code == 1
    assert expected in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "hunter2" not in result.output


def test_a_cluster_node_without_cluster_gets_a_hint(cluster_node_url: str) -> None:
    low, high = SLOT_RANGES[0]  # the URL's node serves these slots: pick a queue that is elsewhere
    tag = next(t for t in map(str, range(100)) if not low <= key_slot(f"{{{t}}}:queue".encode()) <= high)
    result = CliRunner().invoke(cli, ["stats", "--prefix", f"{{{tag}}}", "--url", cluster_node_url])
    assert result.exit_code == 1
    assert "add --cluster" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_times_are_iso_and_relative_to_the_server() -> None:
    assert cli_queue.when(1_700_000_000_000, 1_700_000_004_500) == "2023-11-14T22:13:20.000Z (4 s ago)"
    assert cli_queue.when(1_700_000_000_000, 1_700_000_000_000).endswith("(now)")
    assert cli_queue.when(1_700_000_000_000, 1_700_007_200_000).endswith("(2 h ago)")


def test_payloads_show_as_text_when_they_are_utf8() -> None:
    assert cli_queue.payload_text("héllo".encode(), "auto") == "héllo"
    assert cli_queue.payload_text(b"\xff\x00", "auto") == "base64:/wA="
    assert cli_queue.payload_text(b"abc", "base64") == "base64:YWJj"
    assert cli_queue.payload_text(b"a\xff", "text") == "a\\xff"


def test_queues_finds_every_queue_with_its_counts(redis_server: RedisServer, r: redis.Redis) -> None:
    WorkQueue(r, "jobs").add_many([("a", b"x"), ("b", b"x")])
    WorkQueue(r, "jobs:high").add("c", b"x")
    r.set("not-a-queue:queue", "a string")  # only lists count
    r.rpush("a:item:queue", "x")  # refused by rwq (a reserved segment): left out
    document = rwq(redis_server, "queues")
    assert [(q["prefix"], q["queued"]) for q in document["queues"]] == [("jobs", 2), ("jobs:high", 1)]


def test_queues_lists_each_shard_of_a_sharded_queue(redis_server: RedisServer, r: redis.Redis) -> None:
    """A shard's prefix {P#i} cannot open as a queue of its own (RWQ-KEYS-010), but rwq queues
    still shows each shard it finds, with its counts."""
    sharded = ShardedWorkQueue(r, "sh", shards=2)
    sharded.add_many([(f"i{n}", b"x") for n in range(6)])
    document = rwq(redis_server, "queues")
    rows = {q["prefix"]: q["queued"] for q in document["queues"]}
    assert rows == {"{sh#0}": sharded.queues[0].counts().queued, "{sh#1}": sharded.queues[1].counts().queued}
    assert sum(rows.values()) == 6


def test_queues_on_a_cluster_scans_every_master(cluster_node_url: str) -> None:
    client = RedisCluster.from_url(cluster_node_url)
    tags = [str(n) for n in range(40)]
    for tag in tags:
        WorkQueue(client, f"{{{tag}}}:t").add("a", b"x")
    result = CliRunner().invoke(cli, ["queues", "--cluster", "--url", cluster_node_url, "--json"])
    client.close()
    assert result.exit_code == 0, result.output
    found = {q["prefix"] for q in json.loads(result.output)["queues"]}
    assert {f"{{{tag}}}:t" for tag in tags} <= found


def test_top_shows_counts_and_rates_then_stops(redis_server: RedisServer, r: redis.Redis) -> None:
    queue = WorkQueue(r, "topq")
    queue.add("a", b"x")
    args = ["top", "--url", redis_server.url, "--prefix", "topq", "--iterations", "2", "--interval-ms", "100"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "topq" in result.output
    assert "+0.0" in result.output  # the second frame has rates
    assert _inert(result.output)
