"""Mutant: a retry policy's numbers that are not integers are truncated instead of refused:
``base_ms=1.5`` stores 1 ms, ``max_attempts="5"`` stores 5 (RWQ-RETRY-001). The boundary cases of
the coverage matrix are the only ones that send such a field."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.conformance import reference_adapter
from rwq.protocol.operations import RetryPolicy

NUMBERS = ("max_attempts", "base_ms", "cap_ms", "jitter_pct", "dead_max_count", "dead_max_age_ms")


class TruncatingPolicy(RetryPolicy):
    def __post_init__(self) -> None:
        for name in NUMBERS:
            value = getattr(self, name)
            if isinstance(value, (float, str)):
                object.__setattr__(self, name, int(float(value)))
        super().__post_init__()


if __name__ == "__main__":
    vars(reference_adapter)["RetryPolicy"] = TruncatingPolicy
    serve(WorkQueue)
