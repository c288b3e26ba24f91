"""The pytest plugin rwq.testing, as a service's test suite uses it: a pytest run of its own."""

from __future__ import annotations

import pytest

USER_TESTS = """
from rwq.testing import drain


def test_a_drain_runs_every_item(rwq_queue):
    rwq_queue.add_many([("a", b"1"), ("b", b"2")])
    seen = []
    stats = drain(rwq_queue, lambda job: seen.append(job.id))
    assert sorted(seen) == ["a", "b"]
    assert stats.completed == 2


def test_each_test_gets_a_fresh_queue(rwq_queue):
    assert rwq_queue.counts().queued == 0


def test_a_failing_handler_is_retried_later(rwq_queue):
    rwq_queue.add("a", b"1")

    def fails(job):
        raise ValueError("no")

    stats = drain(rwq_queue, fails)
    assert stats.failed == 1
    assert rwq_queue.counts().delayed == 1
"""


def test_the_plugin_serves_a_user_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


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
