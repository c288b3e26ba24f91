"""The bench's TypeScript section (``typescript/bench/rwq-bench.ts`` through
``bench/typescript.py``) still compiles and runs against the current client and scripts, BullMQ
included: ``make bench`` is not part of ``make test``, so a change of the TypeScript API would
otherwise break it unseen. Tiny sizes on a redis-server of its own (the program flushes its
database)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench import typescript
from bench.core import Bench, Config
from bench.report import document, print_tables, validate
from rich.console import Console

from rwq.conformance.redis_server import RedisServer

TINY = Config(n=200, repeats=1, wake_samples=5, processes=2, slow_n=100)


@pytest.fixture
def bench() -> Iterator[Bench]:
    with RedisServer() as server:
        yield Bench(server)


def test_the_ts_section_measures_the_client_raw_ioredis_and_bullmq(bench: Bench) -> None:
    if shutil.which("node") is None:
        pytest.fail("Node.js is required (make test-ts needs it too)")
    logged: list[str] = []
    rows = typescript.measure(bench, TINY, logged.append)
    assert [m.id for m in rows] == [f"ts_{key}" for key in typescript.ROWS]
    for m in rows:
        assert m.skipped == {}, m.skipped
        assert set(m.results) == {typescript.RAW, typescript.CLIENT, typescript.BULLMQ}
        assert all(r.value > 0 and r.how for r in m.results.values())
        doc = m.to_json()
        assert doc["baseline"] == typescript.RAW
        assert set(doc["ratio_to_raw"]) == {typescript.CLIENT, typescript.BULLMQ}
    drained = {m.id: m for m in rows}["ts_drain_one"]
    assert drained.results[typescript.BULLMQ].n == TINY.slow_n  # BullMQ alone, on fewer items
    assert drained.results[typescript.CLIENT].n == TINY.n
    assert any("wake_median took" in line for line in logged)

    # The rows fit the result schema and the report prints them as a table of their own.
    environment = {"python": "3", "platform": "p", "cpu_count": 2, "redis_server": "7", "packages": {}}
    peers = {"raw": "raw redis-py"} | typescript.LABELS
    doc = json.loads(json.dumps(document(rows, [], dataclasses.asdict(TINY), environment, peers)))
    validate(doc)
    console = Console(record=True, width=250)
    print_tables(console, doc, Path("bench.json"))
    text = console.export_text()
    assert "TypeScript client: figure (ratio to raw ioredis, same run)" in text
    assert "rwq-ts / bullmq-node" in text
    assert "rwq bench: figure" not in text  # no empty table of Python rows


def test_without_node_every_row_is_skipped_with_the_reason(
    bench: Bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    rows = typescript.measure(bench, TINY, lambda _line: None)
    assert [m.id for m in rows] == [f"ts_{key}" for key in typescript.ROWS]
    for m in rows:
        assert m.results == {}
        assert set(m.skipped) == set(typescript.LABELS)
        assert "node or npm not found" in m.skipped[typescript.RAW]
