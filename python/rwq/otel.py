"""OpenTelemetry for rwq's workers (the ``otel`` extra): ``Worker(queue, handle, on_event=OTelEvents())``.

It counts items by outcome (``rwq.worker.items``), records how long each took from lease to
settle (``rwq.worker.duration``, ms) and ends a ``process`` span per settled item, with the
messaging attributes of the OpenTelemetry semantic conventions. It uses the OpenTelemetry API
only: the SDK, exporters and sampling are the application's choice, through the global providers
or the ones passed in.
"""

from __future__ import annotations

import time

from opentelemetry import metrics, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from . import __version__
from .worker import WorkerEvent

__all__ = ["OTelEvents"]


class OTelEvents:
    """An ``on_event`` hook that turns worker events into OpenTelemetry metrics and spans."""

    def __init__(
        self,
        *,
        meter_provider: metrics.MeterProvider | None = None,
        tracer_provider: trace.TracerProvider | None = None,
    ) -> None:
        meter = metrics.get_meter("rwq", __version__, meter_provider=meter_provider)
        self._items = meter.create_counter(
            "rwq.worker.items",
            unit="{item}",
            description="Items leased and settled by rwq workers, by outcome",
        )
        self._duration = meter.create_histogram(
            "rwq.worker.duration", unit="ms", description="Time from an item's lease to its settling"
        )
        self._tracer = trace.get_tracer("rwq", __version__, tracer_provider=tracer_provider)

    def __call__(self, event: WorkerEvent) -> None:
        attributes = {
            "messaging.system": "rwq",
            "messaging.destination.name": event.queue,
            "rwq.outcome": event.kind,
        }
        self._items.add(1, attributes)
        if event.duration_ms is None:
            return
        self._duration.record(event.duration_ms, attributes)
        ended_ns = time.time_ns()
        span = self._tracer.start_span(
            f"process {event.queue}",
            kind=SpanKind.CONSUMER,
            start_time=ended_ns - event.duration_ms * 1_000_000,
            attributes={
                **attributes,
                "messaging.operation.type": "process",
                "messaging.message.id": event.item_id,
                "rwq.attempt": event.attempt,
            },
        )
        if event.error is not None:
            span.set_status(Status(StatusCode.ERROR, event.error))
            span.set_attribute("error.type", event.error)
        span.end(end_time=ended_ns)
