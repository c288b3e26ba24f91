"""The operator commands of the rwq CLI, against a real server, their JSON checked by its schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

from rwq import RetryPolicy, WorkQueue
from rwq.cli import cli
from rwq.conformance.redis_server import RedisServer

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "cli-output.schema.json").read_text())


def rwq(server: RedisServer, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, [*args, "--url", server.url, "--json"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)
    Draft202012Validator(SCHEMA).validate(document)
    return document


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
    assert rwq(redis_server, "dead", "requeue", "--prefix", p, "a", "zz")["results"] == [
        {"id": "a", "done": True},
        {"id": "zz", "done": False},
    ]
    assert rwq(redis_server, "dead", "purge", "--prefix", p, "b")["results"] == [{"id": "b", "done": True}]
    assert queue.counts().queued == 1
    assert queue.counts().dead == 0


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
