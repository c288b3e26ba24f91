"""light_clean does not check the item keys of the due ids it promotes and of the expired
``P:in_flight`` entries (profile flat) it recovers: a due id whose item key holds another type is
dropped silently (SET NX writes nothing, its delayed entry is removed: the item is lost), and an
expired flat lease whose item key holds another type makes ``recover`` fail after the pass's
first writes (the gate, promotions, ZREM), so Redis is left half-changed (RWQ-SCRIPT-007).

Survived the whole suite (red team, #22). A case that catches it: a due delayed item ``d`` whose
``P:item:d`` is a list (or a flat lease past its deadline whose item key is a hash), then
``light_clean`` must fail with WRONG_TYPE and leave Redis unchanged (``P:delayed`` keeps d).
"""

from __future__ import annotations

from _script import edit
from rwq.conformance import reference_adapter

edit("light_clean", "if #due_ids + #expired > 0 then\n  bad = select", "if false then\n  bad = select")

if __name__ == "__main__":
    reference_adapter.main()
