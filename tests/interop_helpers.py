"""Helpers shared by the interoperability tests: reading lists and keys, and race windows."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import redis

from rwq import CleanReport

NOTHING = CleanReport((), 0)
# Margin around a deadline on the frozen clock, for the older clients' whole-second SETEX leases.
SLACK_MS = 5


def text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


def keys(db: redis.Redis) -> set[str]:
    return {text(key) for key in db.keys("*")}


def lrange(db: redis.Redis, key: str) -> list[str]:
    return [text(raw) for raw in db.lrange(key, 0, -1)]


def lists(db: redis.Redis, prefix: str) -> tuple[list[str], list[str]]:
    """(queue, processing), each newest entry first."""
    return lrange(db, f"{prefix}:queue"), lrange(db, f"{prefix}:processing")


def wait_until_blocked(db: redis.Redis, clients: int = 1) -> None:
    """Wait (bounded) until ``clients`` connections are blocked in a blocking pop."""
    deadline = time.monotonic() + 5
    while int(db.info("clients")["blocked_clients"]) < clients:
        assert time.monotonic() < deadline, "the blocking lease never blocked"
        time.sleep(0.005)


class CleanerBetweenPopAndSetex:
    """A redis client for an older client that runs ``hook`` right after its RPOPLPUSH.

    That is the window of their three-round-trip lease (research note §4.2 point 1): the id is in
    processing and has no lease yet, so any cleaner running then requeues it.
    """

    def __init__(self, db: redis.Redis, hook: Callable[[], object]) -> None:
        self._db = db
        self._hook = hook

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def rpoplpush(self, src: str, dst: str) -> Any:
        moved = self._db.rpoplpush(src, dst)
        self._hook()
        return moved
