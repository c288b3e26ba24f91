"""Issue 6's targets, evaluated on ratios measured within one run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bench.core import Measurement

ALTERNATIVES = ("rwq-proto", "rwq-lean")
"""Prototype variants also evaluated against each target, to show what a change would gain."""


@dataclass(frozen=True)
class Target:
    """``measurement[peer] / baseline_measurement[baseline]`` (or the bare value) vs a threshold."""

    id: str
    text: str
    measurement: str
    comparison: Literal[">=", "<="]
    threshold: float
    baseline: str | None = "raw"
    baseline_measurement: str | None = None
    peer: str = "rwq"


TARGETS = (
    Target("enqueue_one", "enqueue 1/call >= 0.8x raw LPUSH", "enqueue_one", ">=", 0.8),
    Target("enqueue_batch", "batched enqueue >= 2x raw pipelined per-item LPUSH", "enqueue_batch", ">=", 2.0),
    Target("drain_one_raw", "1-consumer drain >= 2x raw redis-py", "drain_one", ">=", 2.0),
    Target(
        "drain_one_rwq015", "1-consumer drain >= 5x redis-work-queue 0.1.5", "drain_one", ">=", 5.0, "rwq015"
    ),
    Target("drain_one_bullmq", "1-consumer drain >= 4x bullmq", "drain_one", ">=", 4.0, "bullmq"),
    Target(
        "drain_batch",
        "batched drain >= 10x raw 1-consumer drain",
        "drain_batch",
        ">=",
        10.0,
        "raw",
        "drain_one",
    ),
    Target(
        "drain_batch_streams",
        "batched drain >= 0.5x Redis Streams (XREADGROUP COUNT 100 + XACK)",
        "drain_batch",
        ">=",
        0.5,
        "streams",
    ),
    Target("drain_processes", "4-process drain >= 1.8x raw 4-process drain", "drain_processes", ">=", 1.8),
    Target("memory", "memory per pending item <= redis-work-queue 0.1.5", "memory", "<=", 1.0, "rwq015"),
    Target("wake_median", "blocked wake-up median <= 1.5x raw BLMOVE", "wake_median", "<=", 1.5),
    Target("scale_pending", "rate at 1,000,000 pending >= 0.8x at 1,000", "scale_pending", ">=", 0.8, None),
    Target(
        "scale_inflight",
        "complete rate at 50,000 in flight (random order) >= 0.8x at 1,000, profile flat",
        "scale_inflight_random_50000",
        ">=",
        0.8,
        None,
        peer="rwq-flat",
    ),
    Target(
        "scale_inflight_100k",
        "complete rate at 100,000 in flight (random order) >= 0.8x at 1,000, profile flat",
        "scale_inflight_random_100000",
        ">=",
        0.8,
        None,
        peer="rwq-flat",
    ),
    Target("light_clean", "no light_clean script call over 10 ms", "light_clean_max", "<=", 10.0, None),
)


def _value(target: Target, peer: str, by_id: dict[str, Measurement]) -> float | None:
    m = by_id.get(target.measurement)
    if m is None or peer not in m.results:
        return None
    value = m.results[peer].value
    if target.baseline is None:
        return value
    base_m = by_id.get(target.baseline_measurement or target.measurement)
    if base_m is None or target.baseline not in base_m.results or base_m.results[target.baseline].value == 0:
        return None
    return value / base_m.results[target.baseline].value


ROUND_TRIPS = {"enqueue_one": 1, "drain_one": 1, "enqueue_batch": 0}
"""rwq's round trips per item, by design, in the measurements :func:`ceiling` bounds (0: batched,
one round trip per 100 items, counted as free)."""


def cpu_ceiling(target: Target, by_id: dict[str, Measurement]) -> float | None:
    """For the multi-process drain on a machine whose cores are the bottleneck: the baseline's
    CPU per item (clients and redis-server together) over rwq's, as measured in the drains. An
    estimate of the ratio saturated cores allow, not a hard bound: scheduling moves it a little."""
    m = by_id.get(target.measurement)
    if m is None or target.baseline is None:
        return None
    try:
        base, rwq = m.results[target.baseline].detail, m.results[target.peer].detail
        keys = ("client_cpu_us_per_item", "redis_cpu_us_per_item")
        return float(sum(base[k] for k in keys) / sum(rwq[k] for k in keys))
    except (KeyError, ZeroDivisionError):
        return None


def ceiling(target: Target, by_id: dict[str, Measurement]) -> float | None:
    """The best ratio to the baseline that rwq's measured server time allows.

    A round trip costs at least what raw's bare redis-py commands cost outside the server in the
    same run (client CPU, kernel, scheduling: wall time minus INFO commandstats time, per
    command). Were rwq's client that cheap, an item would still cost its round trips at that
    price plus rwq's own server time; the baseline's time per item over that is the ceiling.
    """
    if target.measurement == "drain_processes":
        return cpu_ceiling(target, by_id)
    trips = ROUND_TRIPS.get(target.measurement)
    m = by_id.get(target.measurement)
    if trips is None or target.baseline is None or target.baseline_measurement or m is None:
        return None
    try:
        raw, rwq = m.results["raw"].detail, m.results[target.peer].detail
        base = m.results[target.baseline].detail
        per_command = (raw["us_per_item"] - raw["server_us_per_item"]) / raw["commands_per_item"]
        return float(base["us_per_item"] / (trips * per_command + rwq["server_us_per_item"]))
    except (KeyError, ZeroDivisionError):
        return None


def _met(target: Target, value: float | None) -> bool | None:
    if value is None:
        return None
    return value >= target.threshold if target.comparison == ">=" else value <= target.threshold


def evaluate(measurements: list[Measurement]) -> list[dict[str, Any]]:
    """Every target: rwq's figure, whether it is met, and the prototypes' figures."""
    by_id = {m.id: m for m in measurements}
    out = []
    for target in TARGETS:
        value = _value(target, target.peer, by_id)
        alternatives = {}
        for alt in ALTERNATIVES:
            alt_value = _value(target, alt, by_id)
            if alt_value is not None:
                alternatives[alt] = {"value": alt_value, "met": _met(target, alt_value)}
        out.append(
            {
                "id": target.id,
                "text": target.text,
                "measurement": target.measurement,
                "baseline": target.baseline,
                "comparison": target.comparison,
                "threshold": target.threshold,
                "value": value,
                "met": _met(target, value),
                "ceiling": ceiling(target, by_id),
                "alternatives": alternatives,
            }
        )
    return out
