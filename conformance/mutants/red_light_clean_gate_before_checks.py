"""A paced light_clean writes its gate ``P:cleaned`` before it checks the keys of the chunk it
reads (an edit that moved the SET up, next to the gate's own check). When a key of the chunk
holds another type, the call replies RWQ_WRONG_TYPE but leaves ``P:cleaned`` written, and the
fleet's next passes are paced off (RWQ-SCRIPT-007: "leave Redis unchanged"; every key checked
before the first write).

Survived the whole suite (red team, #22): the paced wrong-type case makes the gate itself the bad
key. A case that catches it: an in-flight id whose ``P:item:<id>`` is a list, then
``light_clean`` with ``pace_ms`` 60000 must fail with WRONG_TYPE, and ``P:cleaned`` must not exist.
"""

from __future__ import annotations

from _script import edit
from rwq.conformance import reference_adapter

GATE = "if gate then redis.call('SET', gate, now, 'PX', pace) end\n"
edit("light_clean", GATE, "")
edit("light_clean", "-- a pass started within pace_ms\n", "-- a pass started within pace_ms\n" + GATE)

if __name__ == "__main__":
    reference_adapter.main()
