"""The runner's fault proxy (``rwq.conformance.proxy``) against a real Redis: each fault hits
the next script call only, and says by the state in Redis whether the script ran."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
import redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.retry import Retry

from rwq.conformance.proxy import FaultProxy, command_ends
from rwq.conformance.redis_server import RedisServer

SET = "redis.call('INCR', KEYS[1]) return 'ran'"


@pytest.fixture
def proxy(redis_server: RedisServer) -> Iterator[FaultProxy]:
    faulty = FaultProxy(("127.0.0.1", redis_server.port))
    yield faulty
    faulty.close()


@pytest.fixture
def via(proxy: FaultProxy) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(proxy.url, retry=Retry(NoBackoff(), 0))
    yield client
    client.close()


def runs(r: redis.Redis, key: str) -> int:
    return int(r.get(key) or 0)


def test_command_ends_finds_complete_commands_only() -> None:
    one = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
    two = b"*3\r\n$7\r\nevalsha\r\n$1\r\nx\r\n$1\r\n0\r\n"
    assert command_ends(one + two) == [(len(one), b"GET"), (len(one + two), b"EVALSHA")]
    assert command_ends(one + two[:-3]) == [(len(one), b"GET")]
    assert command_ends(b"PING\r\n") == [(6, b"PING")]
    assert command_ends(b"*1\r\n$4\r\nPI") == []


def test_forwards_until_armed(via: redis.Redis, r: redis.Redis) -> None:
    assert via.eval(SET, 1, "rwqt:proxy:plain") == b"ran"
    assert runs(r, "rwqt:proxy:plain") == 1


def test_lose_reply_runs_the_script_and_closes(proxy: FaultProxy, via: redis.Redis, r: redis.Redis) -> None:
    via.ping()
    proxy.arm("lose-reply")
    assert via.get("rwqt:proxy:lost") is None  # not a script call: untouched
    with pytest.raises(RedisConnectionError):
        via.eval(SET, 1, "rwqt:proxy:lost")
    assert runs(r, "rwqt:proxy:lost") == 1
    assert via.eval(SET, 1, "rwqt:proxy:lost") == b"ran"  # disarmed; a new connection works
    assert runs(r, "rwqt:proxy:lost") == 2


def test_lose_reply_skips_noscript(proxy: FaultProxy, via: redis.Redis, r: redis.Redis) -> None:
    r.script_flush()
    proxy.arm("lose-reply")
    with pytest.raises(NoScriptError):
        via.evalsha("0" * 40, 1, "rwqt:proxy:noscript")
    with pytest.raises(RedisConnectionError):
        via.eval(SET, 1, "rwqt:proxy:noscript")
    assert runs(r, "rwqt:proxy:noscript") == 1


def test_drop_call_never_reaches_redis(proxy: FaultProxy, via: redis.Redis, r: redis.Redis) -> None:
    via.ping()
    proxy.arm("drop-call")
    with pytest.raises(RedisConnectionError):
        via.eval(SET, 1, "rwqt:proxy:dropped")
    assert runs(r, "rwqt:proxy:dropped") == 0


def test_script_error_answers_for_redis(proxy: FaultProxy, via: redis.Redis, r: redis.Redis) -> None:
    proxy.arm("script-error", "RWQ_LEASE_LOST injected")
    with pytest.raises(ResponseError, match="RWQ_LEASE_LOST injected"):
        via.eval(SET, 1, "rwqt:proxy:error")
    assert runs(r, "rwqt:proxy:error") == 0
    assert via.eval(SET, 1, "rwqt:proxy:error") == b"ran"  # the same connection goes on


def test_sever_closes_every_connection(proxy: FaultProxy) -> None:
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as raw:
        raw.sendall(b"PING\r\n")
        assert raw.recv(100) == b"+PONG\r\n"
        proxy.sever()
        assert raw.recv(100) == b""
