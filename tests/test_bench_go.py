"""The bench's Go section (``go/cmd/rwq-bench`` through ``bench/golang.py``) still builds and runs
against the current client and scripts: ``make bench`` is not part of ``make test``, so a change of
the Go API would otherwise break it unseen. Tiny sizes on a redis-server of its own (the program
flushes its database)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from bench import golang
from bench.core import Bench, Config

from rwq.conformance.redis_server import RedisServer

TINY = Config(n=200, repeats=1, wake_samples=5, processes=2)


@pytest.fixture
def bench() -> Iterator[Bench]:
    with RedisServer() as server:
        yield Bench(server)


def test_the_go_section_measures_both_peers(bench: Bench) -> None:
    if shutil.which("go") is None:
        pytest.fail("the Go toolchain is required (make test-go needs it too)")
    logged: list[str] = []
    rows = golang.measure(bench, TINY, logged.append)
    assert [m.id for m in rows] == [f"go_{key}" for key in golang.ROWS]
    for m in rows:
        assert m.skipped == {}, m.skipped
        assert set(m.results) == {golang.RAW, golang.CLIENT}
        assert all(r.value > 0 and r.how for r in m.results.values())
        doc = m.to_json()
        assert doc["baseline"] == golang.RAW
        assert set(doc["ratio_to_raw"]) == {golang.CLIENT}
    assert any("wake_median took" in line for line in logged)


def test_without_go_every_row_is_skipped_with_the_reason(
    bench: Bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    rows = golang.measure(bench, TINY, lambda _line: None)
    assert [m.id for m in rows] == [f"go_{key}" for key in golang.ROWS]
    for m in rows:
        assert m.results == {}
        assert set(m.skipped) == {golang.RAW, golang.CLIENT}
        assert "go not found" in m.skipped[golang.RAW]
