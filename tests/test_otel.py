"""The otel extra: worker events as OpenTelemetry metrics and spans, read back with the SDK's
in-memory reader and exporter, from a real worker on a real Redis."""

from __future__ import annotations

import threading
import time
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from rwq import Job, RetryPolicy, Worker, WorkerEvent, WorkQueue
from rwq.otel import OTelEvents


def test_worker_events_become_metrics_and_spans(queue: WorkQueue) -> None:
    reader, exporter = InMemoryMetricReader(), InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(exporter))
    hook = OTelEvents(meter_provider=MeterProvider(metric_readers=[reader]), tracer_provider=tracing)
    seen: list[WorkerEvent] = []

    def on_event(event: WorkerEvent) -> None:
        seen.append(event)
        hook(event)

    def handle(job: Job) -> None:
        time.sleep(0.02)
        if job.id == "bad":
            raise KeyError("missing")

    queue.add_many([("ok", b"x"), ("bad", b"y")])
    worker = Worker(
        queue,
        handle,
        on_event=on_event,
        retry=RetryPolicy(max_attempts=1, backoff="fixed"),
        poll_timeout_ms=50,
    )
    thread = threading.Thread(target=worker.run)
    thread.start()
    deadline = time.monotonic() + 10
    while len([e for e in seen if e.kind != "leased"]) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    worker.stop()
    thread.join(30)

    assert sorted((e.kind, e.item_id) for e in seen) == [
        ("completed", "ok"),
        ("dead", "bad"),
        ("leased", "bad"),
        ("leased", "ok"),
    ]
    dead = next(e for e in seen if e.kind == "dead")
    assert dead.error == "KeyError"
    assert dead.duration_ms is not None
    assert dead.duration_ms >= 20

    data: Any = reader.get_metrics_data()
    points: dict[tuple[str, str], Any] = {
        (metric.name, point.attributes["rwq.outcome"]): point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
    }
    assert points["rwq.worker.items", "leased"].value == 2
    assert points["rwq.worker.items", "completed"].value == 1
    assert points["rwq.worker.duration", "dead"].count == 1
    finished: list[Any] = list(exporter.get_finished_spans())
    spans = {span.attributes["messaging.message.id"]: span for span in finished}
    assert set(spans) == {"ok", "bad"}
    assert spans["bad"].status.status_code is StatusCode.ERROR
    assert spans["ok"].attributes["messaging.destination.name"] == queue.prefix
    assert spans["ok"].end_time - spans["ok"].start_time >= 20_000_000  # ns: it covers the handler


def test_a_failing_hook_never_stops_the_worker(queue: WorkQueue) -> None:
    def broken(event: WorkerEvent) -> None:
        raise RuntimeError("exporter down")

    queue.add("a", b"x")
    done = threading.Event()
    worker = Worker(queue, lambda job: done.set(), on_event=broken, poll_timeout_ms=50)
    thread = threading.Thread(target=worker.run)
    thread.start()
    assert done.wait(10)
    worker.stop()
    thread.join(30)
    assert worker.stats.completed == 1
