"""The pytest plugin rwq.testing, as a service's test suite uses it: a pytest run of its own."""

from __future__ import annotations

import pytest

USER_TESTS = """
import asyncio

import pytest
import redis.asyncio

from rwq import AsyncWorkQueue
from rwq.errors import InvalidType
from rwq.testing import adrain, drain


def test_a_drain_runs_every_item(rwq_queue):
    rwq_queue.add_many([("a", b"1"), ("b", b"2")])
    seen = []
    stats = drain(rwq_queue, lambda job: seen.append(job.id))
    assert sorted(seen) == ["a", "b"]
    assert stats.completed == 2


def test_each_test_gets_a_fresh_queue(rwq_queue):
    assert rwq_queue.counts().queued == 0


def fails(job):
    raise ValueError(f"{job.id} is broken")


def test_a_drain_raises_the_handlers_first_exception(rwq_queue):
    rwq_queue.add("a", b"1")
    with pytest.raises(ValueError, match="a is broken"):
        drain(rwq_queue, fails)
    assert rwq_queue.counts().delayed == 1  # its failed attempt was recorded all the same


def test_a_failing_handler_is_retried_later_when_errors_are_collected(rwq_queue):
    rwq_queue.add("a", b"1")
    stats = drain(rwq_queue, fails, raise_errors=False)
    assert stats.failed == 1
    assert rwq_queue.counts().delayed == 1


async def handle_async(job):
    await asyncio.sleep(0)
    SEEN.append(job.id)


SEEN = []


def test_handlers_of_the_wrong_kind_are_refused(rwq_queue, rwq_redis_url):
    rwq_queue.add("a", b"1")
    with pytest.raises(InvalidType, match="use adrain"):
        drain(rwq_queue, handle_async)
    queue = AsyncWorkQueue(redis.asyncio.Redis.from_url(rwq_redis_url), rwq_queue.prefix)
    with pytest.raises(InvalidType, match="use drain"):
        asyncio.run(adrain(queue, fails))
    assert rwq_queue.counts().queued == 1


def test_adrain_runs_an_async_handler(rwq_queue, rwq_redis_url):
    rwq_queue.add_many([("a", b"1"), ("b", b"2")])

    async def main():
        client = redis.asyncio.Redis.from_url(rwq_redis_url)
        try:
            stats = await adrain(AsyncWorkQueue(client, rwq_queue.prefix), handle_async)
            assert stats.completed == 2
            rwq_queue.add("c", b"3")

            async def broken(job):
                raise KeyError(job.id)

            with pytest.raises(KeyError, match="c"):
                await adrain(AsyncWorkQueue(client, rwq_queue.prefix), broken)
        finally:
            await client.aclose()

    asyncio.run(main())
    assert sorted(SEEN) == ["a", "b"]
"""


def test_the_plugin_serves_a_user_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)


def test_no_redis_anywhere_is_a_clear_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_needs_redis(rwq_queue):\n    pass\n")
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("RWQ_TEST_REDIS_URL", raising=False)
    monkeypatch.setenv("RWQ_REDIS_SERVER", "/nonexistent/redis-server")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*redis-server not found*containers extra*RWQ_TEST_REDIS_URL*"])
