"""The operator commands of the rwq CLI, against a real server, their JSON checked by its schema."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import unicodedata
import urllib.parse
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

from rwq import DeadItem, RetryPolicy, WorkQueue, cli_queue
from rwq.cli import cli
from rwq.conformance.cluster import SLOT_RANGES, LocalCluster
from rwq.conformance.redis_server import RedisServer
from rwq.protocol import acl
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
        "stats": None,
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


def test_queues_finds_a_queue_by_any_of_its_keys(redis_server: RedisServer, r: redis.Redis) -> None:
    """A queue whose items are all in flight, delayed or dead, or that holds only a policy or an
    orphan item, has no ``P:queue`` list (Redis deletes an empty list): it is listed all the same."""
    in_flight = WorkQueue(r, "in-flight")
    in_flight.add("a", b"x")
    assert in_flight.lease(60_000) is not None
    WorkQueue(r, "later").add("a", b"x", delay_ms=60_000)
    dead = WorkQueue(r, "dead:only")
    dead.set_retry_policy(RetryPolicy(max_attempts=1))
    dead.add("a", b"x")
    held = dead.lease(60_000)
    assert held is not None
    dead.fail(held, "boom")
    dead.set_retry_policy(None)
    WorkQueue(r, "policy:only").set_retry_policy(RetryPolicy(max_attempts=3))
    r.set("orphan:item:a:queue", b"x")  # an item of queue "orphan" in no list (its id holds a colon)
    r.set("cache:user:1", b"x")  # not a queue's key
    r.hset("not-a-queue:queue", "a", "b")  # a family's name, but not its type
    rows = {q["prefix"]: q for q in rwq(redis_server, "queues")["queues"]}
    assert sorted(rows) == ["dead:only", "in-flight", "later", "orphan", "policy:only"]
    assert (rows["in-flight"]["processing"], rows["later"]["delayed"], rows["dead:only"]["dead"]) == (1, 1, 1)


@pytest.mark.parametrize("command", [["queues", "--json"], ["top", "--iterations", "1"]])
def test_a_prefix_that_is_not_a_queue_hides_no_other(
    command: list[str], redis_server: RedisServer, r: redis.Redis
) -> None:
    """Another application's ``app:queue`` list beside an ``app:processing`` string made rwq queues
    and top exit 1 with WRONG_TYPE, listing nothing (red team B7): now it is left out and
    counted, and every queue is listed."""
    WorkQueue(r, "jobs").add("invoice-42", b"{}")
    r.lpush("app:queue", "x")
    r.set("app:processing", "not a list")
    r.lpush("jobs[eu]:queue", "x")  # a prefix rwq refuses (glob characters)
    result = CliRunner().invoke(cli, [*command, "--url", redis_server.url])
    assert result.exit_code == 0, result.output
    assert "jobs" in result.output
    if "--json" in command:
        document = json.loads(result.stdout)
        assert [q["prefix"] for q in document["queues"]] == ["jobs"]
        assert document["not_queues"] == 2


def test_queue_of_reads_the_prefix_of_every_family() -> None:
    assert cli_queue.queue_of("a:b:queue", "list") == "a:b"
    assert cli_queue.queue_of("a:queue", "zset") is None
    assert cli_queue.queue_of("a:dead:data", "hash") == "a"
    assert cli_queue.queue_of("a:dead", "zset") == "a"
    assert cli_queue.queue_of("item:queue", "list") == "item"  # a first segment may be a family name
    assert cli_queue.queue_of("a:item:x:item:y", "string") == "a"  # the id holds colons
    assert cli_queue.queue_of("a:deep_clean:run", "set") is None  # a clean's own bookkeeping
    assert cli_queue.queue_of("a:cleaned", "string") is None
    assert cli_queue.queue_of("{sh#0}:shards", "string") == "{sh#0}"
    assert cli_queue.queue_of("queue", "list") is None


@pytest.fixture
def role_urls(r: redis.Redis, redis_server: RedisServer) -> Iterator[dict[str, str]]:
    """A URL per ACL role of queue ``jobs``, each the user ``rwq acl ROLE --prefix jobs`` prints."""
    urls = {}
    for role in acl.ROLES:
        line = CliRunner().invoke(cli, ["acl", role, "--prefix", "jobs", "--user", f"cli-{role}"]).output
        r.execute_command(*shlex.split(line), ">pw")  # type: ignore[no-untyped-call]
        urls[role] = f"redis://cli-{role}:pw@127.0.0.1:{redis_server.port}/0"
    yield urls
    for role in acl.ROLES:
        r.acl_deluser(f"cli-{role}")


def test_queues_and_top_run_as_the_operator_and_skip_what_it_may_not_read(
    r: redis.Redis, role_urls: dict[str, str]
) -> None:
    WorkQueue(r, "jobs").add("a", b"x")
    WorkQueue(r, "jobs:high").add("b", b"x")
    WorkQueue(r, "other").add("c", b"x", delay_ms=60_000)
    result = CliRunner().invoke(cli, ["queues", "--url", role_urls["operator"], "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    Draft202012Validator(SCHEMA).validate(document)
    assert [(q["prefix"], q["queued"]) for q in document["queues"]] == [("jobs", 1)]
    assert document["skipped"] == 2
    table = CliRunner().invoke(cli, ["queues", "--url", role_urls["operator"]])
    assert table.exit_code == 0
    assert "skipped 2 queues this user may not read" in table.stderr
    top = CliRunner().invoke(cli, ["top", "--url", role_urls["operator"], "--iterations", "1"])
    assert top.exit_code == 0, top.output
    assert "jobs" in top.output
    assert "skipped 2" in top.output
    for role in ("producer", "worker", "admin"):  # no SCAN: a clear refusal, not a traceback
        refused = CliRunner().invoke(cli, ["queues", "--url", role_urls[role]])
        assert refused.exit_code == 1
        assert "only the operator ACL role has" in refused.output


def _dead_items(queue: WorkQueue, count: int) -> None:
    queue.set_retry_policy(RetryPolicy(max_attempts=1))
    queue.add_many([(f"i{n}", b"x") for n in range(count)])
    for _ in range(count):
        held = queue.lease(60_000)
        assert held is not None
        queue.fail(held, "boom")


def test_dead_requeue_and_purge_all_in_batches(queue: WorkQueue, redis_server: RedisServer) -> None:
    p = queue.prefix
    _dead_items(queue, 5)
    requeued = rwq(redis_server, "dead", "requeue", "--prefix", p, "--all", "--batch", "2")
    assert requeued["all"] is True
    assert sorted((r["id"], r["done"]) for r in requeued["results"]) == [(f"i{n}", True) for n in range(5)]
    assert (queue.counts().queued, queue.counts().dead) == (5, 0)
    _dead_items(queue, 0)
    for _ in range(5):
        held = queue.lease(60_000)
        assert held is not None
        queue.fail(held, "boom again")
    purge = CliRunner().invoke(cli, ["dead", "purge", "--prefix", p, "--all", "--url", redis_server.url])
    assert purge.exit_code == 2  # click's usage error (rwq's main exits 3)
    assert "add --yes" in purge.output
    assert queue.counts().dead == 5
    purged = rwq(redis_server, "dead", "purge", "--prefix", p, "--all", "--yes", "--batch", "2")
    assert len(purged["results"]) == 5
    assert all(r["done"] for r in purged["results"])
    assert queue.counts().dead == 0


def test_every_dead_moves_past_the_items_it_could_not_act_on() -> None:
    """``--all`` ends after one pass even when every item stays in the set (not done)."""

    class Stuck:
        def dead_items(self, *, offset: int, count: int) -> list[DeadItem]:
            return [DeadItem(f"i{n}", 0, "r", 1, None) for n in range(offset, min(offset + count, 5))]

    calls: list[list[str]] = []

    def act(ids: list[str]) -> list[bool]:
        calls.append(ids)
        return [False] * len(ids)

    results = cli_queue._every_dead(Stuck(), act, 2)  # type: ignore[arg-type]
    assert [item_id for item_id, _ in results] == [f"i{n}" for n in range(5)]
    assert len(calls) == 3


@pytest.mark.parametrize(
    "args",
    [
        ["dead", "requeue", "--all"],
        ["dead", "purge", "--all", "--yes"],
        ["dead", "requeue", "nope"],
        ["dead", "purge", "nope", "other"],
    ],
)
def test_dead_actions_that_did_nothing_exit_4(
    args: list[str], queue: WorkQueue, redis_server: RedisServer
) -> None:
    result = CliRunner().invoke(cli, [*args, "--prefix", queue.prefix, "--url", redis_server.url])
    assert result.exit_code == cli_queue.EXIT_NOTHING_DONE == 4
    assert "nothing to" in result.stderr


def test_dead_actions_take_ids_or_all(queue: WorkQueue, redis_server: RedisServer) -> None:
    for args in (["dead", "requeue"], ["dead", "requeue", "a", "--all"]):
        result = CliRunner().invoke(cli, [*args, "--prefix", queue.prefix, "--url", redis_server.url])
        assert result.exit_code == 2, result.output  # click's usage error (rwq's main exits 3)
        assert "or --all" in result.output


@pytest.mark.parametrize(
    "url",
    [
        "redis://user:s3cr%40t@127.0.0.1:1/0",
        "redis://127.0.0.1:1/0?password=s3cr%40t",
        "redis://user:s3cr@t@127.0.0.1:1/0",
        "rediss://:s3cr%40t@127.0.0.1:1/0",
        "unix:///tmp/rwq-no-such.sock?db=0&password=s3cr%40t",
        "redis://user:s3cr%40t@127.0.0.1:notaport/0",
        "redis://u:s3cr%40t@127.0.0.1:1/0?password=s3cr%40t&db=0",
        "redis://127.0.0.1:notaport/0?password=s3cr%40t",  # the message shows the URL
        "unix:///tmp/rwq-no-such.sock?db=x&password=s3cr",
        "rediss://u:s3cr%40t@127.0.0.1:notaport/0",
    ],
)
@pytest.mark.parametrize("cluster", [False, True])
def test_no_error_prints_a_password(url: str, cluster: bool) -> None:
    args = ["stats", "--prefix", "p", "--url", url, *(["--cluster"] if cluster else [])]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert "s3cr" not in result.output
    assert "@t" not in result.output.replace("@127", "")


def test_redacted_masks_every_password_form() -> None:
    url = "redis://u:p%40ss@h:1/0?password=qs&db=0"
    assert cli_queue.redacted(url, url) == "redis://u:***@h:1/0?password=***&db=0"
    assert cli_queue.redacted("auth p@ss failed", url) == "auth *** failed"
    assert cli_queue.redacted("redis://h:1/0", "redis://h:1/0") == "redis://h:1/0"
    odd = "rediss://h:1/0?Password=Sec1&ssl_password=Sec2"  # any case, any *password= option
    assert cli_queue.redacted(odd, odd) == "rediss://h:1/0?Password=***&ssl_password=***"
    for secret in ("Xk9#q2/Zr7", "a?b/cde", "p@ss#w/rd"):  # unencoded: a URL parser cuts them short
        for url in (f"redis://:{secret}@h:1/0", f"redis://user:{secret}@h:1/0"):
            parsed = urllib.parse.urlsplit(url)
            head = parsed.password or parsed.netloc.rpartition(":")[2]  # what redis-py reports
            shown = cli_queue.redacted(f"cannot use {url}: {head!r} is not a port", url)
            assert secret not in shown
            assert len(head) < 3 or head not in shown, shown


@pytest.mark.parametrize("command", [["stats", "--prefix", "jobs"], ["queues"]])
def test_an_unknown_url_option_is_one_line_without_its_value(command: list[str]) -> None:
    """redis-py refuses an option it does not know only at its first connection, with a
    TypeError: a one-line error naming it, the value masked when it looks like a password."""
    url = "redis://127.0.0.1:1/0?Password=hunter22"
    result = CliRunner().invoke(cli, [*command, "--url", url])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1, result.output
    assert "'Password'" in result.output
    assert "hunter22" not in result.output
