"""A port whose client refuses every_ms = 1,000, the least value SPEC allows (an exclusive
bound): RWQ-SCHED-001."""

from _blind25p import patch, serve_reference
from rwq.protocol import periodic

patch(periodic, "MIN_EVERY_MS", 1001)

if __name__ == "__main__":
    serve_reference()
