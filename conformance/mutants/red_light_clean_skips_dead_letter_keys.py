"""light_clean leaves ``P:dead:data`` and ``P:dead:info`` out of its key check (an optimiser who
thought they were written only by fail). An expired lease past ``max_attempts`` is dead-lettered by
``recover``: LREM processing and ZADD ``P:dead`` are written, then HSET of a ``P:dead:data`` that holds
another type fails, and the script stops half-way with Redis's raw WRONGTYPE (REDIS_ERROR). The
item is out of processing, in ``P:dead``, and its item key is still there (RWQ-SCRIPT-007).

Survived the whole suite (red team, #22). A case that catches it: policy ``max_attempts`` 1, one
item leased with lease_ms 1 and expired, ``P:dead:data`` a string. ``light_clean`` must fail with
WRONG_TYPE naming ``P:dead:data`` and leave processing and ``P:dead`` unchanged.
"""

from __future__ import annotations

from _script import edit
from rwq.conformance import reference_adapter

edit(
    "light_clean",
    "prefix .. 'attempts', 'hash', prefix .. 'dead:data', 'hash',\n"
    "  prefix .. 'dead:info', 'hash', prefix .. 'stats', 'string'})",
    "prefix .. 'attempts', 'hash',\n  prefix .. 'stats', 'string'})",
)

if __name__ == "__main__":
    reference_adapter.main()
